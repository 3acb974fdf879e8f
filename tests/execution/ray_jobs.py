"""Job functions for the executor tests (shipped to Ray workers by value)."""

from __future__ import annotations

import os
from pathlib import Path


def add(a: int, b: int) -> int:
    return a + b


def fail(message: str) -> None:
    raise ValueError(message)


def die_once(marker: str) -> str:
    """Kill this worker process the first time; succeed when retried."""
    path = Path(marker)
    if not path.exists():
        path.write_text("died", encoding="utf-8")
        os._exit(1)
    return "survived"


def always_die() -> None:
    os._exit(1)


def worker_pid() -> int:
    return os.getpid()
