"""A recurring task's instances are the items a night replays.

Each recurring task contributes up to ``sleep.instances_per_task`` of its member
prompts (the most recent distinct ones) as separate items, each with its own
prompt and a context naming the files its session touched, grouped by the task
(``metadata["task_id"]``) and judged by the task's judge. Their ids are the
task's id plus a stable hash of the member (host, session, turn), so the split,
which is assigned by item id, holds out instances: the gate asks whether the
skill helps the next time the person asks. A task without members gives its
representative prompt as one item, as before.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

from skillopt_core import Task
from sleep.replay.policy import allowed_commands

MAX_CONTEXT_FILES = 12
# Below this many val items a gate decision says little; the night says so.
MIN_MEANINGFUL_VAL = 4


def instance_id(task_id: str, host: str, session_id: str, prompt_index: int) -> str:
    digest = hashlib.sha256(f"{host}\0{session_id}\0{prompt_index}".encode()).hexdigest()[:8]
    return f"{task_id}-{digest}"


def _context(files: list[str]) -> str:
    if not files:
        return ""
    shown = ", ".join(files[:MAX_CONTEXT_FILES]) + (" ..." if len(files) > MAX_CONTEXT_FILES else "")
    return f"Files this request was about last time: {shown}"


def task_items(record: Any, members: Iterable[Any], limit: int, tags: tuple[str, ...]) -> list[Task]:
    """The items of one mined task (``record``: a TaskRecord; ``members``: its pool items)."""
    members = list(members)
    allowed = allowed_commands((x for item in members for x in item.shell), record.judge)
    base = {"intent": record.intent, "support": record.support, "task_id": record.id, "group": record.id,
            "allowed_commands": allowed}
    seen: set[str] = set()
    picked = []
    for item in sorted(members, key=lambda m: (m.at or "", m.session_id, m.prompt_index), reverse=True):
        key = " ".join(item.text.casefold().split())
        if key in seen:
            continue
        seen.add(key)
        picked.append(item)
        if len(picked) >= limit:
            break
    if not picked:
        return [Task(id=record.id, prompt=record.prompt, context=record.context, judge=record.judge, tags=tags,
                     metadata=base)]
    return [Task(id=instance_id(record.id, m.host, m.session_id, m.prompt_index), prompt=m.text,
                 context=_context(list(m.files)) or record.context, judge=record.judge, tags=tags,
                 metadata={**base, "instance": [m.host, m.session_id, m.prompt_index]})
            for m in picked]
