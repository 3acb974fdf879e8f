"""How the plugins find `skillopt-sleep`: the Claude Code plugin's launcher
(plugins/claude-code/bin/skillopt-sleep) and the install scripts' locator
(plugins/lib/find-skillopt-sleep.bash). pip, pipx and uv tool installs are found,
SKILLOPT_SLEEP_BIN overrides, and nothing is ever run from the current directory."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from plugin_testutil import (CODEX_INSTALL, COPILOT_INSTALL, LOCATOR, PLUGINS, REPO, SHIM, SYSTEM_PATH, bash,
                             fake_skillopt_sleep, plain_env, tree)
from sleep_testutil import Homes


def test_the_launcher_runs_skillopt_sleep_bin_with_the_same_arguments_and_stdin(tmp_path: Path, homes: Homes) -> None:
    log = tmp_path / "ran.log"
    exe = fake_skillopt_sleep(tmp_path / "custom", log, name="custom")
    out = bash(SHIM, "hook", "session-end", env=plain_env(homes.home, SKILLOPT_SLEEP_BIN=str(exe)), cwd=tmp_path,
               stdin='{"session_id": "s1"}\n')
    assert out.returncode == 0, out.stderr
    assert log.read_text() == 'custom hook session-end\n{"session_id": "s1"}\n'


@pytest.mark.parametrize("value", ["bin/skillopt-sleep", "/nonexistent/skillopt-sleep", str(SHIM)],
                         ids=["relative", "missing", "the-launcher-itself"])
def test_a_bad_skillopt_sleep_bin_is_an_error_not_a_fallback(tmp_path: Path, homes: Homes, value: str) -> None:
    log = tmp_path / "ran.log"
    on_path = fake_skillopt_sleep(tmp_path / "tools", log)
    env = plain_env(homes.home, SKILLOPT_SLEEP_BIN=value, PATH=f"{on_path.parent}:{SYSTEM_PATH}")
    out = bash(SHIM, "review", env=env, cwd=tmp_path)
    assert out.returncode == 127
    assert f"SKILLOPT_SLEEP_BIN={value} is not the absolute path of an installed skillopt-sleep" in out.stderr
    assert not log.exists()


def test_the_launcher_skips_itself_and_other_launchers_on_path(tmp_path: Path, homes: Homes) -> None:
    log = tmp_path / "ran.log"
    other_shim = tmp_path / "cache" / "bin" / "skillopt-sleep"  # an older copy of the plugin, also on PATH
    other_shim.parent.mkdir(parents=True)
    shutil.copy(SHIM, other_shim)
    real = fake_skillopt_sleep(tmp_path / "venv" / "bin", log, name="real")
    env = plain_env(homes.home, PATH=f"{SHIM.parent}:{other_shim.parent}:{real.parent}:{SYSTEM_PATH}")
    out = bash(SHIM, "review", env=env, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert log.read_text() == "real review\n"


@pytest.mark.parametrize("where", ["~/.local/bin", "PIPX_BIN_DIR", "UV_TOOL_BIN_DIR", "XDG_BIN_HOME",
                                   "~/Library/Python/3.12/bin"])
def test_pipx_uv_and_pip_user_installs_are_found_off_path(tmp_path: Path, homes: Homes, where: str) -> None:
    log = tmp_path / "ran.log"
    extra: dict[str, str] = {}
    if where.startswith("~/"):
        folder = homes.home / where[2:]
    else:
        folder = tmp_path / where.lower()
        extra[where] = str(folder)
    fake_skillopt_sleep(folder, log, name=where)
    out = bash(SHIM, "status", env=plain_env(homes.home, **extra), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert log.read_text() == f"{where} status\n"


def test_nothing_is_run_from_the_current_directory_or_above(tmp_path: Path, homes: Homes) -> None:
    log = tmp_path / "ran.log"
    project = tmp_path / "work" / "app"
    for folder in (project, project / "bin", project / ".venv" / "bin", project.parent / "bin",
                   project.parent / ".venv" / "bin", project / "node_modules" / ".bin"):
        fake_skillopt_sleep(folder, log)
    env = plain_env(homes.home, PATH=f"bin:.::.venv/bin:../bin:{SYSTEM_PATH}")  # relative and empty entries
    out = bash(SHIM, "review", env=env, cwd=project)
    assert out.returncode == 127
    assert "SkillOpt is not installed" in out.stderr and "pipx install" in out.stderr
    assert not log.exists()


def test_the_launcher_and_the_install_scripts_share_one_locator() -> None:
    block = re.compile(r"^# >>> find_skillopt_sleep\n.*?^# <<< find_skillopt_sleep\n", re.S | re.M)
    [in_lib] = block.findall(LOCATOR.read_text())
    [in_shim] = block.findall(SHIM.read_text())
    assert in_shim == in_lib


@pytest.mark.parametrize("script", [CODEX_INSTALL, COPILOT_INSTALL], ids=["codex", "copilot"])
def test_an_install_script_without_skillopt_sleep_says_how_to_install_it(tmp_path: Path, homes: Homes,
                                                                        script: Path) -> None:
    before = tree(homes.home)
    out = bash(script, env=plain_env(homes.home), cwd=tmp_path)
    assert out.returncode == 1
    assert f"pipx install '{REPO}'" in out.stderr and f"uv tool install '{REPO}'" in out.stderr
    assert tree(homes.home) == before


def test_the_shell_scripts_pass_shellcheck() -> None:
    shellcheck = shutil.which("shellcheck")
    if not shellcheck:
        pytest.skip("shellcheck is not installed (apt-get install -y shellcheck)")
    scripts = [SHIM, LOCATOR, CODEX_INSTALL, COPILOT_INSTALL]
    assert set(PLUGINS.rglob("*.sh")) <= set(scripts)
    out = subprocess.run([shellcheck, "-x", "-s", "bash", *map(str, scripts)], capture_output=True, text=True,
                         cwd=REPO)
    assert out.returncode == 0, out.stdout + out.stderr
