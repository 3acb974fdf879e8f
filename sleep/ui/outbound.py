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
import re
import threading
from functools import lru_cache
from typing import Any

__all__ = ["forget", "outbound", "scrub"]

MEMO_CHARS = 512  # strings up to this length are memoised
MEMO_ENTRIES = 65_536

_HEX = re.compile(r"[0-9a-f]{7,64}")
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


def scrub(value: Any, hashes: frozenset[str] = frozenset()) -> Any:
    """``value`` with every string inside it (dict keys, list items, dataclass fields) passed through
    :func:`outbound`; numbers, booleans and None unchanged.

    ``hashes``: names of fields (or dict keys) that hold hashes the library computed itself (a git
    commit, a sha256); a lowercase hex value there is kept as it is (the redactor would take a
    sha256 for a secret), any other value is filtered like the rest.
    """
    if isinstance(value, str):
        return outbound(value)
    if isinstance(value, dict):
        return {scrub(k): v if k in hashes and _is_hash(v) else scrub(v, hashes) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        items = [scrub(v, hashes) for v in value]
        return items if isinstance(value, list) else tuple(items)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {}
        for f in dataclasses.fields(value):
            if f.init:
                v = getattr(value, f.name)
                changes[f.name] = v if f.name in hashes and _is_hash(v) else scrub(v, hashes)
        return dataclasses.replace(value, **changes)
    return value


def _is_hash(value: Any) -> bool:
    return isinstance(value, str) and bool(_HEX.fullmatch(value))


def warm() -> None:
    """Import the filter now (about 0.1 s), so the first page does not pay for it."""
    import sleep.redact  # noqa: F401


def generation() -> int:
    """Changes whenever :func:`forget` runs; caches of built pages include it in their keys."""
    return _generation[0]


def forget() -> None:
    """Drop every memoised answer (call it when the filter learns new secrets)."""
    _memo.cache_clear()
    _generation[0] += 1
