"""Read LiveMathematicianBench's monthly files into multiple-choice tasks.

Published layout (dataset ``LiveMathematicianBench/LiveMathematicianBench``):
``data/<YYYYMM>/qa_<YYYYMM>_final.json``, each a JSON array of items. The
fields read here:

- ``month`` (``"202511"``; else taken from the file name) and ``no`` (the
  item's number in its month; else its position, from 1): the task id is
  ``<month>:<no>``, the id SkillOpt's published split manifests use;
- ``mcq.question``; ``mcq.choices``: a list of ``{label, text}`` (the raw
  files list only the distractors there) or of strings, or a ``{label: text}``
  mapping; ``mcq.correct_choice``: ``{label, text}`` or a label. The correct
  choice is added to the choices when they do not already hold its label;
- kept as metadata: ``paper_link``, ``theorem_type`` (also tags), and
  ``theorem`` / ``sketch`` (a string, or an object with ``content``) for the
  ``use_theorem`` / ``use_sketch`` options.

The choices of every item are shuffled once, at load time, by a RNG seeded
from ``(choice_seed, task id)``: the same seed gives the same order on every
run and machine, and the correct answer is not always the first label. Items
without a question, choices or a correct choice are skipped, one problem line
each.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from pathlib import Path
from typing import Any

from skillopt_core.tasks.collect import TaskCollector
from skillopt_core.tasks.task import Task

LABELS = "ABCDEFGHIJ"
_MONTH_FILE = re.compile(r"qa_(\d{6})_final\.json$")
_LABEL = re.compile(r"^\(?([A-J])\)?(?:[.):\s]|$)")


def _text(value: Any) -> str:
    if isinstance(value, dict):
        value = value.get("content") or value.get("text") or ""
    return str(value).strip() if isinstance(value, (str, int, float)) else ""


def _label(value: Any) -> str:
    return str(value or "").strip().upper().strip("().:")


def _choices(raw: Any) -> list[tuple[str, str]]:
    if isinstance(raw, dict):
        return [(_label(k), _text(v)) for k, v in sorted(raw.items()) if _text(v)]
    out: list[tuple[str, str]] = []
    for index, item in enumerate(raw if isinstance(raw, list) else []):
        if isinstance(item, dict):
            label, text = _label(item.get("label")) or LABELS[index % len(LABELS)], _text(item.get("text"))
        else:
            label, text = LABELS[index % len(LABELS)], _text(item)
        if text:
            out.append((label, text))
    return out


def shuffle_choices(choices: list[tuple[str, str]], correct: str, seed: int, task_id: str) -> tuple[list[str], str]:
    """The choice texts in a seeded order, and the new label (A, B, ...) of the
    correct one. The order depends only on ``seed`` and ``task_id``."""
    digest = hashlib.sha256(f"{seed}:{task_id}".encode()).digest()
    order = list(range(len(choices)))
    random.Random(int.from_bytes(digest[:8], "big")).shuffle(order)
    texts = [choices[i][1] for i in order]
    new_correct = next(LABELS[pos] for pos, i in enumerate(order) if choices[i][0] == correct)
    return texts, new_correct


def item_to_task(item: Any, month: str, position: int, seed: int | None, use_theorem: bool, use_sketch: bool) -> Task:
    """One published item as a Task; ``ValueError`` says why it cannot be."""
    if not isinstance(item, dict):
        raise ValueError(f"expected a JSON object, got {type(item).__name__}")
    mcq: dict[str, Any] = item["mcq"] if isinstance(item.get("mcq"), dict) else item
    question = _text(mcq.get("question"))
    if not question:
        raise ValueError("no mcq.question")
    choices = _choices(mcq.get("choices"))
    correct_raw = mcq.get("correct_choice")
    correct = _label(correct_raw.get("label") if isinstance(correct_raw, dict) else correct_raw)
    if not correct:
        raise ValueError("no mcq.correct_choice")
    if correct not in {label for label, _ in choices}:
        correct_text = _text(correct_raw.get("text")) if isinstance(correct_raw, dict) else ""
        if not correct_text:
            raise ValueError(f"correct choice {correct} is neither among the choices nor given with its text")
        choices.append((correct, correct_text))
        choices.sort(key=lambda c: LABELS.find(c[0]) if c[0] in LABELS else len(LABELS))
    if len(choices) < 2:
        raise ValueError("fewer than two choices")
    if len(choices) > len(LABELS):
        raise ValueError(f"more than {len(LABELS)} choices")
    month = str(item.get("month") or month).strip()
    number = item.get("no", position)
    task_id = f"{month}:{number}" if month else str(number)
    if seed is None:
        texts, answer = [t for _, t in choices], LABELS[[label for label, _ in choices].index(correct)]
    else:
        texts, answer = shuffle_choices(choices, correct, seed, task_id)
    context_parts = []
    if use_theorem and _text(item.get("theorem")):
        context_parts.append(f"Theorem (from the paper):\n{_text(item['theorem'])}")
    if use_sketch and _text(item.get("sketch")):
        context_parts.append(f"Proof sketch (from the paper):\n{_text(item['sketch'])}")
    kinds = item.get("theorem_type")
    kinds = [kinds] if isinstance(kinds, str) else [k for k in kinds or [] if isinstance(k, str)]
    options = "\n".join(f"{LABELS[i]}. {text}" for i, text in enumerate(texts))
    return Task(
        id=task_id,
        prompt=f"{question}\n\nChoices:\n{options}",
        context="\n\n".join(context_parts),
        reference=answer,
        judge={"type": "exact", "answers": [answer], "case_sensitive": True},
        tags=tuple(dict.fromkeys(["livemathematicianbench", *kinds])),
        metadata={"month": month, "no": number, "paper_link": _text(item.get("paper_link")),
                  "labels": LABELS[: len(texts)]},
    )


def data_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    if path.is_dir():
        files = sorted(p for p in path.rglob("qa_*_final.json") if p.is_file())
        if files:
            return files
        raise FileNotFoundError(f"No qa_<YYYYMM>_final.json files under {path}. Check env.data_path.")
    raise FileNotFoundError(f"LiveMathematicianBench data not found: {path}. Check env.data_path.")


def read_tasks(path: Path, seed: int | None = 0, use_theorem: bool = False, use_sketch: bool = False
               ) -> tuple[list[Task], list[str]]:
    """Tasks from a monthly file or a folder of them, and one problem line per
    skipped item (unreadable file, incomplete item, repeated id)."""
    found = TaskCollector()
    for file in data_files(path):
        month = match.group(1) if (match := _MONTH_FILE.search(file.name)) else ""
        try:
            items = json.loads(file.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            found.problems.append(f"{file.name}: not readable JSON ({exc})")
            continue
        if not isinstance(items, list):
            found.problems.append(f"{file.name}: expected a JSON array of items")
            continue
        for position, item in enumerate(items, start=1):
            found.add(f"{file.name}: item {position}", item_to_task, item, month, position, seed, use_theorem,
                      use_sketch)
    return found.result()


def parse_choice(answer: str, labels: str) -> str | None:
    """The choice label an answer names: ``B``, ``(B)``, ``B.``, ``B) text``,
    ``Option B``; None when it names none of ``labels``."""
    text = answer.strip().strip("*_`\"' ")
    text = re.sub(r"^(?:option|choice)\s+", "", text, flags=re.IGNORECASE)
    match = _LABEL.match(text.upper())
    if match and match.group(1) in labels:
        return match.group(1)
    return None
