"""Following a run's ``events.jsonl`` as a server-sent event stream.

The engine appends one JSON line per event (its JSONL subscriber); the stream
polls the file's size, sends each new whole line as one SSE message whose
``id`` is the byte offset after it (so a reconnecting EventSource resumes
with ``Last-Event-ID`` and misses nothing), and ends with an ``end`` message
after ``run_end``. A comment line every few seconds keeps proxies and the
browser from timing the connection out. A stream also ends after
``max_seconds``; the browser reconnects on its own from the last id.

The file is read through the engine's run reader on every read (a link out
of the run directory ends the stream), and each event goes out with its texts
passed through the outbound filter (:func:`sleep.ui.outbound.scrub`) and its
activity line added (``line``, the engine's one :func:`event_line`, which the
page shows); a line that is not a JSON object is not sent.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import orjson

from skillopt_core.run.events import Event, event_line
from skillopt_core.run.reader import RunReader
from sleep.ui.outbound import outbound, scrub
from sleep.ui.runfiles import RunFileError, json_object

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


def _event(line: bytes) -> tuple[str, str] | None:
    """(the event as sent, its kind) for a JSON-object line, else None. The event goes out with
    its texts filtered and its activity line (``line``: :func:`skillopt_core.run.events.event_line`
    of the filtered event, the line the page showed for the last event when it was served)."""
    e = json_object(line)
    if e is None:
        return None
    try:
        shown = scrub(e)
        typed = Event.from_dict(shown)
        text = orjson.dumps({**shown, "line": outbound(event_line(typed))}, option=orjson.OPT_NON_STR_KEYS).decode()
    except (RecursionError, orjson.JSONEncodeError):  # nested deeper than a page would ever show
        return None
    return text, typed.kind


async def follow(run: Path, offset: int, *, poll: float = 0.25, heartbeat: float = 10.0,
                 max_seconds: float = 600.0) -> AsyncIterator[str]:
    """SSE messages for the lines of the run's ``events.jsonl`` after ``offset``, until ``run_end``,
    ``max_seconds``, or the file being refused (:mod:`sleep.ui.runfiles`)."""
    yield "retry: 1000\n\n"
    started = last_sent = time.monotonic()
    while True:
        try:
            items, offset = RunReader(run).event_lines(offset, 8 << 20)
        except RunFileError:
            return
        for end_offset, line in items:
            sent = _event(line)
            if sent is None:
                continue
            text, kind = sent
            yield sse(text, id=end_offset)
            last_sent = time.monotonic()
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
