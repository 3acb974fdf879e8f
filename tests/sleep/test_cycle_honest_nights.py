"""A night that explains itself (issue 23 §2): why nothing was staged, in terms of the
data; backend mistakes before the harvest; a split that never fails the night; a demo
whose offline fallbacks say what really happened."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from cycle_testutil import rules

from skillopt_core import ConfigError, Task
from skillopt_core.run.record import StepRecord
from skillopt_core.run.state import RunSummary
from skillopt_core.tasks.data import assign_split
from sleep import paths
from sleep.cli import main
from sleep.cycle import multiskill, nighttasks
from sleep.cycle.config import load_night_config
from sleep.cycle.demo import backend_problem, nothing_staged_text
from sleep.cycle.night import NightOptions, run_night
from sleep.cycle.split import check_ratio, night_split
from sleep.cycle.verdict import nothing_staged


def summary(status: str = "completed", initial: float | None = 0.5, best: float | None = 0.5,
            steps: int = 2) -> RunSummary:
    return RunSummary("r", "/r", status, steps, 2, initial, best, None, None, {}, 0, steps)


def step(current: float, candidate: float, action: str = "reject", reason: str = "", **more) -> StepRecord:
    return StepRecord.from_dict({"val_current": current, "val_candidate": candidate, "action": action,
                                 "gate_reason": reason, **more})


# ----- why nothing was staged ------------------------------------------------------------

def test_a_baseline_that_passes_every_val_task_is_said_so() -> None:
    text = nothing_staged(summary(initial=1.0, best=1.0), [step(1.0, 1.0)], 3, "no_regression")
    assert "already passes all 3 val tasks" in text and "Next:" in text


def test_a_single_val_task_is_said_so_with_what_to_do() -> None:
    text = nothing_staged(summary(initial=0.0, best=0.0), [step(0.0, 0.0)], 1, "no_regression")
    assert "val holds one task" in text and "sleep.min_support" in text


def test_worse_candidates_say_by_how_much() -> None:
    text = nothing_staged(summary(initial=0.5, best=0.5), [step(0.5, 0.25), step(0.5, 0.4)], 4, "no_regression")
    assert "all 2 candidates were worse, by 0.100 at best" in text and "--backend" in text


def test_a_candidate_the_gate_rejected_despite_a_higher_mean_gives_the_gate_reason() -> None:
    text = nothing_staged(summary(), [step(0.5, 0.75, reason="task t3 got worse (1.00 → 0.00)")], 4,
                          "no_regression")
    assert "raised the val mean by 0.250" in text and "task t3 got worse" in text


def test_a_budget_that_ran_out_says_which_key_to_raise() -> None:
    text = nothing_staged(summary(status="budget_exhausted", steps=1), [step(0.5, 0.25)], 4, "no_regression")
    assert "budget ran out after 1 of 2 steps" in text and "budget.max_calls" in text


def test_steps_without_a_changed_candidate_are_said_so() -> None:
    text = nothing_staged(summary(), [StepRecord.from_dict({"action": "no_change", "val_current": 0.5})], 4,
                          "no_regression")
    assert "no step produced a candidate that differs" in text


# ----- backend mistakes before the harvest -----------------------------------------------

def nothing_harvested() -> bool:
    return not paths.index_path().exists()


def test_an_unknown_backend_exits_2_before_the_harvest(project: Path, capsys) -> None:
    assert main(["run", "--project", str(project), "--backend", "nosuch"]) == 2
    err = capsys.readouterr().err
    assert "--backend nosuch (model.backend)" in err and "Known backends" in err
    assert nothing_harvested()


def test_a_missing_scripted_rules_file_names_model_scripted(project: Path, tmp_path: Path, capsys) -> None:
    assert main(["run", "--project", str(project), "--backend", "scripted",
                 "--set", f"model.scripted={tmp_path / 'nope.yaml'}"]) == 2
    err = capsys.readouterr().err
    assert "model.scripted" in err and "options.scripted" not in err
    assert nothing_harvested()


def test_a_scripted_backend_without_a_rules_file_exits_2_before_the_harvest(project: Path, capsys) -> None:
    assert main(["run", "--project", str(project), "--backend", "scripted"]) == 2
    err = capsys.readouterr().err
    assert "--backend scripted (model.backend)" in err and "--set model.scripted=FILE" in err
    assert nothing_harvested()
    assert main(["run", "--project", str(project), "--backend", "scripted", "--dry-run"]) == 2
    assert nothing_harvested()


def test_a_split_without_a_val_share_is_refused_before_the_night(project: Path, capsys) -> None:
    with pytest.raises(ConfigError, match="val share"):
        check_ratio([1, 0, 0])
    assert main(["run", "--project", str(project), "--backend", "scripted", "--set", "env.split_ratio=[1,0,0]"]) == 2
    assert "env.split_ratio" in capsys.readouterr().err and nothing_harvested()


# ----- the night's own split --------------------------------------------------------------

def _same_split_ids(seed: int, ratio=(1, 1, 0)) -> list[str]:
    first = assign_split("t-0", seed, ratio)
    other = next(f"t-{i}" for i in range(1, 200) if assign_split(f"t-{i}", seed, ratio) == first)
    return ["t-0", other]


def test_two_tasks_of_the_same_split_become_one_train_and_one_val_task() -> None:
    tasks = [Task(id=i, prompt=f"do {i}") for i in _same_split_ids(0)]
    data = night_split(tasks, 0, (1, 1, 0))
    assert len(data.train) == 1 and len(data.val) == 1 and {data.train[0].id, data.val[0].id} == set(_same_split_ids(0))


def test_a_night_of_two_tasks_never_fails_on_its_split(project: Path, tmp_path: Path) -> None:
    path = tmp_path / "rules.yaml"
    path.write_text(yaml.safe_dump(rules()))
    # one instance per task: two items, the smallest split a night can have
    base = [f"model.scripted={path}", "sleep.min_tasks=2", "sleep.max_tasks=2", "sleep.instances_per_task=1"]
    opts = NightOptions(project=project, backend="scripted", overrides=base,
                        skill=project / ".claude/skills/ledger-dev/SKILL.md")
    assert run_night(NightOptions(project=project, backend="scripted", overrides=[*base, "sleep.min_tasks=50"],
                                  skill=opts.skill), say=lambda _: None).outcome == "too_few_tasks"  # mined
    config = load_night_config(None, [*base, "model.backend=scripted"])
    records, members, sessions = nighttasks.load(project.resolve())
    group = multiskill.skill_groups(project.resolve(), records, members, sessions, opts.skill)[0]
    ids = [t.id for t in nighttasks.items(group.records, members, config)]
    seed = next(s for s in range(500) if len({assign_split(i, s, (1, 1, 0)) for i in ids}) == 1)
    night = run_night(NightOptions(project=project, backend="scripted", skill=opts.skill,
                                   overrides=[*base, f"env.split_seed={seed}"]), say=lambda _: None)
    assert night.outcome != "failed", night.reason
    assert len(night.tasks["train"]) == 1 and len(night.tasks["val"]) == 1


# ----- the demo's offline fallbacks --------------------------------------------------------

def test_the_demo_with_scripted_and_no_rules_says_so_before_it_starts(capsys) -> None:
    assert backend_problem("scripted", []) is not None
    assert backend_problem("scripted", ["model.scripted=/x.yaml"]) is None
    assert main(["demo", "--backend", "scripted"]) == 2
    err = capsys.readouterr().err
    assert "model.scripted" in err and "test double" in err


def test_the_demo_without_the_local_extra_says_what_to_install(monkeypatch) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "llama_cpp" else real(name, *a))
    assert "[local] extra" in (backend_problem("local", []) or "")


def test_the_demo_never_blames_a_gate_for_a_failed_night() -> None:
    text = nothing_staged_text({"outcome": "failed", "reason": "the replay failed: no rule matched"})
    assert "The night failed" in text and "no gate decided" in text and "the gate kept" not in text
    assert "no rule matched" not in text  # the night's summary just above already said it
    text = nothing_staged_text({"outcome": "no_improvement", "reason": "all 2 candidates were worse"})
    assert text.startswith("Nothing was staged (the night ended no_improvement; its summary above says why)")
    assert "candidates were worse" not in text


def test_a_gate_that_decided_early_is_not_compared_with_the_full_val_mean() -> None:
    early = step(0.667, 0.5, reason="val score 0.50 = 0.50 (decided early: 2/3 val items)",
                 gate_evaluated=2, gate_items=3, gate_early_stopped=True)
    text = nothing_staged(summary(initial=0.667, best=0.667), [early], 3, "no_regression")
    assert "rejected the candidate early, after part of val (2 of 3 tasks" in text and "worse, by" not in text


def test_a_kept_demo_ends_with_the_shell_line_that_reaches_its_review(homes, tmp_path: Path, capsys) -> None:
    """`demo --keep DIR` has its own home and data directory: its closing words give the line that
    points a shell at them, and that line does (a plain `skillopt-sleep adopt ID` in the person's own
    shell finds no such proposal). A scripted backend with no rules fails the night at once, which
    is enough: the closing words come whatever the night did."""
    import json
    import shlex
    import subprocess
    import sys

    rules = tmp_path / "rules.yaml"
    rules.write_text("rules: []\n", encoding="utf-8")
    keep = tmp_path / "kept demo"
    assert main(["demo", "--backend", "scripted", "--set", f"model.scripted={rules}", "--keep", str(keep)]) == 1
    out = capsys.readouterr().out
    assert f"The demo's files stay in {keep}" in out
    line = next(ln.strip() for ln in out.splitlines() if ln.strip().startswith("cd "))
    assert shlex.quote(str(keep / "tiny-ledger")) in line
    listed = subprocess.run(["bash", "-c", f"{line} && {shlex.quote(sys.executable)} -m sleep.cli history --json"],
                            capture_output=True, text=True, timeout=120)
    assert listed.returncode == 0, listed.stderr
    nights = json.loads(listed.stdout)
    assert len(nights) == 1 and nights[0]["project"] == str(keep / "tiny-ledger"), nights


def test_an_unkept_demo_says_how_to_keep_it() -> None:
    from sleep.cycle.demo import closing_text

    text = closing_text(Path("/tmp/x"), Path("/tmp/x/tiny-ledger"), "abcd1234", kept=False)
    assert "removed" in text and "--keep DIR" in text and "export HOME" not in text
