"""The candidate's walk from the trainer to the proposal branch reads no run file (issue 32 §3):
the night takes the core's :class:`TrainingResult` (history, split, best skill, the steps' edits
and gate decisions, the val rollouts) in memory, and only writes into the run directory after."""

from __future__ import annotations

import builtins
import io
import os
from pathlib import Path

import yaml
from cycle_testutil import rules

from skillopt_core.run import api
from sleep.cycle.night import NightOptions, run_night


def test_the_walk_from_the_trainer_to_staging_reads_no_run_file(project: Path, tmp_path: Path, monkeypatch) -> None:
    scripted = tmp_path / "rules.yaml"
    scripted.write_text(yaml.safe_dump(rules()))
    trained: dict[str, str] = {}
    reads: list[str] = []
    real_run, real_open, real_io_open, real_os_open = api.TrainingRun.run, builtins.open, io.open, os.open

    async def run(self):
        result = await real_run(self)
        trained["run_dir"] = os.path.realpath(self.run_dir)  # from here on the night holds the result
        return result

    def note(path, reading: bool) -> None:
        if reading and "run_dir" in trained and isinstance(path, (str, os.PathLike)):
            if os.path.realpath(os.fspath(path)).startswith(trained["run_dir"] + os.sep):
                reads.append(os.path.relpath(os.path.realpath(os.fspath(path)), trained["run_dir"]))

    def open_(file, mode="r", *args, **kwargs):
        note(file, not any(c in mode for c in "wax+"))
        return real_open(file, mode, *args, **kwargs)

    def io_open(file, mode="r", *args, **kwargs):
        note(file, not any(c in mode for c in "wax+"))
        return real_io_open(file, mode, *args, **kwargs)

    def os_open(path, flags, *args, **kwargs):
        note(path, not flags & (os.O_WRONLY | os.O_RDWR))
        return real_os_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(api.TrainingRun, "run", run)
    monkeypatch.setattr(builtins, "open", open_)
    monkeypatch.setattr(io, "open", io_open)
    monkeypatch.setattr(os, "open", os_open)
    # The with/without measurement after training (sleep.cycle.paired) runs too, from the result in memory.
    night = run_night(NightOptions(project=project, backend="scripted",
                                   overrides=[f"model.scripted={scripted}", "sleep.paired.min_instances=2"],
                                   skill=project / ".claude/skills/ledger-dev/SKILL.md"), say=lambda _: None)
    assert night.outcome == "staged", night.reason
    assert trained and night.run_dir and os.path.realpath(night.run_dir) == trained["run_dir"]
    assert night.replay["evidence"] and any("Use pnpm" in r for r in night.corrections["kept"])
    assert night.paired.get("kind") == "retire" and night.paired.get("n_items", 0) >= 2, night.paired
    assert reads == []
