"""Helpers for the plugin tests: the repository's plugin folders, fake `skillopt-sleep`
executables that record how they were run, and running the plugins' shell scripts."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PLUGINS = REPO / "plugins"
CLAUDE_PLUGIN = PLUGINS / "claude-code"
SHIM = CLAUDE_PLUGIN / "bin" / "skillopt-sleep"
LOCATOR = PLUGINS / "lib" / "find-skillopt-sleep.bash"
CODEX_INSTALL = PLUGINS / "codex" / "install.sh"
COPILOT_INSTALL = PLUGINS / "copilot" / "install.sh"
CODEX_SKILL = PLUGINS / "codex" / "skills" / "skillopt-sleep" / "SKILL.md"
SYSTEM_PATH = "/usr/bin:/bin"

FAKE = """#!/bin/sh
# a fake skillopt-sleep: records that it ran, with its arguments and standard input
{{ printf '%s\\n' "{name} $*"; cat; }} >> "{log}"
"""


def fake_skillopt_sleep(folder: Path, log: Path, name: str | None = None) -> Path:
    """An executable ``folder/skillopt-sleep`` that appends ``NAME ARGS`` and its stdin to ``log``."""
    folder.mkdir(parents=True, exist_ok=True)
    exe = folder / "skillopt-sleep"
    exe.write_text(FAKE.format(name=name or str(folder), log=log))
    exe.chmod(0o755)
    return exe


def bash(script: Path, *args: str, env: dict[str, str], cwd: Path, stdin: str = "",
         timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(["/bin/bash", str(script), *args], env=env, cwd=cwd, input=stdin, capture_output=True,
                          text=True, timeout=timeout)


def plain_env(home: Path, **extra: str) -> dict[str, str]:
    """A minimal environment: the test's HOME, the system PATH, nothing from the developer's shell."""
    env = {"HOME": str(home), "PATH": SYSTEM_PATH, "LANG": "C.UTF-8"}
    for name in ("SKILLOPT_HOME", "CLAUDE_CONFIG_DIR", "CODEX_HOME", "COPILOT_HOME", "PYTHONPATH"):
        if name in os.environ:
            env[name] = os.environ[name]
    env.update(extra)
    return env


def tree(folder: Path) -> dict[str, bytes]:
    """Every file below ``folder`` with its bytes (to show that nothing changed)."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def cli_has(name: str) -> bool:
    """Whether this install's ``skillopt-sleep`` has the subcommand ``name``."""
    from sleep.cli import build_parser

    [subparsers] = [a for a in build_parser()._actions if a.__class__.__name__ == "_SubParsersAction"]
    return name in subparsers.choices


def toml_loads(text: str) -> dict:
    """Parse TOML with the standard library (3.11+), or tomlkit on 3.10."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomlkit

        return tomlkit.parse(text).unwrap()
    return tomllib.loads(text)
