"""Reflect, aggregate and select: the optimizer-side steps of one training step."""

import json

from skillopt_core.optim.aggregate import Patch, aggregate, merge_identical
from skillopt_core.backends.scripted import Rule, ScriptedBackend
from skillopt_core.skill.edits import Edit
from skillopt_core.optim.reflect import build_reflect_request, make_minibatches, reflect
from skillopt_core.evaluation.rollout import RolloutResult
from skillopt_core.optim.select import order_from_ranking, rank_by_support, select
from skillopt_core.skill.document import Skill
from skillopt_core.backends.structured import complete_json, parse_json_reply
from skillopt_core.tasks.task import Score, Task

SKILL = Skill.parse("# Skill\n\n- Answer briefly.\n")


def pair(i: int, passed: bool, reference="gold"):
    task = Task(id=f"t{i}", prompt=f"question {i}", reference=reference)
    score = Score(1.0 if passed else 0.0, 1.0 if passed else 0.0, "ok" if passed else "The answer did not match.")
    return task, RolloutResult(task.id, 0, f"answer {i}", score)


def test_minibatches_hold_failures_and_a_few_successes():
    pairs = [pair(i, passed=i % 3 == 0) for i in range(12)]
    batches = make_minibatches(pairs, size=4, include_successes=True, seed=1)
    failures = [p for b in batches for p in b if not p[1].score.passed]
    assert len(failures) == 8 and len(batches) == 2
    assert all(sum(p[1].score.passed for p in b) == 1 for b in batches)


def test_no_failures_means_no_reflection():
    assert make_minibatches([pair(i, True) for i in range(5)], 4, True, 0) == []


def test_reference_shown_only_when_allowed():
    batch = [pair(1, passed=False, reference="Paris")]
    assert "Reference: Paris" in build_reflect_request(SKILL, batch, show_reference=True).prompt_text
    assert "Paris" not in build_reflect_request(SKILL, batch, show_reference=False).prompt_text


def test_rejected_edits_and_meta_notes_reach_the_prompt():
    rejected = [Edit(op="add", content="Say banana.")]
    text = build_reflect_request(SKILL, [pair(1, False)], show_reference=False, rejected=rejected, meta_notes="- be brief").prompt_text
    assert "Say banana." in text and "- be brief" in text


async def test_invalid_reply_is_retried_once_then_counted():
    backend = ScriptedBackend(queue=["not json", "still not json"])
    out = await reflect(backend, SKILL, [pair(1, False)], minibatch_size=4, include_successes=False,
                        show_reference=False, seed=0)
    assert out.edits == [] and out.invalid_replies == 1 and out.calls == 2
    assert "not JSON" in out.problems[0]


async def test_retry_recovers_from_one_invalid_reply():
    backend = ScriptedBackend(queue=["oops", json.dumps({"edits": [{"op": "add", "content": "Be exact."}]})])
    out = await reflect(backend, SKILL, [pair(1, False)], minibatch_size=4, include_successes=False,
                        show_reference=False, seed=0)
    assert [e.content for e in out.edits] == ["Be exact."] and out.invalid_replies == 0


def test_json_reply_tolerates_a_markdown_fence():
    data, err = parse_json_reply('Here:\n```json\n{"edits": []}\n```', {"type": "object", "required": ["edits"]})
    assert data == {"edits": []} and err == ""


async def test_complete_json_reports_schema_mismatch():
    backend = ScriptedBackend(queue=['{"x": 1}', '{"x": 2}'])
    from skillopt_core.backends import CompletionRequest

    reply = await complete_json(backend, CompletionRequest.single("q"), {"type": "object", "required": ["edits"]})
    assert not reply.ok and "schema" in reply.error


def test_identical_edits_merge_with_support():
    edits = [Edit(op="add", content="Be  exact."), Edit(op="add", content="Be exact."), Edit(op="delete", target="x")]
    patches = merge_identical(edits)
    assert [p.support for p in patches] == [2, 1]


async def test_identical_edits_merge_without_a_model_call():
    backend = ScriptedBackend()
    out = await aggregate(backend, [Edit(op="add", content="A."), Edit(op="add", content="A.")], use_model=True)
    assert len(out.patches) == 1 and backend.history == []


async def test_model_merge_falls_back_when_its_reply_is_invalid():
    backend = ScriptedBackend(rules=[Rule(stage="merge", response="nonsense")])
    out = await aggregate(backend, [Edit(op="add", content="A."), Edit(op="add", content="A!")], use_model=True)
    assert out.used_model and out.fallback_reason
    assert [p.edit.content for p in out.patches] == ["A.", "A!"]


async def test_model_merge_that_mentions_nothing_keeps_every_proposal():
    backend = ScriptedBackend(rules=[Rule(stage="merge", response=json.dumps({"edits": []}))])
    out = await aggregate(backend, [Edit(op="add", content="A."), Edit(op="add", content="A!")], use_model=True)
    assert [p.edit.content for p in out.patches] == ["A.", "A!"] and not out.dropped


async def test_model_merge_combines_similar_edits_and_sums_their_support():
    merged = {"op": "add", "content": "A.", "sources": [1, 2]}
    backend = ScriptedBackend(rules=[Rule(stage="merge", response=json.dumps({"edits": [merged]}))])
    edits = [Edit(op="add", content="A."), Edit(op="add", content="A."), Edit(op="add", content="A!")]
    out = await aggregate(backend, edits, use_model=True)
    assert [(p.edit.content, p.support) for p in out.patches] == [("A.", 3)] and not out.fallback_reason


async def test_model_merge_may_not_invent_an_edit():
    invented = {"op": "add", "content": "Something nobody proposed."}
    backend = ScriptedBackend(rules=[Rule(stage="merge", response=json.dumps({"edits": [invented]}))])
    out = await aggregate(backend, [Edit(op="add", content="A."), Edit(op="add", content="A!")], use_model=True)
    assert [p.edit.content for p in out.patches] == ["A.", "A!"]
    assert out.dropped and "invented" in out.dropped[0]


async def test_model_merge_may_not_retarget_a_replace():
    retarget = {"op": "replace", "target": "other text", "content": "B", "sources": [1, 2]}
    backend = ScriptedBackend(rules=[Rule(stage="merge", response=json.dumps({"edits": [retarget]}))])
    edits = [Edit(op="replace", target="x", content="B"), Edit(op="replace", target="x", content="B.")]
    out = await aggregate(backend, edits, use_model=True)
    assert len(out.patches) == 2 and "target" in out.dropped[0]


async def test_model_merge_keeps_the_origin_of_caller_edits():
    merged = {"op": "add", "content": "Use pnpm.", "sources": [1, 2]}
    backend = ScriptedBackend(rules=[Rule(stage="merge", response=json.dumps({"edits": [merged]}))])
    edits = [Edit(op="add", content="Use pnpm"), Edit(op="add", content="Use pnpm!", origin="correction")]
    out = await aggregate(backend, edits, use_model=True)
    assert [(p.edit.origin, p.support) for p in out.patches] == [("correction+optimizer", 2)]


def test_rank_by_support_is_stable():
    p = [Patch(Edit(op="add", content=c), s) for c, s in (("a", 1), ("b", 3), ("c", 1), ("d", 3))]
    assert [x.edit.content for x in rank_by_support(p)] == ["b", "d", "a", "c"]


def test_ranking_ignores_unknown_and_repeated_numbers():
    p = [Patch(Edit(op="add", content=c), 1) for c in "abc"]
    assert [x.edit.content for x in order_from_ranking(p, [3, 3, 9, 1])] == ["c", "a", "b"]


async def test_select_keeps_all_under_budget_without_a_call():
    backend = ScriptedBackend()
    p = [Patch(Edit(op="add", content=c), 1) for c in "ab"]
    sel = await select(backend, p, budget=2, use_model=True)
    assert sel.ranked_by == "all" and len(sel.selected) == 2 and backend.history == []


async def test_select_over_budget_uses_model_ranking():
    backend = ScriptedBackend(rules=[Rule(stage="rank", response=json.dumps({"order": [3, 1, 2]}))])
    p = [Patch(Edit(op="add", content=c), 1) for c in "abc"]
    sel = await select(backend, p, budget=2, use_model=True)
    assert sel.ranked_by == "model" and [x.edit.content for x in sel.selected] == ["c", "a"]


async def test_select_falls_back_to_support_on_invalid_ranking():
    backend = ScriptedBackend(rules=[Rule(stage="rank", response="no idea")])
    p = [Patch(Edit(op="add", content=c), s) for c, s in (("a", 1), ("b", 2), ("c", 1))]
    sel = await select(backend, p, budget=1, use_model=True)
    assert sel.ranked_by == "support" and [x.edit.content for x in sel.selected] == ["b"] and "invalid" in sel.note


async def test_malformed_edits_are_skipped_and_counted():
    backend = ScriptedBackend(queue=[json.dumps({"edits": [{"op": "add"}, {"op": "add", "content": "Be exact."}]})])
    out = await reflect(backend, SKILL, [pair(1, False)], minibatch_size=4, include_successes=False,
                        show_reference=False, seed=0)
    assert [e.content for e in out.edits] == ["Be exact."] and out.skipped_edits == 1


def test_edit_schema_requires_content_for_add_and_target_for_replace():
    import jsonschema
    import pytest as _pytest

    from skillopt_core.optim.reflect import EDITS_SCHEMA

    jsonschema.validate({"edits": [{"op": "add", "content": "x", "rationale": "r"}]}, EDITS_SCHEMA)
    for bad in ({"op": "add", "rationale": "r"}, {"op": "replace", "content": "x"}, {"op": "delete"}):
        with _pytest.raises(jsonschema.ValidationError):
            jsonschema.validate({"edits": [bad]}, EDITS_SCHEMA)


async def test_no_merge_call_when_no_two_edits_are_alike():
    backend = ScriptedBackend()
    edits = [Edit(op="add", content="Answer with the file and line first."),
             Edit(op="add", content="Use pnpm to run the tests."),
             Edit(op="delete", target="Be verbose.")]
    out = await aggregate(backend, edits, use_model=True)
    assert len(out.patches) == 3 and not out.used_model and backend.history == []


def test_similar_means_same_op_and_same_target_or_mostly_the_same_words():
    from skillopt_core.optim.aggregate import similar

    assert similar(Edit(op="add", content="Use pnpm to run tests."), Edit(op="add", content="Run tests with pnpm."))
    assert similar(Edit(op="replace", target="x y", content="a"), Edit(op="replace", target="x  y", content="b"))
    assert not similar(Edit(op="add", content="Use pnpm."), Edit(op="delete", target="Use pnpm."))
    assert not similar(Edit(op="add", content="Use pnpm to run tests."), Edit(op="add", content="Cite file:line first."))
