"""Backend registry: one place maps a backend name to its factory.

A factory is ``factory(spec: BackendSpec) -> Backend``. Register with
``@register_backend("name")`` in the backend's module and add the module to
``_BUILTIN_MODULES`` so it is imported lazily (heavy SDKs load only when used).
"""

from __future__ import annotations

import difflib
import importlib
from dataclasses import dataclass, field
from typing import Any, Callable

from .base import (
    Backend,
    BackendConfigError,
    BackendError,
    Completion,
    CompletionRequest,
    Message,
    RequestRejected,
    Role,
    Usage,
)

__all__ = [
    "Backend",
    "BackendConfigError",
    "BackendError",
    "BackendSpec",
    "Completion",
    "CompletionRequest",
    "Message",
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
_REGISTRY: dict[str, Factory] = {}

# name -> module that registers it; imported on first use.
_BUILTIN_MODULES: dict[str, str] = {
    "scripted": "skillopt_core.backends.scripted",
    "local": "skillopt_core.backends.local",
    "openai": "skillopt_core.backends.openai_backend",
    "azure-openai": "skillopt_core.backends.azure_openai",
    "anthropic": "skillopt_core.backends.anthropic_backend",
    "claude-code": "skillopt_core.backends.claude_code",
    "codex": "skillopt_core.backends.codex",
    "copilot": "skillopt_core.backends.copilot",
    "auto": "skillopt_core.backends.auto",
}


def register_backend(name: str) -> Callable[[Factory], Factory]:
    def deco(factory: Factory) -> Factory:
        _REGISTRY[name] = factory
        return factory

    return deco


def available_backends() -> list[str]:
    return sorted(set(_REGISTRY) | set(_BUILTIN_MODULES))


def _normalise(name: str) -> str:
    return name.strip().lower().replace("_", "-")


def create_backend(spec: BackendSpec) -> Backend:
    name = _normalise(spec.name)
    if name not in _REGISTRY and name in _BUILTIN_MODULES:
        importlib.import_module(_BUILTIN_MODULES[name])
    factory = _REGISTRY.get(name)
    if factory is None:
        known = available_backends()
        near = difflib.get_close_matches(name, known, n=1)
        hint = f" Did you mean '{near[0]}'?" if near else ""
        raise BackendConfigError(
            f"Unknown backend '{spec.name}'.{hint} Known backends: {', '.join(known)}."
        )
    return factory(BackendSpec(name=name, model=spec.model, role=spec.role, options=spec.options))
