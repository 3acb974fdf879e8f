"""``backend: auto``: pick a working backend from what is installed and configured.

Order (the first that applies wins; the choice and the reason are logged):

1. a role override (``model.<role>_backend``) other than ``auto``;
2. ``model.base_url`` set -> ``openai`` (the person named an OpenAI-compatible
   server); ``model.endpoint`` set -> ``azure-openai``;
3. a logged-in ``claude`` CLI -> ``claude-code``;
4. ``ANTHROPIC_API_KEY`` (environment or ``.env``) -> ``anthropic``;
5. ``OPENAI_API_KEY`` -> ``openai``;
6. the embedded local model installed (llama-cpp-python plus the bundled
   SmolLM2, or ``model.model_path``) -> ``local``;
7. otherwise a :class:`BackendConfigError` listing every way to configure one
   and why each candidate was not used.

"Logged-in claude CLI" is a cheap, offline heuristic (no process is started,
nothing is sent): ``claude`` is on PATH and either ``CLAUDE_CODE_OAUTH_TOKEN``
is set, or the Claude config directory (``$CLAUDE_CONFIG_DIR``, default
``~/.claude``) holds ``.credentials.json`` (Linux, Windows), or
``.claude.json`` in that directory or in the home directory records an
``oauthAccount`` (what login writes on every platform, including macOS where
the token itself is in the keychain).
"""

from __future__ import annotations

import importlib.util
import logging
import os
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from skillopt_core.backends import BackendSpec, create_backend, register_backend
from skillopt_core.backends.base import Backend, BackendConfigError
from skillopt_core.backends.keys import lookup

log = logging.getLogger(__name__)

_CONFIG_READ_LIMIT = 5_000_000


def claude_login(env: Mapping[str, str] | None = None) -> tuple[bool, str]:
    """(logged in?, why) by the heuristic in the module docstring."""
    env = os.environ if env is None else env
    if shutil.which("claude", path=env.get("PATH")) is None:
        return False, "`claude` is not on PATH"
    if env.get("CLAUDE_CODE_OAUTH_TOKEN"):
        return True, "`claude` is on PATH and CLAUDE_CODE_OAUTH_TOKEN is set"
    home = Path(env.get("HOME") or Path.home())
    config_dir = Path(env["CLAUDE_CONFIG_DIR"]) if env.get("CLAUDE_CONFIG_DIR") else home / ".claude"
    credentials = config_dir / ".credentials.json"
    if credentials.is_file():
        return True, f"`claude` is on PATH and {credentials} exists"
    for config in (config_dir / ".claude.json", home / ".claude.json"):
        try:
            with open(config, encoding="utf-8", errors="replace") as fh:
                if '"oauthAccount"' in fh.read(_CONFIG_READ_LIMIT):
                    return True, f"`claude` is on PATH and {config} records a login"
        except OSError:
            continue
    return False, f"`claude` is on PATH but no login was found under {config_dir}"


def local_model(options: Mapping[str, Any]) -> tuple[bool, str]:
    """(usable?, why) for the embedded llama.cpp backend."""
    if importlib.util.find_spec("llama_cpp") is None:
        return False, "llama-cpp-python is not installed"
    if options.get("model_path"):
        return True, "model.model_path is set"
    try:
        from skillopt_core.backends.local import default_model_path

        path = default_model_path()
    except Exception as exc:  # the bundled model package may be missing or broken
        return False, f"the bundled model is not installed ({type(exc).__name__})"
    return True, f"the bundled model {path.name} is installed"


def choose(role: str, options: Mapping[str, Any]) -> tuple[str, str]:
    """(backend name, reason) for ``role``; raises when nothing is usable."""
    override = options.get(f"{role}_backend")
    if override and str(override).strip().lower() != "auto":
        return str(override), f"model.{role}_backend is {override}"
    if options.get("base_url"):
        return "openai", "model.base_url is set"
    if options.get("endpoint"):
        return "azure-openai", "model.endpoint is set"
    tried: list[str] = []
    ok, why = claude_login()
    if ok:
        return "claude-code", why
    tried.append(f"claude-code: {why}")
    if lookup("ANTHROPIC_API_KEY"):
        return "anthropic", "ANTHROPIC_API_KEY is set"
    tried.append("anthropic: ANTHROPIC_API_KEY is not set")
    if lookup("OPENAI_API_KEY"):
        return "openai", "OPENAI_API_KEY is set"
    tried.append("openai: OPENAI_API_KEY is not set and model.base_url is empty")
    ok, why = local_model(options)
    if ok:
        return "local", why
    tried.append(f"local: {why}")
    raise BackendConfigError(
        "No model backend is available (model.backend is auto). Any one of these works:\n"
        "  - log in to Claude Code (run `claude` once) to use the claude-code backend;\n"
        "  - set ANTHROPIC_API_KEY (environment or .env, see .env.example) for anthropic;\n"
        "  - set OPENAI_API_KEY for openai, or model.base_url for a local OpenAI-compatible server;\n"
        "  - install the embedded model: pip install -e \".[local]\";\n"
        "  - or name a backend: model.backend: codex | copilot | azure-openai | scripted.\n"
        "What was checked:\n  - " + "\n  - ".join(tried)
    )


def create_auto(spec: BackendSpec) -> Backend:
    name, reason = choose(spec.role, spec.options)
    log.info("backend auto for role %s: using %s (%s)", spec.role, name, reason)
    return create_backend(BackendSpec(name=name, model=spec.model, role=spec.role, options=spec.options))


register_backend("auto")(create_auto)
