"""`skillopt train` / `skillopt eval` as a person runs them (scripted backend
from a rules file, so no model is needed)."""

import json
from pathlib import Path

import pytest
import yaml
from toy_world import write_yes_world

from skillopt_core.cli.main import main

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def scripted_config(tmp_path):
    tasks, rules = write_yes_world(tmp_path)
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump({
        "_base_": str(REPO / "configs" / "_base_" / "default.yaml"),
        "env": {"name": "jsonl_tasks", "data_path": str(tasks), "split_ratio": [2, 2, 1]},
        "model": {"backend": "scripted", "scripted": str(rules)},
        "train": {"num_epochs": 1, "batch_size": 4, "steps_per_epoch": 2, "workers": 2},
        "output": {"root": str(tmp_path / "out"), "run_id": "r1"},
    }))
    return config


def test_train_json_prints_summary(scripted_config, capsys):
    assert main(["train", "--config", str(scripted_config), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["status"] == "completed" and out["steps_done"] == 2 and out["accepted"] == 1
    assert out["best_val"] == 1.0 and out["initial_val"] == 0.0


def test_train_prints_the_seed_console_lines(scripted_config, capsys):
    assert main(["train", "--config", str(scripted_config)]) == 0
    text = capsys.readouterr().out
    assert "[Step 1/2] Rollout: 4 items, 2 workers..." in text
    assert "[Step 1/2] Score: 0.00 → Reflect..." in text
    assert "[Step 1/2] 1 edit patches generated" in text
    assert "[Step 1/2] Selected 1 edits (lr=4, cosine → 4.0)" in text
    assert ("[Step 1/2] Gate: val score 1.00 > 0.00 on the 1 of 9 val items scored ✓ ACCEPT: even if the other 8 "
            "items all scored 0.00, val score") in text


def test_misspelled_key_exits_2_with_suggestion(scripted_config, capsys):
    assert main(["train", "--config", str(scripted_config), "--set", "train.num_epoch=2"]) == 2
    err = capsys.readouterr().err
    assert "Did you mean 'train.num_epochs'?" in err and "Traceback" not in err


def test_budget_stop_exits_3_and_resume_completes(scripted_config, tmp_path, capsys):
    assert main(["train", "--config", str(scripted_config), "--set", "budget.max_calls=14", "--json"]) == 3
    out = json.loads(capsys.readouterr().out)
    assert out["status"] == "budget_exhausted"
    run = tmp_path / "out" / "jsonl_tasks" / "r1"
    assert main(["train", "--resume", str(run), "--set", "budget.max_calls=1000", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["status"] == "completed"


def test_eval_json_scores_a_given_skill(scripted_config, tmp_path, capsys):
    skill = tmp_path / "skill.md"
    skill.write_text("---\nname: yes-skill\ndescription: says yes\n---\n\nAlways reply yes.\n")
    assert main(["eval", "--config", str(scripted_config), "--skill", str(skill), "--split", "val", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["hard"] == 1.0 and out["split"] == "val"


def test_eval_missing_skill_file_is_a_clear_error(scripted_config, tmp_path, capsys):
    assert main(["eval", "--config", str(scripted_config), "--skill", str(tmp_path / "none.md")]) == 2
    assert "none.md" in capsys.readouterr().err


def test_resume_of_a_non_run_directory_is_a_clear_error(tmp_path, capsys):
    assert main(["train", "--resume", str(tmp_path)]) == 2
    assert "not a run directory" in capsys.readouterr().err


def test_seed_scripts_wrap_the_cli(scripted_config, tmp_path):
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, str(REPO / "scripts" / "eval_only.py"), "--config", str(scripted_config),
                           "--split", "val", "--json"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["hard"] == 0.0


def test_missing_backend_credentials_leave_no_run_directory(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("AZURE_OPENAI_ENDPOINT", raising=False)
    monkeypatch.chdir(tmp_path)
    code = main(["train", "--config", str(REPO / "configs" / "searchqa" / "default.yaml"),
                 "--set", f"output.root={tmp_path / 'out'}"])
    assert code == 2 and "AZURE_OPENAI_ENDPOINT" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_eval_announces_the_number_of_items_it_evaluates(scripted_config, capsys):
    """With evaluation.test_limit the header counts the items evaluated, as the result line does (issue 23 §5)."""
    assert main(["eval", "--config", str(scripted_config), "--set", "evaluation.test_limit=2"]) == 0
    out = capsys.readouterr().out
    assert "over 2 items" in out and ", test 2" in out
