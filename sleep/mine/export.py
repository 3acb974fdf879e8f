"""Handing mined tasks to the core: a project's enabled tasks as a ``jsonl_tasks`` file.

One JSON object per line, the shape ``skillopt_core``'s ``jsonl_tasks`` env reads
(``id``, ``prompt``, ``context``, ``judge``, ``tags``, ``metadata``). The file is
written to a temporary name and renamed, so a reader never sees half of it.

Outside a night nothing replays with actions in a sandbox, so the judge is
written in its text form (:func:`sleep.replay.modes.as_text_judge`: ``ran pnpm``
becomes "the answer names pnpm"); the outcome judge itself is kept in
``metadata.outcome_judge`` for a caller whose targets act.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from sleep import paths
from sleep.index import Index
from sleep.mine.store import TaskRecord, load_tasks
from sleep.replay.modes import as_text_judge


@dataclass
class ExportResult:
    path: Path
    tasks: int
    skipped_disabled: int


def task_line(t: TaskRecord) -> dict:
    """The ``jsonl_tasks`` record of one task."""
    text_judge = as_text_judge(t.judge)
    metadata = {"project": t.project, "intent": t.intent, "support": t.support, "hosts": t.hosts,
                "first_seen": t.first_seen, "last_seen": t.last_seen}
    if text_judge != t.judge:
        metadata["outcome_judge"] = t.judge
    return {
        "id": t.id,
        "prompt": t.prompt,
        "context": t.context,
        "judge": text_judge,
        "tags": ["skillopt-sleep", "recurring", *[f"host:{h}" for h in t.hosts]],
        "metadata": metadata,
    }


def export_tasks_jsonl(project: str, path: str | os.PathLike[str], *, index_path: Path | None = None
                       ) -> ExportResult:
    """Write the enabled tasks of ``project`` (exactly that directory, as stored by the
    miner) to ``path`` as a ``jsonl_tasks`` file; returns how many were written.

    An index without tasks for the project gives an empty file (0 tasks), not an error.
    """
    out = Path(path)
    ip = Path(index_path) if index_path else paths.index_path()
    tasks: list[TaskRecord] = []
    disabled = 0
    if ip.exists():
        with Index.open(ip) as index:
            every = load_tasks(index.conn, os.path.normpath(project), exact=True, with_members=False)
        tasks = [t for t in every if t.enabled]
        disabled = len(every) - len(tasks)
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=out.name + ".", suffix=".tmp", dir=out.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            for t in tasks:
                f.write(json.dumps(task_line(t), ensure_ascii=False) + "\n")
        os.replace(tmp, out)
    except BaseException:
        os.unlink(tmp)
        raise
    return ExportResult(out, len(tasks), disabled)
