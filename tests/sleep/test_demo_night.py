"""``skillopt-sleep demo`` on the real embedded model (SmolLM2-135M): one demo run, shared by the tests.

The model's learning outcome is not asserted (whether the gate accepts the USD correction depends on
what a 135M model writes and how it judges, which another llama.cpp build may change): what is
asserted is that the night's record, the review and the repository agree, whatever the gate decided.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from sleep_testutil import Homes

from sleep.cli import main
from sleep.cycle.demo import DEMO_SETS, install_transcripts, make_project, scratch_env

SKILL = ".claude/skills/ledger-dev/SKILL.md"


def _cli(keep: Path, *args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "sleep.cli", *args], env=scratch_env(keep), cwd=keep,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout


def test_the_demos_own_sessions_are_a_recurring_task_judged_by_the_persons_correction(
        homes: Homes, tmp_path: Path, capsys) -> None:
    """The amounts sessions join the two weeks only when named; mined, they are one recurring task whose
    judge is the rule read from the person's correction, and that correction is the night's most repeated."""
    project = make_project(tmp_path / "tiny-ledger")
    with pytest.raises(ValueError, match="no such set of demo sessions: receipts"):
        install_transcripts(homes.home, project, ("receipts",))
    assert install_transcripts(homes.home, project) == 18
    assert install_transcripts(homes.home, project, DEMO_SETS) == 21
    assert main(["harvest", "--project", str(project)]) == 0 and main(["mine", "--project", str(project)]) == 0
    capsys.readouterr()
    assert main(["tasks", "--project", str(project), "--json"]) == 0
    tasks = json.loads(capsys.readouterr().out)
    tasks = tasks.get("tasks", tasks) if isinstance(tasks, dict) else tasks
    amounts = [t for t in tasks if "cents in dollars" in json.dumps(t)]
    assert len(amounts) == 1 and len(tasks) == _mined_tasks(), [t.get("intent") for t in tasks]
    assert {"type": "contains", "value": "USD"} in amounts[0]["judge"]


def _mined_tasks() -> int:
    """The recurring tasks the demo's sessions hold for the miner installed: five with an embedding
    miner (the `embed` extra: it also joins the changelog requests worded apart), four words-only."""
    from sleep.mine.embed import AUTO_ORDER, available

    return 5 if any(available(name) for name in AUTO_ORDER) else 4


@pytest.fixture(scope="module")
def demo(llama_model, tmp_path_factory) -> tuple[Path, str]:
    """The demo, run once with --keep: (its scratch directory, its output). ``llama_model`` first:
    the llama.cpp probe has passed (or the tests skipped, or failed in CI)."""
    root = tmp_path_factory.mktemp("demo-night")
    keep = root / "demo"
    env = {k: v for k, v in os.environ.items() if not k.startswith("SKILLOPT_")}
    env.update(HOME=str(root / "home"), SKILLOPT_HOME=str(root / "home" / ".skillopt"),
               SKILLOPT_CACHE_DIR=os.environ.get("SKILLOPT_CACHE_DIR") or str(root / "cache"))
    proc = subprocess.run([sys.executable, "-m", "sleep.cli", "demo", "--keep", str(keep)], cwd=root, env=env,
                          capture_output=True, text=True, timeout=1140)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    return keep, proc.stdout


@pytest.mark.local_model
@pytest.mark.timeout(1200)
def test_the_demo_runs_a_night_on_the_local_model_and_prints_the_review(demo: tuple[Path, str]) -> None:
    keep, out = demo
    for line in ("[Harvest] 20 new", f"[Mine] {_mined_tasks()} recurring tasks", "[Tasks] ", "$ skillopt-sleep review",
                 "$ skillopt-sleep history"):
        assert line in out, line
    assert "Night n" in out and ("staged" in out or "Nothing was staged" in out)
    night = json.loads(_cli(keep, "history", "--json", "--all-projects"))[0]
    assert out.count(night["reason"]) == 1, night["reason"]  # the night's reason, said once (in its summary)
    assert (keep / "skillopt" / "sleep.sqlite3").is_file()
    assert _git(keep / "tiny-ledger", "status", "--porcelain") == ""


@pytest.mark.local_model
@pytest.mark.timeout(1200)
def test_the_demo_nights_record_agrees_with_the_repository_and_the_run(demo: tuple[Path, str]) -> None:
    """A staged proposal's branch exists, changes only the skill file, holds the run's best skill (the
    gated change: the accepted edits, nothing else) and carries the gate's evidence; a night that staged
    nothing leaves no branch, no proposal, and a best skill equal to the starting one."""
    keep, out = demo
    project = keep / "tiny-ledger"
    night = json.loads(_cli(keep, "history", "--json", "--all-projects"))[0]
    run_dir = Path(night["run_dir"])
    steps = json.loads((run_dir / "history.json").read_text(encoding="utf-8"))
    accepted = [s for s in steps if str(s.get("action", "")).startswith("accept")]
    best = (run_dir / "best_skill.md").read_text(encoding="utf-8")
    seed = (run_dir / "seed_skill.md").read_text(encoding="utf-8")
    branches = _git(project, "branch", "--list", "skillopt/*", "--format=%(refname:short)").split()
    proposals = json.loads(_cli(keep, "review", "--json", "--all-projects"))
    proposals = proposals.get("proposals", proposals) if isinstance(proposals, dict) else proposals
    scores = night["scores"]

    if night["outcome"] != "staged":
        assert night["proposal"] is None and branches == [] and proposals == []
        assert not accepted and best == seed and "Nothing was staged" in out
        assert scores["candidate"] <= scores["baseline"]
        return

    branch = night["proposal"]["branch"]
    assert branches == [branch] and [p["id"] for p in proposals] == [night["proposal"]["id"]]
    if night["proposal"].get("kind") == "retire":  # its tasks scored no worse without the skill: its removal
        paired = night["paired"]
        assert paired["kind"] == "retire" and paired["verdict"] is True and "does not help" in night["reason"]
        assert _git(project, "diff", "--name-status", "main", branch).split() == ["D", SKILL]
        return
    assert accepted and best != seed and scores["candidate"] > scores["baseline"]
    assert _git(project, "diff", "--name-only", "main", branch).split() == [SKILL]
    assert _git(project, "show", f"{branch}:{SKILL}") == best
    added = [line[1:].strip() for line in _git(project, "diff", "main", branch, "--", SKILL).splitlines()
             if line.startswith("+") and not line.startswith("+++")]
    edits = [e["content"].strip() for s in accepted for e in s["selected_edits"]]
    assert added and all(any(line in e for e in edits) for line in added), (added, edits)
    shown = json.loads(_cli(keep, "show", night["proposal"]["id"], "--json"))
    report = shown["report"]
    assert report["gate_accept"] is True and report["policy"] == scores["policy"] == "no_regression"
    assert (report["baseline_val"], report["candidate_val"]) == (scores["baseline"], scores["candidate"])
    assert sorted(e["content"].strip() for e in report["edits"]) == sorted(edits)
    assert any(d > 0 for d in report["task_deltas"].values()) and min(report["task_deltas"].values()) >= 0
    assert report["evidence"], "the replies under the starting skill and the candidate, per val instance"
    assert f"{scores['baseline']:.3f} → {scores['candidate']:.3f}" in out  # the night's summary says the figures
    note = json.loads(_git(project, "notes", "--ref=skillopt", "show", branch))
    assert json.dumps(note).count(night["proposal"]["id"]) >= 1
    assert "SkillOpt-Proposal: " + night["proposal"]["id"] in _git(project, "log", "-1", "--format=%B", branch)
    assert _git(project, "rev-parse", "HEAD") == _git(project, "rev-parse", "main")  # HEAD untouched
