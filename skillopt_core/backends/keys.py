"""API keys: where they come from and how they are kept out of everything else.

Contract:

- A key is looked up by environment variable *name*: first the real process
  environment, then a ``.env`` file in the current working directory (read
  once with python-dotenv). Values from ``.env`` never override real
  environment variables, and they are kept in a private mapping instead of
  being copied into ``os.environ``, so they do not leak into the agent CLIs
  (claude, codex, copilot) that the CLI backends start.
- Keys are never logged, echoed or put into an error message: errors name the
  variable, never its value. :func:`redact` removes every known key value, and
  anything shaped like a provider key, from a text before it is shown (backend
  error messages pass through it, because provider errors sometimes quote a
  partial key).
- ``SKILLOPT_DOTENV`` points at another ``.env`` file; ``SKILLOPT_NO_DOTENV=1``
  disables ``.env`` loading (tests use it to keep the real one out).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from skillopt_core.backends.base import BackendConfigError

# Every variable SkillOpt itself reads a secret from (also listed in .env.example).
KEY_VARIABLES = (
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "AZURE_OPENAI_API_KEY",
    "QWEN_API_KEY",
    "MINIMAX_API_KEY",
)

# Provider key shapes: OpenAI (sk-, sk-proj-), Anthropic (sk-ant-), GitHub tokens.
_KEY_SHAPES = re.compile(
    r"\b(?:sk-[A-Za-z0-9_\-]{8,}|gh[pousr]_[A-Za-z0-9]{16,}|github_pat_[A-Za-z0-9_]{16,})"
)
_REDACTED = "[redacted]"

_dotenv_cache: dict[str, str] | None = None
_dotenv_source: Path | None = None


def dotenv_path() -> Path | None:
    """The ``.env`` file that is read, or None when loading is disabled."""
    if os.environ.get("SKILLOPT_NO_DOTENV", "").strip() in {"1", "true", "yes"}:
        return None
    override = os.environ.get("SKILLOPT_DOTENV")
    return Path(override).expanduser() if override else Path.cwd() / ".env"


def _dotenv_values() -> dict[str, str]:
    """Values from the ``.env`` file (cached per file path; empty if absent)."""
    global _dotenv_cache, _dotenv_source
    path = dotenv_path()
    if path is None:
        return {}
    if _dotenv_cache is not None and _dotenv_source == path:
        return _dotenv_cache
    values: dict[str, str] = {}
    if path.is_file():
        from dotenv import dotenv_values

        values = {k: v for k, v in dotenv_values(path).items() if v}
    _dotenv_cache, _dotenv_source = values, path
    return values


def reset_dotenv_cache() -> None:
    """Forget the cached ``.env`` contents (tests and long-lived processes)."""
    global _dotenv_cache, _dotenv_source
    _dotenv_cache, _dotenv_source = None, None


def lookup(name: str) -> str | None:
    """The value of variable ``name`` from the environment, else from ``.env``."""
    value = os.environ.get(name)
    if value:
        return value
    return _dotenv_values().get(name) or None


def require_key(name: str, backend: str, hint: str = "") -> str:
    """The key in variable ``name``; a :class:`BackendConfigError` naming the
    variable (never a value) when it is unset."""
    value = lookup(name)
    if value:
        return value
    where = dotenv_path()
    dotenv_note = f" (or put it in {where}; see .env.example)" if where is not None else ""
    raise BackendConfigError(
        f"{backend} backend: no API key. Set the environment variable {name}{dotenv_note}"
        f"{', ' + hint if hint else ''}."
    )


def _known_values(extra_names: tuple[str, ...] = ()) -> list[str]:
    names = set(KEY_VARIABLES) | set(extra_names)
    secretish = ("_API_KEY", "_TOKEN", "_SECRET")
    names |= {n for n in os.environ if n.endswith(secretish)}
    names |= {n for n in _dotenv_values() if n.endswith(secretish)}
    values = {lookup(n) for n in names}
    # Very short values would redact ordinary words; real keys are long.
    return sorted((v for v in values if v and len(v) >= 8), key=len, reverse=True)


def redact(text: str, extra_names: tuple[str, ...] = ()) -> str:
    """``text`` with every known key value and key-shaped token replaced."""
    for value in _known_values(extra_names):
        text = text.replace(value, _REDACTED)
    return _KEY_SHAPES.sub(_REDACTED, text)


def safe_url(url: str) -> str:
    """``url`` without a ``user:password@`` part, for logs and descriptions."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]))
