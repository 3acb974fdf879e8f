"""One night, every skill (issue 26): a project whose sessions use two skills gets one gated
proposal per skill, each changing only its own file; a correction given in Claude Code sessions
becomes a gated proposal for the project's Codex skill too; an unchanged skill costs nothing.

Sessions are built in each host's own format (tests/sleep/sleep_builders.py): Claude Code
invokes a skill with its ``Skill`` tool (https://docs.claude.com/en/docs/claude-code/skills),
Codex reads ``.agents/skills/<name>/SKILL.md`` with a shell call
(https://developers.openai.com/codex/skills). The scripted backend tests control flow only;
this is no evidence that training improves a skill."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml
from cycle_testutil import CAPABLE_JUDGE
from sleep_builders import (claude_assistant, claude_session_path, claude_tool_result, claude_user, codex_assistant,
                            codex_call, codex_meta, codex_rollout_path, codex_user_turn, text, tool_use, write_jsonl)
from sleep_testutil import Homes

from sleep.cli import main
from sleep.cycle.cli import summary_text
from sleep.cycle.night import NightOptions, run_night

GOOD = "ANSWER-GOOD: used the command this project asks for."
RULES = {"rules": [
    {"stage": "reflect", "response": json.dumps({"edits": []})},
    {"stage": "merge", "response": json.dumps({"edits": []})},
    {"stage": "rank", "response": json.dumps({"order": [1, 2, 3]})},
    {"stage": "judge", "regex": "ANSWER-GOOD", "response": json.dumps({"score": 10, "pass": True, "feedback": "Done."})},
    *CAPABLE_JUDGE,  # the model judge probe must find it can tell answers apart
    {"stage": "judge", "response": json.dumps({"score": 1, "pass": False, "feedback": "Not what was asked."})},
    {"stage": "rollout", "regex": "Use pnpm|Use yarn", "response": GOOD},
    {"stage": "rollout", "response": "did it somehow."},
]}

# (skill, correction, prompts of one recurring task in varied wording)
TESTS = ("run-tests", "no, use pnpm not npm in this repo",
         [["run the unit tests and list the failing ones", "can you run the unit tests and list failing ones",
           "please run the unit tests, list the failing ones"],
          ["run the linter and list the problems", "run the linter, list the problems please",
           "can you run the linter and list the problems"]])
CHANGELOG = ("changelog", "no, use yarn not npm for the release scripts",
             [["add a changelog entry for the csv export", "add a changelog entry for the new csv export",
               "please add a changelog entry for csv export"],
              ["write a release note for the monthly totals", "write a release note about monthly totals",
               "can you write a release note for the monthly totals"]])


COMMANDS = ("npx vitest run", "npx eslint src")  # what the agent ran for the first and second task


def skill_text(name: str, what: str) -> str:
    return f"---\nname: {name}\ndescription: {what}\n---\n\n# {name}\n\n- Keep answers short and say what you ran.\n"


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout


def make_repo(folder: Path, skills: dict[str, str]) -> Path:
    folder.mkdir(parents=True)
    (folder / "package.json").write_text('{"name": "tiny", "packageManager": "pnpm@9.12.0"}\n')
    for rel, body in skills.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(body)
    for args in (["init", "-q", "-b", "main"], ["add", "-A"],
                 ["-c", "user.name=T", "-c", "user.email=t@example.invalid", "commit", "-q", "-m", "start"]):
        git(folder, *args)
    return folder


def claude_session(homes: Homes, cwd: str, n: int, prompt: str, skill: str | None, correction: str,
                   command: str = "npm test") -> None:
    sid = f"a0000000-0000-4000-8000-{n:012d}"
    t = n * 86400.0
    recs = [claude_user(prompt, sid=sid, cwd=cwd, t=t, entrypoint="cli")]
    if skill:
        recs += [claude_assistant([tool_use(f"toolu_s{n}", "Skill", {"skill": skill})], sid=sid, cwd=cwd,
                                  msg_id=f"msg_s{n}", t=t + 1),
                 claude_tool_result(f"toolu_s{n}", f"Launching skill: {skill}", sid=sid, cwd=cwd, t=t + 2)]
    recs += [claude_assistant([tool_use(f"toolu_b{n}", "Bash", {"command": command})], sid=sid, cwd=cwd,
                              msg_id=f"msg_b{n}", t=t + 3),
             claude_tool_result(f"toolu_b{n}", "2 failed", sid=sid, cwd=cwd, t=t + 4),
             claude_assistant([text("Done: two failures in src/parse.test.ts.")], sid=sid, cwd=cwd, msg_id=f"msg_d{n}",
                              t=t + 5),
             claude_user(correction, sid=sid, cwd=cwd, t=t + 6, entrypoint="cli"),
             claude_assistant([text("Right, redone that way.")], sid=sid, cwd=cwd, msg_id=f"msg_e{n}", t=t + 7)]
    write_jsonl(claude_session_path(homes.claude, cwd, sid), recs)


def codex_session(homes: Homes, cwd: str, n: int, prompt: str) -> None:
    sid = f"c0000000-0000-4000-8000-{n:012d}"
    t = n * 86400.0 + 3600
    write_jsonl(codex_rollout_path(homes.codex, sid, t), [
        codex_meta(sid, cwd, t),
        *codex_user_turn(prompt, t + 1),
        *codex_call("shell", json.dumps({"command": ["bash", "-lc", "npm test"], "workdir": cwd}), f"c{n}",
                    "2 failed", t + 2),
        *codex_assistant("Two tests fail in src/parse.test.ts.", t + 3),
    ])


def sessions_of(homes: Homes, cwd: str, spec: tuple, start: int, skill: bool = True) -> int:
    name, correction, tasks = spec
    n = start
    for k, prompts in enumerate(tasks):
        for prompt in prompts:
            claude_session(homes, cwd, n, prompt, name if skill else None, correction, COMMANDS[k])
            n += 1
    return n


# Acting replays: the rubric judge passes every answer, so the outcome judges (ran pnpm, not npm) decide.
ACTING_RULES = {"rules": [*RULES["rules"][:3],
                          *CAPABLE_JUDGE,
                          {"stage": "judge", "response": json.dumps({"score": 8, "pass": True, "feedback": "Fine."})}]}


def options(project: Path, tmp_path: Path, *extra: str, rules_data: dict = RULES, **kw) -> NightOptions:
    rules = tmp_path / "rules.yaml"
    rules.write_text(yaml.safe_dump(rules_data))
    return NightOptions(project=project, backend="scripted",
                        overrides=[f"model.scripted={rules}", "sleep.min_tasks=2", *extra], **kw)


def changed_files(repo: Path, branch: str) -> list[str]:
    return git(repo, "diff", "--name-only", "HEAD", branch).split()


@pytest.fixture
def two_skills(homes: Homes, tmp_path: Path) -> Path:
    project = make_repo(tmp_path / "tiny", {
        ".claude/skills/run-tests/SKILL.md": skill_text("run-tests", "Running the test suite and the linter."),
        ".claude/skills/changelog/SKILL.md": skill_text("changelog", "Changelog entries and release notes.")})
    n = sessions_of(homes, str(project), TESTS, 1)
    sessions_of(homes, str(project), CHANGELOG, n)
    return project


def test_one_night_stages_one_gated_proposal_per_skill_each_changing_only_its_file(
        two_skills: Path, tmp_path: Path, capsys, monkeypatch) -> None:
    project = two_skills
    night = run_night(options(project, tmp_path), say=lambda _: None)
    assert night.outcome == "staged", night.reason
    by_name = {p["name"]: p for p in night.skills}
    assert set(by_name) == {"run-tests", "changelog"}, night.skills
    for name, rule in (("run-tests", "+- Use pnpm, not npm in this repo."),
                       ("changelog", "+- Use yarn, not npm for the release scripts.")):
        part = by_name[name]
        assert part["outcome"] == "staged", part["reason"]
        assert part["scores"]["candidate"] > part["scores"]["baseline"]
        assert changed_files(project, part["proposal"]["branch"]) == [f".claude/skills/{name}/SKILL.md"]
        assert rule in git(project, "diff", "HEAD", part["proposal"]["branch"])
        assert part["usage"]["model_calls"] > 0
    assert night.usage["model_calls"] == sum(p["usage"]["model_calls"] for p in night.skills)
    assert by_name["run-tests"]["run_dir"] != by_name["changelog"]["run_dir"]
    summary = summary_text(night)
    assert "2 skills this night" in summary
    assert "run-tests (claude-code): staged" in summary and "changelog (claude-code): staged" in summary
    # history and review show the night's skills side by side
    monkeypatch.chdir(project)  # history and review list the current directory's project
    assert main(["history", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)[0]
    assert {p["name"] for p in listed["skills"]} == {"run-tests", "changelog"}
    assert main(["history"]) == 0
    shown = capsys.readouterr().out
    assert "run-tests" in shown and "changelog" in shown
    assert main(["review", "--json"]) == 0
    review = json.loads(capsys.readouterr().out)
    assert sorted(r["skill_name"] for r in review) == ["changelog", "run-tests"]
    assert main(["review"]) == 0
    shown = capsys.readouterr().out
    assert "run-tests" in shown and "changelog" in shown
    # what the dashboard and the MCP tools read carries the per-skill list
    from sleep.ui.data import last_night

    assert {s.name for s in last_night().skills} == {"run-tests", "changelog"}
    assert all(s.proposal_id and s.calls for s in last_night().skills)

    # an unchanged night: both skills idle, no call
    again = run_night(options(project, tmp_path), say=lambda _: None)
    assert again.outcome == "idle" and again.usage == {}
    assert all(p["outcome"] == "idle" and night.id in p["reason"] for p in again.skills)


def test_skill_restricts_the_night_and_an_idle_skill_costs_nothing_while_another_trains(
        two_skills: Path, homes: Homes, tmp_path: Path) -> None:
    project = two_skills
    only = run_night(options(project, tmp_path, skill=project / ".claude/skills/changelog/SKILL.md"),
                     say=lambda _: None)
    assert [p["name"] for p in only.skills] == ["changelog"] and only.outcome == "staged"
    # new sessions of the tests skill only: the changelog skill is idle, the tests skill trains
    n = 100
    claude_session(homes, str(project), n, "run the unit tests and list what fails", "run-tests", TESTS[1])
    night = run_night(options(project, tmp_path), say=lambda _: None)
    parts = {p["name"]: p for p in night.skills}
    assert parts["changelog"]["outcome"] == "idle" and parts["changelog"]["usage"] == {}
    assert only.id in parts["changelog"]["reason"]
    assert parts["run-tests"]["outcome"] == "staged" and parts["run-tests"]["usage"]["model_calls"] > 0


def test_a_skill_with_too_few_tasks_says_so_and_the_other_still_trains(homes: Homes, tmp_path: Path) -> None:
    project = make_repo(tmp_path / "tiny", {
        ".claude/skills/run-tests/SKILL.md": skill_text("run-tests", "Running the test suite and the linter."),
        ".claude/skills/changelog/SKILL.md": skill_text("changelog", "Changelog entries and release notes.")})
    n = sessions_of(homes, str(project), TESTS, 1)
    sessions_of(homes, str(project), (CHANGELOG[0], CHANGELOG[1], CHANGELOG[2][:1]), n)
    night = run_night(options(project, tmp_path), say=lambda _: None)
    parts = {p["name"]: p for p in night.skills}
    assert parts["changelog"]["outcome"] == "too_few_tasks" and "changelog" in parts["changelog"]["reason"]
    assert parts["run-tests"]["outcome"] == "staged"
    assert "changelog" in night.reason and night.outcome == "staged"


def test_the_budget_is_shared_fairly_and_what_one_skill_leaves_is_passed_on(two_skills: Path, tmp_path: Path) -> None:
    free = run_night(options(two_skills, tmp_path, dry_run=True), say=lambda _: None)
    need = [p["usage"]["model_calls"] for p in free.skills]
    limit = need[0] + need[1] // 2  # the first skill's share (limit // 2) is less than it needs
    night = run_night(options(two_skills, tmp_path, f"budget.max_calls={limit}", dry_run=True), say=lambda _: None)
    calls = [p["usage"].get("model_calls", 0) for p in night.skills]
    assert calls[0] <= limit // 2 and sum(calls) <= limit, (calls, limit)
    assert calls[1] <= limit - calls[0], (calls, limit)  # the second gets what the first left


def claude_and_codex_project(homes: Homes, tmp_path: Path) -> Path:
    """One run-tests skill for Claude Code and one for Codex; the correction is in Claude Code's sessions,
    Codex's sessions ask the same tasks."""
    project = make_repo(tmp_path / "tiny", {
        ".claude/skills/run-tests/SKILL.md": skill_text("run-tests", "Running the test suite and the linter."),
        ".agents/skills/run-tests/SKILL.md": skill_text("run-tests", "Running the test suite and the linter.")})
    sessions_of(homes, str(project), TESTS, 1)
    for i, prompt in enumerate(["run the unit tests and list the failing ones", "run the linter and list the problems"]):
        codex_session(homes, str(project), 50 + i, prompt)
    return project


def test_a_correction_from_claude_code_becomes_a_gated_proposal_for_the_codex_skill(
        homes: Homes, tmp_path: Path) -> None:
    project = claude_and_codex_project(homes, tmp_path)
    said: list[str] = []
    night = run_night(options(project, tmp_path), say=said.append)
    parts = {p["host"]: p for p in night.skills}
    assert set(parts) == {"claude-code", "codex"}, night.skills
    claude, codex = parts["claude-code"], parts["codex"]
    assert claude["outcome"] == "staged" and codex["outcome"] == "staged", (claude["reason"], codex["reason"])
    assert codex["lesson_from"] == claude["path"]
    # codex is not ready here (no login in the scratch home): the lesson replays through the configured backend
    assert codex["replay"]["target"] == "scripted" and "`codex` is" in codex["replay"]["target_why"]
    assert changed_files(project, codex["proposal"]["branch"]) == [".agents/skills/run-tests/SKILL.md"]
    assert "+- Use pnpm, not npm in this repo." in git(project, "diff", "HEAD", codex["proposal"]["branch"])
    assert codex["scores"]["candidate"] > codex["scores"]["baseline"]  # gated, not copied
    assert codex["usage"]["model_calls"] > 0
    assert any("[Lesson]" in line and "codex" in line for line in said)


def test_the_lesson_replays_through_codex_when_its_cli_is_ready(homes: Homes, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    import replay_fakes

    from sleep.replay.sandbox import sandbox_available

    if not sandbox_available()[0]:
        pytest.skip(f"no bubblewrap sandbox: {sandbox_available()[1]}")
    project = claude_and_codex_project(homes, tmp_path)
    replay_fakes.on_path(monkeypatch, replay_fakes.install(tmp_path / "bin"))
    homes.codex.mkdir(parents=True, exist_ok=True)
    (homes.codex / "auth.json").write_text("{}")  # what cli_ready reads as "logged in" (the fake needs no key)
    night = run_night(options(project, tmp_path, rules_data=ACTING_RULES), say=lambda _: None)
    parts = {p["host"]: p for p in night.skills}
    assert "codex" in parts, [(p["name"], p["host"], p["outcome"], p["reason"], p["replay"]) for p in night.skills]
    codex = parts["codex"]
    assert codex["replay"]["target"] == "codex" and codex["replay"]["mode"] == "actions", codex["replay"]
    assert codex["outcome"] == "staged", codex["reason"]
    assert changed_files(project, codex["proposal"]["branch"]) == [".agents/skills/run-tests/SKILL.md"]
    assert "+- Use pnpm, not npm in this repo." in git(project, "diff", "HEAD", codex["proposal"]["branch"])


def test_a_broken_skill_file_fails_its_part_only_and_a_spent_budget_says_so(two_skills: Path, tmp_path: Path) -> None:
    (two_skills / ".claude/skills/changelog/SKILL.md").write_bytes(b"---\nname: changelog\n---\n\xff\xfe broken\n")
    night = run_night(options(two_skills, tmp_path, dry_run=True), say=lambda _: None)
    parts = {p["name"]: p for p in night.skills}
    assert parts["changelog"]["outcome"] == "failed" and "not UTF-8" in parts["changelog"]["reason"]
    assert parts["run-tests"]["outcome"] == "would_stage"


def test_budget_shares_pass_on_what_is_left_and_a_spent_budget_stops_the_rest() -> None:
    from types import SimpleNamespace

    from sleep.cycle.multiskill import budget_share, budget_spent

    assert budget_share(None, 0, 3) is None
    assert [budget_share(90, 0, 3), budget_share(90, 10, 2), budget_share(90, 50, 1)] == [30, 40, 40]
    budget = SimpleNamespace(max_calls=60, max_tokens=None)
    assert budget_spent(budget, {"model_calls": 59, "tokens": 10**6}) == ""
    assert "budget.max_calls=60" in budget_spent(budget, {"model_calls": 60, "tokens": 0})
