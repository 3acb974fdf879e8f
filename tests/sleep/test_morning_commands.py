"""The morning's commands as a new user meets them (issue 30 §6): a misspelled command gets
"did you mean", `show … | head` ends quietly, `history` has column headers and says why a night
failed and what became of its proposal, `config` names local.yaml among the files read."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from proposal_testutil import CANDIDATE, NIGHT, SKILL, make_repo, report
from test_cycle_multiskill import options, two_skills  # noqa: F401 - the fixture

from sleep.cli import main
from sleep import nightstore
from sleep.cycle.config import LOCAL_CONFIG
from sleep.nightstore import NightRecord
from sleep.index import Index
from sleep.proposals import adopt, reject, stage
from sleep.proposals.undo import undo


def test_a_misspelled_command_gets_did_you_mean(capsys) -> None:
    assert main(["reveiw"]) == 2
    err = capsys.readouterr().err
    assert "unknown command 'reveiw'; did you mean 'review'?" in err and "Traceback" not in err
    assert main(["histroy", "--json"]) == 2
    assert "did you mean 'history'?" in capsys.readouterr().err
    assert main(["zzzzzz"]) == 2
    err = capsys.readouterr().err
    assert "unknown command 'zzzzzz'; the commands are: " in err and "review" in err


def test_a_misspelled_nested_command_gets_did_you_mean_too(capsys) -> None:
    import pytest

    for argv, hint in ((["integrate", "codx"], "did you mean 'codex'?"), (["tasks", "shwo", "t1"], "did you mean 'show'?")):
        with pytest.raises(SystemExit) as stop:
            main(argv)
        assert stop.value.code == 2 and capsys.readouterr().err.rstrip().endswith(hint)


def test_show_piped_into_head_prints_no_traceback(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "app")
    long_candidate = CANDIDATE + "".join(f"- Rule number {i} of a long skill.\n" for i in range(20000))
    p = stage(repo / SKILL, long_candidate, report(), night=NIGHT)
    proc = subprocess.run(f"{sys.executable} -m sleep.cli show {p.id} | head -n 2", shell=True, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])},
                          capture_output=True, text=True, timeout=120)
    assert proc.stdout.startswith(f"Proposal {p.id}") and len(proc.stdout.splitlines()) == 2
    assert proc.stderr == ""


def _night(project: Path, n: int, outcome: str, reason: str, proposal: str | None = None) -> None:
    with Index.open() as index:
        nightstore.save(index, NightRecord(f"night-{n}", str(project), f"2026-12-0{n}T03:17:00Z", outcome=outcome,
                                      reason=reason, proposal={"id": proposal, "branch": "b"} if proposal else None,
                                      tasks={"train": ["t1", "t2"], "val": ["t3"]},
                                      scores={"baseline": 0.5, "candidate": 0.75}))


def test_history_has_headers_says_why_a_night_failed_and_what_became_of_its_proposal(
        tmp_path: Path, capsys, monkeypatch) -> None:
    repo = make_repo(tmp_path / "app").resolve()
    kept = stage(repo / SKILL, CANDIDATE, report(), night=NIGHT)
    adopt(kept.id)
    undo(kept.id)
    refused = stage(repo / SKILL, CANDIDATE + "- Also lint.\n", report(), night=NIGHT)
    reject(refused.id, reason="too long")
    waiting = stage(repo / SKILL, CANDIDATE + "- And format.\n", report(), night=NIGHT)
    _night(repo, 1, "staged", f"staged as branch {kept.branch}", kept.id)
    _night(repo, 2, "failed", "RuntimeError: the replay failed: no rule matched the request")
    _night(repo, 3, "staged", "staged", refused.id)
    _night(repo, 4, "staged", "staged", waiting.id)
    monkeypatch.chdir(repo)
    assert main(["history"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"Nights of {repo}, newest first:"
    assert lines[1].split() == ["STARTED", "(UTC)", "OUTCOME", "TASKS", "VAL", "PROPOSAL", "CALLS", "TOKENS",
                                "COST"]
    rows = {line.split()[0] + " " + line.split()[1]: line for line in lines[2:] if line.startswith("2026")}
    assert f"{waiting.id} pending" in rows["2026-12-04 03:17"]
    assert f"{refused.id} rejected" in rows["2026-12-03 03:17"]
    assert f"{kept.id} undone" in rows["2026-12-01 03:17"]
    failed = lines.index(rows["2026-12-02 03:17"])
    assert "failed" in lines[failed] and lines[failed + 1] == \
        "    why: RuntimeError: the replay failed: no rule matched the request"
    assert "2/1" in rows["2026-12-01 03:17"] and "0.500→0.750" in rows["2026-12-01 03:17"]


def test_history_says_what_became_of_each_skills_proposal(tmp_path: Path, capsys) -> None:
    repo = make_repo(tmp_path / "app").resolve()
    kept = stage(repo / SKILL, CANDIDATE, report(), night=NIGHT)
    adopt(kept.id)
    part = {"host": "claude-code", "scores": {}, "usage": {}}
    with Index.open() as index:
        nightstore.save(index, NightRecord("night-9", str(repo), "2026-12-09T03:17:00Z", outcome="staged", reason="two",
                                      proposal={"id": kept.id, "branch": kept.branch},
                                      skills=[{**part, "name": "tests", "outcome": "staged", "proposal": {"id": kept.id}},
                                              {**part, "name": "lint", "outcome": "too_few_tasks", "proposal": None}]))
    assert main(["history", "--project", str(repo)]) == 0
    out = capsys.readouterr().out
    assert "tests (claude-code): staged" in out and f"proposal {kept.id} adopted" in out


def test_config_names_local_yaml_among_the_files_read(capsys) -> None:
    assert main(["config", "--set", "model.backend=local"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("Files read, later ones win: ") and str(LOCAL_CONFIG) in first
    assert main(["config", "--set", "model.backend=scripted", "--json"]) == 0
    assert str(LOCAL_CONFIG) not in json.dumps(json.loads(capsys.readouterr().out))
    assert main(["config", "--set", "model.backend=scripted"]) == 0
    assert str(LOCAL_CONFIG) not in capsys.readouterr().out.splitlines()[0]


def test_a_dry_run_night_with_a_failed_skill_exits_1(two_skills: Path, tmp_path: Path, capsys) -> None:
    (two_skills / ".claude/skills/changelog/SKILL.md").write_bytes(b"---\nname: changelog\n---\n\xff\xfe broken\n")
    opts = options(two_skills, tmp_path)
    args = [a for o in opts.overrides for a in ("--set", o)]
    assert main(["run", "--project", str(two_skills), "--backend", "scripted", *args, "--dry-run"]) == 1
    out = capsys.readouterr().out
    assert "1 of 2 skills failed (changelog): the night exits 1" in out
    assert main(["history", "--json", "--project", str(two_skills)]) == 0
    night = json.loads(capsys.readouterr().out)[0]
    assert night["dry_run"] and night["outcome"] == "would_stage"
