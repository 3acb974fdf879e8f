"""A skill's tasks replay through the host whose skill folder holds the skill (issue 26's
leftover), when that host's CLI is ready; else through the tasks' most common ready host, as
before. The night's record says which host replayed and why. The CLIs are the fakes of
tests/sleep/replay_fakes.py (each host's documented streaming format); "ready" is what
`cli_ready` reads: the program on PATH and the host's login file. The scripted backend
(optimizer, judge) tests control flow only."""

from __future__ import annotations

import json
import subprocess
from collections import Counter
from pathlib import Path

import pytest
import replay_fakes
import yaml
from cycle_testutil import CAPABLE_JUDGE
from sleep_testutil import Homes

from sleep.cli import main
from sleep.cycle.backends import replay_host, target_backend
from sleep.cycle.demo import install_transcripts, make_project
from sleep.cycle.skills import skill_hosts
from skillopt_core import load_settings

RULES = {"rules": [
    {"stage": "reflect", "response": json.dumps({"edits": []})},
    {"stage": "merge", "response": json.dumps({"edits": []})},
    {"stage": "rank", "response": json.dumps({"order": [1, 2, 3]})},
    *CAPABLE_JUDGE,  # the model judge probe must find it can tell answers apart
    {"stage": "judge", "response": json.dumps({"score": 8, "pass": True, "feedback": "Fine."})},
]}


def log_in(homes: Homes, *families: str) -> None:
    for family in families:
        login = {"claude-code": homes.claude / ".credentials.json", "codex": homes.codex / "auth.json"}[family]
        login.parent.mkdir(parents=True, exist_ok=True)
        login.write_text("{}")


@pytest.fixture
def fakes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("CLAUDE_CODE_OAUTH_TOKEN", raising=False)
    bin_dir = replay_fakes.install(tmp_path / "bin")
    replay_fakes.on_path(monkeypatch, bin_dir)
    return bin_dir


def test_a_skills_hosts_are_those_whose_folders_hold_it_owner_first(homes: Homes, tmp_path: Path) -> None:
    project = tmp_path / "p"
    assert skill_hosts(project / ".claude/skills/x/SKILL.md", project) == ["claude-code", "opencode"]
    assert skill_hosts(project / ".agents/skills/x/SKILL.md", project)[0] == "codex"
    assert skill_hosts(project / ".github/skills/x/SKILL.md", project) == ["copilot"]
    assert skill_hosts(project / ".github/copilot-instructions.md", project) == ["copilot"]
    assert skill_hosts(homes.claude / "skills" / "x" / "SKILL.md", project)[0] == "claude-code"
    assert skill_hosts(project / "docs" / "notes.md", project) == []


def test_the_skills_ready_host_replays_even_when_the_tasks_come_from_another(homes: Homes, fakes: Path) -> None:
    settings = load_settings(None, ["model.backend=scripted"])
    log_in(homes, "claude-code", "codex")
    target, why = target_backend(Counter({"codex": 3}), "host", settings, skill_hosts=["claude-code", "opencode"])
    assert (target, replay_host(target)) == ("claude-code", "claude-code")
    assert why.startswith("the skill is in claude-code's skill folder, and `claude` is on PATH")
    assert target_backend(Counter({"codex": 3}), "host", settings)[0] == "codex"  # no skill: the tasks' host
    assert target_backend(Counter({"codex": 3}), "local", settings, skill_hosts=["claude-code"])[0] == "local"


def test_a_skill_host_the_tasks_come_from_is_preferred_among_those_reading_the_folder(monkeypatch) -> None:
    settings = load_settings(None, ["model.backend=scripted"])
    monkeypatch.setattr("sleep.cycle.backends.cli_ready", lambda family: (True, f"{family} ready"))
    assert target_backend(Counter({"opencode": 2}), "host", settings, ["claude-code", "opencode"])[0] == "opencode"
    assert target_backend(Counter({"codex": 2}), "host", settings, ["claude-code", "opencode"])[0] == "claude-code"


def test_when_the_skills_host_is_not_ready_the_tasks_host_replays_and_says_why(homes: Homes, fakes: Path) -> None:
    settings = load_settings(None, ["model.backend=scripted"])
    log_in(homes, "codex")  # `claude` is on PATH but not logged in
    target, why = target_backend(Counter({"codex": 3}), "host", settings, skill_hosts=["claude-code"])
    assert target == "codex" and why.startswith("the tasks come from codex")
    assert "claude-code, whose skill folder holds the skill: `claude` is on PATH but no login" in why
    (homes.codex / "auth.json").unlink()
    target, why = target_backend(Counter({"codex": 3}), "host", settings, skill_hosts=["claude-code"])
    assert target == "scripted" and "no host CLI is ready" in why and "claude-code, whose" in why and "`codex`" in why


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args],
                          capture_output=True, text=True, check=True).stdout


def night(project: Path, skill: str, tmp_path: Path, capsys) -> dict:
    rules = tmp_path / "rules.yaml"
    rules.write_text(yaml.safe_dump(RULES))
    code = main(["run", "--project", str(project), "--skill", str(project / skill), "--backend", "scripted",
                 "--set", f"model.scripted={rules}", "--json", "--dry-run"])
    out = capsys.readouterr().out
    assert code == 0, out
    return json.loads(out)


def test_a_night_replays_a_codex_skill_through_codex_though_most_tasks_come_from_claude_code(
        homes: Homes, fakes: Path, tmp_path: Path, capsys) -> None:
    from sleep.replay.sandbox import sandbox_available

    if not sandbox_available()[0]:
        pytest.skip(f"no bubblewrap sandbox: {sandbox_available()[1]}")
    project = make_project(tmp_path / "tiny-ledger")
    install_transcripts(homes.home, project)  # the demo's sessions: most of them Claude Code's
    codex_skill = project / ".agents/skills/ledger-dev/SKILL.md"
    codex_skill.parent.mkdir(parents=True)
    codex_skill.write_text((project / ".claude/skills/ledger-dev/SKILL.md").read_text())
    git(project, "add", "-A")
    git(project, "commit", "-qm", "the skill for codex too")
    log_in(homes, "claude-code", "codex")
    record = night(project, ".agents/skills/ledger-dev/SKILL.md", tmp_path, capsys)
    replay = record["replay"]
    assert (replay["target"], replay["target_host"], replay["mode"]) == ("codex", "codex", "actions"), replay
    assert replay["target_why"].startswith("the skill is in codex's skill folder")
    assert record["outcome"] == "would_stage", record["reason"]  # the fake codex acted: its commands were judged
    # The Claude Code skill of the same project, with `codex` ready but `claude` logged out: the tasks' host
    # (Claude Code) is not ready either, so the ready host of the tasks replays, as before, and the record says why.
    (homes.claude / ".credentials.json").unlink()
    record = night(project, ".claude/skills/ledger-dev/SKILL.md", tmp_path, capsys)
    replay = record["replay"]
    assert (replay["target"], replay["target_host"]) == ("codex", "codex"), replay
    assert "claude-code, whose skill folder holds the skill: `claude` is on PATH but no login" in replay["target_why"]
