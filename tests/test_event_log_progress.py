"""events.jsonl keeps sparse progress ticks of slow rollouts, for a dashboard following the file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillopt_core.run import events as ev


def test_progress_ticks_are_kept_once_a_second_and_never_the_last(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [100.0]
    monkeypatch.setattr(ev.time, "monotonic", lambda: clock[0])
    log = ev.JsonlEventLog(tmp_path / "events.jsonl")
    log(ev.RolloutStarted(2, 8, "train", 10, 4, ""))
    for done, at in ((1, 100.3), (2, 100.9), (3, 101.2), (4, 101.5), (5, 102.4), (10, 105.0)):
        clock[0] = at
        log(ev.RolloutProgress(2, "train", done, 10))
    kept = [json.loads(line) for line in (tmp_path / "events.jsonl").read_text().splitlines()]
    assert [(e["event"], e.get("done")) for e in kept] == [
        ("rollout_started", None), ("rollout_progress", 3), ("rollout_progress", 5)]
    assert kept[1]["total"] == 10 and kept[1]["phase"] == "train" and kept[1]["step"] == 2


def test_a_fast_rollout_leaves_no_progress_tick(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [5.0]
    monkeypatch.setattr(ev.time, "monotonic", lambda: clock[0])
    log = ev.JsonlEventLog(tmp_path / "events.jsonl")
    log(ev.RolloutStarted(1, 8, "val", 3, 4, "gate candidate"))
    for done in (1, 2, 3):
        clock[0] += 0.1
        log(ev.RolloutProgress(1, "val", done, 3, "gate candidate"))
    assert "rollout_progress" not in (tmp_path / "events.jsonl").read_text()
