"""Readers for judge option values, shared by the built-in judges (and free
for plugin judges to use). Each raises :class:`JudgeError` naming the judge
type, the option and what a valid value looks like."""

from __future__ import annotations

from typing import Any

from skillopt_core.tasks.judges.spec import JudgeError

__all__ = ["bool_option", "one_or_many", "positive_int", "string_list"]


def bool_option(kind: str, opts: dict[str, Any], key: str) -> bool:
    value = opts.get(key, False)
    if not isinstance(value, bool):
        raise JudgeError(f"Judge '{kind}' option '{key}' must be true or false, got {value!r}.")
    return value


def string_list(value: Any) -> tuple[str, ...] | None:
    """A string, a number or a list of them as a tuple of strings; None if ``value`` is none of those."""
    if isinstance(value, str):
        return (value,)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return (str(value),)
    if isinstance(value, (list, tuple)) and all(
        isinstance(v, (str, int, float)) and not isinstance(v, bool) for v in value
    ):
        return tuple(str(v) for v in value)
    return None


def one_or_many(kind: str, opts: dict[str, Any], one: str, many: str, strip: bool = False) -> tuple[str, ...]:
    """The strings of option ``one`` (a string) and ``many`` (a list of them); at least one is needed.
    ``strip``: trim the surrounding space of each (patterns, where it means nothing)."""
    def clean(value: Any) -> str:
        return value.strip() if strip and isinstance(value, str) else value

    values: list[str] = []
    if one in opts:
        if not isinstance(opts[one], str) or not clean(opts[one]):
            raise JudgeError(f"Judge '{kind}' option '{one}' must be a non-empty string.")
        values.append(clean(opts[one]))
    if many in opts:
        raw = opts[many]
        if not isinstance(raw, (list, tuple)) or not raw or not all(isinstance(v, str) and clean(v) for v in raw):
            raise JudgeError(f"Judge '{kind}' option '{many}' must be a non-empty list of non-empty strings.")
        values += [clean(v) for v in raw]
    if not values:
        raise JudgeError(f"Judge '{kind}' needs '{one}' (one string) or '{many}' (a list of strings).")
    return tuple(values)


def positive_int(kind: str, opts: dict[str, Any], key: str, required: bool, default: int = 0) -> int:
    if key not in opts:
        if required:
            raise JudgeError(f"Judge '{kind}' needs '{key}', a positive whole number.")
        return default
    value = opts[key]
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise JudgeError(f"Judge '{kind}' option '{key}' must be a positive whole number, got {value!r}.")
    return value
