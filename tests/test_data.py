"""Dataset splits are stable per task id; task files report every bad line."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from skillopt_core.tasks.data import Dataset, assign_split, load_tasks_jsonl, split_tasks
from skillopt_core.tasks.task import Task


def tasks(n: int, prefix: str = "task") -> list[Task]:
    return [Task(id=f"{prefix}-{i}", prompt=f"prompt {i}") for i in range(n)]


def split_of(dataset: Dataset) -> dict[str, str]:
    return {t.id: name for name in ("train", "val", "test") for t in dataset.split(name)}


def test_assign_split_is_deterministic_for_id_and_seed():
    assert [assign_split(f"id-{i}", 7) for i in range(50)] == [assign_split(f"id-{i}", 7) for i in range(50)]


def test_assign_split_depends_on_seed():
    ids = [f"id-{i}" for i in range(200)]
    assert [assign_split(i, 0) for i in ids] != [assign_split(i, 1) for i in ids]


def test_ratio_is_roughly_honoured_over_1000_ids():
    counts = Counter(assign_split(f"item-{i}", 0, (2, 1, 7)) for i in range(1000))
    assert 160 <= counts["train"] <= 240
    assert 70 <= counts["val"] <= 130
    assert 640 <= counts["test"] <= 760


def test_zero_ratio_split_gets_nothing():
    assert {assign_split(f"item-{i}", 0, (1, 0, 1)) for i in range(300)} == {"train", "test"}


def test_bad_ratio_is_rejected():
    with pytest.raises(ValueError, match="three whole numbers"):
        assign_split("x", 0, (1, 2))  # type: ignore[arg-type]


def test_split_is_stable_across_runs():
    assert split_of(split_tasks(tasks(100), seed=3)) == split_of(split_tasks(tasks(100), seed=3))


def test_existing_tasks_keep_their_split_when_tasks_are_added_or_removed():
    before = split_of(split_tasks(tasks(100), seed=0))
    grown = split_of(split_tasks(tasks(100) + tasks(50, prefix="new"), seed=0))
    shrunk = split_of(split_tasks(tasks(100)[::2], seed=0))
    assert all(grown[tid] == split for tid, split in before.items())
    assert all(before[tid] == split for tid, split in shrunk.items())


def test_split_keeps_input_order_within_each_split():
    items = list(reversed(tasks(60)))
    dataset = split_tasks(items, seed=0)
    for name in ("train", "val", "test"):
        positions = [items.index(t) for t in dataset.split(name)]
        assert positions == sorted(positions)


def test_duplicate_task_id_is_an_error_naming_the_id():
    with pytest.raises(ValueError, match="'task-1'"):
        split_tasks(tasks(3) + [Task(id="task-1", prompt="again")])


def test_small_dataset_gets_nonempty_train_and_val():
    for n in range(3, 12):
        for seed in range(5):
            summary = split_tasks(tasks(n), seed=seed).summary()
            assert summary["train"] >= 1 and summary["val"] >= 1, (n, seed, summary)
            assert sum(summary.values()) == n


def test_fallback_does_not_fill_a_split_whose_ratio_is_zero():
    assert split_tasks(tasks(5), seed=0, ratio=(1, 0, 1)).summary()["val"] == 0


def test_summary_counts_each_split():
    dataset = split_tasks(tasks(40), seed=0)
    assert dataset.summary() == {name: len(dataset.split(name)) for name in ("train", "val", "test")}
    assert sum(dataset.summary().values()) == 40


def test_unknown_split_name_suggests_nearest():
    with pytest.raises(ValueError, match="Did you mean 'train'"):
        split_tasks(tasks(5)).split("trian")


# --------------------------------------------------------------------------- load_tasks_jsonl


def write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def good(task_id: str, **extra) -> str:
    return json.dumps({"id": task_id, "prompt": "Say hi", "judge": {"type": "contains", "value": "hi"}, **extra})


def test_load_tasks_jsonl_reads_all_fields(tmp_path):
    line = good("a", context="ctx", reference="hi", tags=["greeting"], metadata={"source": "test"})
    loaded, problems = load_tasks_jsonl(write_lines(tmp_path / "t.jsonl", [line]))
    assert problems == []
    assert loaded == [
        Task(id="a", prompt="Say hi", context="ctx", reference="hi",
             judge={"type": "contains", "value": "hi"}, tags=("greeting",), metadata={"source": "test"})
    ]


def test_load_tasks_jsonl_counts_every_bad_line(tmp_path):
    lines = [
        good("a"),
        "{not json",
        json.dumps({"id": "b", "prompt": "x"}),  # no judge
        json.dumps({"id": "c", "promt": "x", "judge": "json_valid"}),  # misspelled key
        json.dumps({"id": "d", "prompt": "x", "judge": {"type": "regx", "pattern": "x"}}),  # bad judge
        "",
        good("a"),  # repeated id
        good("e"),
    ]
    loaded, problems = load_tasks_jsonl(write_lines(tmp_path / "t.jsonl", lines))
    assert [t.id for t in loaded] == ["a", "e"]
    assert [p.split(":")[0] for p in problems] == ["line 2", "line 3", "line 4", "line 5", "line 7"]
    assert "did you mean 'prompt'" in problems[2]
    assert "regex" in problems[3]


def test_load_tasks_jsonl_without_judge_requirement_keeps_judgeless_tasks(tmp_path):
    path = write_lines(tmp_path / "t.jsonl", [json.dumps({"id": "b", "prompt": "x"})])
    loaded, problems = load_tasks_jsonl(path, require_judge=False)
    assert [t.id for t in loaded] == ["b"] and problems == []


def test_load_tasks_jsonl_reports_non_utf8_line(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_bytes(good("a").encode() + b"\n\xff\xfe\n")
    loaded, problems = load_tasks_jsonl(path)
    assert len(loaded) == 1 and problems == ["line 2: not valid UTF-8"]


def test_load_tasks_jsonl_missing_file_names_the_path(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.jsonl"):
        load_tasks_jsonl(tmp_path / "nope.jsonl")


def test_a_group_is_held_out_by_instance() -> None:
    # Instances of one recurring task share a group: the gate must see some of them held out.
    tasks = [Task(id=f"t-{i}", prompt="p", judge="json_valid", metadata={"group": "t"}) for i in range(4)]
    tasks += [Task(id=f"u-{i}", prompt="p", judge="json_valid", metadata={"group": "u"}) for i in range(3)]
    for seed in range(20):
        data = split_tasks(tasks, seed=seed, ratio=(2, 1, 0))
        for group in ("t", "u"):
            assert any(t.metadata["group"] == group for t in data.val), (seed, group)
            assert any(t.metadata["group"] == group for t in data.train), (seed, group)


def test_ungrouped_tasks_split_as_before() -> None:
    tasks = [Task(id=f"x{i}", prompt="p", judge="json_valid") for i in range(30)]
    grouped = [Task(id=t.id, prompt="p", judge="json_valid", metadata={"group": t.id}) for t in tasks]
    assert [t.id for t in split_tasks(tasks, seed=3).val] == [t.id for t in split_tasks(grouped, seed=3).val]
