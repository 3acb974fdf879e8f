"""The model judge probe before a night's gate (sleep.cycle.judgeprobe, issue 34 item 4): a judge that
gives every answer the same verdict is left out of the gate and the night says so; one that tells the
person's accepted answer from an unrelated one is kept and the night is as before; the probe's calls are
in the night's spend. The scripted backend stands in for the judge model (control flow only)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from cycle_testutil import GOOD_ANSWER, rules

from sleep.cli import main
from sleep.cycle.cli import summary_text
from sleep.cycle.judgeprobe import UNRELATED_ANSWER
from sleep.index import Index
from sleep.nightstore import NightRecord, nights

SAME_VERDICT = json.dumps({"score": 8, "pass": True, "feedback": "Fine."})


def same_verdict_rules() -> dict:
    """The demo rules with a judge that passes every answer alike (the embedded model's failure)."""
    base = rules()
    kept = [r for r in base["rules"] if r.get("stage") != "judge"]
    return {"rules": [{"stage": "judge", "response": SAME_VERDICT}, *kept], "cost_per_call": 0.01}


def verdict_only_rules() -> dict:
    """The demo rules with a judge whose verdict fails the unrelated answer but whose score gives it
    10 of 10, like every other answer (what SmolLM2-135M did in the demo: its scores were all 10)."""
    base = rules()
    kept = [r for r in base["rules"] if r.get("stage") != "judge"]
    unrelated = {"stage": "judge", "regex": "## Response to grade\nBanana bread",
                 "response": json.dumps({"score": 10, "pass": False, "feedback": "Fine."})}
    return {"rules": [unrelated, {"stage": "judge", "response": json.dumps({"score": 10, "pass": True,
                                                                             "feedback": "Fine."})}, *kept]}


def run_json(project: Path, tmp_path: Path, capsys, script: dict, *extra: str) -> tuple[dict, str]:
    path = tmp_path / "rules.yaml"
    path.write_text(yaml.safe_dump(script))
    code = main(["run", "--project", str(project), "--backend", "scripted", "--skill",
                 str(project / ".claude/skills/ledger-dev/SKILL.md"), "--set", f"model.scripted={path}",
                 *extra, "--json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    return json.loads(out.out), out.err + out.out


def evidence_calls(record: dict) -> list[dict]:
    """Every model call of the night's replay, as its evidence log recorded it."""
    log = Path(record["run_dir"]) / "evidence.jsonl"
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


def test_a_judge_giving_every_answer_the_same_verdict_is_left_out_and_the_night_says_so(
        project: Path, tmp_path: Path, capsys) -> None:
    # Two of the demo weeks' four tasks have rules besides the rubric (pnpm; the subject's length).
    record, console = run_json(project, tmp_path, capsys, same_verdict_rules(), "--set", "sleep.min_tasks=2")
    probe = record["judge_probe"]
    assert probe["verdict"] == "left_out" and probe["judge"] == "rubric"
    assert probe["probed"] >= 3 and probe["told_apart"] == 0
    assert all(p["accepted"]["hard"] == p["unrelated"]["hard"] == 1.0 for p in probe["pairs"])
    line = "the rubric judge cannot tell a right answer from an unrelated one"
    assert line in probe["sentence"] and "its verdicts are left out of the gate" in probe["sentence"]
    assert f"[Judge] {line}" in console
    assert f"  judge: {line}" in summary_text(NightRecord.from_dict(record))  # the night's closing summary
    # The linter task has the rubric alone: it is left out; the others keep their rules and only them.
    assert probe["dropped"] and probe["rules_only"]
    gated = [c for c in evidence_calls(record) if c.get("stage") == "judge"]
    assert len(gated) == 2 * probe["probed"]  # after the probe no answer went to the judge model
    assert record["outcome"] == "staged", record["reason"]  # the rules alone decide: pnpm passes them
    assert record["tasks"]["recurring"] == len(probe["rules_only"])
    with Index.open() as index:
        assert nights(index, str(project))[0].judge_probe == probe  # what history and the MCP tools read
    main(["history", "--project", str(project)])
    assert f"    judge: {line}" in capsys.readouterr().out


def test_a_discriminating_judge_passes_the_probe_and_the_gate_uses_it(project: Path, tmp_path: Path,
                                                                     capsys) -> None:
    record, console = run_json(project, tmp_path, capsys, {**rules(), "cost_per_call": 0.01})
    probe = record["judge_probe"]
    assert probe["verdict"] == "kept", probe
    assert probe["told_apart"] >= probe["need"] >= 3
    assert all(p["accepted"]["hard"] == 1.0 and p["unrelated"]["hard"] == 0.0
               for p in probe["pairs"] if p["told_apart"])
    assert "told an accepted answer from an unrelated one" in console
    assert record["outcome"] == "staged", record["reason"]
    # The gate used the rubric: the judge model graded the replay's answers after the probe.
    judged = [c for c in evidence_calls(record) if c.get("stage") == "judge"]
    assert len(judged) > 2 * probe["probed"]
    assert any(GOOD_ANSWER in json.dumps(c) for c in judged)
    main(["show", record["proposal"]["id"]])
    shown = capsys.readouterr().out
    assert "The rubric judge told an accepted answer from an unrelated one" in shown


def test_a_judge_whose_verdict_and_score_disagree_is_left_out(project: Path, tmp_path: Path, capsys) -> None:
    record, _ = run_json(project, tmp_path, capsys, verdict_only_rules(), "--dry-run", "--set", "sleep.min_tasks=2")
    probe = record["judge_probe"]
    assert all(p["accepted"]["hard"] == 1.0 and p["unrelated"]["hard"] == 0.0 for p in probe["pairs"])
    assert all(p["unrelated"]["soft"] == 1.0 for p in probe["pairs"])
    assert probe["verdict"] == "left_out" and probe["told_apart"] == 0


def test_the_probes_calls_are_counted_in_the_nights_spend(project: Path, tmp_path: Path, capsys) -> None:
    # The trigger step off: whether it runs depends on how the mined tasks split (their ids hash the
    # project's path), and its calls fail here (no rule for them), spending no dollars.
    record, _ = run_json(project, tmp_path, capsys, same_verdict_rules(), "--dry-run", "--set", "sleep.min_tasks=2",
                         "--set", "sleep.triggers.enabled=false")
    probe = record["judge_probe"]
    calls = evidence_calls(record)
    probe_calls = [c for c in calls if UNRELATED_ANSWER in json.dumps(c)]
    assert len(probe_calls) == probe["probed"] == probe["spent"]["model_calls"] // 2
    assert probe["spent"]["cost_usd"] == pytest.approx(0.01 * probe["spent"]["model_calls"])
    assert record["usage"]["model_calls"] == len(calls)  # every call the night made, the probe's too
    assert record["usage"]["cost_usd"] == pytest.approx(0.01 * len(calls))


def test_a_judge_left_out_with_too_few_rule_judged_tasks_stages_nothing_and_says_why(
        project: Path, tmp_path: Path, capsys) -> None:
    record, console = run_json(project, tmp_path, capsys, same_verdict_rules())
    assert record["outcome"] == "too_few_tasks"
    assert "cannot tell a right answer from an unrelated one" in record["reason"]
    assert "2 tasks with a rule judge of their own, fewer than sleep.min_tasks=3" in record["reason"]
    assert record["usage"]["model_calls"] == record["judge_probe"]["spent"]["model_calls"] > 0
    assert record["proposal"] is None


RUBRIC = {"type": "rubric", "rubric": "Answer the question."}


def item(task_id: str, n: int, judge, support: int = 2):
    from skillopt_core import Task

    return Task(id=f"{task_id}-{n}", prompt=f"request {n} of {task_id}", judge=judge,
                metadata={"task_id": task_id, "support": support, "instance": ["claude-code", f"s{n}", 0]})


def pool_item(n: int, accepted: list[str]):
    from types import SimpleNamespace

    return SimpleNamespace(host="claude-code", session_id=f"s{n}", prompt_index=0, evidence={"accepted": accepted})


def test_the_probe_grades_only_model_judged_tasks_with_an_answer_the_person_accepted() -> None:
    from skillopt_core.backends.scripted import Rule, ScriptedBackend

    from sleep.cycle.judgeprobe import apply, probe

    judge = ScriptedBackend([Rule(regex="Banana bread", response=json.dumps({"score": 0, "pass": False,
                                                                            "feedback": "Unrelated."})),
                             Rule(response=json.dumps({"score": 9, "pass": True, "feedback": "Done."}))])
    rules_only = [item("tr", 1, {"type": "contains", "value": "USD"})]
    assert probe(rules_only, {}, judge, None) is None and judge.history == []  # rule judges are never probed
    tasks = [item("ta", 1, [RUBRIC, {"type": "contains", "value": "USD"}]), item("tb", 2, RUBRIC),
             item("tc", 3, RUBRIC, support=5)]
    unknown = probe(tasks, {"ta": [pool_item(1, [])]}, judge, None)
    assert unknown is not None and unknown.verdict == "not_probed" and judge.history == []
    assert "no model-judged task carries an answer the person accepted" in unknown.sentence()
    members = {"ta": [pool_item(1, ["12.50 USD"])], "tb": [pool_item(2, ["ok"])], "tc": [pool_item(3, ["done"])]}
    small = probe(tasks, members, judge, 15)
    assert small is not None and small.verdict == "not_probed" and "budget.max_calls=15" in small.sentence()
    found = probe(tasks, members, judge, 40)  # a tenth of 40 calls: two tasks, the most recurring first
    assert found is not None and found.verdict == "kept" and [p.task for p in found.pairs] == ["tc", "ta"]
    assert len(judge.history) == 4 and all(r.stage == "judge" for r in judge.history)
    assert apply(found, tasks) == (tasks, found)  # a kept judge changes no task
    left = probe(tasks, members, ScriptedBackend([Rule(response=json.dumps({"score": 5, "pass": True,
                                                                            "feedback": "Fine."}))]), None)
    kept, left = apply(left, tasks)
    assert left is not None and left.verdict == "left_out" and left.need == 3
    assert [t.judge for t in kept] == [[{"type": "contains", "value": "USD"}]]
    assert left.rules_only == ("ta",) and left.dropped == ("tb", "tc")
