"""The real agent CLIs from npm (``claude``, ``codex``, the MCP Inspector), run with the
test's private homes and without telemetry.

A tool is found in ``$SKILLOPT_NPM_TOOLS/node_modules/.bin`` (a folder made with
``npm install --prefix DIR @anthropic-ai/claude-code @openai/codex
@modelcontextprotocol/inspector``; ``.ci/run`` does this) or on PATH; a test
that needs a missing one is skipped and the reason names it, unless
``SKILLOPT_NPM_TOOLS`` is set (as in CI): then it fails, so the real-CLI tests
cannot silently skip there.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from mcp_testutil import server_env

QUIET = {"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1",
         "DISABLE_ERROR_REPORTING": "1", "NO_UPDATE_NOTIFIER": "1", "CI": "true"}


def npm_tool(name: str) -> str:
    folder = os.environ.get("SKILLOPT_NPM_TOOLS")
    if folder:
        candidate = Path(folder) / "node_modules" / ".bin" / name
        if candidate.exists():
            return str(candidate)
    found = shutil.which(name)
    if not found and folder:  # CI sets it once the npm install succeeded: a missing tool is a failure there
        pytest.fail(f"`{name}` is not in SKILLOPT_NPM_TOOLS={folder}/node_modules/.bin nor on PATH "
                    "(npm install --prefix that folder the package, or unset SKILLOPT_NPM_TOOLS to skip)")
    if not found:
        pytest.skip(f"`{name}` is not installed (npm install --prefix DIR the package and set "
                    "SKILLOPT_NPM_TOOLS=DIR, or put it on PATH)")
    return found


def client_env() -> dict[str, str]:
    """The test's private homes, the venv's `skillopt-sleep` first on PATH, no telemetry."""
    env = server_env(QUIET)
    env["PATH"] = os.pathsep.join([os.path.dirname(sys.executable), env.get("PATH", "")])
    return env


def run(argv: list[str], cwd: Path, timeout: float = 180, env: dict[str, str] | None = None,
        input: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(argv, cwd=cwd, env=env or client_env(), capture_output=True, text=True, timeout=timeout,
                          input=input, stdin=None if input is not None else subprocess.DEVNULL)
