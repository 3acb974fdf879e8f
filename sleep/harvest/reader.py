"""Reading transcript files fast and safely: lines, JSON, and what was skipped.

Files are read in binary through a large buffer. A line is only decoded when a
source decides to keep it (sources run cheap byte checks first). A line longer
than ``max_line_bytes`` is never held in memory: it is drained in small pieces,
counted as ``line_too_large`` and skipped, so memory stays flat whatever the
corpus holds. A last line without its newline is an incomplete write: it is
counted (``incomplete_last_line``) and left for the next harvest, whose cursor
starts at the end of the last complete line.

Every line read ends up in exactly one bucket, so the counts add up::

    lines_total == lines_kept + lines_ignored + sum(skipped_lines.values())
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, BinaryIO

import orjson

from sleep.redact import Redactor

BUFFER_BYTES = 1 << 20
DEFAULT_MAX_LINE_BYTES = 16 << 20
_DRAIN_BYTES = 1 << 20
_MAX_EXAMPLES = 3


_BOM = b"\xef\xbb\xbf"
_LONE_SURROGATE_RX = re.compile(r"[\ud800-\udfff]")


def _without_surrogates(value: Any) -> Any:
    """``value`` with every lone surrogate in its strings (keys too) replaced by U+FFFD."""
    if isinstance(value, str):
        return _LONE_SURROGATE_RX.sub("\ufffd", value) if _LONE_SURROGATE_RX.search(value) else value
    if isinstance(value, dict):
        return {_without_surrogates(k): _without_surrogates(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_without_surrogates(v) for v in value]
    return value


def loads_lenient(data: bytes) -> Any:
    """``orjson.loads``, and what it refuses but a host really writes: a leading UTF-8
    byte order mark (PowerShell-written files) and lone surrogate escapes such as
    ``\\ud800`` (Node writes them when it cuts an emoji in two), which become U+FFFD.
    Raises ``orjson.JSONDecodeError`` (a ValueError) for anything else."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        if data.startswith(_BOM):
            data = data[len(_BOM):]
            try:
                return orjson.loads(data)
            except orjson.JSONDecodeError:
                pass
        if b"\\u" not in data and b"\\U" not in data:
            raise
        try:
            return _without_surrogates(json.loads(data.decode("utf-8")))
        except (ValueError, UnicodeDecodeError, RecursionError):
            raise orjson.JSONDecodeError("invalid JSON", "", 0) from None


@dataclass
class ParseStats:
    """Counters for one harvest. ``examples`` keeps a few ``path@offset`` per reason;
    ``lines_skipped_undecoded`` counts the ignored lines a source judged from their
    bytes alone (never decoded)."""

    lines_total: int = 0
    lines_kept: int = 0
    lines_ignored: int = 0
    lines_skipped_undecoded: int = 0
    bytes_read: int = 0
    skipped_lines: Counter = field(default_factory=Counter)
    skipped_files: Counter = field(default_factory=Counter)
    records_with_unknown_fields: int = 0
    examples: dict[str, list[str]] = field(default_factory=dict)
    # What the per-turn action extraction saw and dropped (sleep.harvest.sources.actions).
    actions: Counter = field(default_factory=Counter)

    def skip_line(self, reason: str, where: str) -> None:
        self.lines_total += 1
        self.skipped_lines[reason] += 1
        self._example(reason, where)

    def skip_file(self, reason: str, where: str) -> None:
        self.skipped_files[reason] += 1
        self._example(reason, where)

    def _example(self, reason: str, where: str) -> None:
        bucket = self.examples.setdefault(reason, [])
        if len(bucket) < _MAX_EXAMPLES:
            # File names need not be UTF-8; the report must always serialise.
            bucket.append(where.encode("utf-8", "replace").decode("utf-8"))

    def kept(self) -> None:
        self.lines_total += 1
        self.lines_kept += 1

    def ignored(self) -> None:
        self.lines_total += 1
        self.lines_ignored += 1

    def skipped_undecoded(self) -> None:
        """An ignored line that was judged from its bytes and never decoded."""
        self.lines_total += 1
        self.lines_ignored += 1
        self.lines_skipped_undecoded += 1

    def merge(self, other: ParseStats) -> None:
        """Add the counts of ``other`` (a worker's stats for one file) to these."""
        for name in ("lines_total", "lines_kept", "lines_ignored", "lines_skipped_undecoded", "bytes_read",
                     "records_with_unknown_fields"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.skipped_lines.update(other.skipped_lines)
        self.skipped_files.update(other.skipped_files)
        self.actions.update(other.actions)
        for reason, where in other.examples.items():
            for w in where:
                self._example(reason, w)

    def counts_add_up(self) -> bool:
        return self.lines_total == self.lines_kept + self.lines_ignored + sum(self.skipped_lines.values())


@dataclass
class ParseContext:
    """What a source needs while parsing: counters, the redactor and limits."""

    stats: ParseStats = field(default_factory=ParseStats)
    redactor: Redactor = field(default_factory=Redactor)
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES

    def loads(self, data: bytes, where: str) -> dict[str, Any] | None:
        """Parse one JSON object, or count why not (``invalid_json``, ``non_utf8``,
        ``not_an_object``) and return None. The caller counts kept/ignored."""
        try:
            obj = loads_lenient(data)
        except orjson.JSONDecodeError:
            try:
                data.decode("utf-8")
            except UnicodeDecodeError:
                self.stats.skip_line("non_utf8", where)
                return None
            self.stats.skip_line("invalid_json", where)
            return None
        if not isinstance(obj, dict):
            self.stats.skip_line("not_an_object", where)
            return None
        return obj


class Line:
    """One complete line: its bytes, the offset of its first byte and the offset just
    past its newline."""

    __slots__ = ("data", "end", "start")

    def __init__(self, data: bytes, start: int, end: int) -> None:
        self.data = data
        self.start = start
        self.end = end


class LineReader:
    """Complete lines of ``f`` from byte ``start``; see the module docstring.

    Iterating yields :class:`Line` objects. Oversized lines and the incomplete
    tail are counted here and not yielded; blank lines are counted as ignored
    and not yielded. ``offset`` is always just past the last complete line
    consumed (the next harvest's starting point); ``bytes_read`` in the stats
    grows by what was read.
    """

    def __init__(self, f: BinaryIO, start: int, ctx: ParseContext, path: str) -> None:
        self.f = f
        self.offset = start
        self.ctx = ctx
        self.path = path

    def __iter__(self) -> Iterator[Line]:
        stats = self.ctx.stats
        limit = self.ctx.max_line_bytes + 1
        readline = self.f.readline
        while True:
            pos = self.offset
            data = readline(limit)
            if not data:
                return
            if data[-1:] != b"\n":
                if len(data) < limit:
                    stats.bytes_read += len(data)
                    stats.skip_line("incomplete_last_line", f"{self.path}@{pos}")
                    return
                # Oversized: drain to the newline without keeping the bytes.
                size = len(data)
                del data
                complete = False
                while True:
                    part = readline(_DRAIN_BYTES)
                    if not part:
                        break
                    size += len(part)
                    if part[-1:] == b"\n":
                        complete = True
                        break
                stats.bytes_read += size
                if not complete:
                    stats.skip_line("incomplete_last_line", f"{self.path}@{pos}")
                    return
                stats.skip_line("line_too_large", f"{self.path}@{pos}")
                self.offset = pos + size
                continue
            n = len(data)
            stats.bytes_read += n
            self.offset = end = pos + n
            if n <= 2 and not data.strip():
                stats.ignored()
                continue
            yield Line(data, pos, end)


def open_binary(path: str) -> BinaryIO:
    """Open a transcript for reading with a large buffer (tests patch this to fail)."""
    return open(path, "rb", buffering=BUFFER_BYTES)
