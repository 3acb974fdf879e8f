"""The simulated world of bench/sim: its exact quality function, its rollouts,
and the mix of edits its optimizer proposes."""

from __future__ import annotations

import json
import math
import random
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.sim import OptimizerMix, WorldSpec, register_world  # noqa: E402
from bench.sim import optimizer as opt  # noqa: E402
from bench.sim.world import GENERAL  # noqa: E402
from skillopt_core.backends import BackendSpec, create_backend  # noqa: E402
from skillopt_core.envs import create_env  # noqa: E402
from skillopt_core.skill.edits import Edit  # noqa: E402


@pytest.fixture
def world():
    return register_world(WorldSpec(seed=3, n_items=120))


def first(world, kind, category=None):
    return next(r for r in world.rules if r.kind == kind and (category is None or r.category == category))


def test_a_helpful_rule_raises_true_quality(world):
    rule = first(world, "helpful")
    assert world.true_quality(rule.texts[0]) > world.true_quality("")


def test_a_harmful_rule_lowers_true_quality(world):
    rule = first(world, "harmful")
    assert world.true_quality(rule.texts[0]) < world.true_quality("")


def test_a_neutral_rule_leaves_true_quality_exactly_unchanged(world):
    assert world.true_quality(first(world, "neutral").texts[0]) == world.true_quality("")


def test_true_quality_is_the_mean_of_the_logistic_pass_probabilities(world):
    rule = first(world, "helpful", world.categories[0])
    general = first(world, "harmful", GENERAL)
    items = world.items[:12]
    expected = [1 / (1 + math.exp(-(it.base + (rule.effect if it.category == rule.category else 0.0) + general.effect)))
                for it in items]
    text = f"# Skill\n\n- {rule.texts[0]}\n- {general.texts[1]}\n"
    assert world.true_quality(text, items) == pytest.approx(sum(expected) / len(expected), rel=1e-12)


def test_any_wording_states_a_rule_and_twice_counts_once(world):
    rule = first(world, "helpful")
    once = world.true_quality(rule.texts[0])
    assert world.true_quality(rule.texts[1].upper()) == once
    assert world.true_quality(f"{rule.texts[0]}\n{rule.texts[1]}") == once


def test_one_rollout_passes_with_the_items_probability(world):
    item = world.items[5]
    skill = first(world, "helpful", item.category).texts[0]
    p = world.pass_probability(item, world.stated(skill))
    n = 4000
    passed = sum(world.passes(item, skill, seed, "prompt") for seed in range(n))
    assert abs(passed / n - p) < 4 * math.sqrt(p * (1 - p) / n)


def test_two_skills_answer_alike_more_often_than_independent_draws(world):
    item = world.items[7]
    a, b = "skill A", "skill B"  # same rules, different wording: the same p
    p = world.pass_probability(item, frozenset())
    same = sum(world.passes(item, a, s, a) == world.passes(item, b, s, b) for s in range(3000)) / 3000
    assert same > p * p + (1 - p) ** 2 + 0.05


def reflect_prompt(world, skill: str, failed: list[int], rejected: list[dict] = ()) -> str:
    examples = "\n".join(f"### Example {n + 1} (FAIL, score 0.00)\nTask: [sim item {i}] A task.\nModel answer: x"
                         for n, i in enumerate(failed))
    parts = ["## Current skill", "```markdown", skill, "```", "", "## Examples", examples]
    if rejected:
        parts += ["", "## Edits already tried and rejected by validation (do not propose them again)"]
        parts += [f"- {json.dumps(e)}" for e in rejected]
    return "\n".join(parts + ["", 'Propose edits as {"edits": [...]}.'])


def proposals(world, prompt: str, n: int = 300) -> list[dict]:
    out = []
    for k in range(n):
        reply = opt.reflect_reply(world, prompt, random.Random(k))
        try:
            out += json.loads(reply)["edits"]
        except ValueError:
            out.append({"invalid": True})
    return out


def kind_of(world, skill: str, edit: dict) -> str:
    if "invalid" in edit:
        return "invalid"
    try:
        parsed = Edit.from_dict(edit)
    except ValueError:
        return "malformed"
    if parsed.op != "add":
        if parsed.target not in skill:
            return "malformed"
        return "harmful" if opt.true_effect(world, edit) < 0 else "other"
    rule = world.rule_of(parsed.content)
    return rule.kind if rule else "malformed"


def test_the_optimizer_proposes_the_configured_mix(world):
    skill = "# Skill\n\n- Answer."
    failed = [i.index for i in world.items[:8]]
    edits = proposals(world, reflect_prompt(world, skill, failed))
    counts = Counter(kind_of(world, skill, e) for e in edits if "invalid" not in e)
    total = sum(counts.values())
    mix = world.spec.optimizer
    for kind in ("helpful", "neutral", "harmful", "malformed"):
        assert abs(counts[kind] / total - getattr(mix, kind)) < 0.06, (kind, counts)
    invalid = sum("invalid" in e for e in edits)
    assert 0 < invalid < 0.15 * 300


def test_helpful_proposals_aim_at_the_failed_categories(world):
    skill = "# Skill\n\n- Answer."
    failed = [i.index for i in world.items if i.category == world.categories[1]][:6]
    for edit in proposals(world, reflect_prompt(world, skill, failed), 100):
        rule = world.rule_of(edit.get("content") or "")
        if rule is not None and rule.kind == "helpful":
            assert rule.category in (world.categories[1], GENERAL)


def test_the_optimizer_sends_exact_and_near_duplicates(world):
    skill = "# Skill\n\n- Answer."
    failed = [i.index for i in world.items if i.category == world.categories[0]][:8]
    texts = [e["content"] for e in proposals(world, reflect_prompt(world, skill, failed), 60) if e.get("op") == "add"
             and world.rule_of(e.get("content") or "") is not None]
    by_rule = Counter(world.rule_of(t).id for t in texts)
    assert max(by_rule.values()) > 1  # exact or reworded repeats of one rule
    assert any(len({t for t in texts if world.rule_of(t).id == rid}) > 1 for rid in by_rule)  # two wordings


def test_the_optimizer_never_repeats_an_edit_listed_as_rejected(world):
    rule = first(world, "helpful", world.categories[0])
    rejected = [{"op": "add", "content": rule.texts[0]}]
    failed = [i.index for i in world.items if i.category == world.categories[0]][:8]
    mix_world = register_world(WorldSpec(seed=3, n_items=120, optimizer=OptimizerMix(
        helpful=1.0, neutral=0.0, harmful=0.0, malformed=0.0, invalid_reply=0.0, paraphrase=0.0)))
    contents = {e.get("content") for e in proposals(mix_world, reflect_prompt(mix_world, "# S", failed, rejected), 80)}
    assert rule.texts[0] not in contents and contents


def test_meta_notes_make_the_optimizer_avoid_every_wording_of_a_rejected_rule(world):
    spec = WorldSpec(seed=3, n_items=120, optimizer=OptimizerMix(helpful=1.0, neutral=0.0, harmful=0.0,
                                                                 malformed=0.0, invalid_reply=0.0, paraphrase=1.0))
    w = register_world(spec)
    cat = w.categories[0]
    rules = [r for r in w.rules if r.kind == "helpful" and r.category in (cat, GENERAL)]
    failed = [i.index for i in w.items if i.category == cat][:8]
    notes = "\n".join(f"- rejected: {r.texts[0]}" for r in rules[1:])
    prompt = reflect_prompt(w, "# S", failed).replace(
        "\nPropose edits", f"\n## Notes from earlier epochs (what worked and what did not)\n{notes}\n\nPropose edits")
    proposed = {w.rule_of(e["content"]).id for e in proposals(w, prompt, 40)}
    assert proposed == {rules[0].id}


def test_merge_names_the_wordings_it_merges(world):
    rule = first(world, "helpful")
    listing = "\n".join(f"{n}. {json.dumps({'op': 'add', 'content': t})}" for n, t in enumerate(rule.texts, 1))
    spec = WorldSpec(seed=3, n_items=120, optimizer=OptimizerMix(merge_recall=1.0))
    reply = json.loads(opt.merge_reply(register_world(spec), f"Proposed edits:\n{listing}\n\nMerge", random.Random(0)))
    assert reply["edits"] == [{"op": "add", "content": rule.texts[0], "sources": [1, 2],
                               "rationale": "the same rule in other words"}]


def test_the_mix_rates_must_sum_to_one():
    with pytest.raises(ValueError, match="sum to 1"):
        OptimizerMix(helpful=0.5, neutral=0.5, harmful=0.5, malformed=0.0)


async def test_env_and_backend_plug_in_through_the_registries():
    spec = WorldSpec(seed=4, n_items=30)
    env = create_env("sim", {"options": {"world": json.loads(json.dumps(spec.to_dict()))}})
    backend = create_backend(BackendSpec(name="sim", model=spec.key))
    task = env.load_tasks()[0]
    request = env.build_request(env.seed_skill, task, 64)
    completion = await backend.complete(replace(request, seed=1))
    score = await env.score(task, completion.text)
    world = register_world(spec)
    assert score.hard == float(world.passes(world.items[0], request.system, 1, request.prompt_text))
