"""Third-party backends, envs and judges arrive through entry points: a tiny
plugin package is built as a wheel and installed next to the skillopt wheel,
and a real `skillopt eval` runs its env, its backend and its judge. A broken
plugin fails only the command that asks for it, naming its distribution."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wheel_tools import build_wheel, check, fresh_venv, pip_install, run, script, site_packages, write_distribution

pytestmark = pytest.mark.packaging

PLUGIN_SOURCE = Path(__file__).parent / "demo_plugin"
BROKEN = "skillopt-broken-plugin"
SUMS = ["--config", "_base_/default", "--set", "env.name=sums", "--set", "env.split_ratio=[0,0,1]",
        "--set", "train.workers=1"]


@pytest.fixture(scope="module")
def skillopt_cli(tmp_path_factory, skillopt_wheel):
    """The `skillopt` script of a fresh venv holding the skillopt wheel, the
    demo plugin's wheel and a broken plugin."""
    root = tmp_path_factory.mktemp("plugins")
    plugin_wheel = build_wheel(PLUGIN_SOURCE, root)
    python = fresh_venv(root / "venv")
    pip_install(python, skillopt_wheel, plugin_wheel)
    write_distribution(
        site_packages(python), BROKEN,
        {"skillopt.backends": {"exploding": "skillopt_broken_plugin"}, "skillopt.envs": {"exploding_env": "skillopt_broken_plugin:Env"}},
        {"skillopt_broken_plugin.py": 'raise RuntimeError("boom: this plugin needs a newer skillopt")\n'},
    )
    return script(python, "skillopt")


@pytest.fixture
def workdir(tmp_path):
    return tmp_path


def test_eval_runs_the_plugins_env_backend_and_judge(skillopt_cli, workdir):
    proc = run([skillopt_cli, "eval", *SUMS, "--set", "model.backend=calculator", "--set", "output.run_id=p1", "--json"],
               cwd=workdir)
    result = json.loads(check(proc, "skillopt eval through the plugin").stdout)
    # The calculator adds: right on the 4 additions, wrong on the 2 multiplications.
    assert (result["n_items"], result["hard"]) == (6, pytest.approx(4 / 6))
    results = json.loads((workdir / result["run_dir"] / "results.json").read_text(encoding="utf-8"))
    by_id = {r["task_id"]: r for r in results}
    assert (by_id["add-2"]["response"], by_id["add-2"]["feedback"]) == ("42", "The number is right.")
    assert (by_id["mul-1"]["response"], by_id["mul-1"]["feedback"]) == ("9", "The number is wrong.")


def test_a_misspelled_plugin_name_suggests_it_among_builtins_and_plugins(skillopt_cli, workdir):
    proc = run([skillopt_cli, "eval", *SUMS, "--set", "model.backend=calculater"], cwd=workdir)
    assert proc.returncode == 2, proc.stderr
    assert "Unknown backend 'calculater'. Did you mean 'calculator'?" in proc.stderr
    assert "calculator" in proc.stderr.split("Known backends:")[1] and "scripted" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_broken_plugin_fails_only_when_asked_for_naming_its_distribution(skillopt_cli, workdir):
    proc = run([skillopt_cli, "eval", *SUMS, "--set", "model.backend=exploding"], cwd=workdir)
    assert proc.returncode == 2
    assert f"package '{BROKEN}'" in proc.stderr and "RuntimeError: boom" in proc.stderr
    assert f"pip uninstall {BROKEN}" in proc.stderr and "Traceback" not in proc.stderr


def test_a_broken_env_plugin_is_reported_the_same_way(skillopt_cli, workdir):
    proc = run([skillopt_cli, "eval", "--config", "_base_/default", "--set", "env.name=exploding-env",
                "--set", "model.backend=calculator"], cwd=workdir)
    assert proc.returncode == 2
    assert "The env 'exploding_env' comes from a plugin that failed to load" in proc.stderr
    assert BROKEN in proc.stderr and "Traceback" not in proc.stderr
