"""Env registry: one place maps an env name to the class that builds it.

Register with ``@register_env("name")`` on a :class:`PromptEnv` subclass (or
any class taking ``(inputs: EnvInputs, judge_backend)``) and add its module to
the built-in module map of ``_ENVS`` so it is imported only when used. See ``_template/`` for
a complete, copyable example. A third-party package registers through the
``skillopt.envs`` entry-point group instead (docs/writing-a-plugin.md).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from skillopt_core.backends import Backend
from skillopt_core.envs.base import EnvAdapter, EnvInputs, PromptEnv, score_final_answer
from skillopt_core.registry import LazyRegistry

__all__ = [
    "EnvAdapter",
    "EnvInputs",
    "PromptEnv",
    "available_envs",
    "create_env",
    "register_env",
    "score_final_answer",
]

def _normalise(name: str) -> str:
    return name.strip().lower().replace("-", "_")


# name -> module that registers it; imported on first use.
_ENVS: LazyRegistry[Any] = LazyRegistry(
    "env",
    {
        "searchqa": "skillopt_core.envs.searchqa",
        "livemathematicianbench": "skillopt_core.envs.livemathematicianbench",
        "spreadsheetbench": "skillopt_core.envs.spreadsheetbench",
        "officeqa": "skillopt_core.envs.officeqa",
        "docvqa": "skillopt_core.envs.docvqa",
        "alfworld": "skillopt_core.envs.alfworld",
        "textworld": "skillopt_core.envs.textworld",
        "unitqa": "skillopt_core.envs.unitqa",
        "jsonl_tasks": "skillopt_core.envs.jsonl_tasks",
        "_template": "skillopt_core.envs._template",
    },
    _normalise,
    group="skillopt.envs",
    register_hint="register_env",
)
available_envs = _ENVS.names
_lookup = _ENVS.get

# Keys of the config's env section that are the engine's business, not the env's.
_ENGINE_KEYS = frozenset({"name", "split_ratio", "split_seed"})
_COMMON_KEYS = frozenset({"data_path", "limit", "options"})


def register_env(name: str) -> Callable[[Any], Any]:
    """Class decorator: make ``create_env(name, ...)`` build this env. The
    class's ``OPTIONS`` mapping (option -> description) lists the env-specific
    options it accepts."""
    return _ENVS.register(name)


def _inputs(env_name: str, cls: Any, options: Mapping[str, Any]) -> EnvInputs:
    allowed: Mapping[str, str] = getattr(cls, "OPTIONS", {})
    given = options.get("name")
    if given is not None and _normalise(str(given)) != env_name:
        raise ValueError(f"create_env('{env_name}') was given env options for '{options['name']}'.")

    nested = options.get("options") or {}
    if not isinstance(nested, Mapping):
        raise ValueError(f"env.options must be a mapping of option names to values, got {type(nested).__name__}.")
    # Env-specific keys may sit under "options" (the config layout) or at the top level.
    specific = dict(nested)
    for key, value in options.items():
        if key in _ENGINE_KEYS or key in _COMMON_KEYS:
            continue
        if key in specific and specific[key] != value:
            raise ValueError(f"env option '{key}' is given twice with different values.")
        specific[key] = value
    for key in specific:
        if key not in allowed:
            choices = sorted(allowed) + sorted(_COMMON_KEYS - {"options"})
            near = difflib.get_close_matches(key, choices, n=1)
            hint = f" Did you mean '{near[0]}'?" if near else ""
            listed = ", ".join(sorted(allowed)) if allowed else "none"
            raise ValueError(
                f"Env '{env_name}' has no option '{key}'.{hint} Its options: {listed} "
                "(plus env.data_path and env.limit)."
            )

    data_path = options.get("data_path")
    if data_path is not None and not isinstance(data_path, (str, Path)):
        raise ValueError(f"env.data_path must be a path string, got {data_path!r}.")
    limit = options.get("limit")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise ValueError(f"env.limit must be a positive whole number or null, got {limit!r}.")
    return EnvInputs(
        data_path=Path(data_path).expanduser() if data_path else None,
        limit=limit,
        options=specific,
    )


def create_env(
    name: str, options: Mapping[str, Any] | None = None, judge_backend: Backend | None = None
) -> EnvAdapter:
    """Build the env called ``name``.

    ``options`` is the config's ``env`` section: ``data_path`` (None = the
    env's bundled sample), ``limit`` (None = all tasks) and ``options`` (the
    env-specific keys). Env-specific keys may also be given at the top level.
    The engine's keys ``name``, ``split_ratio`` and ``split_seed`` are accepted
    and ignored. Unknown env names and options raise ``ValueError`` with the
    nearest valid name. ``judge_backend`` serves rubric judges.
    """
    cls = _lookup(name)
    inputs = _inputs(_normalise(name), cls, options or {})
    env = cls(inputs, judge_backend)
    env.name = _normalise(name)
    return env
