"""Where the heavy parts of a rollout run: in this process, or as Ray tasks.

Two parts of a rollout can be heavy: the target's model call (an agent CLI
replaying a task, a local model) and a check that executes code
(SpreadsheetBench runs the agent's ``solution.py`` on every test case).
``execution.executor`` picks where they run:

- ``local`` (default): the model call in this process, as before; a check in
  a worker thread, off the event loop.
- ``ray``: both as tasks on a Ray cluster (``execution.ray_address``: none =
  start an instance on this machine, ``auto`` = the running cluster, or an
  address), each reserving ``num_cpus`` / ``num_gpus`` / ``resources``.

Everything else of a rollout stays here, in the driver: building requests, the
rollout cache, the budget and usage ledger, the failure monitor and the order
of results. So the two executors give the same results for the same seeds and
cache, and a run started on one resumes on the other (``execution`` is not an
experiment setting).

Contract:

- ``await executor.run(job)`` returns ``job.fn(*job.args)`` or raises what it
  raised. ``fn`` is a module-level function and ``args`` are picklable: Ray
  ships them to a worker process.
- A Ray worker that dies (killed, out of memory, a crash in native code) is
  retried by Ray ``max_retries`` times; after that ``run`` raises
  :class:`RequestFailed`, so the rollout scores that one item 0 and counts it
  as failed, like any per-item failure. An unreachable cluster or a missing
  ``ray`` package is an :class:`ExecutorError` (systemic: the run stops
  cleanly and can be resumed).
- :func:`remote_target` turns the target backend into one whose calls run in
  Ray workers, rebuilt there from the same :class:`BackendSpec`; its name,
  model and ``describe()`` are the local backend's, so cache keys do not change.
  Backends a caller built itself (no spec) stay in the driver. The scripted
  backend's rules work remotely; its queue is per process.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from skillopt_core.backends import Backend, BackendSpec, create_backend
from skillopt_core.backends.base import BackendError, Completion, CompletionRequest, RequestFailed

log = logging.getLogger(__name__)

__all__ = [
    "ExecutorError", "Job", "LocalExecutor", "RayExecutor", "RemoteBackend", "RolloutExecutor",
    "create_executor", "remote_target",
]


class ExecutorError(BackendError):
    """The executor cannot run anything (Ray missing, cluster unreachable)."""


@dataclass(frozen=True)
class Job:
    """One picklable unit of work: ``fn(*args)``; ``label`` names it in messages."""

    fn: Callable[..., Any]
    args: tuple[Any, ...] = ()
    label: str = "a rollout"


class RolloutExecutor(Protocol):
    name: str

    async def run(self, job: Job) -> Any: ...


def run_job(job: Job) -> Any:
    return job.fn(*job.args)


class LocalExecutor:
    """Jobs in a worker thread of this process."""

    name = "local"

    async def run(self, job: Job) -> Any:
        return await asyncio.to_thread(run_job, job)


@dataclass
class RayExecutor:
    """Jobs as Ray tasks (see the module docstring). Ray is started or joined on
    the first job, once per process."""

    address: str | None = None
    cluster_cpus: int | None = None
    num_cpus: float = 1
    num_gpus: float = 0
    resources: dict[str, float] = field(default_factory=dict)
    max_retries: int = 2
    name: str = "ray"
    _remote: Any = field(default=None, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def _task(self) -> Any:
        with self._lock:
            if self._remote is None:
                ray = _import_ray()
                if not ray.is_initialized():
                    where = self.address or "a new local instance"
                    try:
                        if self.address:
                            ray.init(address=self.address, include_dashboard=False, logging_level=logging.WARNING)
                        else:
                            ray.init(num_cpus=self.cluster_cpus, include_dashboard=False,
                                     logging_level=logging.WARNING)
                    except Exception as exc:  # ConnectionError, RuntimeError, ... all mean the same here
                        raise ExecutorError(
                            f"execution.executor=ray: could not start or join Ray ({where}): "
                            f"{type(exc).__name__}: {exc}. Check execution.ray_address, or use "
                            f"execution.executor=local."
                        ) from None
                self._remote = ray.remote(run_job).options(
                    num_cpus=self.num_cpus, num_gpus=self.num_gpus, resources=dict(self.resources) or None,
                    max_retries=self.max_retries, retry_exceptions=False,
                )
            return self._remote

    async def run(self, job: Job) -> Any:
        import ray.exceptions as rex

        ref = self._task().remote(job)
        try:
            return await ref
        except asyncio.CancelledError:
            _import_ray().cancel(ref)
            raise
        except rex.RayTaskError as exc:  # the job itself raised: the same error as locally
            cause = getattr(exc, "cause", None)
            if isinstance(cause, BaseException):
                raise cause from None
            raise RequestFailed(f"{job.label} failed in a Ray worker: {exc}") from None
        except rex.RayError as exc:  # the worker died (or its node) on every attempt
            raise RequestFailed(
                f"the Ray worker running {job.label} died {self.max_retries + 1} time(s) "
                f"({type(exc).__name__}); the item is counted as failed"
            ) from None


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ExecutorError(
            "execution.executor=ray needs Ray, which is not installed. Install it with "
            "pip install 'skillopt[ray]', or use execution.executor=local."
        ) from None
    return ray


def create_executor(settings: Any) -> RolloutExecutor:
    """The executor ``settings.execution`` names (Ray is imported now, started on first use)."""
    ex = settings.execution
    if ex.executor == "local":
        return LocalExecutor()
    _import_ray()
    return RayExecutor(address=ex.ray_address, cluster_cpus=ex.ray_cpus, num_cpus=ex.num_cpus,
                       num_gpus=ex.num_gpus, resources=dict(ex.resources), max_retries=ex.max_retries)


# -- the target's model calls in Ray workers ---------------------------------- #

_WORKER_BACKENDS: dict[str, Backend] = {}
_WORKER_LOOP: asyncio.AbstractEventLoop | None = None


def complete_in_worker(spec: BackendSpec, request: CompletionRequest) -> Completion:
    """One model call in this (worker) process, with a backend built from ``spec``
    once per process and one event loop kept for its clients."""
    global _WORKER_LOOP
    key = repr(spec)
    backend = _WORKER_BACKENDS.get(key)
    if backend is None:
        backend = _WORKER_BACKENDS[key] = create_backend(spec)
    if _WORKER_LOOP is None:
        _WORKER_LOOP = asyncio.new_event_loop()
    return _WORKER_LOOP.run_until_complete(backend.complete(request))


class RemoteBackend:
    """A target backend whose calls run through an executor (Ray workers)."""

    def __init__(self, spec: BackendSpec, local: Backend, executor: RolloutExecutor) -> None:
        self.name = local.name
        self.model = local.model
        self._describe = local.describe()
        # The model the local backend settled on (e.g. discovered from a server) is pinned,
        # so every worker asks for the same one.
        self._spec = BackendSpec(name=spec.name, model=local.model or spec.model, role=spec.role,
                                 options=dict(spec.options))
        self._executor = executor

    def describe(self) -> str:
        return self._describe

    async def complete(self, request: CompletionRequest) -> Completion:
        return await self._executor.run(Job(complete_in_worker, (self._spec, request), label="this target call"))


def remote_target(spec: BackendSpec | None, backend: Backend, executor: RolloutExecutor) -> Backend:
    """``backend`` itself under the local executor, or without a spec to rebuild it
    from; else a :class:`RemoteBackend` over ``executor``."""
    if isinstance(executor, LocalExecutor) or spec is None:
        if spec is None and not isinstance(executor, LocalExecutor):
            log.info("execution.executor=%s: the target backend was built by the caller; its calls stay here",
                     executor.name)
        return backend
    return RemoteBackend(spec, backend, executor)
