"""`skillopt compare` and `skillopt eval --target A --target B` as a person
runs them: the scripted backend from a rules file (control flow only), and a
backend registered here whose answer depends on the target model's name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from skillopt_core.backends import register_backend
from skillopt_core.backends.scripted import Rule, ScriptedBackend
from skillopt_core.cli.main import main

REPO = Path(__file__).resolve().parent.parent


@register_backend("by_model")
def _create(spec):
    """The scripted backend answering "yes" only when its model is named "strong" (or the skill says so)."""
    model = spec.model or "weak"

    def answer(request) -> str:
        return "yes" if model == "strong" or "Always reply yes" in (request.system or "") else "no"

    return ScriptedBackend(rules=[Rule(response=answer)], model=model)


@pytest.fixture
def config(tmp_path):
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("".join(
        json.dumps({"id": f"q{i}", "prompt": f"Say the word {i}", "judge": {"type": "contains", "value": "yes"}}) + "\n"
        for i in range(30)))
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump({
        "_base_": str(REPO / "configs" / "_base_" / "default.yaml"),
        "env": {"name": "jsonl_tasks", "data_path": str(tasks), "split_ratio": [1, 1, 1]},
        "model": {"backend": "by_model"},
        "output": {"root": str(tmp_path / "out"), "run_id": "c1"},
    }))
    return path


@pytest.fixture
def yes_skill(tmp_path):
    skill = tmp_path / "yes.md"
    skill.write_text("---\nname: yes-skill\ndescription: says yes\n---\n\nAlways reply yes.\n")
    return skill


def test_compare_reports_a_paired_difference_with_interval_and_mcnemar(config, yes_skill, capsys):
    assert main(["compare", "--config", str(config), "--b", str(yes_skill), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    row = out["targets"][0]
    n = row["n_items"]
    assert n > 5 and row["wins"] == n and row["losses"] == 0 and row["diff"] == 1.0
    assert row["ci_low"] == row["ci_high"] == 1.0 and row["mcnemar_p"] == pytest.approx(2 / 2**n)
    assert row["significant"]
    saved = json.loads((Path(out["run_dir"]) / "summary.json").read_text())
    assert len(saved["targets"][0]["per_item"]) == n


def test_compare_takes_a_run_directory_for_its_best_skill(config, yes_skill, tmp_path, capsys):
    run = tmp_path / "run"
    run.mkdir()
    (run / "best_skill.md").write_text(yes_skill.read_text())
    assert main(["compare", "--config", str(config), "--a", str(run), "--b", str(yes_skill), "--json"]) == 0
    row = json.loads(capsys.readouterr().out)["targets"][0]
    assert row["diff"] == 0.0 and row["ties"] == row["n_items"] and row["mcnemar_p"] == 1.0


def test_aa_calibration_and_its_misuse(config, yes_skill, capsys):
    assert main(["compare", "--config", str(config), "--a", str(yes_skill), "--aa", "--seeds", "2"]) == 0
    out = capsys.readouterr().out
    assert "A' - A: +0.000" in out and "no difference shown" in out
    assert main(["compare", "--config", str(config), "--a", str(yes_skill), "--b", str(yes_skill), "--aa"]) == 2
    assert "A/A" in capsys.readouterr().err


def test_compare_on_several_targets_side_by_side(config, yes_skill, capsys):
    assert main(["compare", "--config", str(config), "--b", str(yes_skill),
                 "--target", "weak", "--target", "strong", "--json"]) == 0
    rows = {r["target"]: r for r in json.loads(capsys.readouterr().out)["targets"]}
    assert rows["weak"]["diff"] == 1.0 and rows["strong"]["diff"] == 0.0


def test_eval_on_several_targets(config, capsys):
    assert main(["eval", "--config", str(config), "--target", "weak", "--target", "strong"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert any(line.startswith("weak") and "hard 0.000" in line for line in lines)
    assert any(line.startswith("strong") and "hard 1.000" in line for line in lines)


def test_a_missing_skill_is_a_clear_error(config, tmp_path, capsys):
    assert main(["compare", "--config", str(config), "--b", str(tmp_path / "nope.md")]) == 2
    assert "nope.md" in capsys.readouterr().err
