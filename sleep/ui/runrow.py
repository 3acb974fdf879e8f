"""One line of the runs list, read cheaply from a run directory.

The list reads ``summary.json`` and the first and last lines of
``events.jsonl`` only (never ``history.json``). The last event decides the
status: ``run_end`` gives its status; without one the run is going, and its
events are folded incrementally (a visit reads only the bytes added since
the last one) for its step and best val score. A run silent for
:data:`STALL_SECONDS` without a ``run_end`` is shown as interrupted.
"""

from __future__ import annotations

import calendar
import json
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

if TYPE_CHECKING:
    from sleep.ui.runs import RunRef

STALL_SECONDS = 3600  # a run silent this long without a run_end is shown as interrupted
STATUS_LABELS = {"budget_exhausted": "budget stop"}


@dataclass(frozen=True)
class RunRow:
    """One line of the runs list (from the summary and the events' first and last lines)."""

    ref: RunRef
    env: str
    status: str  # running | interrupted | completed | budget_exhausted | cancelled | failed | unknown
    started_at: str | None = None
    last_event_at: str | None = None
    steps_done: int | None = None
    total_steps: int | None = None
    initial_val: float | None = None
    best_val: float | None = None
    initial_test: float | None = None
    best_test: float | None = None
    accepted: int | None = None
    rejected: int | None = None
    calls: int | None = None
    tokens: int | None = None
    error: str = ""

    @property
    def status_label(self) -> str:
        return STATUS_LABELS.get(self.status, self.status)

    @property
    def live(self) -> bool:
        return self.status == "running"


@dataclass
class EventFold:
    """What the events of a running run say so far (read incrementally)."""

    offset: int = 0
    started_at: str | None = None
    env: str | None = None
    total_steps: int | None = None
    step: int = 0
    initial_val: float | None = None
    best_val: float | None = None
    last: dict[str, Any] = field(default_factory=dict)

    def add(self, e: dict[str, Any]) -> None:
        kind = e.get("event")
        if kind == "run_started":
            self.started_at = self.started_at or e.get("at")
            self.env = e.get("env") or self.env
            self.total_steps = e.get("total_steps", self.total_steps)
            self.step = max(self.step, int(e.get("resumed_at_step") or 0))
        elif kind == "rollout_done" and e.get("label") == "val baseline":
            self.initial_val = self.best_val = e.get("score")
        elif kind == "best_changed":
            self.best_val = e.get("val")
        elif kind == "gate_decided":
            self.step = max(self.step, int(e.get("step") or 0))
        self.last = e


def read_events(path: Path, offset: int = 0) -> tuple[list[dict[str, Any]], int]:
    """The whole JSON lines of ``events.jsonl`` from ``offset``, and the offset after the last one.

    A line still being written (no newline yet) is left for the next read; a
    line that is not JSON is skipped (the run's own log has no such lines).
    """
    try:
        with open(path, "rb") as fh:
            fh.seek(offset)
            data = fh.read()
    except OSError:
        return [], offset
    end = data.rfind(b"\n")
    if end < 0:
        return [], offset
    out = []
    for line in data[: end + 1].splitlines():
        try:
            item = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if isinstance(item, dict):
            out.append(item)
    return out, offset + end + 1


def first_event(path: Path) -> dict[str, Any] | None:
    try:
        with open(path, "rb") as fh:
            line = fh.readline(1 << 20)
        item = json.loads(line)
        return item if isinstance(item, dict) else None
    except (OSError, ValueError):
        return None


def last_event(path: Path, size: int) -> dict[str, Any] | None:
    """The last complete line of ``events.jsonl`` (reads the last 4 KiB, or up to 1 MiB for a long line)."""
    for span in (4096, 1 << 20):
        try:
            with open(path, "rb") as fh:
                fh.seek(max(0, size - span))
                tail = fh.read(span)
        except OSError:
            return None
        lines = tail.rstrip(b"\n").split(b"\n")
        if len(lines) < 2 and size > span:
            continue  # the last line is longer than the span: read more
        for line in reversed(lines):
            try:
                item = json.loads(line)
            except ValueError:
                continue
            return item if isinstance(item, dict) else None
        return None
    return None


def _json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def file_sig(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size)


def _epoch_of(at: str | None) -> float | None:
    if not at:
        return None
    try:
        return float(calendar.timegm(time.strptime(at[:19], "%Y-%m-%dT%H:%M:%S")))
    except ValueError:
        return None


def build_row(ref: RunRef, fold: EventFold | None = None, now: float | None = None) -> tuple[RunRow, EventFold | None]:
    """The list row of one run; ``fold`` carries a running run's events between visits."""
    path = ref.path
    summary = _json(path / "summary.json")
    events = path / "events.jsonl"
    sig = file_sig(events)
    head = first_event(events) if sig else None
    tail = last_event(events, sig[1]) if sig else None
    row = RunRow(ref, env=(head or {}).get("env") or ref.env, status="unknown",
                 started_at=(head or {}).get("at"), last_event_at=(tail or {}).get("at"),
                 total_steps=(head or {}).get("total_steps"))
    if summary:
        usage = summary.get("usage") or {}
        row = replace(row, status=summary.get("status") or "unknown", steps_done=summary.get("steps_done"),
                      total_steps=summary.get("total_steps", row.total_steps),
                      initial_val=summary.get("initial_val"), best_val=summary.get("best_val"),
                      initial_test=summary.get("initial_test"), best_test=summary.get("best_test"),
                      accepted=summary.get("accepted"), rejected=summary.get("rejected"),
                      calls=usage.get("calls"),
                      tokens=(usage.get("input_tokens") or 0) + (usage.get("output_tokens") or 0) if usage else None,
                      error=summary.get("error") or "")
    if tail is None or tail.get("event") == "run_end":
        if tail is not None:
            row = replace(row, status=tail.get("status") or row.status)
        return row, None
    # No run_end after the last start: the run is going (or its process died).
    fold = fold if fold is not None and fold.offset <= (sig[1] if sig else 0) else EventFold()
    new, fold.offset = read_events(events, fold.offset)
    for e in new:
        fold.add(e)
    silent = (now or time.time()) - (_epoch_of(fold.last.get("at")) or 0)
    status = "running" if silent < STALL_SECONDS else "interrupted"
    row = replace(row, status=status, steps_done=fold.step, total_steps=fold.total_steps or row.total_steps,
                  initial_val=fold.initial_val if fold.initial_val is not None else row.initial_val,
                  best_val=fold.best_val if fold.best_val is not None else row.best_val,
                  last_event_at=fold.last.get("at") or row.last_event_at)
    return row, fold
