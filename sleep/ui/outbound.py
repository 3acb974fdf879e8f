"""The one door between what SkillOpt stored and what a dashboard page shows.

Run directories, proposals, nights and mined tasks hold text that came from
transcripts and model replies: a secret the harvest missed, or one a model
echoed, would otherwise be printed on a page (and sent over the network when
the dashboard listens beyond loopback). Every such text passes through
:func:`outbound` before it is rendered; nothing else in ``sleep.ui`` decides
what may leave. The page builders apply it to the texts they display (see
:mod:`sleep.ui.coerce`, :mod:`sleep.ui.rundata`, :mod:`sleep.ui.data`,
:mod:`sleep.ui.review_pages`, :mod:`sleep.ui.live`): typed view values are
built from the files, and each of their strings goes through here once.

Today the filter is the harvester's redactor (:class:`sleep.redact.Redactor`).
A stronger one (for instance one that also knows the secrets the harvester has
redacted before) replaces the body of :func:`_filter`; when what it knows
changes, call :func:`forget` so no page keeps an answer it gave earlier.

Cost: the redactor reads about 1 MB/s of prose and ~10-20 µs per short string,
so short strings (most texts of a page repeat: stage names, actions, roles)
are memoised, and the readers of the run directory cache what they built per
file (:mod:`sleep.ui.runfiles`), so a page redacts only what changed since it
was last shown.
"""

from __future__ import annotations

import dataclasses
import threading
from functools import lru_cache
from typing import Any

__all__ = ["forget", "outbound", "scrub"]

MEMO_CHARS = 512  # strings up to this length are memoised
MEMO_ENTRIES = 65_536

_local = threading.local()
_generation = [0]  # bumped by forget(): caches built before it are not reused


def _filter(text: str) -> str:
    """The filter itself: the harvester's redactor (one per thread: it keeps per-call state)."""
    redactor = getattr(_local, "redactor", None)
    if redactor is None:
        from sleep.redact import Redactor

        redactor = _local.redactor = Redactor()
    return redactor.redact(text)


@lru_cache(maxsize=MEMO_ENTRIES)
def _memo(text: str) -> str:
    return _filter(text)


def outbound(text: str) -> str:
    """``text`` as a page may show it (secrets replaced by ``[REDACTED:<kind>]`` markers). Total: never raises."""
    if not text:
        return text
    try:
        return _memo(text) if len(text) <= MEMO_CHARS else _filter(text)
    except Exception:  # a filter that fails must not show the text it could not check
        return "[REDACTED: the text could not be checked]"


def scrub(value: Any) -> Any:
    """``value`` with every string inside it (dict keys, list items, dataclass fields) passed through
    :func:`outbound`; numbers, booleans and None unchanged."""
    if isinstance(value, str):
        return outbound(value)
    if isinstance(value, dict):
        return {scrub(k): scrub(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        items = [scrub(v) for v in value]
        return items if isinstance(value, list) else tuple(items)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {f.name: scrub(getattr(value, f.name)) for f in dataclasses.fields(value) if f.init}
        return dataclasses.replace(value, **changes)
    return value


def generation() -> int:
    """Changes whenever :func:`forget` runs; caches of built pages include it in their keys."""
    return _generation[0]


def forget() -> None:
    """Drop every memoised answer (call it when the filter learns new secrets)."""
    _memo.cache_clear()
    _generation[0] += 1
