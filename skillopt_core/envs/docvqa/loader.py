"""Read DocVQA questions: one page image per question, answers as lists.

Accepted files (``env.data_path``):

- a CSV (or a folder holding ``*.csv``) in the layout SkillOpt's DocVQA
  materialisation writes from ``lmms-lab/DocVQA``: ``questionId``,
  ``question``, ``answer`` (a Python-literal list such as ``['4471', '#4471']``;
  a plain string is one answer), ``image_path`` (relative to the CSV's folder),
  ``docId``, ``ucsf_document_id``, ``ucsf_document_page_no``, ``topic``. A
  question ending in ``document_path: <path>`` names its image there too;
- the official release's JSON, ``{"dataset_name": ..., "data": [...]}`` with
  ``questionId``, ``question``, ``question_types``, ``image``
  (``documents/<name>.png``, relative to the JSON's folder), ``docId``,
  ``ucsf_document_id``, ``ucsf_document_page_no``, ``answers``.

OCR text for backends that cannot see is read from a sidecar next to the
image: ``<image>.txt`` (plain text), or the official release's
``ocr_results/<image stem>.json`` (``recognitionResults[].lines[].text``).
Rows without a question, an answer or a readable image are skipped with one
problem line each.
"""

from __future__ import annotations

import ast
import csv
import json
from pathlib import Path
from typing import Any

from skillopt_core.tasks.collect import TaskCollector
from skillopt_core.tasks.task import Task

MEDIA_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
               ".webp": "image/webp"}


def parse_answers(raw: Any) -> list[str]:
    if isinstance(raw, list):
        return [str(a).strip() for a in raw if str(a).strip()]
    text = str(raw or "").strip()
    if not text:
        return []
    if text[0] in "[(":
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            return [text]
        return parse_answers(list(value)) if isinstance(value, (list, tuple)) else [str(value)]
    return [text]


def ocr_text(image: Path) -> str:
    sidecar = image.with_suffix(".txt")
    if sidecar.is_file():
        return sidecar.read_text(encoding="utf-8", errors="replace").strip()
    official = image.parent.parent / "ocr_results" / f"{image.stem}.json"
    if official.is_file():
        try:
            data = json.loads(official.read_text(encoding="utf-8"))
            pages = data.get("recognitionResults") or []
            return "\n".join(line.get("text", "") for page in pages for line in page.get("lines") or []).strip()
        except (json.JSONDecodeError, AttributeError):
            return ""
    return ""


def _row_to_task(row: dict[str, Any], base: Path) -> Task:
    question = str(row.get("question") or "").strip()
    image_ref = str(row.get("image_path") or row.get("image") or "").strip()
    if "document_path:" in question:
        question, _, tail = question.partition("document_path:")
        question, image_ref = question.strip(), image_ref or tail.strip()
    qid = str(row.get("questionId") or row.get("id") or "").strip()
    answers = parse_answers(row.get("answers", row.get("answer")))
    if not qid or not question:
        raise ValueError("needs 'questionId' and 'question'")
    if not answers:
        raise ValueError("no answer")
    image = (base / image_ref) if image_ref else None
    if image is None or not image.is_file():
        raise ValueError(f"image not found: {image_ref or '(none given)'}")
    if image.suffix.lower() not in MEDIA_TYPES:
        raise ValueError(f"unsupported image type {image.suffix}")
    kinds = row.get("question_types") or str(row.get("topic") or "").split("|")
    kinds = [k for k in (kinds if isinstance(kinds, list) else [kinds]) if isinstance(k, str) and k.strip()]
    return Task(
        id=qid, prompt=question, reference=tuple(answers), judge=None,
        tags=tuple(dict.fromkeys(["docvqa", *kinds])),
        metadata={"image": str(image), "media_type": MEDIA_TYPES[image.suffix.lower()],
                  "docId": str(row.get("docId") or ""),
                  "ucsf_document_id": str(row.get("ucsf_document_id") or ""),
                  "page": str(row.get("ucsf_document_page_no") or "")},
    )


def _rows(path: Path) -> list[tuple[str, dict[str, Any]]]:
    if path.suffix.lower() == ".json":
        data = json.loads(path.read_text(encoding="utf-8"))
        records = data.get("data", []) if isinstance(data, dict) else data
        return [(f"{path.name}: record {n}", r) for n, r in enumerate(records, start=1) if isinstance(r, dict)]
    with path.open(encoding="utf-8", newline="") as fh:
        return [(f"{path.name}: line {n}", r) for n, r in enumerate(csv.DictReader(fh), start=2)]


def read_tasks(path: Path) -> tuple[list[Task], list[str]]:
    files = sorted([*path.glob("*.csv"), *path.glob("*.json")]) if path.is_dir() else [path]
    if not files or not files[0].is_file():
        raise FileNotFoundError(f"DocVQA data not found at {path} (a CSV or the official JSON). Check env.data_path.")
    found = TaskCollector("questionId")
    for file in files:
        try:
            rows = _rows(file)
        except (OSError, json.JSONDecodeError, csv.Error) as exc:
            found.problems.append(f"{file.name}: not readable ({exc})")
            continue
        for where, row in rows:
            found.add(where, _row_to_task, row, file.parent)
    return found.result()
