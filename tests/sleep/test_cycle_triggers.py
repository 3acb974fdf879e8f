"""Trigger evaluation and description optimisation (issue 33 §3): a skill whose description never
triggers for its own tasks gets a description proposal whose held-out trigger recall rises, with
the figures before and after in the night's record and the proposal; only the front matter's
``description:`` changes; adopt and undo restore exactly.

The scripted backend stands in for the target model's load-or-not decision with a rule (load
``run-tests`` when its listed description and the request share a word about tests or the linter):
this tests control flow only, never that a real model would decide so."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sleep_testutil import Homes
from test_cycle_multiskill import CHANGELOG, RULES, TESTS, git, make_repo, options, sessions_of, skill_text

from sleep.cycle.night import run_night
from sleep.cycle.triggers import Query, TriggerSettings, figures, front_matter, trigger_set, with_description
from sleep.proposals import adopt, get, show
from sleep.proposals.undo import undo

SKILL = ".claude/skills/run-tests/SKILL.md"
WRONG = skill_text("run-tests", "Changelog entries and release notes.")  # never triggers for test runs
GOOD_DESCRIPTION = "Run the unit tests or the linter and list what fails."
LOAD = {"stage": "trigger", "response": json.dumps({"load": ["run-tests"]}),
        "regex": r"(?s)<name>\nrun-tests\n</name>\n<description>\n[^\n]*\b(tests?|linter)\b[^\n]*\n</description>"
                 r".*Request: [^\n]*\b(tests?|linter)\b"}
TRIGGER_RULES = {"rules": [
    LOAD, {"stage": "trigger", "response": json.dumps({"load": []})},
    {"stage": "describe", "response": json.dumps({"descriptions": [GOOD_DESCRIPTION, "Release <notes>."]})},
    *RULES["rules"]]}


@pytest.fixture
def project(homes: Homes, tmp_path: Path) -> Path:
    repo = make_repo(tmp_path / "tiny", {
        SKILL: WRONG, ".claude/skills/changelog/SKILL.md": skill_text("changelog", "Changelog entries.")})
    n = sessions_of(homes, str(repo), TESTS, 1)
    sessions_of(homes, str(repo), CHANGELOG, n)
    return repo


def test_a_description_that_never_triggers_gets_a_gated_description_proposal(project: Path, tmp_path: Path) -> None:
    raw = (project / SKILL).read_bytes()
    night = run_night(options(project, tmp_path, "sleep.use_corrections=false", "sleep.paired.retire=false",
                              rules_data=TRIGGER_RULES, skill=project / SKILL), say=lambda _: None)
    t = night.skills[0]["triggers"]
    assert t["before"]["test"]["recall"] == 0.0 and t["after"]["test"]["recall"] == 1.0, t
    assert t["after"]["test"]["precision"] == 1.0 and t["accepted"], t
    assert t["n_queries"]["test"] >= 4 and t["description_after"] == GOOD_DESCRIPTION
    assert any("angle brackets" in d for d in t["dropped"])  # the invalid candidate was refused
    assert night.triggers == t  # the night's own fields carry the figures too
    pid = t["proposal"]["id"]
    p = get(pid)
    assert p.report.kind == "description" and p.report.triggers["after"]["test"]["recall"] == 1.0
    diff = show(pid).diff
    changed = [line for line in diff.splitlines() if line[:1] in "+-" and not line.startswith(("+++", "---"))]
    assert changed == ["-description: Changelog entries and release notes.", f"+description: {GOOD_DESCRIPTION}"]
    assert (project / SKILL).read_bytes() == raw
    adopt(pid)
    assert front_matter((project / SKILL).read_text())["description"] == GOOD_DESCRIPTION
    undo(pid)
    assert (project / SKILL).read_bytes() == raw
    assert night.skills[0]["usage"]["model_calls"] >= t["spent"]["model_calls"] > 0


def test_a_description_that_triggers_well_is_left_alone(project: Path, tmp_path: Path) -> None:
    (project / SKILL).write_text(skill_text("run-tests", GOOD_DESCRIPTION))
    git(project, "-c", "user.name=T", "-c", "user.email=t@example.invalid", "commit", "-qam", "good description")
    night = run_night(options(project, tmp_path, "sleep.use_corrections=false", "sleep.paired.retire=false",
                              rules_data=TRIGGER_RULES, skill=project / SKILL), say=lambda _: None)
    t = night.skills[0]["triggers"]
    assert t["before"]["test"]["recall"] == 1.0 and not t["accepted"] and "nothing to improve" in t["why"]
    assert "proposal" not in t


def test_the_trigger_set_splits_by_task_and_needs_both_sides() -> None:
    s = TriggerSettings()
    own = [("t1", "run tests a"), ("t1", "run tests b"), ("t2", "lint c"), ("t2", "lint d")]
    others = [("t3", "changelog e"), ("t4", "release f")]
    qs = trigger_set(own, others, ["a one-off question"], s)
    by_task: dict[str, set[str]] = {}
    for q in qs:
        by_task.setdefault(q.source if q.source != "one-off" else q.text, set()).add(q.split)
    assert all(len(v) == 1 for v in by_task.values())  # a task's prompts stay on one side
    for should in (True, False):
        assert {q.split for q in qs if q.should == should} == {"train", "test"}
    f = figures([(Query("x", True, "t1", "test"), True, True), (Query("y", True, "t1", "test"), False, True),
                 (Query("z", False, "t3", "test"), True, True), (Query("w", False, "t3", "test"), False, False)])
    assert (f["precision"], f["recall"], f["unread"]) == (0.5, 0.5, 1)


def test_a_step_none_of_whose_runs_could_be_read_stops_before_proposing() -> None:
    """Every run of the current description failed (an endpoint the CLI cannot reach, a model that never
    answers in the format): the step stops there, with an error, instead of measuring candidates the same way."""
    import asyncio

    from sleep.cycle.triggers import optimise

    calls: list[str] = []

    async def unreachable(description: str, queries):
        calls.append(description)
        return [(q, False, False) for q in queries]

    class Optimizer:
        async def complete(self, request):  # never reached
            raise AssertionError("proposed after a measurement that read nothing")

    queries = [Query("run tests", True, "t1", "train"), Query("lint", True, "t2", "test"),
               Query("changelog", False, "t3", "train"), Query("release", False, "t4", "test")]
    with pytest.raises(RuntimeError, match="none of the 4 trigger runs gave a readable answer"):
        asyncio.run(optimise(unreachable, Optimizer(), "run-tests", "Old.", queries, TriggerSettings()))
    assert calls == ["Old."]


@pytest.mark.parametrize("text", [
    "---\nname: a\ndescription: old one\nlicense: MIT\n---\n\n# A\n",
    "---\r\nname: a\r\ndescription: >\r\n  folded\r\n  old\r\nallowed-tools: Bash\r\n---\r\nbody",
    "---\nname: a\n---\nbody\n"])
def test_only_the_description_changes(text: str) -> None:
    new = with_description(text, "New: when the person runs tests")
    assert front_matter(new)["description"] == "New: when the person runs tests"
    before, after = front_matter(text), front_matter(new)
    before.pop("description", None), after.pop("description")
    assert before == after and new.split("---", 2)[2] == text.split("---", 2)[2]
