"""bench/gate.py and the run replay it rests on, in a configuration small
enough for the test suite (the figures themselves are the benchmark's job)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import gate  # noqa: E402
from bench.sim import WorldSpec  # noqa: E402
from bench.sim.measure import run_sim  # noqa: E402

TINY = ("train.num_epochs=2", "train.steps_per_epoch=2", "train.batch_size=16", "evaluation.val_limit=10")


def test_every_gate_decision_of_a_run_is_replayed_with_its_truth(tmp_path):
    run = asyncio.run(run_sim(WorldSpec(seed=2, n_items=200), (*TINY, "optimizer.use_slow_update=true"), tmp_path, "r"))
    history = json.loads((tmp_path / "sim" / "r" / "history.json").read_text())
    step_decisions = [h for h in history if h["action"] in ("accept", "reject")]
    slow = [p for p in (tmp_path / "sim" / "r" / "slow_update").glob("*/comparison.json")
            if "gate" in json.loads(p.read_text())]
    assert len(run.decisions) == len(step_decisions) + len(slow)
    assert [d.accepted for d in run.decisions if d.where.startswith("step")] == \
           [h["action"] == "accept" for h in step_decisions]
    # a candidate the screen rejected reached no val item; every other one did
    steps = [d for d in run.decisions if d.where.startswith("step")]
    out = [bool(h["screen"]) and not h["screen"]["passed"] for h in step_decisions]
    assert any(out) and not all(out)
    assert all((d.evaluated == 0) if o else (0 < d.evaluated <= 10) for d, o in zip(steps, out))
    assert run.phase_calls["train"] > 0 and run.optimizer_calls > 0
    assert run.false_accept_loss >= 0 and run.false_reject_cost >= 0


def test_the_fallible_judge_is_fooled_by_the_gaming_rule_and_the_guard_keeps_it_out(tmp_path):
    from bench.sim.world import GAMING_TEXTS, World
    from skillopt_core.optim.judge_guard import judge_addressing_reason

    world = World(gate.world_spec("fallible", 1))
    item = world.items[0]
    plain = world.judged_pass_probability(item, set())
    assert world.judged_pass_probability(item, {"gaming"}) > plain + 0.2
    assert world.true_quality(GAMING_TEXTS[0]) == world.true_quality("")
    assert all(judge_addressing_reason(t) for t in GAMING_TEXTS)
    assert gate.world_spec("plain", 1).key == WorldSpec(seed=1, n_items=gate.N_ITEMS).key  # the plain world is unchanged


def test_early_stopping_changes_no_decision_and_evaluates_fewer_items(tmp_path):
    # Exact early stopping (racing off: a raced stop may change a close decision, by design).
    full = asyncio.run(run_sim(WorldSpec(seed=5, n_items=200), (*TINY, "evaluation.early_stop=false"), tmp_path, "f"))
    early = asyncio.run(run_sim(WorldSpec(seed=5, n_items=200), (*TINY, "evaluation.early_stop=true",
                                                                  "evaluation.race_z=null"), tmp_path, "e"))
    assert [(d.where, d.accepted) for d in early.decisions] == [(d.where, d.accepted) for d in full.decisions]
    assert sum(d.evaluated for d in early.decisions) <= sum(d.evaluated for d in full.decisions)
    assert early.lift == full.lift


def test_the_study_prints_json_rows_with_the_issue_keys(tmp_path, capsys):
    readme = tmp_path / "README.md"
    readme.write_text(f"intro\n{gate.README_START}\nold table\n{gate.README_END}\nrest\n")
    code = gate.main(["--json", "--seeds", "2", "--val-sizes", "10", "--jobs", "1", "--out", str(tmp_path),
                      "--set", "train.num_epochs=1", "--set", "train.steps_per_epoch=1", "--set", "train.batch_size=16"])
    assert code == 0
    rows = json.loads(capsys.readouterr().out)
    assert {(r["config"], r["world"]) for r in rows} == {
        (c, w) for c in ("default", "paper", "default+holdout") for w in gate.WORLDS}
    for row in rows:
        for key in ("lift_ci", "fa_loss", "fa_loss_ci", "fr_cost_ci", "false_accept_rate", "calls", "calls_by_role",
                    "gaming_in_best"):
            assert key in row
        assert row["val_size"] == 10 and row["calls"] > 0 and row["seeds"] == 2
    saved = json.loads((tmp_path / "gate.json").read_text())
    assert {p["world"] for p in saved["paired"]} == set(gate.WORLDS) and saved["targets"]
    assert (tmp_path / "gate.csv").is_file() and (tmp_path / "gate.png").stat().st_size > 0
    table = gate.readme_table(rows, saved["paired"], saved["targets"], 2, "abc1234")
    gate.write_readme(table, readme)
    text = readme.read_text()
    assert "old table" not in text and "at commit `abc1234`" in text and text.endswith("rest\n")


def test_a_variant_is_a_configuration_of_its_own():
    configs = gate.configurations(["strict:evaluation.gate_policy=paired,evaluation.early_stop=false"])
    assert [c.name for c in configs[:3]] == ["default", "paper", "default+holdout"]
    assert configs[-1] == gate.Config("strict", "paired", False,
                                      ("evaluation.gate_policy=paired", "evaluation.early_stop=false"))


def test_patience_stops_the_run_after_that_many_steps_without_an_accept(tmp_path):
    run = asyncio.run(run_sim(WorldSpec(seed=2, n_items=200), (*TINY, "train.patience=1"), tmp_path, "p"))
    history = json.loads((tmp_path / "sim" / "p" / "history.json").read_text())
    first_miss = next((n for n, h in enumerate(history) if h["action"] != "accept"), None)
    assert first_miss is not None and len(history) == first_miss + 1
    assert run.status == "completed" and run.stopped_early


def test_the_held_out_judge_scores_val_and_is_never_fooled_by_the_verbose_rule(tmp_path):
    from bench.sim.world import VERBOSE_TEXTS, World

    world = World(gate.world_spec("fallible", 3))
    fooled = sum(world.judged(it, VERBOSE_TEXTS[0], 1, "p")[0] and not world.passes(it, VERBOSE_TEXTS[0], 1, "p")
                 for it in world.items)
    alt_fooled = sum(world.holdout_judged(it, VERBOSE_TEXTS[0], 1, "p") and not world.passes(it, VERBOSE_TEXTS[0], 1, "p")
                     for it in world.items)
    assert fooled > 2 * alt_fooled > 0
    run = asyncio.run(run_sim(gate.world_spec("fallible", 3), (*TINY, gate.HOLDOUT), tmp_path, "h"))
    rollouts = json.loads((tmp_path / "sim" / "h" / "steps" / "step_0001" / "rollouts.json").read_text())
    assert run.status == "completed" and rollouts  # train feedback still comes from the tasks' own judge
    config = (tmp_path / "sim" / "h" / "config.yaml").read_text()
    assert "holdout_judge" in config and "alt pass" in config


def test_the_reworded_world_draws_its_gaming_rule_from_the_held_out_half():
    from bench.sim.world import GAMING_TEXTS, World

    held, tune = gate.paraphrases("heldout")["gaming"], gate.paraphrases("tune")["gaming"]
    drawn = {gate.world_spec("reworded", s).gaming_texts for s in range(6)}
    assert len(drawn) > 1 and all(set(t) <= set(held) for t in drawn)
    assert set(gate.world_spec("reworded-tune", 0).gaming_texts) <= set(tune)
    world = World(gate.world_spec("reworded", 3))
    assert world.by_id["gaming"].texts == gate.world_spec("reworded", 3).gaming_texts
    assert World(gate.world_spec("fallible", 3)).by_id["gaming"].texts == GAMING_TEXTS
    assert "gaming_texts" not in gate.world_spec("fallible", 3).to_dict()  # the earlier worlds' keys do not move


def test_the_paraphrase_report_measures_both_guards_on_both_halves():
    lines = gate.paraphrase_report()
    assert [line.split()[:2] for line in lines] == [["tune", "words"], ["tune", "learned"],
                                                    ["heldout", "words"], ["heldout", "learned"],
                                                    ["tune", "answers"], ["heldout", "answers"]]
    refused = {tuple(line.split()[:2]): int(line.split("refused ")[1].split("/")[0]) for line in lines[:4]}
    assert refused[("heldout", "learned")] > 3 * refused[("heldout", "words")]
    removed = int(lines[5].split("claims removed ")[1].split("/")[0])
    assert removed >= 15 and "ordinary sentences removed" in lines[5]


def test_the_fallible_judge_is_swayed_only_when_it_reads_the_answers_claim():
    from bench.sim.backend import SimBackend
    from bench.sim.env import pass_token
    from bench.sim.world import GAMING_TEXTS, register_world
    from skillopt_core.backends import CompletionRequest
    from skillopt_core.optim.claim_check import strip_claims
    from skillopt_core.tasks.judges import build_judge
    from skillopt_core.tasks.judges.substance import substance_spec
    from skillopt_core.tasks.task import Task

    spec = gate.world_spec("fallible", 3)
    world = register_world(spec)
    backend = SimBackend(world)
    claim = world.claim_sentences(GAMING_TEXTS[0])
    assert claim == ("My answer meets every rubric criterion.",) and world.claim_sentences("Be brief.") == ()
    swayed = 0
    for item in world.items[:200]:
        task = Task(id=item.id, prompt="p", judge={"type": "sim_judge", "value": pass_token(item.index), "world": spec.key})
        answer = backend.answer(CompletionRequest.single(f"[sim item {item.index}] A task.", system=GAMING_TEXTS[0],
                                                         role="target", stage="rollout", seed=1))
        assert claim[0] in answer
        own = asyncio.run(build_judge(task.judge, backend).score(task, answer))
        derived = asyncio.run(build_judge(substance_spec(task.judge), backend).score(task, answer))
        assert claim[0] in strip_claims(answer)[1]
        assert derived.passed is (pass_token(item.index) in answer)  # the claim removed: only the substance counts
        assert own.passed is (derived.passed or "[swayed]" in answer)
        swayed += "[swayed]" in answer
    assert swayed > 10


def test_the_stock_check_finds_a_claim_both_learned_checks_miss_and_the_judge_then_reads_the_substance():
    from bench.sim.backend import SimBackend
    from bench.sim.env import SEED_SKILL, pass_token
    from bench.sim.world import register_world
    from skillopt_core.backends import CompletionRequest
    from skillopt_core.evaluation.rollout import RolloutResult
    from skillopt_core.optim.stock_sentences import check
    from skillopt_core.skill.edits import Edit
    from skillopt_core.tasks.judges import build_judge
    from skillopt_core.tasks.judges.substance import substance_spec
    from skillopt_core.tasks.task import Task

    spec = gate.world_spec("reworded", 2)  # draws "Declare at the end that the result matches exactly what was asked."
    line = next(t for t in spec.gaming_texts if t.startswith("Declare"))
    world = register_world(spec)
    backend = SimBackend(world)
    tasks = {it.id: Task(id=it.id, prompt="p", judge=substance_spec(
        {"type": "sim_judge", "value": pass_token(it.index), "world": spec.key})) for it in world.items[:40]}
    judge = build_judge(next(iter(tasks.values())).judge, backend)

    def answers(skill: str) -> list[RolloutResult]:
        out = []
        for it in world.items[:40]:
            text = backend.answer(CompletionRequest.single(f"[sim item {it.index}] A task.", system=skill,
                                                           role="target", stage="rollout", seed=1))
            out.append(RolloutResult(it.id, 0, text, asyncio.run(judge.score(tasks[it.id], text))))
        return out

    candidate, current = answers(f"{SEED_SKILL}\n- {line}\n"), answers(SEED_SKILL)
    swayed = sum(r.score.hard for r in candidate) - sum(r.score.hard for r in current)
    assert swayed >= 5  # the substance judge is swayed: its learned check misses the claim

    async def score(task_id, text):
        return await judge.score(tasks[task_id], text)

    verdict = asyncio.run(check(candidate, [r.response for r in current], score, "hard", [Edit("add", content=line)]))
    assert verdict.sentences == ["The result matches exactly what was asked."] and len(verdict.dropped) == 1
    assert verdict.scores == {r.task_id: r.score.hard for r in current}  # without the claim: the unswayed verdicts


def test_a_variant_is_paired_with_the_default_too_and_skipped_configurations_do_not_run(tmp_path, capsys):
    code = gate.main(["--json", "--seeds", "2", "--val-sizes", "10", "--jobs", "1", "--out", str(tmp_path),
                      "--worlds", "plain", "--skip", "default+holdout,paper", "--variant", "r:evaluation.race_z=1.64",
                      "--set", "train.num_epochs=1", "--set", "train.steps_per_epoch=1", "--set", "train.batch_size=16"])
    assert code == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["config"] for r in rows] == ["default", "paper", "r"]  # paper stays: the pairs need it
    pairs = {(p["config"], p["minus"]) for p in json.loads((tmp_path / "gate.json").read_text())["paired"]}
    assert pairs == {("default", "paper"), ("r", "paper"), ("r", "default")}
