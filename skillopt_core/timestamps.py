"""The one UTC timestamp format: ISO 8601 with milliseconds and a ``Z``
(``2026-12-06T03:17:00.123Z``), written by the run's events, the index, the
jobs, the scheduler and the harvest alike. It sorts as text in time order.

Standard library only: the Claude Code hook imports it and must stay light.
"""

from __future__ import annotations

import time
from datetime import datetime, timezone

__all__ = ["utc_iso", "utc_now", "utc_stamp_ms"]

_cache: tuple[int, str] = (0, "")


def utc_stamp_ms(ms: int) -> str:
    """Epoch milliseconds as the UTC timestamp."""
    secs, frac = divmod(ms, 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(secs)) + f".{frac:03d}Z"


def utc_now() -> str:
    """Now, as the UTC timestamp (cached per millisecond: the index stamps every row with it)."""
    global _cache
    ms = time.time_ns() // 1_000_000
    cached = _cache
    if cached[0] != ms:
        cached = _cache = (ms, utc_stamp_ms(ms))
    return cached[1]


def utc_iso(dt: datetime) -> str:
    """A datetime as the UTC timestamp (a naive one is local time, as ``datetime.astimezone`` reads it)."""
    dt = dt.astimezone(timezone.utc)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"
