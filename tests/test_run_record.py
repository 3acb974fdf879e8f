"""The typed run records (issue 32 §1) and the one run reader (§2): a run written by the trainer
before the types existed (``tests/fixtures/run_before_record``, made by its ``make.py`` with
main's trainer) reads and writes back byte for byte, old shapes migrate, and the run resumes."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
from pathlib import Path

import pytest

from skillopt_core.run import events as ev
from skillopt_core.run.api import prepare_training
from skillopt_core.run.reader import RunFileError, RunReader, splits_of
from skillopt_core.run.record import GateRecord, RecordError, SelectedEdit, StepRecord
from skillopt_core.skill.edits import Edit

FIXTURE = Path(__file__).parent / "fixtures" / "run_before_record"
OLD = "out/jsonl_tasks/old"


def dump(data) -> str:
    """As the trainer writes JSON (rundir.atomic_write_json)."""
    return json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n"


@pytest.fixture
def old_run(tmp_path: Path) -> Path:
    """The fixture run, its absolute paths pointed at ``tmp_path`` (as if it had been written there)."""
    root = tmp_path / "root"
    shutil.copytree(FIXTURE, root, ignore=shutil.ignore_patterns("make.py"))
    for path in root.rglob("*"):
        if path.is_file() and path.suffix in (".yaml", ".json", ".jsonl"):
            text = path.read_text(encoding="utf-8")
            if "@ROOT@" in text:
                path.write_text(text.replace("@ROOT@", str(root)), encoding="utf-8")
    return root / OLD


# ----- byte compatibility ----------------------------------------------------------------------

def test_a_history_written_before_the_types_round_trips_byte_for_byte() -> None:
    raw = (FIXTURE / OLD / "history.json").read_text(encoding="utf-8")
    records = [StepRecord.from_dict(h) for h in json.loads(raw)]
    assert [r.action for r in records] == ["accept", "reject", "reject"]
    assert dump([r.to_dict() for r in records]) == raw


def test_todays_trainer_writes_the_history_main_wrote_for_the_same_run(tmp_path: Path) -> None:
    """The fixture's own recipe run again with today's trainer: the same bytes but for the timings."""
    import subprocess
    import sys

    root = tmp_path / "again"
    subprocess.run([sys.executable, str(FIXTURE / "make.py"), str(root)], check=True, capture_output=True,
                   env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])}, timeout=300)

    timing = re.compile(r'\s+"(rollout|reflect|aggregate|select_update|gate|total)": [0-9.e-]+,?$')

    def timeless(path: Path) -> list[str]:
        return [line for line in path.read_text(encoding="utf-8").splitlines()
                if '"latency_s"' not in line and not timing.match(line)]

    assert timeless(root / OLD / "history.json") == timeless(FIXTURE / OLD / "history.json")
    for name in ("gate.json", "selected.json", "patches.json"):
        for step in (1, 2, 3):
            rel = f"{OLD}/steps/step_{step:04d}/{name}"
            assert (root / rel).read_bytes() == (FIXTURE / rel).read_bytes(), rel


def test_gate_and_selected_files_written_before_the_types_round_trip_byte_for_byte() -> None:
    for step in (1, 2, 3):
        sdir = FIXTURE / OLD / "steps" / f"step_{step:04d}"
        gate = (sdir / "gate.json").read_text(encoding="utf-8")
        assert dump(GateRecord.from_dict(json.loads(gate)).to_dict()) == gate
        selected = json.loads((sdir / "selected.json").read_text(encoding="utf-8"))
        assert [SelectedEdit.from_dict(e).to_dict() for e in selected["edits"]] == selected["edits"]


def test_the_typed_record_names_its_fields_in_full() -> None:
    record = StepRecord.from_dict(json.loads((FIXTURE / OLD / "history.json").read_text())[0])
    assert record.accepted and record.gate_stopped_early and record.partial
    assert (record.gate_evaluated_count, record.gate_item_count) == (2, 6)
    assert record.selected_edits[0].content == "Always say banana." and record.screen["passed"] is True
    gate = GateRecord.from_dict(json.loads((FIXTURE / OLD / "steps/step_0001/gate.json").read_text()))
    assert gate.action == "accept" and gate.decision is not None and gate.deltas


# ----- tolerant, versioned reading -------------------------------------------------------------

OLDEST = {"step": 1, "epoch": 1, "train_score": 0.5, "val_current": 0.25, "val_candidate": 0.5, "val_after": 0.5,
          "best_val": 0.5, "action": "accept", "gate_reason": "better", "gate_items": 4, "gate_evaluated": 4,
          "gate_early_stopped": False, "n_proposed": 1, "n_patches": 1, "n_selected": 1, "n_applied": 1,
          "outcomes": {"applied": 1}, "invalid_replies": 0, "skipped_edits": 0, "failed_items": 0, "budget": 4,
          "budget_text": "lr=4", "lr": 4.0, "selected_edits": [{"op": "add", "content": "- Be brief."}],
          "skill_hash": "abc", "usage": {}, "timings": {"total": 1.0}}


def test_a_record_of_the_first_trainer_migrates_to_todays_shape() -> None:
    record = StepRecord.from_dict(OLDEST)
    assert (record.screen, record.refused_count, record.gate_round, record.caller_edit_count) == (None, 0, 0, 0)
    assert (record.best_source, record.best_reason) == ("", "")
    today = list(json.loads((FIXTURE / OLD / "history.json").read_text())[0])
    assert list(record.to_dict()) == today  # every key, in the trainer's order


def test_unknown_keys_are_kept_and_written_back_after_the_known_ones() -> None:
    newer = {**OLDEST, "candidates": [{"val": 0.5}], "patience_left": 2}
    record = StepRecord.from_dict(newer)
    assert record.extra == {"candidates": [{"val": 0.5}], "patience_left": 2}
    assert list(record.to_dict())[-2:] == ["candidates", "patience_left"]


def test_a_record_from_a_newer_format_version_says_to_update() -> None:
    with pytest.raises(RecordError, match="newer than this build reads"):
        StepRecord.from_dict({**OLDEST, "version": 99})


def test_a_value_of_the_wrong_type_names_its_key() -> None:
    with pytest.raises(RecordError, match=r'history\.json, step 1: val_candidate is "abc", not a number'):
        StepRecord.from_dict({**OLDEST, "val_candidate": "abc"})


def test_a_lenient_read_notes_each_wrong_value_and_reads_the_rest() -> None:
    problems: list[str] = []
    record = StepRecord.from_dict({**OLDEST, "val_candidate": "abc", "gate_items": [1], "timings": {"total": "x"},
                                   "action": "reject"}, problems, index=0)
    assert problems == ['history.json, step 1: val_candidate is "abc", not a number',
                        "history.json, step 1: gate_items is [1], not a whole number",
                        'history.json, step 1: timings.total is "x", not a number']
    assert (record.candidate_val, record.gate_item_count, record.timings, record.action) == (None, 0, {}, "reject")


def test_a_lenient_read_of_a_gate_file_notes_each_wrong_value() -> None:
    problems: list[str] = []
    gate = GateRecord.from_dict({"accept": False, "policy": 3, "current_mean": 0.5, "candidate_mean": "high",
                                 "n_items": 4, "deltas": {"a": 0.25, "b": "x"}}, problems)
    assert problems == ["gate.json: policy is 3, not text", 'gate.json: candidate_mean is "high", not a number',
                        'gate.json: deltas.b is "x", not a number']
    assert gate.decision is not None and gate.decision.current_mean == 0.5 and gate.deltas == {"a": 0.25}
    with pytest.raises(RecordError, match="gate.json: policy is 3, not text"):
        GateRecord.from_dict({"accept": False, "policy": 3})


def test_a_gate_file_with_only_part_of_a_decision_reads_with_nothing_for_the_rest() -> None:
    gate = GateRecord.from_dict({"accept": True, "policy": "paired", "deltas": {"q1": 1.0}})
    assert gate.action == "accept" and gate.deltas == {"q1": 1.0} and gate.decision.n_items == 0


# ----- events ----------------------------------------------------------------------------------

def test_every_event_of_an_old_run_reads_back_as_its_typed_event() -> None:
    lines = (FIXTURE / OLD / "events.jsonl").read_text(encoding="utf-8").splitlines()
    typed = [ev.Event.from_dict(json.loads(line)) for line in lines]
    assert not [e for e in typed if isinstance(e, ev.OtherEvent)]
    assert [e.to_dict() for e in typed] == [json.loads(line) for line in lines]
    assert ev.event_line(typed[-1]) == "Done (completed) after 3 steps; best val 0.50"


def test_an_event_of_an_unknown_kind_or_an_older_shape_still_reads() -> None:
    other = ev.Event.from_dict({"event": "candidate_scored", "step": 2})
    assert isinstance(other, ev.OtherEvent) and other.kind == "candidate_scored"
    assert ev.event_line(other) == "candidate_scored"
    done = ev.Event.from_dict({"event": "rollout_done", "step": 1, "total_steps": 2, "phase": "val", "score": 0.5,
                               "n_items": 4, "cached": 0})  # before `label` and `failed` existed
    assert isinstance(done, ev.RolloutDone) and done.failed == 0
    assert ev.event_line(done) == "[Step 1/2] val score 0.50 over 4 items"


def test_an_event_with_values_of_the_wrong_type_reads_typed_and_says_what_was_wrong() -> None:
    problems: list[str] = []
    gate = ev.Event.from_dict({"event": "gate_decided", "step": "two", "total_steps": 8.0, "action": "reject",
                               "reason": ["x"], "candidate": "high", "current": 0.5}, problems)
    assert isinstance(gate, ev.GateDecided)
    assert (gate.step, gate.total_steps, gate.reason, gate.candidate, gate.current) == (0, 8, "", None, 0.5)
    assert problems == ['events.jsonl, gate_decided: step is "two", not a whole number',
                        'events.jsonl, gate_decided: reason is ["x"], not text',
                        'events.jsonl, gate_decided: candidate is "high", not a number']
    started = ev.Event.from_dict({"event": "run_started", "env": "e", "run_dir": "d", "total_steps": 2,
                                  "splits": {"val": "many"}, "backends": {"target": "scripted"}, "at": 5})
    assert isinstance(started, ev.RunStarted) and started.splits == {} and started.at == ""
    assert ev.event_line(gate) == "[Setup] gate: reject (candidate - vs current 0.50): "
    assert isinstance(ev.Event.from_dict(["not", "an", "object"], problems), ev.OtherEvent)
    assert problems[-1] == 'events.jsonl: a line is ["not", "an", "object"], not an event object'


def test_a_rollout_in_progress_has_its_line() -> None:
    tick = ev.Event.from_dict({"event": "rollout_progress", "step": 2, "phase": "train", "done": 3, "total": 8})
    assert ev.event_line(tick) == "[Step 2] rollout (train): 3 of 8 items done"
    nan = ev.Event.from_dict({"event": "rollout_done", "step": 2, "total_steps": 4, "phase": "val", "score": float("nan"),
                              "n_items": 3, "cached": 0, "label": "val gate"})
    assert ev.event_line(nan) == "[Step 2/4] val gate score - over 3 items"  # NaN: not evaluated
    assert ev.score_text(10**400) == "-"


# ----- the reader ------------------------------------------------------------------------------

def test_a_split_with_wrong_parts_reads_the_rest_and_says_what_was_left_out() -> None:
    problems: list[str] = []
    got = splits_of({"splits": {"train": ["a", 7, {"id": "b"}], "val": "all"}}, problems)
    assert got == {"train": ["a", "7"]}
    assert problems == ['dataset.json: splits.train[2] is {"id": "b"}, not an item id',
                        'dataset.json: splits.val is "all", not a list']
    assert splits_of({"seed": 1}, problems) is None and splits_of([1], problems) is None
    assert problems[-1] == "dataset.json is [1], not an object"


def test_the_reader_names_and_types_every_file_of_an_old_run(old_run: Path) -> None:
    reader = RunReader(old_run)
    assert reader.is_run() and reader.summary()["status"] == "completed"
    assert [h.step for h in reader.history()] == [1, 2, 3]
    splits = reader.splits()
    assert (len(splits["train"]), len(splits["val"]), splits["test"]) == (4, 6, [])
    assert reader.best_skill().endswith("Always say banana.\n") and reader.initial_skill().startswith("---")
    assert reader.config()["model"]["backend"] == "scripted"
    assert set(reader.backends_used()) == {"target", "optimizer", "judge"}
    assert reader.backends_used()["target"].startswith("scripted")
    assert reader.step_gate(1).deltas and reader.step_gate(2).decision is None
    assert reader.step_selected(1)[0].edit == Edit("add", content="Always say banana.",
                                                   rationale="banana tasks fail")
    assert reader.step_refused(1) == [] and reader.step_numbers() == [1, 2, 3]
    rollouts = reader.val_rollouts([reader.best_skill()], splits["val"])
    assert all(r["completion"] and r["score"] for r in rollouts.values())
    assert {r["completion"]["response"] for r in rollouts.values()} == {"banana"}


def test_events_are_read_from_an_offset_leaving_a_line_being_written(old_run: Path) -> None:
    reader = RunReader(old_run)
    size = reader.events_size()
    events, offset = reader.events()
    assert offset == size and isinstance(events[0], ev.RunStarted) and isinstance(events[-1], ev.RunEnd)
    with (old_run / "events.jsonl").open("a") as fh:
        fh.write('{"event": "notice", "level": "info", "text": "half')
    assert reader.events(offset) == ([], offset)
    with (old_run / "events.jsonl").open("a") as fh:
        fh.write(' done"}\n')
    more, end = reader.events(offset)
    assert [e.text for e in more] == ["half done"] and end > offset
    assert reader.last_events(2)[-1] == more[0]
    assert isinstance(reader.first_event(), ev.RunStarted)


def test_a_link_out_of_the_run_directory_is_refused(old_run: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("not the run's\n")
    (old_run / "best_skill.md").unlink()
    os.symlink(secret, old_run / "best_skill.md")
    with pytest.raises(RunFileError, match="leads outside the run directory"):
        RunReader(old_run).best_skill()


# ----- the result and resume -------------------------------------------------------------------

def test_an_old_run_resumes_and_keeps_its_history_byte_for_byte(old_run: Path) -> None:
    before = json.loads((old_run / "history.json").read_text(encoding="utf-8"))
    run = prepare_training(resume=old_run, overrides=["train.num_epochs=2"])
    result = asyncio.run(run.run())
    assert result.status == "completed" and result.steps_done == 6
    after = json.loads((old_run / "history.json").read_text(encoding="utf-8"))
    assert [dump(h) for h in after[:3]] == [dump(h) for h in before]
    assert all(list(h) == list(before[0]) for h in after[3:])  # new steps in the same shape
    # The result holds what the files hold: the steps of this process in memory, older ones from the reader.
    assert [h.to_dict() for h in result.history] == after
    assert sorted(result.steps) == [4, 5, 6]
    assert result.step_gate(1) == RunReader(old_run).step_gate(1)
    assert result.step_selected(5) == RunReader(old_run).step_selected(5)


def test_a_result_holds_in_memory_what_the_run_directory_holds(old_run: Path, tmp_path: Path) -> None:
    import yaml

    from skillopt_core import Task
    from skillopt_core.run.config import load_settings

    rules = old_run.parents[2] / "rules.yaml"
    settings = load_settings(None, ["model.backend=scripted", f"model.scripted={rules}", "train.num_epochs=1",
                                    "train.steps_per_epoch=2", "train.batch_size=4", "train.workers=1",
                                    "env.split_ratio=[4,4,2]", f"output.root={tmp_path / 'new'}",
                                    "output.run_id=r", "output.plot=false"])
    tasks = [Task(id=f"c{i}", prompt=f"Question {i}: which fruit?", judge={"type": "contains", "value": "banana"})
             for i in range(10)]
    result = asyncio.run(prepare_training(settings, tasks=tasks, seed_skill="# Fruit\n\n- Answer.\n").run())
    reader = result.reader
    assert result.best_skill == reader.best_skill() and result.initial_skill == reader.initial_skill()
    assert list(result.history) == reader.history() and result.splits == {**reader.splits()}
    assert result.backends == reader.backends_used()
    assert result.to_dict() == reader.summary()
    assert yaml.safe_load((reader.path / "config.yaml").read_text()) == result.settings.to_dict()
    for h in result.history:
        assert result.step_gate(h.step) == reader.step_gate(h.step)
        assert result.step_selected(h.step) == reader.step_selected(h.step)
    val = result.splits["val"]
    assert result.val_rollouts([result.best_skill], val) == reader.val_rollouts([result.best_skill], val)
