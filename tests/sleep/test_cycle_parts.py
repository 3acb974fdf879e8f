"""Pieces of the night on their own: phrasing corrections, the replay backend
choice, bad --skill input, and the history listing (the demo on the real model: test_demo_night.py)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from sleep_testutil import Homes

from skillopt_core import load_settings
from sleep.cli import main
from sleep.cycle.backends import cli_ready, target_backend
from sleep.cycle.corrections import correction_edits
from sleep.rule_text import Style, write_rule as phrase_rule
from sleep.cycle.night import NightError, NightOptions, run_night


@pytest.mark.parametrize("said,rule", [
    ("no, use pnpm not npm in this repo", "Use pnpm, not npm in this repo."),
    ("no, use pnpm not npm. this repo is pnpm only.", "Use pnpm, not npm: this repo is pnpm only."),
    ("yes. always pnpm, never npm install here", "Always pnpm, never npm install here."),
    ("Nope - keep the subject under 72 characters!", "Keep the subject under 72 characters."),
    ("use conventional commits: start the subject with feat: or fix:, and keep it under 72 characters",
     "Use conventional commits: start the subject with feat: or fix:, and keep it under 72 characters."),
    ("thanks for the fix. one thing though: always run pnpm gen api instead of editing src/api/client.ts by "
     "hand. can you also add a test for the retry path?",
     "Always run pnpm gen api instead of editing src/api/client.ts by hand."),
    ("you forgot to run the linter before committing. run pnpm lint first", "Run pnpm lint first."),
    ("no", None),
    ("that's wrong", None),
])
def test_corrections_become_rule_sentences(said: str, rule: str | None) -> None:
    assert phrase_rule(said) == rule


@pytest.mark.parametrize("said,rule", [
    ("Always use pnpm not npm, and the staging token is [REDACTED:github-token].", "Always use pnpm, not npm."),
    ("no, use pnpm not npm; mysql -u deploy -p[REDACTED:password] ledger and curl -u admin:[REDACTED:password] "
     "http://127.0.0.1:8080/health", "Use pnpm, not npm."),
    ("use [REDACTED:openai-key] for the eval. Then run pnpm test in api/ first.", "Then run pnpm test in api/ first."),
    ("no, the token is [REDACTED:github-token]", None),
    ("no, deploy with [REDACTED:known-secret] now", None),
])
def test_a_redacted_span_never_enters_a_rule(said: str, rule: str | None) -> None:
    assert phrase_rule(said) == rule


def test_a_correction_that_is_only_a_secret_gives_no_edit() -> None:
    evidence = [{"corrections": [{"text": "no, the staging token is [REDACTED:github-token]"}]},
                {"corrections": [{"text": "no, use pnpm not npm, the key is [REDACTED:high-entropy]"}]}]
    assert [e.content for e in correction_edits(evidence, limit=5)] == ["- Use pnpm, not npm."]


def test_correction_edits_are_deduplicated_most_repeated_first() -> None:
    evidence = [{"corrections": [{"text": "no, cite file:line first please"}]},
                {"corrections": [{"text": "No, use pnpm here."}, {"text": "no, use pnpm here"}]}]
    edits = correction_edits(evidence, limit=5)
    assert [e.content for e in edits] == ["- Use pnpm here.", "- Cite file:line first please."]
    assert edits[0].origin == "correction" and "2 sessions" in edits[0].rationale
    assert '"No, use pnpm here."' in edits[0].rationale  # the person's own words stay in the evidence


def test_the_rule_follows_the_skills_style() -> None:
    skill = "# Repo\n\n* Run `pnpm test` before finishing.\n* Keep `src/gen` untouched.\n"
    style = Style.of(skill)
    evidence = [{"corrections": [{"text": "no, use pnpm not npm. this repo is pnpm only."}]}]
    assert [e.content for e in correction_edits(evidence, limit=5, style=style)] == [
        "* Use `pnpm`, not `npm`: this repo is pnpm only."]


def _fake_exe(folder: Path, name: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    exe = folder / name
    exe.write_text("#!/bin/sh\nexit 0\n")
    exe.chmod(0o755)


def test_a_host_cli_is_ready_only_when_installed_and_logged_in(tmp_path: Path, homes: Homes, monkeypatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert not cli_ready("codex")[0]
    _fake_exe(tmp_path / "bin", "codex")
    ready, why = cli_ready("codex")
    assert not ready and "not logged in" in why
    homes.codex.mkdir(parents=True, exist_ok=True)
    (homes.codex / "auth.json").write_text("{}")
    assert cli_ready("codex")[0]
    settings = load_settings(None, ["model.backend=scripted"])
    assert target_backend(Counter({"codex": 3, "claude-code": 1}), "host", settings)[0] == "codex"
    assert target_backend(Counter({"claude-code": 2}), "host", settings)[0] == "scripted"
    assert target_backend(Counter({"codex": 2}), "local", settings)[0] == "local"


def test_a_skill_outside_the_project_must_exist(tmp_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    with pytest.raises(NightError, match="no such file"):
        run_night(NightOptions(project=project, skill=tmp_path / "elsewhere" / "SKILL.md"), say=lambda _: None)
    with pytest.raises(NightError, match="not a directory"):
        run_night(NightOptions(project=tmp_path / "missing"), say=lambda _: None)


def test_history_says_when_there_is_no_night_yet(capsys) -> None:
    assert main(["history"]) == 0
    assert "No nights yet" in capsys.readouterr().out
