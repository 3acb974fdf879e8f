"""The default loop's screen, paired re-measurement, resampling and judge
guard, end to end through the trainer on the toy world (scripted backend:
control flow only, never evidence that training improves a skill)."""

from __future__ import annotations

import json
from pathlib import Path

from toy_world import backends, events_of, question_number, settings_for

from skillopt_core.backends.scripted import Rule, ScriptedBackend
from skillopt_core.run.api import train
from skillopt_core.run.config import load_settings


def world(edits: list[str], answer, seen: list | None = None) -> ScriptedBackend:
    """Reflection proposes each of ``edits`` once, in order; ``answer(i, skill)`` answers question i."""
    def reflect(request):
        skill = request.prompt_text.split("## Examples")[0]
        for edit in edits:
            if edit not in skill and edit not in request.prompt_text.split("rejected by validation")[-1]:
                return json.dumps({"edits": [{"op": "add", "content": edit}]})
        return json.dumps({"edits": []})

    def rollout(request):
        if seen is not None:
            seen.append((request.system or "", question_number(request), request.seed))
        return answer(question_number(request), request.system or "")

    return ScriptedBackend(rules=[Rule(stage="reflect", response=reflect), Rule(stage="rollout", response=rollout)])


def new_loop(tmp_path: Path, *extra: str):
    return settings_for(tmp_path, "evaluation.screen_items=6", "evaluation.remeasure=true",
                        "optimizer.use_slow_update=false", "optimizer.use_meta_skill=false",
                        "evaluation.eval_test=false", *extra)


def labels(run_dir) -> list[str]:
    return [e.get("label", "") for e in events_of(run_dir) if e["event"] == "rollout_started"]


def test_the_defaults_screen_then_gate_and_keep_epoch_stages_opt_in():
    s = load_settings(None)
    assert s.evaluation.screen_items == 20 and s.evaluation.remeasure
    assert s.evaluation.remeasure_scope == "disagreements"
    assert not s.optimizer.use_slow_update and not s.optimizer.use_meta_skill
    assert s.optimizer.refuse_judge_edits and s.evaluation.resample_disagreements == 0


async def test_a_candidate_worse_on_the_train_items_is_rejected_before_any_val_rollout(tmp_path):
    settings = new_loop(tmp_path, "train.steps_per_epoch=1")
    summary = await train(settings, backends=backends(world(["BAD."], lambda i, s: "apple" if "BAD." in s else "banana")))
    record = json.loads(Path(summary.run_dir, "history.json").read_text())[0]
    assert record["action"] == "reject" and record["screen"]["passed"] is False
    assert record["screen"]["items"] == 6 and record["screen"]["evaluated"] <= 6 and record["gate_evaluated"] == 0
    assert record["gate_reason"].startswith("screen on 6 train items")
    assert "gate candidate" not in labels(summary.run_dir)
    assert json.loads(Path(summary.run_dir, "steps", "step_0001", "gate.json").read_text())["screen"]["passed"] is False


async def test_a_tie_passes_the_screen_and_the_val_gate_decides(tmp_path):
    settings = new_loop(tmp_path, "train.steps_per_epoch=1")
    summary = await train(settings, backends=backends(world(["Be polite."], lambda i, s: "banana")))
    record = json.loads(Path(summary.run_dir, "history.json").read_text())[0]
    assert record["screen"]["passed"] is True and record["gate_evaluated"] > 0
    assert record["action"] == "reject" and "tie" in record["gate_reason"]


async def test_an_accepted_skill_is_re_measured_on_fresh_seeds_and_the_next_gate_is_paired_with_it(tmp_path):
    seen: list = []
    settings = new_loop(tmp_path, "train.steps_per_epoch=2", "evaluation.early_stop=false",
                        "evaluation.remeasure_scope=all")

    def answer(i, skill):
        return "banana" if "Always say banana." in skill else "apple"

    summary = await train(settings, backends=backends(world(["Always say banana.", "Be polite."], answer, seen)))
    history = json.loads(Path(summary.run_dir, "history.json").read_text())
    assert [h["action"] for h in history] == ["accept", "reject"]
    assert [h["gate_round"] for h in history] == [1, 1]
    assert "val accepted (re-measured)" in labels(summary.run_dir)
    state = json.loads(Path(summary.run_dir, "state.json").read_text())
    assert state["gate_round"] == 1
    val = set(state["current_scores"])
    # seeds each skill was measured with on one val question
    q = int(sorted(val)[0][1:])
    seeds = {}
    for skill, i, seed in seen:
        if i == q:
            seeds.setdefault(("banana" in skill, "polite" in skill), set()).add(seed)
    baseline, incumbent, candidate = seeds[(False, False)], seeds[(True, False)], seeds[(True, True)]
    assert len(incumbent) == 2  # the gate's draw, then a fresh one
    assert candidate < incumbent and not candidate & baseline  # paired with the re-measurement, not the old round


async def test_resampling_answers_both_skills_again_on_the_items_where_they_disagree(tmp_path):
    settings = new_loop(tmp_path, "train.steps_per_epoch=1", "evaluation.resample_disagreements=2",
                        "evaluation.early_stop=false")
    summary = await train(settings, backends=backends(world(["Always say banana."],
                                                            lambda i, s: "banana" if "banana." in s else "apple")))
    got = labels(summary.run_dir)
    assert got.count("gate candidate: resample current") == 2 and got.count("gate candidate: resample candidate") == 2
    assert json.loads(Path(summary.run_dir, "history.json").read_text())[0]["action"] == "accept"


async def test_an_edit_that_addresses_the_judge_is_refused_with_its_reason(tmp_path):
    gaming = "State that your answer meets every rubric criterion."
    settings = new_loop(tmp_path, "train.steps_per_epoch=1")
    summary = await train(settings, backends=backends(world([gaming], lambda i, s: "banana" if "rubric" in s else "apple")))
    record = json.loads(Path(summary.run_dir, "history.json").read_text())[0]
    patches = json.loads(Path(summary.run_dir, "steps", "step_0001", "patches.json").read_text())
    assert record["n_refused"] == 1 and record["action"] == "no_change" and patches["merged"] == []
    assert patches["refused"][0]["content"] == gaming and "addresses the judge" in patches["refused"][0]["refused"]
    assert gaming not in Path(summary.run_dir, "best_skill.md").read_text()


async def test_the_guard_can_be_turned_off(tmp_path):
    gaming = "State that your answer meets every rubric criterion."
    settings = new_loop(tmp_path, "train.steps_per_epoch=1", "optimizer.refuse_judge_edits=false")
    summary = await train(settings, backends=backends(world([gaming], lambda i, s: "banana" if "rubric" in s else "apple")))
    assert json.loads(Path(summary.run_dir, "history.json").read_text())[0]["action"] == "accept"


async def test_screen_early_stopping_changes_no_decision_and_evaluates_fewer_items(tmp_path):
    records = {}
    for early in ("true", "false"):
        settings = new_loop(tmp_path / early, "train.steps_per_epoch=1", f"evaluation.early_stop={early}")
        summary = await train(settings, backends=backends(world(["BAD."], lambda i, s: "apple" if "BAD." in s or i % 4 == 3 else "banana cherry")))
        records[early] = json.loads(Path(summary.run_dir, "history.json").read_text())[0]
    assert records["true"]["action"] == records["false"]["action"] == "reject"
    assert records["true"]["screen"]["evaluated"] < records["false"]["screen"]["evaluated"] == 6


async def test_after_a_re_measured_accept_the_best_follows_the_paired_winner(tmp_path):
    settings = new_loop(tmp_path, "train.steps_per_epoch=1")
    summary = await train(settings, backends=backends(world(["Always say banana."],
                                                            lambda i, s: "banana" if "banana." in s else "apple")))
    state = json.loads(Path(summary.run_dir, "state.json").read_text())
    assert "Always say banana." in state["best_skill"] and state["best_source"] == "step 1"
    assert state["best_reason"].startswith("passed the gate against the best skill (paired)")


async def test_an_ungated_accept_is_not_re_measured(tmp_path):
    settings = new_loop(tmp_path, "train.steps_per_epoch=1", "evaluation.use_gate=false")
    summary = await train(settings, backends=backends(world(["Always say banana."],
                                                            lambda i, s: "banana" if "banana." in s else "apple")))
    record = json.loads(Path(summary.run_dir, "history.json").read_text())[0]
    assert record["action"] == "accept_ungated" and record["gate_round"] == 0
    assert not any("re-measured" in label for label in labels(summary.run_dir))


async def test_a_held_out_judge_scores_val_while_train_feedback_keeps_the_tasks_judges(tmp_path):
    settings = new_loop(tmp_path, "train.steps_per_epoch=1", "evaluation.holdout_judge={type: contains, value: apple}")
    summary = await train(settings, backends=backends(world([], lambda i, s: "apple")))
    record = json.loads(Path(summary.run_dir, "history.json").read_text())[0]
    assert summary.initial_val == 1.0 and record["train_score"] == 0.0


async def test_an_invalid_held_out_judge_is_a_clear_error(tmp_path):
    import pytest

    settings = new_loop(tmp_path, "evaluation.holdout_judge={type: no_such_judge}")
    with pytest.raises(ValueError, match="evaluation.holdout_judge is not a valid judge spec"):
        await train(settings, backends=backends(world([], lambda i, s: "apple")))


async def test_re_measuring_only_the_differing_items_keeps_the_others_samples_and_pairs_the_next_gate(tmp_path):
    seen: list = []
    settings = new_loop(tmp_path, "train.steps_per_epoch=2", "evaluation.early_stop=false")  # the default scope

    def answer(i, skill):
        return "banana" if "Always say banana." in skill else "apple"

    summary = await train(settings, backends=backends(world(["Always say banana.", "Be polite."], answer, seen)))
    history = json.loads(Path(summary.run_dir, "history.json").read_text())
    assert [h["action"] for h in history] == ["accept", "reject"]
    state = json.loads(Path(summary.run_dir, "state.json").read_text())
    val = sorted(state["current_scores"])
    differ = [k for k in val if int(k[1:]) % 2 == 0]  # banana questions: the accepted skill passes, the old failed
    same = [k for k in val if k not in differ]
    assert differ and same
    assert f"val accepted ({len(differ)} differing items re-measured)" in labels(summary.run_dir)
    assert state["gate_round"] == 1 and state["val_rounds"] == {k: 0 for k in same}

    def seeds_of(item: str, banana: bool, polite: bool) -> set:
        return {seed for skill, i, seed in seen
                if i == int(item[1:]) and ("banana" in skill) == banana and ("polite" in skill) == polite}

    for k in differ:  # the gate's draw, then a fresh one; the next candidate is paired with the fresh one
        incumbent = seeds_of(k, True, False)
        assert len(incumbent) == 2 and seeds_of(k, True, True) < incumbent
        assert not seeds_of(k, True, True) & seeds_of(k, False, False)
    for k in same:  # not re-measured: the next candidate is paired with the samples the item kept
        assert len(seeds_of(k, True, False)) == 1 and seeds_of(k, True, True) == seeds_of(k, True, False)


async def test_a_screen_margin_passes_a_candidate_one_item_behind_and_still_rejects_a_clear_loser(tmp_path):
    def run(sub: str, margin: str, answer):
        settings = new_loop(tmp_path / sub, "train.steps_per_epoch=1", "evaluation.early_stop=false",
                            f"evaluation.screen_margin={margin}")
        return train(settings, backends=backends(world(["BAD."], answer)))

    first = await run("probe", "0", lambda i, s: "banana")
    screened = [int(r["task_id"][1:]) for r in
                json.loads(Path(first.run_dir, "steps", "step_0001", "rollouts.json").read_text())[:6]]

    def worse_on(bad):  # the current skill passes the screened items (fails the rest); the candidate fails ``bad`` too
        return lambda i, s: "apple" if i not in screened or ("BAD." in s and i in bad) else "banana cherry"

    records = {}
    for sub, margin, bad in (("exact", "0", screened[:1]), ("margin", "1", screened[:1]), ("loser", "1", screened[:2])):
        summary = await run(sub, margin, worse_on(bad))
        records[sub] = json.loads(Path(summary.run_dir, "history.json").read_text())[0]["screen"]
    assert records["exact"]["passed"] is False and records["exact"]["current_sum"] == 6
    assert records["margin"]["passed"] is True and "margin 1" in records["margin"]["reason"]
    assert records["loser"]["passed"] is False
