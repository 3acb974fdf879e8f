"""Build what a run needs from settings: the role backends (metered against one
shared budget, ledger and failure monitor), the env, and the initial skill."""

from __future__ import annotations

from dataclasses import dataclass

from skillopt_core.backends import Backend, BackendSpec, create_backend
from skillopt_core.envs import create_env
from skillopt_core.envs.base import EnvAdapter
from skillopt_core.evaluation.executor import RolloutExecutor, create_executor, remote_target
from skillopt_core.run.budget import Budget, MeteredBackend, UsageLedger
from skillopt_core.run.config import Settings
from skillopt_core.run.failures import FailureMonitor
from skillopt_core.skill.document import Skill, load_skill

ROLES = ("target", "optimizer", "judge")


@dataclass
class Runtime:
    env: EnvAdapter
    backends: dict[str, MeteredBackend]
    ledger: UsageLedger
    budget: Budget
    monitor: FailureMonitor
    executor: RolloutExecutor | None = None

    @property
    def target(self) -> MeteredBackend:
        return self.backends["target"]

    @property
    def optimizer(self) -> MeteredBackend:
        return self.backends["optimizer"]

    def describe_backends(self) -> dict[str, str]:
        return {role: b.describe() for role, b in self.backends.items()}


@dataclass
class Metered:
    """The metered role backends of a run, before its env exists."""

    backends: dict[str, MeteredBackend]
    ledger: UsageLedger
    budget: Budget
    monitor: FailureMonitor
    executor: RolloutExecutor | None = None


def build_backends(settings: Settings, ledger: UsageLedger | None = None,
                   raw: dict[str, Backend] | None = None) -> Metered:
    """One backend per role. Roles that resolve to the same backend and model
    share one instance (one local model in memory, one scripted queue).
    Under ``execution.executor: ray`` the target's calls run in Ray workers
    (:func:`~skillopt_core.evaluation.executor.remote_target`).
    Raises a BackendError (e.g. a missing key) before anything is written."""
    ledger = ledger or UsageLedger()
    budget = Budget(max_calls=settings.budget.max_calls, max_tokens=settings.budget.max_tokens,
                    max_usd=settings.budget.max_usd)
    monitor = FailureMonitor(settings.train.max_consecutive_failures)
    executor = create_executor(settings)
    options = settings.model.model_dump()
    built: dict[tuple, Backend] = {}
    out: dict[str, MeteredBackend] = {}
    for role in ROLES:
        spec = None
        if raw and role in raw:
            inner = raw[role]
        else:
            name, model = settings.model.backend_for(role), settings.model.model_for(role)
            spec = BackendSpec(name=name, model=model, role=role, options=options)
            key = (name, model)
            if key not in built:
                built[key] = create_backend(spec)
            inner = built[key]
        if role == "target":
            inner = remote_target(spec, inner, executor)
        out[role] = MeteredBackend(inner, role, ledger, budget, monitor)
    return Metered(out, ledger, budget, monitor, executor)


def build_runtime(settings: Settings, ledger: UsageLedger | None = None, raw_backends: dict[str, Backend] | None = None,
                  metered: Metered | None = None) -> Runtime:
    metered = metered or build_backends(settings, ledger, raw_backends)
    env_options = {"data_path": settings.env.data_path, "limit": settings.env.limit,
                   "options": dict(settings.env.options)}
    env = create_env(settings.env.name, env_options, judge_backend=metered.backends["judge"])
    if metered.executor is not None and hasattr(env, "executor"):
        env.executor = metered.executor  # the env's code-executing checks run there too
    return Runtime(env=env, backends=metered.backends, ledger=metered.ledger, budget=metered.budget,
                   monitor=metered.monitor, executor=metered.executor)


def initial_skill(settings: Settings, env) -> Skill:
    if settings.skill.init:
        return load_skill(settings.skill.init)
    return Skill.parse(env.seed_skill, source=f"{settings.env.name} seed skill")
