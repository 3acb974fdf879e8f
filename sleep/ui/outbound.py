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

The filter is the one everything leaving the data directory passes
(:func:`sleep.redact.scrub_outbound`): every secret value a harvest of the
index ever redacted (remembered as keyed hashes, :mod:`sleep.redact.known`)
is replaced wherever it stands, then the harvester's redactor runs. The
remembered set is looked at again at most every :data:`RECHECK_SECONDS` (and
at once when the index in use changes); when it changed, every memoised
answer is dropped (:func:`forget`), so a secret harvested while the dashboard
runs is filtered from the next page on.

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
import time
from functools import lru_cache
from pathlib import Path
from typing import Any

__all__ = ["forget", "outbound", "scrub", "use_index"]

MEMO_CHARS = 512  # strings up to this length are memoised
MEMO_ENTRIES = 65_536

_HEX = re.compile(r"[0-9a-f]{7,64}")
_local = threading.local()
_generation = [0]  # bumped by forget(): caches built before it are not reused
RECHECK_SECONDS = 0.25  # how stale the remembered-secret set may be (a few stat calls per look)


class _Known:
    """The remembered secrets of the index in use, looked up again at most every RECHECK_SECONDS."""

    def __init__(self) -> None:
        self.index: Path | None = None  # None: the data directory's index (paths.index_path(), per call)
        self.lock = threading.Lock()
        self.path: Path | None = None
        self.checked = float("-inf")
        self.value: Any = None

    def current(self) -> Any:
        from sleep import paths
        from sleep.redact import known as known_secrets

        path = self.index or paths.index_path()
        now = time.monotonic()
        with self.lock:
            if path == self.path and now - self.checked < RECHECK_SECONDS:
                return self.value
            value = known_secrets.cached(path)  # may raise: an unreadable index lets nothing out
            changed = value is not self.value or path != self.path
            self.path, self.checked, self.value = path, now, value
        if changed:
            forget()
        return value


_known = _Known()


def use_index(path: Path | None) -> None:
    """Filter against the secrets remembered by the index at ``path`` (None: the data directory's)."""
    _known.index = Path(path) if path is not None else None
    _known.path = None
    forget()


def _filter(text: str) -> str:
    """The filter itself: remembered values, then the harvester's redactor (one per thread: it keeps
    per-call state)."""
    known = _known.value
    if known is not None:
        text, _ = known.scrub(text)
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
        _known.current()
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
    """Changes whenever :func:`forget` runs (also when the remembered secrets changed since the last
    look); caches of built pages include it in their keys."""
    try:
        _known.current()
    except Exception:  # an unreadable index: the next outbound() call refuses the text
        forget()
    return _generation[0]


def forget() -> None:
    """Drop every memoised answer (call it when the filter learns new secrets)."""
    _memo.cache_clear()
    _generation[0] += 1
