"""Judges are an open registry: a new type registers with its options schema,
is validated like a built-in one and is exported at the package root."""

from __future__ import annotations

import pytest

import skillopt_core
from skillopt_core.tasks.judges import JudgeError, build_judge, judge_types, register_judge, validate_judge_spec
from skillopt_core.tasks.judges.spec import _JUDGES
from skillopt_core.tasks.task import Score, Task

TASK = Task(id="t1", prompt="Name a colour.")


class StartsWith:
    def __init__(self, prefix: str) -> None:
        self.prefix = prefix

    async def score(self, task: Task, response: str) -> Score:
        ok = response.startswith(self.prefix)
        return Score(float(ok), float(ok), "Starts right." if ok else "Starts wrong.")


@pytest.fixture
def starts_with():
    """Registers the type 'starts_with' for one test, then removes it."""

    @register_judge("starts-with", {"prefix": "text the response must start with"})
    def build(options, backend):
        prefix = options.get("prefix")
        if not isinstance(prefix, str):
            raise JudgeError("Judge 'starts_with' needs 'prefix', a string.")
        return StartsWith(prefix)

    yield build
    _JUDGES._entries.pop("starts_with")


async def test_registered_type_builds_and_scores(starts_with):
    judge = build_judge({"type": "starts_with", "prefix": "Blue"})
    assert (await judge.score(TASK, "Blue sky")).passed
    assert not (await judge.score(TASK, "Red sky")).passed


def test_registered_type_is_listed_with_the_builtins(starts_with):
    assert {"starts_with", "exact", "rubric"} <= set(judge_types())


def test_registered_type_rejects_an_unknown_option_with_the_nearest(starts_with):
    with pytest.raises(JudgeError, match=r"Judge 'starts_with' has no option 'prefx'\. Did you mean 'prefix'\? Its options: prefix\."):
        validate_judge_spec({"type": "starts_with", "prefx": "B"})


def test_registered_builder_checks_values(starts_with):
    with pytest.raises(JudgeError, match="needs 'prefix'"):
        validate_judge_spec({"type": "starts_with"})


def test_registered_type_combines_with_builtins_in_a_list(starts_with):
    validate_judge_spec([{"type": "starts_with", "prefix": "B"}, {"type": "max_chars", "limit": 10}])


def test_unknown_type_suggests_a_registered_one(starts_with):
    with pytest.raises(JudgeError, match="Did you mean 'starts_with'"):
        validate_judge_spec({"type": "start_with", "prefix": "B"})


def test_needs_backend_type_is_refused_without_backend_but_validates():
    @register_judge("asks_model", {}, needs_backend=True)
    def build(options, backend):
        return StartsWith("")

    try:
        validate_judge_spec("asks_model")
        with pytest.raises(JudgeError, match="A 'asks_model' judge needs the judge-role backend"):
            build_judge("asks_model")
    finally:
        _JUDGES._entries.pop("asks_model")


def test_options_schema_may_not_declare_type():
    with pytest.raises(TypeError, match="without 'type'"):
        register_judge("bad", {"type": "no"})


def test_registry_names_are_exported_at_the_package_root():
    assert skillopt_core.register_judge is register_judge
    assert skillopt_core.judge_types is judge_types
    assert {"register_judge", "judge_types", "JudgeType"} <= set(skillopt_core.__all__)


def test_what_a_judge_grades_is_declared_on_its_registration_and_read_by_the_read_only_fallback_and_the_miner(
        starts_with):
    from skillopt_core.tasks.judges.spec import as_text, judge_type, text_rule_types
    from sleep.mine.assist import judge_schema, rule_schema

    @register_judge("opened", {"path": "a file the agent must open"}, reads_trajectory=True,
                    as_text=lambda rule, siblings: [{"type": "contains", "value": rule["path"]}])
    def build_opened(options, backend):
        return StartsWith("")

    try:
        assert judge_type("opened").reads_trajectory and not judge_type("starts_with").reads_trajectory
        # a read-only replay grades the answer: the trajectory judge stands as its text rule, a text judge stays
        assert as_text([{"type": "opened", "path": "README.md"}, {"type": "starts_with", "prefix": "ok"}]) == [
            {"type": "contains", "value": "README.md"}, {"type": "starts_with", "prefix": "ok"}]
        assert as_text({"type": "touched", "path": "x"}) == {"type": "max_chars", "limit": 100000}
        assert as_text([{"type": "ran", "command": "uv run pytest"}, {"type": "not_ran", "command": "pytest"}]) == [
            {"type": "contains", "value": "uv run pytest"}]
        # the miner may propose exactly the judges that grade the answer text alone
        kinds = {t.name for t in text_rule_types()}
        assert {"starts_with", "contains", "regex"} <= kinds
        assert not kinds & {"opened", "ran", "touched", "check", "rubric", "exact", "f1"}
        assert "starts_with" in rule_schema()["properties"]["type"]["enum"]
        assert rule_schema()["properties"]["prefix"] == {}
        assert judge_schema()["properties"]["rules"]["items"] == rule_schema()
    finally:
        _JUDGES._entries.pop("opened")
