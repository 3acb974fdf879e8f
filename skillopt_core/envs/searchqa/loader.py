"""Read SearchQA-style question answering data into tasks.

Accepted files (``data_path``): a ``.jsonl`` file (one record per line), a
``.json`` file (a list of records, ``{"data": [...]}``, or one record), either
optionally gzipped (``.gz``), or a folder holding such files (read recursively
in sorted order; the original SearchQA release is one JSON file per question).

Accepted record fields (first match wins):

- question: ``question`` or ``query`` (string).
- answers: ``answers`` (string, list of strings, or ``{"text": [...]}``),
  ``answer`` (string or list); ``aliases`` (list) adds more accepted answers.
- snippets: ``search_results`` (list of strings or of objects with
  ``snippet``/``text``/``content`` and optional ``title``, or the
  column layout ``{"snippets": [...], "titles": [...]}``), ``snippets``,
  ``ctxs`` (list of ``{title, text}``), or ``context`` (a string: MRQA-style
  ``[DOC] [TLE] title [SEP] text`` markup or one snippet per line; or a list).
- id: ``id``, ``qid``, ``question_id`` or ``_id``; else the file name for a
  one-record file, else ``sq-`` + a hash of the question and answers.
- MRQA records ``{"context": ..., "qas": [...]}`` expand to one task per
  question; ``{"header": ...}`` lines are skipped.
- ``category``, ``air_date``, ``round``, ``value``, ``show_number`` and
  ``difficulty`` are kept in the task metadata; ``difficulty`` and ``tags`` also
  become tags.

Records without a question, an answer or any snippet are skipped and each gives
one problem line; nothing is dropped silently.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillopt_core.tasks.task import Task

JUDGE_SPEC: dict[str, Any] = {"type": "f1"}  # hard = exact match, soft = token F1; answers from reference
_SUFFIXES = (".jsonl", ".json", ".jsonl.gz", ".json.gz")
_META_KEYS = ("category", "air_date", "round", "value", "show_number", "difficulty")
_MRQA_MARKUP = re.compile(r"\[(DOC|PAR|TLE|SEP)\]")


@dataclass(frozen=True)
class Snippet:
    title: str
    text: str


def format_snippets(snippets: list[Snippet]) -> str:
    lines = ["Search results:"]
    for number, snip in enumerate(snippets, start=1):
        lines.append(f"[{number}] {snip.title}: {snip.text}" if snip.title else f"[{number}] {snip.text}")
    return "\n".join(lines)


# -- field readers ---------------------------------------------------------- #


def _text(value: Any) -> str:
    return " ".join(value.split()) if isinstance(value, str) else ""


def _answers(record: dict[str, Any]) -> list[str]:
    raw = record.get("answers", record.get("answer"))
    if isinstance(raw, dict):
        raw = raw.get("text", [])
    values: Any = [raw] if isinstance(raw, (str, int, float)) and not isinstance(raw, bool) else raw
    out: list[str] = []
    for value in list(values or []) + list(record.get("aliases") or []):
        text = _text(str(value)) if isinstance(value, (str, int, float)) else ""
        if text and text not in out:
            out.append(text)
    return out


def _snippet(item: Any) -> Snippet | None:
    if isinstance(item, str):
        text = _text(item)
        return Snippet("", text) if text else None
    if isinstance(item, dict):
        text = next((_text(item[k]) for k in ("snippet", "text", "content") if _text(item.get(k))), "")
        return Snippet(_text(item.get("title")), text) if text else None
    return None


def _mrqa_context(context: str) -> list[Snippet]:
    if not _MRQA_MARKUP.search(context):
        return [s for s in (_snippet(line) for line in context.splitlines()) if s]
    snippets = []
    for doc in re.split(r"\[DOC\]|\[PAR\]", context):
        title, _, text = doc.partition("[SEP]")
        if not text:
            title, text = "", title
        snip = _snippet({"title": _MRQA_MARKUP.sub(" ", title), "text": _MRQA_MARKUP.sub(" ", text)})
        if snip:
            snippets.append(snip)
    return snippets


def _snippets(record: dict[str, Any]) -> list[Snippet]:
    source = next((record[k] for k in ("search_results", "snippets", "ctxs") if record.get(k)), None)
    if source is None:
        context = record.get("context")
        if isinstance(context, str):
            return _mrqa_context(context)
        source = context or []
    if isinstance(source, dict):  # column layout: {"snippets": [...], "titles": [...]}
        texts = source.get("snippets") or source.get("snippet") or []
        titles = source.get("titles") or source.get("title") or []
        source = [{"snippet": t, "title": titles[i] if i < len(titles) else ""} for i, t in enumerate(texts)]
    if not isinstance(source, list):
        return []
    return [s for s in (_snippet(item) for item in source) if s]


def _record_id(record: dict[str, Any], question: str, answers: list[str], fallback: str | None) -> str:
    for key in ("id", "qid", "question_id", "_id"):
        value = record.get(key)
        if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value).strip():
            return str(value).strip()
    if fallback:
        return fallback
    digest = hashlib.sha1(f"{question}\x1f{'|'.join(answers)}".encode()).hexdigest()
    return f"sq-{digest[:12]}"


def record_to_task(record: Any, max_snippets: int | None = None, fallback_id: str | None = None) -> Task:
    """One SearchQA record as a :class:`Task`; ``ValueError`` says why it cannot be."""
    if not isinstance(record, dict):
        raise ValueError(f"expected a JSON object, got {type(record).__name__}")
    question = _text(record.get("question") or record.get("query"))
    if not question:
        raise ValueError("no question ('question' or 'query')")
    answers = _answers(record)
    if not answers:
        raise ValueError("no answer ('answers' or 'answer')")
    snippets = _snippets(record)
    if not snippets:
        raise ValueError("no snippets ('search_results', 'snippets', 'ctxs' or 'context')")
    total = len(snippets)
    if max_snippets is not None:
        snippets = snippets[:max_snippets]
    metadata = {k: record[k] for k in _META_KEYS if isinstance(record.get(k), (str, int, float))}
    metadata["snippets"] = len(snippets)
    metadata["snippets_available"] = total
    tags = [t for t in record.get("tags") or [] if isinstance(t, str)]
    if isinstance(record.get("difficulty"), str):
        tags.append(record["difficulty"])
    return Task(
        id=_record_id(record, question, answers, fallback_id),
        prompt=question,
        context=format_snippets(snippets),
        reference=tuple(answers),
        judge=dict(JUDGE_SPEC),
        tags=tuple(dict.fromkeys(["searchqa", *tags])),
        metadata=metadata,
    )


# -- files ------------------------------------------------------------------ #


def _open_text(path: Path) -> Any:
    if path.name.endswith(".gz"):
        return gzip.open(path, "rt", encoding="utf-8")
    return path.open("r", encoding="utf-8")


def _expand(record: Any) -> Iterator[Any]:
    """MRQA records hold several questions over one context."""
    if isinstance(record, dict) and isinstance(record.get("qas"), list) and "context" in record:
        for qa in record["qas"]:
            yield {**qa, "context": record["context"]} if isinstance(qa, dict) else qa
    else:
        yield record


def _records(path: Path) -> Iterator[tuple[str, Any, str | None]]:
    """(where, record or problem, fallback id) for every record of one file.
    A problem is yielded as an Exception instance in the record slot."""
    if path.name.endswith((".jsonl", ".jsonl.gz")):
        with _open_text(path) as handle:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                where = f"{path.name}:line {number}"
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as exc:
                    yield where, ValueError(f"not valid JSON ({exc.msg})"), None
                    continue
                if isinstance(record, dict) and "header" in record and "question" not in record:
                    continue  # MRQA header line, not a record
                for item in _expand(record):
                    yield where, item, None
        return
    with _open_text(path) as handle:
        try:
            data = json.load(handle)
        except json.JSONDecodeError as exc:
            yield path.name, ValueError(f"not valid JSON ({exc.msg} at line {exc.lineno})"), None
            return
    if isinstance(data, dict) and isinstance(data.get("data"), list):
        data = data["data"]
    if isinstance(data, dict):  # one record per file: the file name is its id
        for item in _expand(data):
            yield path.name, item, path.name.split(".")[0]
        return
    if not isinstance(data, list):
        yield path.name, ValueError("expected a list of records or one record object"), None
        return
    for number, record in enumerate(data, start=1):
        for item in _expand(record):
            yield f"{path.name}:record {number}", item, None


def data_files(path: Path) -> list[Path]:
    if path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.is_file() and p.name.endswith(_SUFFIXES))
        if not files:
            raise FileNotFoundError(f"No .json or .jsonl files under {path}. Check env.data_path.")
        return files
    if not path.is_file():
        raise FileNotFoundError(f"SearchQA data not found: {path}. Check env.data_path.")
    return [path]


def read_tasks(
    path: Path, max_snippets: int | None = None, limit: int | None = None
) -> tuple[list[Task], list[str]]:
    """Tasks from ``path`` (file or folder) and one problem line per skipped
    record (unreadable, incomplete or repeated id). Stops after ``limit`` tasks."""
    tasks: list[Task] = []
    problems: list[str] = []
    seen: set[str] = set()
    for file in data_files(path):
        for where, record, fallback in _records(file):
            if isinstance(record, Exception):
                problems.append(f"{where}: {record}")
                continue
            try:
                task = record_to_task(record, max_snippets, fallback)
            except ValueError as exc:
                problems.append(f"{where}: {exc}")
                continue
            if task.id in seen:
                problems.append(f"{where}: repeats id '{task.id}' (kept the first)")
                continue
            seen.add(task.id)
            tasks.append(task)
            if limit is not None and len(tasks) >= limit:
                return tasks, problems
    return tasks, problems
