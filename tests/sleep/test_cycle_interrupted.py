"""A night killed mid-replay keeps what it spent and where it ran, and shows as interrupted in
`status` and `history` at once (its lock is free), not "running" until the next night.

The night runs as a real `skillopt-sleep run` process with the scripted backend on the demo
transcripts and SIGKILLs itself right after its fifth model call.
"""

from __future__ import annotations

from skillopt_core.timestamps import utc_now

import json
import signal
from pathlib import Path

import yaml
from cycle_testutil import rules
from proposal_testutil import cli

from sleep.cli import main
from sleep.cycle.night import night_lock
from sleep.nightstore import NightRecord, save
from sleep.index import Index


def _killed_night(project: Path, tmp_path: Path, after_call: int) -> None:
    script = tmp_path / "rules.yaml"
    script.write_text(yaml.safe_dump(rules()))
    out = cli("run", "--project", str(project), "--backend", "scripted", "--set", f"model.scripted={script}",
              "--skill", str(project / ".claude/skills/ledger-dev/SKILL.md"), kill_at=f"model call {after_call}")
    assert out.returncode == -signal.SIGKILL, out.stderr


def test_a_killed_night_keeps_its_spend_and_run_dir_and_history_says_interrupted(project: Path, tmp_path: Path,
                                                                                  capsys) -> None:
    _killed_night(project, tmp_path, after_call=5)
    assert main(["history", "--json", "--project", str(project)]) == 0
    (night,) = json.loads(capsys.readouterr().out)
    assert night["outcome"] == "interrupted" and night["stage"] == "replay"
    assert night["usage"]["model_calls"] == 5 and night["usage"]["tokens"] > 0
    assert night["run_dir"] and (Path(night["run_dir"]) / "evidence.jsonl").is_file()
    assert "5 model calls" in night["reason"]
    assert night["reason"].endswith("; `skillopt-sleep run` starts it over (what it harvested is kept)")


def test_a_killed_night_shows_as_interrupted_in_status_at_once(project: Path, tmp_path: Path, capsys) -> None:
    _killed_night(project, tmp_path, after_call=3)
    assert main(["status", "--json", "--project", str(project)]) == 0
    last = json.loads(capsys.readouterr().out)["projects"][0]["last_night"]
    assert last["outcome"] == "interrupted"


def test_a_night_whose_process_holds_its_lock_still_shows_as_running(project: Path, capsys) -> None:
    lock = night_lock(project.resolve()).acquire()
    try:
        with Index.open() as index:
            save(index, NightRecord("n-live", str(project.resolve()), utc_now(), stage="replay"))
        assert main(["history", "--json", "--all-projects"]) == 0
        assert json.loads(capsys.readouterr().out)[0]["outcome"] == "running"
    finally:
        lock.release()
    assert main(["history", "--json", "--all-projects"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["outcome"] == "interrupted"  # released: the holder is gone
