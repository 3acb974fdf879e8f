"""Is a host's replay CLI installed and logged in? One check per host that replays,
named by its :class:`~sleep.hosts.host.Host` (``ready="sleep.hosts.ready:<function>"``,
called by :func:`sleep.hosts.cli_ready`); each returns ``(ready, why)`` from the files
and variables the CLI authenticates with, without starting it."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from sleep import paths


def _first(files: list[Path], variables: tuple[str, ...]) -> str | None:
    for path in files:
        if path.is_file():
            return path.name
    return next((v for v in variables if os.environ.get(v)), None)


def _check(exe: str, files: list[Path], variables: tuple[str, ...], login: str) -> tuple[bool, str]:
    if shutil.which(exe) is None:
        return False, f"`{exe}` is not on PATH"
    found = _first(files, variables)
    if found:
        return True, f"`{exe}` is on PATH and {found} is set"
    return False, f"`{exe}` is on PATH but not logged in (no {files[0]}; {login})"


def claude_code() -> tuple[bool, str]:
    from skillopt_core.backends.auto import claude_login

    return claude_login()


def claude_code_by_key() -> tuple[bool, str]:
    """Logged in, or pointed at a gateway or the API by key (no login file for :func:`claude_code` to find)."""
    ready, why = claude_code()
    key = next((k for k in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN") if os.environ.get(k)), None)
    if not ready and key and shutil.which("claude"):
        return True, f"`claude` is on PATH and {key} is set"
    return ready, why


def codex() -> tuple[bool, str]:
    return _check("codex", [paths.codex_home() / "auth.json"], ("OPENAI_API_KEY",),
                  "run `codex login`, or set OPENAI_API_KEY")


def copilot() -> tuple[bool, str]:
    return _check("copilot", [paths.copilot_cli_home() / "config.json"], ("GH_TOKEN", "GITHUB_TOKEN"),
                  "run `copilot` and /login, or set GH_TOKEN")


def gemini() -> tuple[bool, str]:
    base = Path(os.environ["GEMINI_CLI_HOME"]).expanduser() if os.environ.get("GEMINI_CLI_HOME") else paths.home()
    return _check("gemini", [base / ".gemini" / "oauth_creds.json"],
                  ("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI"),
                  "run `gemini` once to log in, or set GEMINI_API_KEY")


def opencode() -> tuple[bool, str]:
    data = Path(os.environ["XDG_DATA_HOME"]).expanduser() if os.environ.get("XDG_DATA_HOME") else \
        paths.home() / ".local" / "share"
    return _check("opencode", [data / "opencode" / "auth.json"],
                  ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENCODE_API_KEY"), "run `opencode auth login`")


def pi() -> tuple[bool, str]:
    folder = Path(os.environ["PI_CODING_AGENT_DIR"]).expanduser() if os.environ.get("PI_CODING_AGENT_DIR") else \
        paths.home() / ".pi" / "agent"
    return _check("pi", [folder / "auth.json", folder / "models.json"],
                  ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "OPENROUTER_API_KEY"),
                  "run `pi` and /login, add a provider to models.json, or set a provider's API key")


def cursor() -> tuple[bool, str]:
    if sys.platform == "darwin" and shutil.which("cursor-agent"):  # its login lives in the keychain there
        return True, "`cursor-agent` is on PATH (login kept in the macOS keychain, not checked)"
    return _check("cursor-agent", [paths.home() / ".config" / "cursor" / "auth.json"], ("CURSOR_API_KEY",),
                  "run `cursor-agent login`, or set CURSOR_API_KEY")
