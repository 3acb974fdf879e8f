"""``propose --from-run``: a `skillopt train` run directory's best skill and evidence as a report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from proposal_testutil import SKILL, SKILL_TEXT, make_repo, write

from sleep.proposals import RunDirError, report_from_run, stage

BEST = SKILL_TEXT + "- Always run the linter.\n"


def _run_dir(root: Path) -> Path:
    """A run directory shaped like skillopt_core's (two steps: one accepted, one rejected)."""
    write(root / "best_skill.md", BEST)
    write(root / "skills" / "step_0000.md", SKILL_TEXT)
    write(root / "summary.json", json.dumps({
        "run_id": "r7", "run_dir": str(root), "status": "completed", "steps_done": 2, "total_steps": 2,
        "initial_val": 0.4, "best_val": 0.6, "initial_test": 0.3, "best_test": 0.5,
        "usage": {"calls": 40, "input_tokens": 5000, "output_tokens": 300, "cost_usd": 0.12},
        "accepted": 1, "rejected": 1}))
    write(root / "history.json", json.dumps([
        {"step": 1, "action": "accept", "gate_reason": "val 0.60 > 0.40", "gate_items": 5},
        {"step": 2, "action": "reject", "gate_reason": "val 0.50 <= 0.60", "gate_items": 5}]))
    for step, accept, edit in ((1, True, "Always run the linter."), (2, False, "Never run tests.")):
        sdir = root / "steps" / f"step_{step:04d}"
        write(sdir / "selected.json", json.dumps({"edits": [
            {"op": "add", "target": "", "content": edit, "rationale": f"why {step}", "anchor": None,
             "status": "applied", "detail": "appended"},
            {"op": "delete", "target": "nothing", "content": "", "rationale": "x", "anchor": None,
             "status": "target_not_found", "detail": "no match"}]}))
        write(sdir / "gate.json", json.dumps({"accept": accept, "policy": "paired", "deltas": {"q1": 1.0, "q2": -0.5}}))
    write(root / "config.yaml", yaml.safe_dump({
        "model": {"backend": "openai", "target": "gpt-a", "optimizer": "gpt-b", "judge": None},
        "evaluation": {"gate_policy": "paired"}}))
    return root


def test_run_scores_become_baseline_and_candidate(tmp_path: Path) -> None:
    text, r = report_from_run(_run_dir(tmp_path / "run"))
    assert text == BEST
    assert (r.baseline_val, r.candidate_val, r.policy, r.n_val_items) == (0.4, 0.6, "paired", 5)
    assert (r.run.run_id, r.run.initial_test, r.run.best_test) == ("r7", 0.3, 0.5)


def test_only_applied_edits_of_accepted_steps_are_reported_with_rationales(tmp_path: Path) -> None:
    _, r = report_from_run(_run_dir(tmp_path / "run"))
    assert [(e.content, e.rationale, e.step) for e in r.edits] == [("Always run the linter.", "why 1", 1)]


def test_task_deltas_come_from_the_accepted_gates(tmp_path: Path) -> None:
    _, r = report_from_run(_run_dir(tmp_path / "run"))
    assert r.task_deltas == {"q1": 1.0, "q2": -0.5}


def test_models_and_usage_come_from_the_run(tmp_path: Path) -> None:
    _, r = report_from_run(_run_dir(tmp_path / "run"))
    assert r.models == {"target": "openai:gpt-a", "optimizer": "openai:gpt-b", "judge": "openai:default"}
    assert r.usage["calls"] == 40


def test_a_run_that_started_from_other_text_says_so(tmp_path: Path) -> None:
    _, r = report_from_run(_run_dir(tmp_path / "run"), live_text="something else\n")
    assert any("different text than the live file" in n for n in r.notes)


def test_a_run_that_started_from_the_live_text_has_no_such_note(tmp_path: Path) -> None:
    _, r = report_from_run(_run_dir(tmp_path / "run"), live_text=SKILL_TEXT)
    assert not any("different text" in n for n in r.notes)


def test_an_unfinished_run_is_refused(tmp_path: Path) -> None:
    run = _run_dir(tmp_path / "run")
    (run / "summary.json").unlink()
    with pytest.raises(RunDirError, match="not a finished"):
        report_from_run(run)


def test_a_corrupt_summary_is_refused(tmp_path: Path) -> None:
    run = _run_dir(tmp_path / "run")
    write(run / "summary.json", "{half")
    with pytest.raises(RunDirError, match="unreadable"):
        report_from_run(run)


def test_a_staged_run_carries_its_scores_in_the_report(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "app")
    text, r = report_from_run(_run_dir(tmp_path / "run"), SKILL_TEXT)
    p = stage(repo / SKILL, text, r)
    assert (p.baseline_val, p.candidate_val, p.n_edits, p.report.source) == (0.4, 0.6, 1, "run")


# ----- refusals (issue 23 §1): a run trained from another skill, or one that did not improve -----

OTHER_SKILL = "---\nname: searchqa\ndescription: Answer search questions.\n---\n\n# SearchQA\n"


def _propose(repo: Path, run: Path, *extra: str) -> int:
    from sleep.cli import main

    return main(["propose", "--skill", str(repo / SKILL), "--from-run", str(run), *extra])


def test_propose_refuses_a_run_trained_from_another_skill(tmp_path: Path, capsys) -> None:
    repo = make_repo(tmp_path / "app")
    run = _run_dir(tmp_path / "run")
    write(run / "skills" / "step_0000.md", OTHER_SKILL)
    assert _propose(repo, run) == 2
    err = capsys.readouterr().err
    assert "trained from another text" in err and "'searchqa'" in err and "--force" in err
    assert "skillopt/" not in subprocess_branches(repo)
    assert _propose(repo, run, "--force") == 0
    assert "skillopt/" in subprocess_branches(repo)


def test_propose_refuses_a_run_that_did_not_improve(tmp_path: Path, capsys) -> None:
    repo = make_repo(tmp_path / "app")
    run = _run_dir(tmp_path / "run")
    summary = json.loads((run / "summary.json").read_text())
    write(run / "summary.json", json.dumps({**summary, "initial_val": 0.0, "best_val": 0.0}))
    assert _propose(repo, run) == 2
    assert "did not improve on val (0.00 → 0.00)" in capsys.readouterr().err
    assert "skillopt/" not in subprocess_branches(repo)


def test_propose_refuses_a_run_that_does_not_say_what_it_started_from(tmp_path: Path, capsys) -> None:
    repo = make_repo(tmp_path / "app")
    run = _run_dir(tmp_path / "run")
    (run / "skills" / "step_0000.md").unlink()
    assert _propose(repo, run) == 2
    assert "does not say which skill it was trained from" in capsys.readouterr().err


def test_propose_stages_a_run_trained_from_the_live_text(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "app")
    assert _propose(repo, _run_dir(tmp_path / "run")) == 0


def subprocess_branches(repo: Path) -> str:
    import subprocess

    return subprocess.run(["git", "-C", str(repo), "branch", "--list"], capture_output=True, text=True).stdout


def test_models_name_the_backends_the_run_used_not_auto(tmp_path: Path) -> None:
    run = _run_dir(tmp_path / "run")
    write(run / "config.yaml", yaml.safe_dump({"model": {"backend": "auto"}, "evaluation": {"gate_policy": "paired"}}))
    write(run / "events.jsonl", json.dumps({"event": "run_started", "backends": {
        "target": "local SmolLM2-135M (llama.cpp)", "optimizer": "local SmolLM2-135M (llama.cpp)",
        "judge": "local SmolLM2-135M (llama.cpp)"}}) + "\n")
    _, r = report_from_run(run)
    assert r.models["target"] == "local SmolLM2-135M (llama.cpp)" and "auto:default" not in r.models.values()


def test_a_report_from_a_result_in_memory_is_the_report_from_its_run_directory(tmp_path: Path) -> None:
    import asyncio

    from skillopt_core import Task, load_settings, prepare_training
    from sleep.proposals.fromrun import report_from_result

    rules = Path(__file__).parents[1] / "fixtures" / "run_before_record" / "rules.yaml"
    settings = load_settings(None, ["model.backend=scripted", f"model.scripted={rules}", "train.num_epochs=1",
                                    "train.steps_per_epoch=2", "train.batch_size=4", "train.workers=1",
                                    "env.split_ratio=[4,4,2]", f"output.root={tmp_path}", "output.plot=false"])
    tasks = [Task(id=f"c{i}", prompt=f"Question {i}: which fruit?", judge={"type": "contains", "value": "banana"})
             for i in range(10)]
    result = asyncio.run(prepare_training(settings, tasks=tasks, seed_skill=SKILL_TEXT).run())
    held_text, held = report_from_result(result, SKILL_TEXT)
    read_text, read = report_from_run(result.reader.path, SKILL_TEXT)
    assert held.edits and held.task_deltas and held.candidate_val > held.baseline_val
    assert (held_text, held) == (read_text, read)
