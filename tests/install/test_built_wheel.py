"""The built wheel works on its own: installed into a fresh venv and run from
an empty directory, `skillopt train` and `skillopt eval` load a packaged
config by name, with the wheel's code, not this checkout's."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest
import yaml

from wheel_tools import REPO, check, fresh_venv, pip_install, run, script, tool_env

pytestmark = pytest.mark.packaging

EDIT = "Give only the answer, after 'Answer:'."
# The scripted backend as an inline --set value: no rules file in the empty directory.
SCRIPT = {"rules": [
    {"stage": "reflect", "response": json.dumps({"edits": [{"op": "add", "content": EDIT}]})},
    {"stage": "slow_update", "response": json.dumps({"guidance": "- Keep answers short."})},
    {"stage": "meta_skill", "response": json.dumps({"notes": "- Short answers."})},
    {"stage": "rollout", "response": "Answer: I do not know"},
]}
SCRIPTED = ["--set", "model.backend=scripted", "--set", f"model.scripted={json.dumps(SCRIPT)}"]


@pytest.fixture(scope="module")
def installed(tmp_path_factory, skillopt_wheel):
    """(venv python, the wheel) with only the wheel of this project installed into the venv."""
    root = tmp_path_factory.mktemp("wheel-venv")
    wheel = skillopt_wheel
    python = fresh_venv(root / "venv")
    before = run([python, "-c", "import yaml, pydantic; import skillopt_core"], cwd=root, env=tool_env(root))
    # Dependencies are visible, this checkout is not: whatever imports later is the wheel.
    assert "No module named 'skillopt_core'" in before.stderr, before.stderr
    pip_install(python, wheel)
    return python, wheel


@pytest.fixture
def empty_dir(tmp_path):
    cwd = tmp_path / "empty"
    cwd.mkdir()
    return cwd


def test_wheel_ships_the_configs_and_env_data(installed):
    names = set(zipfile.ZipFile(installed[1]).namelist())
    assert {
        "skillopt_core/configs/_base_/default.yaml",
        "skillopt_core/configs/searchqa/default.yaml",
        "skillopt_core/configs/searchqa/local.yaml",
        "skillopt_core/envs/searchqa/data/sample.jsonl",
        "skillopt_core/envs/searchqa/seed_skill.md",
        "skillopt/__init__.py",
        "skillopt_core/configs/spreadsheetbench/local.yaml",
        "skillopt_core/envs/livemathematicianbench/data/202511/qa_202511_final.json",
        "skillopt_core/envs/spreadsheetbench/data/dataset.json",
        "skillopt_core/envs/spreadsheetbench/data/spreadsheet/9001/1_9001_init.xlsx",
        "skillopt_core/envs/spreadsheetbench/data/spreadsheet/9001/1_9001_golden.xlsx",
        "skillopt_core/envs/docvqa/data/docvqa_sample.csv",
        "skillopt_core/envs/docvqa/data/images/d1001_p1.png",
        "skillopt_core/envs/docvqa/data/images/d1001_p1.txt",
        "skillopt_core/envs/officeqa/data/corpus/treasury_bulletin_1941_01.txt",
        "skillopt_core/envs/textworld/seed_skill.md",
    } <= names


def test_wheel_declares_the_seed_extras(installed):
    wheel = zipfile.ZipFile(installed[1])
    meta = next(n for n in wheel.namelist() if n.endswith(".dist-info/METADATA"))
    lines = wheel.read(meta).decode("utf-8").splitlines()
    extras = {line.split(":", 1)[1].strip() for line in lines if line.startswith("Provides-Extra:")}
    assert {"claude", "qwen", "webui", "alfworld", "ray", "textworld", "local"} <= extras
    requires = [line for line in lines if line.startswith("Requires-Dist:")]
    assert any(r.startswith("Requires-Dist: ray") and 'extra == "ray"' in r for r in requires)
    assert any(r.startswith("Requires-Dist: alfworld") and 'extra == "alfworld"' in r for r in requires)


def test_the_seed_import_name_works_from_the_wheel(installed, empty_dir):
    python, _ = installed
    proc = check(run([python, "-c", "import skillopt; print(skillopt.Task.__module__); print('Ready!')"], cwd=empty_dir),
                 "import skillopt")
    assert proc.stdout.split() == ["skillopt_core.tasks.task", "Ready!"]


def test_venv_imports_the_wheel_not_the_checkout(installed, empty_dir):
    python, _ = installed
    probe = "import skillopt_core, yaml; from skillopt_core.run.config import PACKAGED_CONFIGS; print(skillopt_core.__file__); print(PACKAGED_CONFIGS)"
    module, configs = check(run([python, "-c", probe], cwd=empty_dir), "importing skillopt_core").stdout.split()
    venv = python.parent.parent
    assert Path(module).is_relative_to(venv) and not Path(module).is_relative_to(REPO), module
    assert Path(configs).is_relative_to(venv) and (Path(configs) / "searchqa" / "local.yaml").is_file()


def test_train_then_eval_with_a_packaged_config_name_from_an_empty_dir(installed, empty_dir):
    python, _ = installed
    skillopt = script(python, "skillopt")
    train = run([skillopt, "train", "--config", "searchqa/local", *SCRIPTED, "--set", "output.run_id=w1", "--json"],
                cwd=empty_dir)
    summary = json.loads(check(train, "skillopt train").stdout)
    assert summary["status"] == "completed" and summary["steps_done"] == 2, summary
    assert "[Step 1/2] Rollout: 6 items, 2 workers..." in train.stderr  # batch_size 6, workers 2: local.yaml

    run_dir = empty_dir / "outputs" / "searchqa" / "w1"
    config = yaml.safe_load((run_dir / "config.yaml").read_text(encoding="utf-8"))
    assert (config["env"]["limit"], config["evaluation"]["test_limit"], config["model"]["backend"]) == (30, 8, "scripted")
    assert EDIT in (run_dir / "steps" / "step_0001" / "candidate.md").read_text(encoding="utf-8")  # the scripted reflect ran

    ev = run([script(python, "skillopt"), "eval", "--config", "searchqa/local", *SCRIPTED,
              "--skill", run_dir / "best_skill.md", "--json"], cwd=empty_dir)
    result = json.loads(check(ev, "skillopt eval").stdout)
    assert (result["split"], result["n_items"], result["hard"]) == ("test", 8, 0.0)


def test_unknown_config_name_is_a_clear_error_in_the_installed_cli(installed, empty_dir):
    python, _ = installed
    proc = run([script(python, "skillopt"), "eval", "--config", "searchqa/locl"], cwd=empty_dir)
    assert proc.returncode == 2
    assert "Did you mean 'searchqa/local'?" in proc.stderr and "Traceback" not in proc.stderr
