"""Datasets: stable train / val / test splits and task files.

A task's split is a pure function of its id and the seed
(``sha256(f"{seed}:{task_id}")``), so a task never moves between splits across
runs, and adding or removing other tasks never moves it either. The one
exception is the small-dataset fallback in :func:`split_tasks`, documented
there, which only ever applies while a split would otherwise be empty.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillopt_core.tasks.collect import TaskCollector
from skillopt_core.tasks.judges import JudgeError, validate_judge_spec
from skillopt_core.tasks.task import Task

__all__ = ["SPLITS", "Dataset", "assign_split", "load_tasks_jsonl", "split_tasks"]

SPLITS = ("train", "val", "test")


@dataclass(frozen=True)
class Dataset:
    train: tuple[Task, ...]
    val: tuple[Task, ...]
    test: tuple[Task, ...]

    def split(self, name: str) -> tuple[Task, ...]:
        if name not in SPLITS:
            near = difflib.get_close_matches(name, SPLITS, n=1)
            hint = f" Did you mean '{near[0]}'?" if near else ""
            raise ValueError(f"Unknown split '{name}'.{hint} Splits: {', '.join(SPLITS)}.")
        return getattr(self, name)

    def summary(self) -> dict[str, int]:
        return {name: len(getattr(self, name)) for name in SPLITS}


def _check_ratio(ratio: Sequence[int]) -> tuple[int, int, int]:
    if len(ratio) != 3 or any(isinstance(r, bool) or not isinstance(r, int) or r < 0 for r in ratio):
        raise ValueError(f"Split ratio must be three whole numbers >= 0 (train, val, test), got {list(ratio)}.")
    if sum(ratio) == 0:
        raise ValueError("Split ratio must not be all zeros; e.g. use [2, 1, 7].")
    return (ratio[0], ratio[1], ratio[2])


def _hash(seed: int, task_id: str, salt: str = "") -> int:
    digest = hashlib.sha256(f"{seed}:{salt}{task_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def assign_split(task_id: str, seed: int, ratio: tuple[int, int, int] = (2, 1, 7)) -> str:
    """The split ("train", "val" or "test") of one task id.

    The first 64 bits of ``sha256(f"{seed}:{task_id}")`` pick a bucket in
    ``0 .. sum(ratio) - 1``; buckets are handed out to train, val and test in
    proportion to ``ratio``."""
    train, val, _ = _check_ratio(ratio)
    bucket = _hash(seed, task_id) % sum(ratio)
    if bucket < train:
        return "train"
    if bucket < train + val:
        return "val"
    return "test"


def _spread_groups(tasks: Sequence[Task], assigned: dict[str, str], seed: int, ratio: tuple[int, int, int]) -> None:
    groups: dict[str, list[str]] = {}
    for task in tasks:
        group = task.metadata.get("group") if isinstance(task.metadata, dict) else None
        if group is not None:
            groups.setdefault(str(group), []).append(task.id)
    for ids in groups.values():
        if len(ids) < 2:
            continue
        for name, share in (("val", ratio[1]), ("train", ratio[0])):
            if share == 0 or any(assigned[i] == name for i in ids):
                continue
            donors = [i for i in ids if sum(assigned[j] == assigned[i] for j in ids) > 1]
            if donors:
                assigned[min(donors, key=lambda i: _hash(seed, i, "group:"))] = name


def split_tasks(
    tasks: Sequence[Task], seed: int = 0, ratio: tuple[int, int, int] = (2, 1, 7)
) -> Dataset:
    """Split ``tasks`` by :func:`assign_split`, keeping input order within each split.

    Duplicate task ids raise ``ValueError`` naming the id.

    Small-dataset fallback: with 3 or more tasks, train and val (when their
    ratio is not 0) are never empty. If one would be, the task with the lowest
    ``sha256(f"{seed}:fallback:{task_id}")`` is moved into it from the largest
    other split (ties: test, then val, then train); train is filled first. This
    is deterministic for a given set of tasks, and it only happens while the
    split would otherwise be empty, so it does not affect realistic datasets.

    Groups: tasks whose ``metadata["group"]`` is the same (instances of one
    recurring task) are held out by instance. A group of two or more that the
    hash put entirely outside val gets its member with the lowest
    ``sha256(f"{seed}:group:{task_id}")`` moved to val, and one entirely
    outside train gets one moved to train (never its last member of a split),
    so the gate sees held-out instances of the tasks training saw.
    """
    ratio = _check_ratio(ratio)
    seen: set[str] = set()
    for task in tasks:
        if task.id in seen:
            raise ValueError(f"Duplicate task id '{task.id}': every task needs a unique id to be split stably.")
        seen.add(task.id)

    assigned = {task.id: assign_split(task.id, seed, ratio) for task in tasks}
    _spread_groups(tasks, assigned, seed, ratio)
    if len(tasks) >= 3:
        for name, share in (("train", ratio[0]), ("val", ratio[1])):
            if share == 0 or name in assigned.values():
                continue
            sizes = {s: sum(1 for v in assigned.values() if v == s) for s in SPLITS if s != name}
            donor = max(("test", "val", "train"), key=lambda s: sizes.get(s, -1))
            moved = min(
                (tid for tid, s in assigned.items() if s == donor),
                key=lambda tid: _hash(seed, tid, "fallback:"),
            )
            assigned[moved] = name

    parts: dict[str, list[Task]] = {name: [] for name in SPLITS}
    for task in tasks:
        parts[assigned[task.id]].append(task)
    return Dataset(tuple(parts["train"]), tuple(parts["val"]), tuple(parts["test"]))


# --------------------------------------------------------------------------- #
# JSONL task files

TASK_KEYS = ("id", "prompt", "context", "reference", "judge", "tags", "metadata")


def _task_from_record(record: Any, require_judge: bool) -> Task:
    """Build a Task from one decoded JSON line; ValueError says what is wrong."""
    if not isinstance(record, dict):
        raise ValueError(f"expected a JSON object, got {type(record).__name__}")
    unknown = [k for k in record if k not in TASK_KEYS]
    if unknown:
        near = difflib.get_close_matches(unknown[0], TASK_KEYS, n=1)
        hint = f" (did you mean '{near[0]}'?)" if near else ""
        raise ValueError(f"unknown key '{unknown[0]}'{hint}; keys are {', '.join(TASK_KEYS)}")
    task_id = record.get("id")
    if isinstance(task_id, int) and not isinstance(task_id, bool):
        task_id = str(task_id)
    if not isinstance(task_id, str) or not task_id.strip():
        raise ValueError("'id' must be a non-empty string")
    prompt = record.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        raise ValueError("'prompt' must be a non-empty string")
    context = record.get("context") or ""
    if not isinstance(context, str):
        raise ValueError("'context' must be a string")
    tags = record.get("tags") or []
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise ValueError("'tags' must be a list of strings")
    metadata = record.get("metadata") or {}
    if not isinstance(metadata, dict):
        raise ValueError("'metadata' must be an object")
    judge = record.get("judge")
    if judge is None:
        if require_judge:
            raise ValueError("no 'judge' spec; add one, e.g. {\"type\": \"exact\", \"answers\": [\"...\"]}")
    else:
        try:
            validate_judge_spec(judge)
        except JudgeError as exc:
            raise ValueError(f"bad judge spec: {exc}") from exc
    return Task(
        id=task_id,
        prompt=prompt,
        context=context,
        reference=record.get("reference"),
        judge=judge,
        tags=tuple(tags),
        metadata=dict(metadata),
    )


def load_tasks_jsonl(path: str | Path, require_judge: bool = True) -> tuple[list[Task], list[str]]:
    """Read tasks from a JSONL file: one object per line with ``id``, ``prompt``
    and ``judge`` (required unless ``require_judge`` is False) and optional
    ``context``, ``reference``, ``tags``, ``metadata``.

    Returns ``(tasks, problems)``: every line that is skipped (bad JSON, bad or
    unknown keys, invalid judge spec, repeated id) gives one problem
    ``"line N: ..."``; blank lines are ignored. A missing or unreadable file
    raises ``FileNotFoundError`` / ``OSError`` (a systemic failure)."""
    file = Path(path)
    if not file.is_file():
        raise FileNotFoundError(f"Task file not found: {file}. Check env.data_path in the config.")
    found = TaskCollector(id_name="task id")
    with file.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                line = raw.decode("utf-8").strip()
            except UnicodeDecodeError:
                found.problems.append(f"line {number}: not valid UTF-8")
                continue
            if not line:
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                found.problems.append(f"line {number}: not valid JSON ({exc.msg} at column {exc.colno})")
                continue
            found.add(f"line {number}", _task_from_record, record, require_judge)
    return found.result()
