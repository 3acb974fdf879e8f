"""Usage accounting and the hard per-run budget.

A run owns one :class:`UsageLedger` and one :class:`Budget`. Every backend the
run uses is wrapped in a :class:`MeteredBackend` for its role; all wrappers
share the ledger, so usage is counted per (role, stage) and the budget applies
to the whole run.

Budget semantics:

- ``max_calls`` counts calls *started*. A wrapper reserves a call slot before
  it awaits the inner backend, so concurrent rollouts can never start more
  than ``max_calls`` calls. A call that returns is recorded; so is a call
  that fails with ``RequestFailed`` (it was sent, and may have cost money),
  with no tokens; a call cancelled or failing otherwise gives its slot back.
- ``max_tokens`` is checked before each call against the tokens recorded so
  far. One call may finish over the limit; the next one is refused.
- ``max_usd`` is checked the same way against the dollars recorded so far:
  the cost each backend reports or, when it reports none, the price table's
  estimate for the model it named (:mod:`skillopt_core.backends.pricing`).
  Calls of a model with no price (a local model, an unknown name) add $0, so
  a dollar cap alone never stops them; the preflight estimate
  (:mod:`skillopt_core.run.estimate`) names such roles. Calls already in
  flight when the cap is reached still finish, so a run can end a few calls
  over it (at most ``train.workers`` of them).
- Once a call has been refused, every later call through the same ledger is
  refused at once with the same message (the run stops cleanly rather than
  squeezing in calls as in-flight ones fail).

The ledger round-trips through JSON (:meth:`UsageLedger.snapshot` /
:meth:`UsageLedger.from_snapshot`), so a resumed run keeps its totals and its
remaining budget.
"""

from __future__ import annotations

import threading
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

from skillopt_core.backends.base import Backend, Completion, CompletionRequest, RequestFailed, Usage
from skillopt_core.backends.pricing import estimate_cost
from skillopt_core.run.failures import FailureMonitor

__all__ = ["Budget", "BudgetExceeded", "MeteredBackend", "UsageLedger"]

SNAPSHOT_VERSION = 1
UNLABELLED_STAGE = "unlabelled"


class BudgetExceeded(RuntimeError):
    """The run's budget is used up; no model call was made."""


@dataclass
class Budget:
    """Hard limits for one run; ``None`` means unlimited."""

    max_calls: int | None = None
    max_tokens: int | None = None
    max_usd: float | None = None

    def __post_init__(self) -> None:
        for name in ("max_calls", "max_tokens", "max_usd"):
            value = getattr(self, name)
            if value is not None and value < 0:
                raise ValueError(f"budget.{name} must be >= 0 or unset, got {value}.")


@dataclass
class _Bucket:
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    latency_s: float = 0.0

    def add(self, completion: Completion) -> None:
        self.calls += 1
        self.input_tokens += completion.usage.input_tokens
        self.output_tokens += completion.usage.output_tokens
        # Unknown cost (None) adds nothing: the ledger sums only what backends report.
        self.cost_usd += completion.usage.cost_usd or 0.0
        self.latency_s += completion.latency_s


_BUCKET_KEYS = tuple(f.name for f in fields(_Bucket))


class UsageLedger:
    """Model usage per (role, stage), plus the in-flight call count the budget needs.

    All methods are safe to call from several threads and tasks at once.
    ``cost_usd`` sums the costs backends report; calls without a reported
    cost add 0.
    """

    def __init__(self) -> None:
        self._buckets: dict[tuple[str, str], _Bucket] = {}
        self._in_flight = 0
        self._exhausted: str | None = None
        self._lock = threading.Lock()

    # -- recording ---------------------------------------------------------

    def record(self, role: str, stage: str, completion: Completion) -> None:
        """Add one finished call to the (role, stage) bucket."""
        with self._lock:
            self._add(role, stage, completion)

    def _add(self, role: str, stage: str, completion: Completion) -> None:
        key = (role, stage or UNLABELLED_STAGE)
        self._buckets.setdefault(key, _Bucket()).add(completion)

    # -- budget (used by MeteredBackend) -------------------------------------

    def reserve_call(self, budget: Budget) -> None:
        """Claim one call slot under ``budget`` or raise :class:`BudgetExceeded`.

        Every successful reservation must be followed by exactly one
        :meth:`commit_call` or :meth:`release_call`.
        """
        with self._lock:
            if self._exhausted is None:
                self._exhausted = self._over_budget(budget)
            if self._exhausted is not None:
                raise BudgetExceeded(self._exhausted)
            self._in_flight += 1

    def commit_call(self, role: str, stage: str, completion: Completion) -> None:
        """Turn a reservation into a recorded call."""
        with self._lock:
            self._in_flight -= 1
            self._add(role, stage, completion)

    def release_call(self) -> None:
        """Give back a reservation whose call produced no completion."""
        with self._lock:
            self._in_flight -= 1

    def _over_budget(self, budget: Budget) -> str | None:
        finished = sum(b.calls for b in self._buckets.values())
        started = finished + self._in_flight
        if budget.max_calls is not None and started >= budget.max_calls:
            return (
                f"budget exhausted: {started}/{budget.max_calls} model calls. "
                "Raise budget.max_calls to allow more."
            )
        tokens = sum(b.input_tokens + b.output_tokens for b in self._buckets.values())
        if budget.max_tokens is not None and tokens >= budget.max_tokens:
            return (
                f"budget exhausted: {tokens}/{budget.max_tokens} tokens. "
                "Raise budget.max_tokens to allow more."
            )
        cost = sum(b.cost_usd for b in self._buckets.values())
        if budget.max_usd is not None and cost >= budget.max_usd - 1e-12:
            return (
                f"budget exhausted: ${cost:.4f}/${budget.max_usd:.4f} spent. "
                "Raise budget.max_usd to allow more."
            )
        return None

    @property
    def in_flight(self) -> int:
        with self._lock:
            return self._in_flight

    # -- reading -----------------------------------------------------------

    def totals(self) -> dict[str, Any]:
        """``{"calls", "input_tokens", "output_tokens", "cost_usd"}`` over all roles and stages."""
        with self._lock:
            buckets = list(self._buckets.values())
        return {
            "calls": sum(b.calls for b in buckets),
            "input_tokens": sum(b.input_tokens for b in buckets),
            "output_tokens": sum(b.output_tokens for b in buckets),
            "cost_usd": sum(b.cost_usd for b in buckets),
        }

    def by_role_stage(self) -> dict[str, dict[str, dict[str, Any]]]:
        """``{role: {stage: {calls, input_tokens, output_tokens, cost_usd, latency_s}}}``."""
        with self._lock:
            items = sorted((k, asdict(b)) for k, b in self._buckets.items())
        out: dict[str, dict[str, dict[str, Any]]] = {}
        for (role, stage), bucket in items:
            out.setdefault(role, {})[stage] = bucket
        return out

    def snapshot(self) -> dict[str, Any]:
        """A JSON-serialisable copy of the recorded usage (not of in-flight calls)."""
        return {"version": SNAPSHOT_VERSION, "usage": self.by_role_stage()}

    @classmethod
    def from_snapshot(cls, data: dict[str, Any]) -> UsageLedger:
        """Rebuild a ledger from :meth:`snapshot` output (e.g. to resume a run)."""
        usage = _usage_of(data, "ledger snapshot")
        ledger = cls()
        for role, stages in usage.items():
            for stage, bucket in stages.items():
                ledger._buckets[(role, stage)] = _bucket_from(bucket, f"usage.{role}.{stage}")
        return ledger

    def diff(self, earlier_snapshot: dict[str, Any]) -> dict[str, dict[str, dict[str, Any]]]:
        """Usage since ``earlier_snapshot``, shaped like :meth:`by_role_stage`.

        Only (role, stage) pairs with at least one call or token since then
        appear, so a step's accounting lists just what the step used.
        """
        before = _usage_of(earlier_snapshot, "earlier snapshot")
        out: dict[str, dict[str, dict[str, Any]]] = {}
        for role, stages in self.by_role_stage().items():
            for stage, now in stages.items():
                prev = before.get(role, {}).get(stage)
                then = asdict(_bucket_from(prev, f"usage.{role}.{stage}")) if prev else None
                delta = {k: now[k] - (then[k] if then else 0) for k in _BUCKET_KEYS}
                # Float sums drift in the last digits; keep the per-step report readable.
                delta["cost_usd"] = round(delta["cost_usd"], 9)
                delta["latency_s"] = round(delta["latency_s"], 9)
                if delta["calls"] or delta["input_tokens"] or delta["output_tokens"]:
                    out.setdefault(role, {})[stage] = delta
        return out


def _usage_of(data: Any, what: str) -> dict[str, dict[str, Any]]:
    if not isinstance(data, dict) or not isinstance(data.get("usage"), dict):
        raise ValueError(f"{what}: expected a mapping with a 'usage' mapping (UsageLedger.snapshot()).")
    version = data.get("version", SNAPSHOT_VERSION)
    if version != SNAPSHOT_VERSION:
        raise ValueError(f"{what}: unsupported version {version!r}; this build reads {SNAPSHOT_VERSION}.")
    usage = data["usage"]
    for role, stages in usage.items():
        if not isinstance(stages, dict):
            raise ValueError(f"{what}: usage.{role} must map stage names to usage.")
    return usage


def _bucket_from(raw: Any, where: str) -> _Bucket:
    if not isinstance(raw, dict):
        raise ValueError(f"ledger snapshot: {where} must be a mapping of {', '.join(_BUCKET_KEYS)}.")
    unknown = set(raw) - set(_BUCKET_KEYS)
    if unknown:
        raise ValueError(f"ledger snapshot: {where} has unknown keys {sorted(unknown)}.")
    return _Bucket(
        calls=int(raw.get("calls", 0)),
        input_tokens=int(raw.get("input_tokens", 0)),
        output_tokens=int(raw.get("output_tokens", 0)),
        cost_usd=float(raw.get("cost_usd", 0.0)),
        latency_s=float(raw.get("latency_s", 0.0)),
    )


class MeteredBackend:
    """Wraps a Backend for one role: checks the shared budget BEFORE each call
    (raising :class:`BudgetExceeded` without calling when calls, tokens or
    dollars are used up), forwards the call, prices a completion whose backend
    reported no cost from the price table (by the model it named), records
    usage in the shared ledger under
    (role, request.stage), and reports per-item failures to the run's
    :class:`~skillopt_core.run.failures.FailureMonitor`. Same name/model/describe as the inner backend, so
    the rollout cache key is unchanged by metering."""

    def __init__(
        self, inner: Backend, role: str, ledger: UsageLedger, budget: Budget, monitor: FailureMonitor | None = None
    ) -> None:
        self.inner = inner
        self.role = role
        self.ledger = ledger
        self.budget = budget
        self.monitor = monitor or FailureMonitor(None)

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def model(self) -> str:
        return self.inner.model

    def describe(self) -> str:
        return self.inner.describe()

    async def complete(self, request: CompletionRequest) -> Completion:
        """Forward ``request`` (with ``role`` filled in if empty) within the budget,
        reporting the outcome to the run's failure monitor."""
        if not request.role:
            request = replace(request, role=self.role)
        self.monitor.check()
        self.ledger.reserve_call(self.budget)
        try:
            completion = await self.inner.complete(request)
        except RequestFailed as exc:
            # A failed request was still sent (and may have cost money): it counts as a call.
            usage = _priced(exc.usage or Usage(), self.inner.model)
            self.ledger.commit_call(self.role, request.stage, Completion(text="", usage=usage))
            self.monitor.failed(exc)  # raises TooManyFailures when this one is one too many
            raise
        except BaseException:
            # Cancelled or failed calls produced nothing to record.
            self.ledger.release_call()
            raise
        if completion.usage.cost_usd is None:
            completion = replace(completion, usage=_priced(completion.usage, completion.model or self.inner.model))
        self.ledger.commit_call(self.role, request.stage, completion)
        self.monitor.succeeded()
        return completion


def _priced(usage: Usage, model: str | None) -> Usage:
    """``usage`` with the price table's cost when the backend reported none (still None if unlisted)."""
    if usage.cost_usd is not None:
        return usage
    return replace(usage, cost_usd=estimate_cost(model, usage.input_tokens, usage.output_tokens))
