"""Trigger evaluation with an agent CLI as the target (issue 33 §3): whether the skill was loaded is read
from the trajectory of the real `claude` (its ``Skill`` tool), not asked. The real binary from npm runs
against the scripted model endpoint on loopback (tests/sleep/model_endpoint.py), whose plan plays the
model: it calls the ``Skill`` tool for the listed skill when the request shares a word with the skill's
description *as the real CLI listed it* in what it sent, else answers. So the figures depend on the
description the real CLI put in its listing; the lexical rule itself is the test's oracle, applied to the
same requests and descriptions in Python.

Skipped (naming the tool) without the npm CLIs; CI installs them (.ci/run)."""

from __future__ import annotations

import asyncio
import json
import os
import re
from pathlib import Path

import pytest
from model_endpoint import ModelEndpoint, Turn, call, read, say
from npm_clients import npm_tool
from sleep_testutil import Homes
from trigger_labelled import QUERIES, SKILLS, WEAK

from skillopt_core.backends.scripted import Rule, ScriptedBackend
from skillopt_core.backends.trajectory import CommandRun, ToolCall, Trajectory
from skillopt_core.replay import REPLAY_MARKER
from sleep.cycle.trigger_trace import TraceDecider, loaded
from sleep.cycle.triggers import Query, TriggerSettings, figures, optimise, with_description

SKILL = "---\nname: run-tests\ndescription: {}\n---\n\n# Run the tests\n\nRun `pnpm vitest run` and list what fails.\n"
SIBLING = "---\nname: changelog\ndescription: {}\n---\n\nKeep a Changelog.\n".format(SKILLS["changelog"])
LISTED = re.compile(r"^- (?P<id>[\w:-]*run-tests): (?P<description>.*)$", re.M)
STOP = {"with", "then", "that", "this", "each", "what", "would", "from", "your", "into", "them", "list", "check",
        "write", "create", "build", "report", "project", "after", "show", "give", "tell", "does", "have", "file"}


def words(text: str) -> set[str]:
    return {w[:5] for w in re.findall(r"[a-z]{4,}", text.lower()) if w not in STOP}


def fits(description: str, request: str) -> bool:
    """The oracle: the request shares a content word with the skill's description."""
    return bool(words(request) & words(description))


def trigger_plan(seen: list[str]):
    """The model: on its first turn, load the run-tests skill (Claude Code's Skill tool, the name as
    listed) when the request fits its listed description; then answer."""

    def plan(turn: Turn) -> object:
        if turn.step:
            return say("done")
        request = "\n".join(turn.user).split(REPLAY_MARKER, 1)[-1].strip()
        seen.append(request)
        listed = LISTED.search(turn.system + "\n" + "\n".join(turn.user))  # where this version puts it
        if listed and fits(listed.group("description"), request):
            return call("Skill", skill=listed.group("id"))
        return say("I can answer that directly.")

    return plan


@pytest.fixture
def claude(homes: Homes, monkeypatch: pytest.MonkeyPatch):
    exe = npm_tool("claude")
    monkeypatch.setenv("PATH", os.pathsep.join([os.path.dirname(exe), os.environ["PATH"]]))
    for name in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)

    def start(ep: ModelEndpoint):
        from skillopt_core.backends import BackendSpec, create_backend

        for key, value in ep.anthropic_env().items():
            monkeypatch.setenv(key, value)
        return create_backend(BackendSpec(name="claude-code", model="claude-sonnet-4-5", role="target",
                                          options={"timeout": 120}))

    return start


def test_precision_and_recall_come_from_the_skill_tool_calls_of_the_real_claude(claude) -> None:
    asked = ["run the unit tests and tell me which ones fail", "draft the release note for the dark mode toggle",
             "pls run vitest and show failing assertions", "add tests for the failing parser"]
    should = [True, False, True, False]
    queries = [Query(q, s, "t", "test") for q, s in zip(asked, should)]
    seen: list[str] = []
    description = "Run the unit tests with vitest and list failing tests."
    with ModelEndpoint(trigger_plan(seen)) as ep:
        backend = claude(ep)
        decider = TraceDecider(backend, "run-tests", lambda d: SKILL.format(d), [SIBLING], workers=2)
        decisions = asyncio.run(decider(description, queries))
        bodies = [json.dumps(c.body) for c in ep.model_calls("anthropic")]
    # the plan loaded the skill for 1, 3 and 4 (a false alarm), not for 2: precision 2/3, recall 2/2
    assert [d[1] for d in decisions] == [True, False, True, True] and all(d[2] for d in decisions)
    f = figures(decisions)
    assert (f["tp"], f["fp"], f["fn"], f["tn"]) == (2, 1, 0, 1) and f["precision"] == 0.6667 and f["recall"] == 1.0
    # what the real CLI sent: the request alone (no "use the skill" pointer), the candidate description and
    # its sibling in its skill listing, and (after a load) the skill's body from the Skill tool
    assert sorted(seen) == sorted(asked)
    assert not any("Use the skill" in b for b in bodies)
    assert any(f"run-tests: {description}" in b and "changelog: " + SKILLS["changelog"][:40] in b for b in bodies)
    assert any("Run `pnpm vitest run` and list what fails." in b for b in bodies)


class Recording:
    """A launcher that starts the command as it is and records it (bubblewrap itself: the night tests)."""

    name = "recording"

    def __init__(self) -> None:
        self.wrapped: list[tuple[list[str], tuple]] = []

    def wrap(self, argv, cwd, env, writable=()):
        self.wrapped.append((list(argv), tuple(writable)))
        return argv, env


def test_the_trigger_runs_of_an_acting_claude_go_through_its_launcher(claude) -> None:
    """With the night's replay acting (the backend given the sandbox's launcher), each trigger run of the real
    claude starts through that launcher too, its plugin folder writable: never on the host beside it."""
    seen: list[str] = []
    with ModelEndpoint(trigger_plan(seen)) as ep:
        backend = claude(ep)
        launcher = Recording()
        backend.act(launcher)
        decider = TraceDecider(backend, "run-tests", lambda d: SKILL.format(d), [SIBLING], workers=1)
        decisions = asyncio.run(decider("Run the unit tests with vitest and list failing tests.",
                                        [Query("run the unit tests and list the failing ones", True, "t", "test")]))
    assert decisions[0][1] and decisions[0][2]  # the real claude loaded the skill, through the launcher
    assert len(launcher.wrapped) == 1 and launcher.wrapped[0][0][0].endswith("claude")
    assert launcher.wrapped[0][1] and "--plugin-dir" in launcher.wrapped[0][0]


def test_the_description_optimisation_with_the_real_claude_raises_held_out_recall(claude) -> None:
    """The night's loop (sleep.cycle.triggers.optimise) with the real claude deciding by its trajectory:
    the weak description never triggers; the optimizer's candidate does, on the held-out split too, and
    the figures before and after are the oracle's."""
    own = [q for q, label in QUERIES if label == "run-tests"]
    not_own = [q for q, label in QUERIES if label in ("changelog", None)][:8]
    queries = [Query(q, True, f"t{i % 2}", "train" if i % 2 else "test") for i, q in enumerate(own)]
    queries += [Query(q, False, f"o{i % 2}", "train" if i % 2 else "test") for i, q in enumerate(not_own)]
    good = SKILLS["run-tests"]

    optimizer = ScriptedBackend(rules=[Rule(response=json.dumps({"descriptions": [good, "Notes about <tests>."]}))])
    seen: list[str] = []
    with ModelEndpoint(trigger_plan(seen)) as ep:
        decider = TraceDecider(claude(ep), "run-tests", lambda d: with_description(SKILL.format(WEAK["run-tests"]), d),
                               [SIBLING], workers=2)
        result = asyncio.run(optimise(decider, optimizer, "run-tests", WEAK["run-tests"], queries,
                                      TriggerSettings(candidates=2)))

    def oracle(description: str, split: str) -> dict:
        return figures((q, fits(description, q.text), True) for q in queries if q.split == split)

    assert result.before["test"] == oracle(WEAK["run-tests"], "test") and result.before["test"]["recall"] == 0.0
    assert result.accepted and result.description_after == good, result.why
    assert result.after["test"] == oracle(good, "test") and result.after["test"]["recall"] > 0.5
    assert result.after["train"] == oracle(good, "train")
    assert any("angle brackets" in d for d in result.dropped)
    print("trigger figures through the real claude:", json.dumps({"before": result.before, "after": result.after}))


def _calls(*steps) -> Trajectory:
    return Trajectory(tuple(steps))


def test_loaded_reads_the_skill_tool_and_skill_file_reads_and_nothing_else() -> None:
    assert loaded(_calls(ToolCall("Skill", json.dumps({"skill": "skillopt:run-tests"}))), "run-tests")
    assert loaded(_calls(ToolCall("Skill", json.dumps({"skill": "run-tests", "args": "x"}))), "run-tests")
    assert not loaded(_calls(ToolCall("Skill", json.dumps({"skill": "skillopt:changelog"}))), "run-tests")
    assert not loaded(_calls(ToolCall("Skill", json.dumps({"skill": "skillopt:run-tests-fast"}))), "run-tests")
    # Codex reads the file with a shell command; other CLIs with a read tool
    assert loaded(_calls(CommandRun("/bin/bash -c 'cat .agents/skills/run-tests/SKILL.md'", 0)), "run-tests")
    assert loaded(_calls(CommandRun("sed -n 1,200p /w/.agents/skills/run-tests/SKILL.md", 0)), "run-tests")
    assert loaded(_calls(ToolCall("read", json.dumps({"filePath": "/w/.opencode/skills/run-tests/SKILL.md"}))),
                  "run-tests")
    assert not loaded(_calls(CommandRun("cat .agents/skills/fast-run-tests/SKILL.md", 0)), "run-tests")
    assert not loaded(_calls(CommandRun("ls .agents/skills/run-tests", 0)), "run-tests")
    assert not loaded(None, "run-tests") and not loaded(_calls(), "run-tests")


def test_a_chat_target_is_refused_by_the_trace_decider() -> None:
    class Chat:
        inner = None

    with pytest.raises(ValueError, match="not an agent CLI"):
        TraceDecider(Chat(), "run-tests", str, [])


def test_a_night_with_the_real_claude_stages_a_description_whose_held_out_recall_rises(
        homes: Homes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The whole night (issue 33's "done when"), the real claude as the target: the replays act in the
    sandbox (the plan answers them), the trigger step runs each request through claude with only the
    skills listed, reads the Skill calls through the night's own wrappers, and stages the description
    that triggers; the requests are recorded in the night's evidence like every call."""
    from test_cycle_multiskill import CHANGELOG, TESTS, make_repo, options, sessions_of, skill_text
    from test_cycle_triggers import GOOD_DESCRIPTION, SKILL as RUN_TESTS, TRIGGER_RULES, WRONG
    from test_replay_night_real import point

    from sleep.cycle.night import run_night
    from sleep.proposals import adopt, get
    from sleep.proposals.undo import undo

    project = make_repo(tmp_path / "tiny", {
        RUN_TESTS: WRONG, ".claude/skills/changelog/SKILL.md": skill_text("changelog", "Changelog entries.")})
    sessions_of(homes, str(project), CHANGELOG, sessions_of(homes, str(project), TESTS, 1))
    raw = (project / RUN_TESTS).read_bytes()
    seen: list[str] = []
    triggers = trigger_plan(seen)

    def plan(turn: Turn) -> object:  # a replay names the skill to use; a trigger request does not
        return say("did it somehow.") if "Use the skill" in "\n".join(turn.user) else triggers(turn)

    with ModelEndpoint(plan) as ep:
        point("claude-code", ep, homes, monkeypatch, tmp_path)
        night = run_night(options(project, tmp_path, "sleep.use_corrections=false", "sleep.paired.retire=false",
                                  "sleep.target_backend=claude-code", rules_data=TRIGGER_RULES,
                                  skill=project / RUN_TESTS), say=lambda _: None)
    t = night.skills[0]["triggers"]
    assert night.replay["target"] == "claude-code", night.replay
    assert "Skill tool" in t["decided_by"], t
    assert t["before"]["test"]["recall"] == 0.0 and t["after"]["test"]["recall"] == 1.0, t
    assert t["after"]["test"]["precision"] == 1.0 and t["accepted"] and t["description_after"] == GOOD_DESCRIPTION
    assert seen and all("Use the skill" not in s for s in seen)
    evidence = (Path(night.run_dir) / "evidence.jsonl").read_text()
    assert evidence.count('"stage": "trigger"') == t["spent"]["model_calls"] - 1  # all but the optimizer's call
    p = get(t["proposal"]["id"])
    assert p.report.kind == "description" and "Skill tool" in p.report.triggers["decided_by"]
    adopt(p.id)
    assert GOOD_DESCRIPTION in (project / RUN_TESTS).read_text()
    undo(p.id)
    assert (project / RUN_TESTS).read_bytes() == raw


CODEX_LISTED = re.compile(r"^- run-tests: (?P<description>.*?) \(file: (?P<root>r\d+)/run-tests/SKILL\.md\)$", re.M)


def codex_plan(seen: list[str]):
    """The model behind Codex: read the run-tests SKILL.md (a shell `cat` of the listed path, the skill
    root alias expanded) when the request fits its listed description; then answer."""

    def plan(turn: Turn) -> object:
        if turn.step:
            return say("done")
        said = turn.system + "\n" + "\n".join(turn.user)
        request = turn.user[-1].split(REPLAY_MARKER, 1)[-1].strip()
        seen.append(request)
        listed = CODEX_LISTED.search(said)
        if listed and fits(listed.group("description"), request):
            root = re.search(rf"- `{listed.group('root')}` = `([^`]+)`", said)
            return read(f"{root.group(1)}/run-tests/SKILL.md")
        return say("I can answer that directly.")

    return plan


def test_precision_and_recall_come_from_the_skill_reads_of_the_real_codex(
        homes: Homes, monkeypatch: pytest.MonkeyPatch) -> None:
    """Codex lists the skills of its working directory's .agents/skills with their paths and loads one
    by reading its SKILL.md with a shell command; that command, in the trajectory of the real codex,
    is what counts. (CODEX_HOME outside /tmp: Codex 0.171 refuses to set up its read-only sandbox's
    helper under a temporary folder, and then leaves the refused command out of its --json stream.)"""
    import shutil
    import tempfile

    from skillopt_core.backends import BackendSpec, create_backend

    exe = npm_tool("codex")
    monkeypatch.setenv("PATH", os.pathsep.join([os.path.dirname(exe), os.environ["PATH"]]))
    for name in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    codex_home = Path(tempfile.mkdtemp(prefix="codex-home-", dir="/var/tmp"))
    asked = ["run the unit tests and tell me which ones fail", "draft the release note for the dark mode toggle",
             "pls run vitest and show failing assertions", "add tests for the failing parser"]
    queries = [Query(q, s, "t", "test") for q, s in zip(asked, [True, False, True, False])]
    seen: list[str] = []
    try:
        with ModelEndpoint(codex_plan(seen)) as ep:
            (codex_home / "config.toml").write_text(ep.codex_config())
            monkeypatch.setenv("CODEX_HOME", str(codex_home))
            monkeypatch.setenv("OPENAI_API_KEY", "sk-scripted")
            backend = create_backend(BackendSpec(name="codex", model="gpt-5.5", role="target",
                                                 options={"timeout": 120}))
            decider = TraceDecider(backend, "run-tests", lambda d: SKILL.format(d), [SIBLING], workers=2)
            decisions = asyncio.run(decider("Run the unit tests with vitest and list failing tests.", queries))
            bodies = [json.dumps(c.body) for c in ep.model_calls("responses")]
    finally:
        shutil.rmtree(codex_home, ignore_errors=True)
    assert [d[1] for d in decisions] == [True, False, True, True] and all(d[2] for d in decisions)
    f = figures(decisions)
    assert (f["tp"], f["fp"], f["fn"], f["tn"]) == (2, 1, 0, 1) and f["precision"] == 0.6667 and f["recall"] == 1.0
    assert sorted(seen) == sorted(asked) and not any("Use the skill" in b for b in bodies)
    # the sibling skill was listed beside it, from the scratch folder's .agents/skills
    assert any("- changelog: " + SKILLS["changelog"][:40] in b for b in bodies)
