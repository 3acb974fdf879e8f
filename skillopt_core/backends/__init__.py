"""Backend registry: one place maps a backend name to its factory.

A factory is ``factory(spec: BackendSpec) -> Backend``. Register with
``@register_backend("name")`` in the backend's module and add the module to
the built-in module map of ``_BACKENDS`` so it is imported lazily (heavy SDKs load only when used).
A third-party package registers through the ``skillopt.backends`` entry-point
group instead (docs/writing-a-plugin.md).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from skillopt_core.backends.base import (
    Backend,
    BackendConfigError,
    BackendError,
    Completion,
    CompletionRequest,
    ImageAttachment,
    Message,
    RequestFailed,
    RequestRejected,
    Role,
    Usage,
)
from skillopt_core.registry import LazyRegistry

__all__ = [
    "Backend",
    "BackendConfigError",
    "BackendError",
    "BackendSpec",
    "Completion",
    "CompletionRequest",
    "ImageAttachment",
    "Message",
    "RequestFailed",
    "RequestRejected",
    "Role",
    "Usage",
    "available_backends",
    "create_backend",
    "register_backend",
]


@dataclass(frozen=True)
class BackendSpec:
    """What a factory gets: backend name, model id (may be None: backend default),
    the role it will serve and the backend options from the ``model`` config
    section (base_url, model_path, timeout, ...). Unknown options are ignored by
    a factory; the config layer has already rejected misspelled keys."""

    name: str
    model: str | None
    role: str = "target"
    options: dict[str, Any] = field(default_factory=dict)


Factory = Callable[[BackendSpec], Backend]


def _normalise(name: str) -> str:
    return name.strip().lower().replace("_", "-")


# name -> module that registers it; imported on first use.
_BACKENDS: LazyRegistry[Factory] = LazyRegistry(
    "backend",
    {
        "scripted": "skillopt_core.backends.scripted",
        "local": "skillopt_core.backends.local",
        "openai": "skillopt_core.backends.openai_backend",
        "azure-openai": "skillopt_core.backends.azure_openai",
        "anthropic": "skillopt_core.backends.anthropic_backend",
        "claude-code": "skillopt_core.backends.claude_code",
        "codex": "skillopt_core.backends.codex",
        "copilot": "skillopt_core.backends.copilot",
        "gemini-cli": "skillopt_core.backends.gemini_cli",
        "opencode": "skillopt_core.backends.opencode",
        "cursor-agent": "skillopt_core.backends.cursor_agent",
        "pi": "skillopt_core.backends.pi",
        "qwen": "skillopt_core.backends.presets",
        "minimax": "skillopt_core.backends.presets",
        "auto": "skillopt_core.backends.auto",
    },
    _normalise,
    BackendConfigError,
    group="skillopt.backends",
    register_hint="register_backend",
)
register_backend = _BACKENDS.register
available_backends = _BACKENDS.names


def create_backend(spec: BackendSpec) -> Backend:
    factory = _BACKENDS.get(spec.name)
    name = _normalise(spec.name)
    return factory(BackendSpec(name=name, model=spec.model, role=spec.role, options=spec.options))
