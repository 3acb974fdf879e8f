"""The morning review from the command line: propose, review, show, adopt, reject."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import date
from pathlib import Path

import yaml
from proposal_testutil import CANDIDATE, SKILL, SKILL_TEXT, git, make_repo, report, snapshot, write

from sleep.cli import main
from sleep.index import MIGRATIONS, Index
from sleep.proposals import stage

REPO_ROOT = Path(__file__).resolve().parents[2]
NIGHT = date(2026, 12, 1)


def _json(capsys) -> object:
    return json.loads(capsys.readouterr().out)


def test_done_when_a_library_proposal_is_reviewed_shown_and_adopted_from_the_cli(tmp_path: Path, capsys,
                                                                             monkeypatch) -> None:
    repo = make_repo(tmp_path / "app")
    write(repo / "README.md", "# work in progress\n")
    monkeypatch.chdir(repo)  # review lists the current directory's project
    before = snapshot(repo)
    p = stage(repo / SKILL, CANDIDATE, report(), night=NIGHT)
    assert snapshot(repo) == before
    assert main(["review"]) == 0
    assert p.id in capsys.readouterr().out
    assert main(["show", p.id]) == 0
    assert "+- Run `ruff check .` before the tests." in capsys.readouterr().out
    assert main(["adopt", p.id]) == 0
    assert (repo / SKILL).read_text() == CANDIDATE
    assert main(["review"]) == 0
    assert "No proposals waiting" in capsys.readouterr().out


def test_propose_json_prints_the_proposal_with_its_id(tmp_path: Path, capsys) -> None:
    repo = make_repo(tmp_path / "app")
    cand = write(tmp_path / "c.md", CANDIDATE)
    assert main(["propose", "--skill", str(repo / SKILL), "--candidate", str(cand), "--json",
                 "--night", "2026-12-01"]) == 0
    out = _json(capsys)
    assert out["branch"] == "skillopt/tests/2026-12-01" and len(out["id"]) == 8
    assert out["report"]["source"] == "candidate"


def test_propose_from_a_real_training_run_carries_its_scores(tmp_path: Path, capsys) -> None:
    """A real `skillopt train` run (scripted backend) through the console script, its stable interface."""
    tasks = write(tmp_path / "tasks.jsonl", "".join(json.dumps(
        {"id": f"q{i}", "prompt": f"Say {i}", "judge": {"type": "contains", "value": "yes"}}) + "\n" for i in range(12)))
    rules = write(tmp_path / "rules.yaml", yaml.safe_dump({"rules": [
        {"stage": "reflect", "response": json.dumps({"edits": [
            {"op": "add", "content": "Always reply yes.", "rationale": "answers lacked yes"}]})},
        {"stage": "slow_update", "response": json.dumps({"guidance": "- Reply yes."})},
        {"stage": "meta_skill", "response": json.dumps({"notes": "- yes helped"})},
        {"stage": "rollout", "regex": "Always reply yes", "response": "yes"},
        {"stage": "rollout", "response": "no"}]}))
    repo = make_repo(tmp_path / "app")
    config = write(tmp_path / "config.yaml", yaml.safe_dump({
        "_base_": str(REPO_ROOT / "configs" / "_base_" / "default.yaml"),
        "env": {"name": "jsonl_tasks", "data_path": str(tasks), "split_ratio": [2, 2, 1]},
        "skill": {"init": str(repo / SKILL)},
        "model": {"backend": "scripted", "scripted": str(rules)},
        "train": {"num_epochs": 1, "batch_size": 4, "steps_per_epoch": 1, "workers": 1},
        "output": {"root": str(tmp_path / "out"), "run_id": "r1", "plot": False}}))
    skillopt = Path(sys.executable).parent / "skillopt"
    done = subprocess.run([str(skillopt), "train", "--config", str(config), "--json"], capture_output=True,
                          text=True, env=os.environ, timeout=300)
    assert done.returncode == 0, done.stderr
    assert main(["propose", "--skill", str(repo / SKILL), "--from-run",
                 str(tmp_path / "out" / "jsonl_tasks" / "r1"), "--json"]) == 0
    out = _json(capsys)
    assert (out["baseline_val"], out["candidate_val"]) == (0.0, 1.0)
    assert out["report"]["run"]["run_id"] == "r1"
    assert out["report"]["edits"][0]["rationale"] == "answers lacked yes"


def test_review_json_lists_pending_proposals_with_state(tmp_path: Path, capsys) -> None:
    repo = make_repo(tmp_path / "app")
    p = stage(repo / SKILL, CANDIDATE, report(), night=NIGHT)
    assert main(["review", "--json", "--project", str(repo)]) == 0
    [listed] = _json(capsys)
    assert (listed["id"], listed["state"], listed["n_edits"]) == (p.id, "pending", 1)


def test_review_all_includes_rejected(tmp_path: Path, capsys) -> None:
    repo = make_repo(tmp_path / "app")
    p = stage(repo / SKILL, CANDIDATE, report(), night=NIGHT)
    assert main(["reject", p.id, "--reason", "not now"]) == 0
    capsys.readouterr()
    assert main(["review", "--all", "--all-projects"]) == 0
    assert "rejected" in capsys.readouterr().out


def test_show_prints_report_and_a_plain_diff_when_not_a_terminal(tmp_path: Path, capsys) -> None:
    repo = make_repo(tmp_path / "app")
    p = stage(repo / SKILL, CANDIDATE, report(), night=NIGHT)
    assert main(["show", p.id]) == 0
    out = capsys.readouterr().out
    assert "Val           0.500 → 0.750 (+0.250)" in out and "why: two failures came from lint" in out
    assert "diff --git" in out and "\x1b[" not in out


def test_show_color_always_colours_the_diff(tmp_path: Path, capsys) -> None:
    repo = make_repo(tmp_path / "app")
    p = stage(repo / SKILL, CANDIDATE, report(), night=NIGHT)
    assert main(["show", p.id, "--color", "always"]) == 0
    assert "\x1b[32m+" in capsys.readouterr().out


def test_adopt_commit_from_the_cli_prints_the_commit(tmp_path: Path, capsys) -> None:
    repo = make_repo(tmp_path / "app")
    p = stage(repo / SKILL, CANDIDATE, report(), night=NIGHT)
    assert main(["adopt", p.id, "--commit", "--json"]) == 0
    out = _json(capsys)
    assert out["commit"] == git(repo, "rev-parse", "HEAD")
    assert out["proposal"]["state"] == "adopted"


def test_adopt_refused_from_the_cli_says_what_to_do(tmp_path: Path, capsys) -> None:
    repo = make_repo(tmp_path / "app")
    p = stage(repo / SKILL, CANDIDATE, report(), night=NIGHT)
    write(repo / SKILL, SKILL_TEXT + "- mine\n")
    assert main(["adopt", p.id]) == 2
    err = capsys.readouterr().err
    assert "Re-run the night" in err and f"skillopt-sleep show {p.id}" in err


def test_reject_from_the_cli_deletes_the_branch(tmp_path: Path, capsys) -> None:
    repo = make_repo(tmp_path / "app")
    p = stage(repo / SKILL, CANDIDATE, report(), night=NIGHT)
    assert main(["reject", p.id]) == 0
    assert f"deleted the branch {p.branch}" in capsys.readouterr().out
    assert git(repo, "branch", "--list", p.branch) == ""


def test_migration_4_adds_the_proposals_table() -> None:
    assert 4 in [m.version for m in MIGRATIONS]
    with Index.open() as idx:
        assert idx.schema_version >= 4
        columns = {r[1] for r in idx.conn.execute("PRAGMA table_info(proposals)")}
    assert {"id", "state", "branch", "commit_sha", "report", "decided_by", "reason"} <= columns
