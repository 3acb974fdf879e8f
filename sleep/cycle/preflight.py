"""What a night checks before it harvests: its backends and its split.

A misspelt ``--backend``, a scripted backend without a ``model.scripted`` rules
file or with one that does not exist
or the local backend without the ``[local]`` extra would otherwise surface
after the harvest and the mining, as a failed night. Each role's backend is
built once here, as the night builds it (the local backend's llama.cpp probe
is cached after its first success), and the first problem becomes a
:class:`skillopt_core.ConfigError` naming the key and where its value came from:
the night then exits 2 and records nothing.
"""

from __future__ import annotations

from skillopt_core import BackendSpec, ConfigError, Settings, create_backend
from skillopt_core.backends.base import BackendConfigError
from sleep.cycle.split import check_ratio

ROLES = ("target", "optimizer", "judge")


def check_night_settings(settings: Settings, backend_flag: str | None = None) -> None:
    """Raise :class:`ConfigError` for a backend that cannot be built or a split without train or val."""
    check_ratio(settings.env.split_ratio)
    options = settings.model.model_dump()
    seen: set[tuple[str, str | None]] = set()
    for role in ROLES:
        key = (settings.model.backend_for(role), settings.model.model_for(role))
        if key in seen:
            continue
        seen.add(key)
        if key[0] == "scripted" and options.get("scripted") is None:
            raise ConfigError(f"{_where(settings, role, backend_flag)}: the scripted backend answers from a rules "
                              "file and none was given; pass one with --set model.scripted=FILE (format: "
                              "docs/backends.md, 'scripted'). It is a test double: for a real night use the "
                              "default local backend or --backend claude-code.")
        try:
            create_backend(BackendSpec(name=key[0], model=key[1], role=role, options=options))
        except BackendConfigError as exc:
            raise ConfigError(f"{_where(settings, role, backend_flag)}: {exc}") from None


def _where(settings: Settings, role: str, flag: str | None) -> str:
    """Which key chose the failing backend, as the person would set it."""
    if getattr(settings.model, f"{role}_backend", None):
        return f"model.{role}_backend={getattr(settings.model, f'{role}_backend')}"
    if flag:
        return f"--backend {flag} (model.backend)"
    return f"model.backend={settings.model.backend}"
