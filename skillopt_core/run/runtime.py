"""Build what a run needs from settings: the env, the role backends (metered
against one shared budget and ledger) and the initial skill."""

from __future__ import annotations

from dataclasses import dataclass

from skillopt_core.backends import Backend, BackendSpec, create_backend
from skillopt_core.run.budget import Budget, MeteredBackend, UsageLedger
from skillopt_core.run.config import Settings
from skillopt_core.envs import create_env
from skillopt_core.skill.document import Skill, load_skill

ROLES = ("target", "optimizer", "judge")


@dataclass
class Runtime:
    env: object
    backends: dict[str, MeteredBackend]
    ledger: UsageLedger
    budget: Budget

    @property
    def target(self) -> MeteredBackend:
        return self.backends["target"]

    @property
    def optimizer(self) -> MeteredBackend:
        return self.backends["optimizer"]

    def describe_backends(self) -> dict[str, str]:
        return {role: b.describe() for role, b in self.backends.items()}


def build_backends(settings: Settings, ledger: UsageLedger, budget: Budget, raw: dict[str, Backend] | None = None) -> dict[str, MeteredBackend]:
    """One backend per role. Roles that resolve to the same backend and model
    share one instance (one local model in memory, one scripted queue)."""
    options = settings.model.model_dump()
    built: dict[tuple, Backend] = {}
    out: dict[str, MeteredBackend] = {}
    for role in ROLES:
        if raw and role in raw:
            inner = raw[role]
        else:
            name, model = settings.model.backend_for(role), settings.model.model_for(role)
            key = (name, model)
            if key not in built:
                built[key] = create_backend(BackendSpec(name=name, model=model, role=role, options=options))
            inner = built[key]
        out[role] = MeteredBackend(inner, role, ledger, budget)
    return out


def build_runtime(settings: Settings, ledger: UsageLedger | None = None, raw_backends: dict[str, Backend] | None = None) -> Runtime:
    ledger = ledger or UsageLedger()
    budget = Budget(max_calls=settings.budget.max_calls, max_tokens=settings.budget.max_tokens)
    backends = build_backends(settings, ledger, budget, raw_backends)
    env_options = {"data_path": settings.env.data_path, "limit": settings.env.limit, "options": dict(settings.env.options)}
    env = create_env(settings.env.name, env_options, judge_backend=backends["judge"])
    return Runtime(env=env, backends=backends, ledger=ledger, budget=budget)


def initial_skill(settings: Settings, env) -> Skill:
    if settings.skill.init:
        return load_skill(settings.skill.init)
    return Skill.parse(env.seed_skill, source=f"{settings.env.name} seed skill")
