"""The shape a JSON record holds where a value is expected: read leniently, never raised on.

Transcripts, reports and configuration files written by other programs (or older versions)
may hold anything at a key; these give the object or list found there, else an empty one,
typed so that the code reading on needs no further check.
"""

from __future__ import annotations

from typing import Any


def as_dict(value: Any) -> dict[str, Any]:
    """``value`` when a record holds an object there, else an empty one."""
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    """``value`` when a record holds a list there, else an empty one."""
    return value if isinstance(value, list) else []


def as_str(value: Any) -> str:
    """``value`` when a record holds a string there, else an empty one."""
    return value if isinstance(value, str) else ""
