"""Telling one failed item from a failed run.

Every model call of a run goes through :class:`~skillopt_core.run.budget.MeteredBackend`,
which reports to one :class:`FailureMonitor`. A :class:`RequestFailed` (a
timeout, a refusal, a CLI exit code) is one item's problem and the caller
scores it 0; but ``limit`` of them in a row, with no call succeeding in
between, means the backend itself is not working, and the monitor turns the
next one into :class:`TooManyFailures`, a systemic :class:`BackendError` that
stops the run cleanly (and resumably). Once tripped it refuses every later
call at once, so concurrent calls do not keep hammering a dead endpoint.
"""

from __future__ import annotations

import threading

from skillopt_core.backends import BackendError

__all__ = ["FailureMonitor", "TooManyFailures"]


class TooManyFailures(BackendError):
    """Too many model calls failed in a row: a systemic failure."""


class FailureMonitor:
    def __init__(self, limit: int | None = 5) -> None:
        if limit is not None and limit < 1:
            raise ValueError(f"the consecutive-failure limit must be >= 1 or None, got {limit}")
        self.limit = limit
        self.consecutive = 0
        self.total = 0
        self._tripped: str | None = None
        self._lock = threading.Lock()

    def check(self) -> None:
        """Raise :class:`TooManyFailures` if the monitor has tripped."""
        with self._lock:
            if self._tripped is not None:
                raise TooManyFailures(self._tripped)

    def succeeded(self) -> None:
        with self._lock:
            self.consecutive = 0

    def failed(self, error: BaseException) -> None:
        """Count one per-item failure; raise :class:`TooManyFailures` when it is one too many."""
        with self._lock:
            self.consecutive += 1
            self.total += 1
            if self._tripped is None and self.limit is not None and self.consecutive >= self.limit:
                self._tripped = (
                    f"{self.consecutive} model calls in a row failed; the backend looks unavailable "
                    f"(last error: {error}). Fix the backend (key, endpoint, CLI login), then resume the run."
                )
            tripped = self._tripped
        if tripped is not None:
            raise TooManyFailures(tripped) from error
