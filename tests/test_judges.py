"""Judges: every rule judge passes and fails, specs combine, feedback keeps
grading secrets, the rubric judge validates the judge model's JSON."""

from __future__ import annotations

import json

import pytest

from skillopt_core.backends.scripted import Rule, ScriptedBackend
from skillopt_core.tasks.judges import JudgeError, build_judge, validate_judge_spec
from skillopt_core.tasks.task import Score, Task

TASK = Task(id="t1", prompt="What is the capital of France?", reference=["Paris"])


async def score(spec, response: str, task: Task = TASK, backend=None) -> Score:
    return await build_judge(spec, backend).score(task, response)


# --------------------------------------------------------------------------- exact / f1


async def test_exact_passes_after_normalisation():
    result = await score({"type": "exact", "answers": ["The Eiffel Tower"]}, "  eiffel tower!  ")
    assert (result.hard, result.soft) == (1.0, 1.0)


async def test_exact_accepts_any_of_several_answers():
    result = await score({"type": "exact", "answers": ["USA", "United States"]}, "the United States.")
    assert result.passed


async def test_exact_fails_on_different_answer():
    result = await score({"type": "exact", "answers": ["Paris"]}, "Lyon")
    assert (result.hard, result.soft) == (0.0, 0.0)


async def test_exact_takes_answers_from_task_reference():
    assert (await score({"type": "exact"}, "paris")).passed


async def test_exact_without_answers_or_reference_is_a_judge_error():
    with pytest.raises(JudgeError, match="no 'answers'"):
        await score({"type": "exact"}, "x", task=Task(id="t2", prompt="?"))


async def test_exact_case_sensitive_rejects_wrong_case():
    result = await score({"type": "exact", "answers": ["NaCl"], "case_sensitive": True}, "nacl")
    assert not result.passed


async def test_f1_hard_is_exact_match_soft_is_token_f1():
    result = await score({"type": "f1", "answers": ["Gabriel Garcia Marquez"]}, "Garcia Marquez")
    assert result.hard == 0.0
    assert result.soft == pytest.approx(0.8)


async def test_f1_passes_exact_answer_with_accents_removed():
    result = await score({"type": "f1", "answers": ["Gabriel García Márquez"]}, "gabriel garcia marquez")
    assert (result.hard, result.soft) == (1.0, 1.0)


async def test_f1_threshold_sets_hard_from_f1():
    result = await score({"type": "f1", "answers": ["Gabriel Garcia Marquez"], "threshold": 0.75}, "Garcia Marquez")
    assert result.passed


async def test_f1_with_no_common_words_scores_zero():
    result = await score({"type": "f1"}, "Berlin")
    assert (result.hard, result.soft) == (0.0, 0.0)


# --------------------------------------------------------------------------- contains / not_contains


async def test_contains_passes_when_all_values_present_case_insensitive():
    result = await score({"type": "contains", "values": ["pnpm", "install"]}, "Run PNPM INSTALL first.")
    assert result.passed


async def test_contains_gives_partial_credit_for_missing_value():
    result = await score({"type": "contains", "values": ["pnpm", "lockfile"]}, "use pnpm")
    assert (result.hard, result.soft) == (0.0, 0.5)
    assert "missing 1 of 2" in result.feedback


async def test_contains_case_sensitive_fails_on_wrong_case():
    result = await score({"type": "contains", "value": "README", "case_sensitive": True}, "see readme")
    assert not result.passed


async def test_not_contains_passes_without_forbidden_value():
    assert (await score({"type": "not_contains", "value": "npm install"}, "pnpm add x")).passed


async def test_not_contains_fails_with_forbidden_value():
    result = await score({"type": "not_contains", "values": ["TODO", "FIXME"]}, "left a todo here")
    assert (result.hard, result.soft) == (0.0, 0.5)


# --------------------------------------------------------------------------- regex / max_chars / json


async def test_regex_passes_on_match():
    assert (await score({"type": "regex", "pattern": r"^\d{3}-\d{4}$"}, "555-1234")).passed


async def test_regex_fails_without_match():
    assert not (await score({"type": "regex", "pattern": r"^\d{3}-\d{4}$"}, "call me")).passed


async def test_regex_flags_letters_apply():
    assert (await score({"type": "regex", "pattern": "^done$", "flags": "im"}, "work\nDONE")).passed


async def test_regex_flag_names_apply():
    assert (await score({"type": "regex", "pattern": "^done$", "flags": ["IGNORECASE", "MULTILINE"]}, "x\nDone")).passed


async def test_max_chars_passes_within_limit():
    assert (await score({"type": "max_chars", "limit": 10}, "short")).passed


async def test_max_chars_fails_over_limit_and_states_both_lengths():
    result = await score({"type": "max_chars", "limit": 800}, "x" * 1240)
    assert not result.passed
    assert result.feedback == "The response is 1,240 characters; the limit is 800."
    assert result.soft == pytest.approx(800 / 1240)


async def test_json_valid_passes_valid_json():
    assert (await score({"type": "json_valid"}, '{"a": 1}')).passed


async def test_json_valid_fails_fenced_json_and_says_so():
    result = await score("json_valid", '```json\n{"a": 1}\n```')
    assert not result.passed
    assert "code fence" in result.feedback


async def test_json_valid_with_schema_passes_matching_json():
    schema = {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}}
    assert (await score({"type": "json_valid", "schema": schema}, '{"name": "x"}')).passed


async def test_json_valid_with_schema_fails_mismatch_with_half_credit():
    schema = {"type": "object", "required": ["name"]}
    result = await score({"type": "json_valid", "schema": schema}, '{"other": 1}')
    assert (result.hard, result.soft) == (0.0, 0.5)
    assert "required" in result.feedback


# --------------------------------------------------------------------------- lists


async def test_list_spec_passes_when_all_parts_pass():
    spec = [{"type": "contains", "value": "Paris"}, {"type": "max_chars", "limit": 50}]
    result = await score(spec, "Paris")
    assert (result.hard, result.soft) == (1.0, 1.0)


async def test_list_spec_hard_is_min_soft_is_mean_feedback_is_joined():
    spec = [
        {"type": "contains", "values": ["Paris", "France"]},
        {"type": "max_chars", "limit": 5},
        {"type": "not_contains", "value": "London"},
    ]
    result = await score(spec, "Paris!!!!!")  # 10 chars: contains 1/2, max_chars 0.5, not_contains 1
    assert result.hard == 0.0
    assert result.soft == pytest.approx((0.5 + 0.5 + 1.0) / 3)
    assert "missing 1 of 2" in result.feedback and "the limit is 5" in result.feedback


# --------------------------------------------------------------------------- secrets stay secret

SECRET_CASES = [
    ({"type": "exact", "answers": ["Kilimanjaro"]}, "Kilimanjaro", ["Mount Kenya", "Kilimanjaro"]),
    ({"type": "f1", "answers": ["Treaty of Versailles"]}, "Treaty of Versailles", ["Versailles palace", "Treaty of Versailles"]),
    ({"type": "contains", "values": ["zx-secret-token"]}, "zx-secret-token", ["nothing", "zx-secret-token here"]),
    ({"type": "not_contains", "value": "forbidden-word"}, "forbidden-word", ["ok", "forbidden-word"]),
    ({"type": "regex", "pattern": r"ticket-\d{4}"}, r"ticket-\d{4}", ["none", "ticket-1234"]),
]


@pytest.mark.parametrize("spec,secret,responses", SECRET_CASES, ids=[c[0]["type"] for c in SECRET_CASES])
async def test_feedback_never_contains_pattern_or_gold(spec, secret, responses):
    for response in responses:
        result = await score(spec, response)
        assert secret.lower() not in result.feedback.lower()
        assert result.feedback  # one sentence, always


# --------------------------------------------------------------------------- bad specs


def test_unknown_type_suggests_nearest():
    with pytest.raises(JudgeError, match="Did you mean 'contains'"):
        build_judge({"type": "contians", "value": "x"})


def test_unknown_option_suggests_nearest():
    with pytest.raises(JudgeError, match="no option 'patern'.*Did you mean 'pattern'"):
        build_judge({"type": "regex", "patern": "x"})


def test_judge_error_is_a_value_error():
    assert issubclass(JudgeError, ValueError)


def test_regex_that_does_not_compile_is_rejected():
    with pytest.raises(JudgeError, match="does not compile"):
        build_judge({"type": "regex", "pattern": "("})


def test_invalid_json_schema_is_rejected():
    with pytest.raises(JudgeError, match="not a valid JSON Schema"):
        build_judge({"type": "json_valid", "schema": {"type": "no-such-type"}})


def test_max_chars_needs_a_positive_limit():
    with pytest.raises(JudgeError, match="positive whole number"):
        build_judge({"type": "max_chars", "limit": 0})


def test_empty_list_spec_is_rejected():
    with pytest.raises(JudgeError, match="at least one"):
        build_judge([])


def test_rubric_without_backend_is_a_clear_error():
    with pytest.raises(JudgeError, match="needs the judge-role backend"):
        build_judge({"type": "rubric", "rubric": "Is it polite?"})


def test_validate_accepts_rubric_without_backend():
    validate_judge_spec({"type": "rubric", "rubric": "Is it polite?"})


# --------------------------------------------------------------------------- rubric


def judge_backend(replies: list[str]) -> ScriptedBackend:
    """The scripted backend answering from ``replies`` in order; ``history`` holds every request."""
    return ScriptedBackend(queue=replies, model="fake-judge")


RUBRIC = {"type": "rubric", "rubric": "The answer names the capital and nothing else."}


async def test_rubric_valid_json_gives_score_and_feedback():
    backend = judge_backend([json.dumps({"score": 8, "pass": True, "feedback": "Concise and correct."})])
    result = await score(RUBRIC, "Paris", backend=backend)
    assert (result.hard, result.soft, result.feedback) == (1.0, 0.8, "Concise and correct.")
    request = backend.history[0]
    assert (request.role, request.stage) == ("judge", "judge")
    assert request.json_schema["required"] == ["score", "pass", "feedback"]
    assert "- Paris" in request.messages[0].content  # the judge model may see the reference


async def test_rubric_scale_one_reads_score_as_fraction():
    backend = judge_backend([json.dumps({"score": 0.25, "pass": False, "feedback": "Too long."})])
    result = await score({**RUBRIC, "scale": 1}, "Paris, obviously, as everyone knows", backend=backend)
    assert (result.hard, result.soft) == (0.0, 0.25)


async def test_rubric_retries_once_after_invalid_json():
    backend = judge_backend(["I think it is fine", json.dumps({"score": 10, "pass": True, "feedback": "Good."})])
    result = await score(RUBRIC, "Paris", backend=backend)
    assert result.passed
    assert len(backend.history) == 2


async def test_rubric_invalid_twice_scores_zero_and_says_judge_output_invalid():
    backend = judge_backend(["not json", json.dumps({"score": 99, "pass": "yes"})])
    result = await score(RUBRIC, "Paris", backend=backend)
    assert (result.hard, result.soft) == (0.0, 0.0)
    assert "judge's output was invalid" in result.feedback
    assert len(backend.history) == 2


async def test_rubric_feedback_has_reference_answer_withheld():
    backend = judge_backend([json.dumps({"score": 2, "pass": False, "feedback": "The answer should be Paris."})])
    result = await score(RUBRIC, "Lyon", backend=backend)
    assert "paris" not in result.feedback.lower()


async def test_rubric_judge_call_that_fails_says_so():
    from skillopt_core.backends import RequestFailed

    failing = ScriptedBackend(rules=[Rule(error=RequestFailed("timeout after 120 s"))])
    result = await score(RUBRIC, "Paris", backend=failing)
    assert result.hard == 0.0 and "judge call failed (timeout after 120 s)" in result.feedback


async def test_rubric_asks_for_bounded_feedback_but_accepts_a_longer_one():
    """A grammar-constrained small model loops in an unbounded feedback string until max_tokens
    (issue 23 §2: a 2,000-character judge reply on SmolLM2); a larger model's long feedback still counts."""
    long = "Correct, and here is why: " + "x" * 600
    backend = judge_backend([json.dumps({"score": 9, "pass": True, "feedback": long})])
    result = await score(RUBRIC, "Paris", backend=backend)
    assert result.hard == 1.0 and result.feedback.startswith("Correct")
    assert backend.history[0].json_schema["properties"]["feedback"]["maxLength"] == 300
    assert len(backend.history) == 1  # no repair round for a long but valid answer
