"""Loader: turn raw benchmark items into :class:`Task` objects.

Copy this file first when you add a benchmark. Keep it pure: read records,
validate them, build tasks, and report every skipped record as one problem
line (never drop one silently). Splitting is not the loader's job.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from skillopt_core.tasks.task import Task

# The bundled items: used when env.data_path is null. Tiny on purpose, so the
# template's tests run instantly. Answers are whole numbers.
ITEMS: tuple[dict[str, Any], ...] = (
    {"id": "conv-01", "question": "How many centimetres are in 3 metres?", "answer": "300"},
    {"id": "conv-02", "question": "How many minutes are in 2.5 hours?", "answer": "150"},
    {"id": "conv-03", "question": "How many grams are in 4 kilograms?", "answer": "4000"},
    {"id": "conv-04", "question": "How many seconds are in 12 minutes?", "answer": "720"},
    {"id": "conv-05", "question": "How many millilitres are in 1.5 litres?", "answer": "1500"},
    {"id": "conv-06", "question": "How many inches are in 5 feet?", "answer": "60"},
    {"id": "conv-07", "question": "How many hours are in 3 days?", "answer": "72"},
    {"id": "conv-08", "question": "How many metres are in 2.4 kilometres?", "answer": "2400"},
)


def item_to_task(item: Any) -> Task:
    """One raw item as a Task; ``ValueError`` says what is wrong with it."""
    if not isinstance(item, dict):
        raise ValueError(f"expected an object, got {type(item).__name__}")
    for key in ("id", "question", "answer"):
        if not isinstance(item.get(key), str) or not item[key].strip():
            raise ValueError(f"'{key}' must be a non-empty string")
    return Task(
        id=item["id"],
        prompt=item["question"],
        reference=item["answer"],
        # The judge spec travels with the task; the env builds it with build_judge.
        judge={"type": "exact", "answers": [item["answer"]]},
        tags=("unit-conversion",),
    )


def load_items(data_path: Path | None) -> tuple[list[Task], list[str]]:
    """Tasks from ``data_path`` (JSONL of {id, question, answer}) or the bundled
    ITEMS, plus one ``"line N: ..."`` problem per skipped line."""
    if data_path is None:
        return [item_to_task(item) for item in ITEMS], []
    if not data_path.is_file():
        raise FileNotFoundError(f"Template data not found: {data_path}. Check env.data_path.")
    tasks: list[Task] = []
    problems: list[str] = []
    for number, line in enumerate(data_path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            tasks.append(item_to_task(json.loads(line)))
        except ValueError as exc:  # json.JSONDecodeError is a ValueError too
            problems.append(f"line {number}: {exc}")
    return tasks, problems
