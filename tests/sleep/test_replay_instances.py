"""A recurring task's instances are the night's items."""

from __future__ import annotations

from types import SimpleNamespace

from sleep.mine.select import PoolItem
from sleep.replay.instances import instance_id, task_items

RECORD = SimpleNamespace(id="t1", intent="run the tests", support=3, prompt="run the tests", context="",
                         judge=[{"type": "ran", "command": "pnpm"}])


def item(n: int, text: str, shell: list[str], files: list[str] | None = None) -> PoolItem:
    return PoolItem("/p", "claude-code", f"s{n}", 0, f"2026-11-2{n}T09:00:00Z", text, shell=shell,
                    files=files or [])


def test_each_distinct_member_prompt_is_an_item_of_the_task() -> None:
    members = [item(1, "run the tests", ["npm test"]), item(2, "pls run the test suite", ["pnpm test"], ["src/a.ts"]),
               item(3, "Run the tests", ["pnpm test"])]
    items = task_items(RECORD, members, 4, ("skillopt-sleep",))
    assert [t.prompt for t in items] == ["Run the tests", "pls run the test suite"]  # newest first, deduplicated
    assert all(t.metadata["group"] == "t1" and t.judge == RECORD.judge for t in items)
    assert items[1].context == "Files this request was about last time: src/a.ts"
    assert items[0].id == instance_id("t1", "claude-code", "s3", 0) != items[1].id
    assert {"npm", "pnpm", "git status"} <= set(items[0].metadata["allowed_commands"])


def test_instances_per_task_caps_the_items() -> None:
    members = [item(n, f"run the tests {n}", []) for n in range(1, 7)]
    assert len(task_items(RECORD, members, 2, ())) == 2


def test_a_task_without_members_is_one_item() -> None:
    items = task_items(RECORD, [], 4, ())
    assert [(t.id, t.prompt) for t in items] == [("t1", "run the tests")]
