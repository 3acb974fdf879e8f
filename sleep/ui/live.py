"""Following a run's ``events.jsonl`` as a server-sent event stream.

The engine appends one JSON line per event (its JSONL subscriber); the stream
polls the file's size, sends each new whole line as one SSE message whose
``id`` is the byte offset after it (so a reconnecting EventSource resumes
with ``Last-Event-ID`` and misses nothing), and ends with an ``end`` message
after ``run_end``. A comment line every few seconds keeps proxies and the
browser from timing the connection out. A stream also ends after
``max_seconds``; the browser reconnects on its own from the last id.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import AsyncIterator

import anyio

END_EVENTS = ("run_end",)


def sse(data: str, *, event: str | None = None, id: int | None = None) -> str:
    lines = []
    if event:
        lines.append(f"event: {event}")
    if id is not None:
        lines.append(f"id: {id}")
    lines += [f"data: {part}" for part in data.split("\n")]
    return "\n".join(lines) + "\n\n"


def parse_offset(*candidates: str | None) -> int:
    """The first candidate that is a non-negative integer (query ``from``, ``Last-Event-ID``), else 0."""
    for c in candidates:
        if c is not None and c.strip().isdigit():
            return int(c.strip())
    return 0


def _read_from(path: Path, offset: int) -> tuple[list[tuple[int, bytes]], int]:
    """Whole lines after ``offset``: (offset after the line, line) pairs, and the new offset."""
    try:
        with open(path, "rb") as fh:
            size = fh.seek(0, 2)
            if size < offset:  # the file was replaced (a new run in the same folder): start over
                offset = 0
            fh.seek(offset)
            data = fh.read(min(size - offset, 8 << 20))
    except OSError:
        return [], offset
    out = []
    pos = 0
    while True:
        nl = data.find(b"\n", pos)
        if nl < 0:
            break
        line = data[pos:nl].strip()
        pos = nl + 1
        if line:
            out.append((offset + pos, line))
    return out, offset + pos


async def follow(path: Path, offset: int, *, poll: float = 0.25, heartbeat: float = 10.0,
                 max_seconds: float = 600.0) -> AsyncIterator[str]:
    """SSE messages for the lines of ``path`` after ``offset``, until ``run_end`` or ``max_seconds``."""
    yield "retry: 1000\n\n"
    started = last_sent = time.monotonic()
    while True:
        items, offset = _read_from(path, offset)
        for end_offset, line in items:
            text = line.decode("utf-8", "replace")
            yield sse(text, id=end_offset)
            last_sent = time.monotonic()
            try:
                kind = json.loads(text).get("event")
            except (ValueError, AttributeError):
                kind = None
            if kind in END_EVENTS:
                yield sse("{}", event="end", id=end_offset)
                return
        now = time.monotonic()
        if now - started > max_seconds:
            return
        if now - last_sent > heartbeat:
            yield ": still following\n\n"
            last_sent = now
        await anyio.sleep(poll)
