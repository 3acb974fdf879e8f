"""Memory files as trained, gated documents (issue 33 §1), with the scripted backend as every role:
a correction about the whole repository ("no, use pnpm not npm in this repo") leaves the skill's
candidate edits and trains the project's CLAUDE.md, replayed with the candidate framed the way Claude
Code puts CLAUDE.md (and its @imports) in the context; the accepted lesson is offered to AGENTS.md,
gated again; each proposal changes its one file, and adopt then undo restore it byte for byte.
The scripted backend tests control flow only; this is no evidence that training improves a file."""

from __future__ import annotations

import json
from pathlib import Path

from sleep_testutil import Homes
from test_cycle_multiskill import TESTS, changed_files, git, make_repo, options, sessions_of, skill_text

from sleep.cli import main
from sleep.cycle.night import run_night
from sleep.memory.route import classify

SKILL = ".claude/skills/run-tests/SKILL.md"
CLAUDE_MD = "# tiny\r\n\r\nSee @docs/conventions.md for naming.\r\n\r\n* Tests live next to the sources.\r\n"
AGENTS_MD = "# Agents\n\n- Keep diffs small.\n"
CONVENTIONS = "Files are kebab-case. IMPORTED-CONVENTIONS-7\n"


def project_with_memory(homes: Homes, tmp_path: Path, agents: bool = True) -> Path:
    files = {SKILL: skill_text("run-tests", "Running the test suite and the linter."), "CLAUDE.md": CLAUDE_MD,
             "docs/conventions.md": CONVENTIONS}
    if agents:
        files["AGENTS.md"] = AGENTS_MD
    project = make_repo(tmp_path / "tiny", files)
    sessions_of(homes, str(project), TESTS, 1)
    return project


def parts_by_name(night) -> dict[str, dict]:
    return {p["name"]: p for p in night.skills}


def test_a_repository_wide_correction_trains_claude_md_and_is_offered_to_agents_md(homes: Homes, tmp_path: Path,
                                                                                   capsys) -> None:
    project = project_with_memory(homes, tmp_path)
    said: list[str] = []
    night = run_night(options(project, tmp_path), say=said.append)
    parts = parts_by_name(night)
    assert set(parts) == {"run-tests", "CLAUDE.md", "AGENTS.md"}, [(p["name"], p["outcome"]) for p in night.skills]
    skill, claude, agents = parts["run-tests"], parts["CLAUDE.md"], parts["AGENTS.md"]
    # routed, with the reason, in the night record
    route = skill["routing"][0]
    assert route["to"] == "memory" and route["memory_file"] == "CLAUDE.md" and "this repo" in route["reason"]
    assert claude["document"] == {"kind": "memory", "file": "CLAUDE.md", "host": "claude-code",
                                  "label": "Claude Code memory", "user": False}
    assert "Use pnpm" not in json.dumps(skill["corrections"])  # it left the skill's candidate edits
    assert claude["outcome"] == "staged", claude["reason"]
    assert changed_files(project, claude["proposal"]["branch"]) == ["CLAUDE.md"]
    diff = git(project, "diff", "HEAD", claude["proposal"]["branch"])
    assert "+* Use pnpm, not npm in this repo." in diff  # the file's own bullet style
    assert claude["scores"]["candidate"] > claude["scores"]["baseline"]  # gated
    # the replay saw the candidate framed as Claude Code frames CLAUDE.md, its @import followed read-only
    calls = [json.loads(line) for line in (Path(claude["run_dir"]) / "evidence.jsonl").read_text().splitlines()]
    rollout = [c for c in calls if "(project instructions, checked into the codebase)" in json.dumps(c)]
    assert rollout and "IMPORTED-CONVENTIONS-7" in json.dumps(rollout[0])
    # offered to AGENTS.md, gated again through the configured backend (codex is not logged in here)
    assert agents["lesson_from"] == str(project / "CLAUDE.md") and agents["outcome"] == "staged", agents["reason"]
    assert agents["document"]["file"] == "AGENTS.md" and agents["replay"]["target"] == "scripted"
    assert changed_files(project, agents["proposal"]["branch"]) == ["AGENTS.md"]
    assert "+- Use pnpm, not npm in this repo." in git(project, "diff", "HEAD", agents["proposal"]["branch"])
    assert agents["usage"]["model_calls"] > 0
    # the proposal says why and that the import was only read
    capsys.readouterr()
    assert main(["show", claude["proposal"]["id"]]) == 0
    shown = capsys.readouterr().out
    assert "Routed to memory" in shown and "this repo" in shown
    assert "docs/conventions.md" in shown and "read-only" in shown
    assert git(project, "show", f"{claude['proposal']['branch']}:docs/conventions.md") == CONVENTIONS
    # adopt, then undo: CLAUDE.md byte for byte as before
    before = (project / "CLAUDE.md").read_bytes()
    assert main(["adopt", claude["proposal"]["id"]]) == 0
    assert b"Use pnpm, not npm in this repo." in (project / "CLAUDE.md").read_bytes()
    assert main(["undo", claude["proposal"]["id"]]) == 0
    assert (project / "CLAUDE.md").read_bytes() == before
    assert any("[Lesson]" in line and "AGENTS.md" in line for line in said)


def test_without_a_memory_file_the_lesson_stays_in_the_skill_and_says_why(homes: Homes, tmp_path: Path) -> None:
    project = make_repo(tmp_path / "tiny", {SKILL: skill_text("run-tests", "Running the test suite and the linter.")})
    sessions_of(homes, str(project), TESTS, 1)
    night = run_night(options(project, tmp_path), say=lambda _: None)
    (skill,) = night.skills
    assert skill["routing"][0]["to"] == "skill" and "no memory file" in skill["routing"][0]["reason"]
    assert skill["outcome"] == "staged"
    assert "+- Use pnpm, not npm in this repo." in git(project, "diff", "HEAD", skill["proposal"]["branch"])


def test_memory_files_off_keeps_the_night_as_before(homes: Homes, tmp_path: Path) -> None:
    project = project_with_memory(homes, tmp_path)
    night = run_night(options(project, tmp_path, "sleep.memory_files=false"), say=lambda _: None)
    assert [p["name"] for p in night.skills] == ["run-tests"] and night.skills[0]["outcome"] == "staged"


def test_routing_reads_the_persons_words_and_where_they_said_them() -> None:
    assert classify("no, use pnpm not npm. this repo is pnpm only.").to == "memory"
    assert classify("never touch the generated client, it is regenerated").to == "memory"
    assert classify("we use ruff, not flake8").to == "memory"
    procedure = classify("run the unit tests before you write the changelog entry")
    assert procedure.to == "skill" and "one kind of task" in procedure.reason
    twice = classify("use vitest not jest", tasks=2)
    assert twice.to == "memory" and "2 different recurring tasks" in twice.reason


def test_the_users_own_claude_md_is_trained_only_with_consent_and_undone_exactly(homes: Homes, tmp_path: Path) -> None:
    project = make_repo(tmp_path / "tiny", {SKILL: skill_text("run-tests", "Running the test suite and the linter.")})
    sessions_of(homes, str(project), TESTS, 1)
    mine = homes.claude / "CLAUDE.md"
    mine.parent.mkdir(parents=True, exist_ok=True)
    mine.write_bytes(b"# Me\n\n- Answer in English.\n")
    night = run_night(options(project, tmp_path), say=lambda _: None)
    assert [p["name"] for p in night.skills] == ["run-tests"]  # no consent: never read for training
    said: list[str] = []
    night = run_night(options(project, tmp_path, "sleep.memory_user_files=true", "sleep.skip_idle=false"),
                      say=said.append)
    part = parts_by_name(night)["CLAUDE.md"]
    assert part["document"]["user"] and part["path"] == str(mine) and part["outcome"] == "staged", part["reason"]
    assert "SkillOpt's skills repository" in part["proposal"]["where"]
    assert any(line.startswith("[Route]") and "→ CLAUDE.md" in line for line in said)
    assert main(["adopt", part["proposal"]["id"]]) == 0
    assert b"Use pnpm, not npm in this repo." in mine.read_bytes()
    assert main(["undo", part["proposal"]["id"]]) == 0
    assert mine.read_bytes() == b"# Me\n\n- Answer in English.\n"
