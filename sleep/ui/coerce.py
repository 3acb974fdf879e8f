"""Lenient typed reading of the run directory's JSON, for the pages.

The trainer writes well-typed files, but a run directory may be old, edited by
hand, half-written or hostile. The page builders never hand a parsed JSON
value to a template: they build typed values with these helpers, which take
whatever the file holds and return the expected type or nothing, noting each
value of the wrong type in a :class:`Problems` list that the page shows
("history.json, step 2: val_candidate is "abc", not a number"). Strings come
out through :func:`sleep.ui.outbound.outbound`, so a view value built here is
safe to display.
"""

from __future__ import annotations

import math
from typing import Any

from skillopt_core.run.record import show
from sleep.ui.outbound import outbound

MAX_PROBLEMS = 20


class Problems(list):
    """What a page could not read or had to leave out; at most :data:`MAX_PROBLEMS` kept, the rest counted."""

    def __init__(self) -> None:
        super().__init__()
        self.more = 0

    def add(self, text: str) -> None:
        if len(self) < MAX_PROBLEMS:
            super().append(outbound(text))
        else:
            self.more += 1

    def append(self, text: str) -> None:  # the engine's lenient records note their problems here
        self.add(text)

    def bad(self, where: str, key: str, value: Any, expected: str) -> None:
        self.add(f"{where}: {key} is {show(value)}, not {expected}")

    def extend_from(self, other: Problems) -> None:
        for p in other:
            self.add(p)
        self.more += other.more

    @property
    def lines(self) -> list[str]:
        return list(self) + ([f"… and {self.more} more"] if self.more else [])


class Ignore(Problems):
    """Problems nobody will read (the runs list: the run page reads the files again and says them)."""

    def add(self, text: str) -> None:
        self.more += 1


def number(value: Any, problems: Problems, where: str, key: str) -> float | None:
    """A finite float, or None (NaN is None: the trainer writes it for "not evaluated")."""
    if value is None:
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        f = float(value)
        if math.isnan(f):
            return None
        if math.isfinite(f):
            return f
    problems.bad(where, key, value, "a number")
    return None


def finite(value: float | None) -> float | None:
    """A score as a page shows it: NaN (the trainer's "not evaluated") and infinities are None."""
    try:
        return float(value) if value is not None and math.isfinite(value) else None
    except OverflowError:  # an integer too large for a float
        return None


def integer(value: Any, problems: Problems, where: str, key: str, default: int | None = None) -> int | None:
    if value is None:
        return default
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, float) and math.isfinite(value) and value == int(value):
        return int(value)
    problems.bad(where, key, value, "a whole number")
    return default


def count(value: Any, problems: Problems, where: str, key: str) -> int:
    """A whole number for a counter (0 when absent or wrong)."""
    n = integer(value, problems, where, key, 0)
    return n or 0


def text(value: Any, problems: Problems, where: str, key: str) -> str:
    """A displayable string ("" when absent); numbers are shown as written."""
    if value is None:
        return ""
    if isinstance(value, str):
        return outbound(value)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return outbound(str(value))
    problems.bad(where, key, value, "text")
    return ""


def flag(value: Any, problems: Problems, where: str, key: str) -> bool:
    if value is None:
        return False
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    problems.bad(where, key, value, "true or false")
    return False


def mapping(value: Any, problems: Problems, where: str, key: str) -> dict[Any, Any]:
    if value is None:
        return {}
    if isinstance(value, dict):
        return value
    problems.bad(where, key, value, "an object")
    return {}


def items(value: Any, problems: Problems, where: str, key: str) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, list):
        return value
    problems.bad(where, key, value, "a list")
    return []


def records(value: Any, problems: Problems, where: str, key: str) -> list[dict[Any, Any]]:
    """The objects of a list (other items noted and left out)."""
    out = []
    for i, item in enumerate(items(value, problems, where, key)):
        if isinstance(item, dict):
            out.append(item)
        else:
            problems.bad(where, f"{key}[{i}]", item, "an object")
    return out


def texts(value: Any, problems: Problems, where: str, key: str) -> list[str]:
    out = []
    for i, v in enumerate(items(value, problems, where, key)):
        t = text(v, problems, where, f"{key}[{i}]")
        if t:
            out.append(t)
    return out
