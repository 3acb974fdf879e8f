"""A night's tasks: the project's enabled recurring tasks and their pool items, a skill's
items and the person's corrections among them, and the fingerprint that makes a night idle."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from skillopt_core import Task
from sleep.cycle.config import NightConfig
from sleep.cycle.corrections import correction_edits
from sleep.index import Index
from sleep.replay.instances import task_items
from sleep.rule_text import Style


def load(project: Path) -> tuple[list, dict[str, list], list]:
    """The project's enabled tasks, their member pool items by task id, and its sessions."""
    from sleep.mine.store import load_pool, load_tasks

    with Index.open() as index:
        records = load_tasks(index.conn, str(project), enabled_only=True)
        pools = {p: load_pool(index.conn, p) for p in {r.project for r in records}}
        sessions = index.sessions(project=str(project), include_subagents=False)
    members: dict[str, list] = {}
    for pool in pools.values():
        for item in pool:
            if item.task_id:
                members.setdefault(item.task_id, []).append(item)
    return records, members, sessions


def items(records: list, members: dict[str, list], config: NightConfig) -> list[Task]:
    """The items of a skill's tasks (most supported first, at most ``sleep.max_tasks`` tasks)."""
    return [t for r in chosen(records, config)
            for t in task_items(r, members.get(r.id, []), config.sleep.instances_per_task,
                                ("skillopt-sleep", *[f"host:{h}" for h in r.hosts]))]


def chosen(records: list, config: NightConfig) -> list:
    return sorted(records, key=lambda r: (-r.support, r.id))[: config.sleep.max_tasks]


def evidence(group: Any, members: dict[str, list], config: NightConfig) -> list[dict]:
    """The pool items' evidence of a skill's (chosen) tasks: the person's words among them."""
    return [item.evidence for r in chosen(group.records, config) for item in members.get(r.id, [])]


def edits(group: Any, members: dict[str, list], config: NightConfig, style: Style | None = None) -> list:
    """The correction edits of a skill's (chosen) tasks, written in the skill's ``style``."""
    found = evidence(group, members, config)
    return correction_edits(found, config.sleep.max_corrections, style) if config.sleep.use_corrections else []


def fingerprint(tasks: list[Task], seed_text: str, config: NightConfig, edits: list) -> str:
    """What a skill's part trains on; the same as its last completed part's makes the part idle.
    ``sleep.skip_idle`` is left out: whether to skip an idle part is not what it trains on."""
    payload = {
        "tasks": [[t.id, t.prompt, t.judge, t.metadata.get("support")] for t in tasks],
        "skill": hashlib.sha256(seed_text.encode("utf-8")).hexdigest(),
        "config": [config.core.to_dict(), config.sleep.model_dump(exclude={"skip_idle"})],
        "edits": [e.to_dict() for e in edits],
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode("utf-8")).hexdigest()
