"""One line of the runs list, read cheaply from a run directory (through the engine's run reader).

The list reads ``summary.json``, ``config.yaml`` (:mod:`sleep.ui.runconfig`,
for the config columns) and the first and last lines of ``events.jsonl`` only
(never ``history.json``). The last event decides the
status: ``run_end`` gives its status (a ``skillopt eval`` or ``compare`` run has none: the
summary it writes last, without a status, says it finished); without one the run is going, and its
events are folded incrementally (a visit reads only the bytes added since
the last one) for its step and best val score. A run silent for
:data:`STALL_SECONDS` without a ``run_end`` is shown as interrupted.

Files are opened through the engine's run reader (a link out of the run
directory is not read); events come typed from it (:meth:`Event.from_dict`: a
value of the wrong type reads as none), the summary's values are coerced with
:mod:`sleep.ui.coerce`; texts pass through the outbound filter.
"""

from __future__ import annotations

import calendar
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from skillopt_core.run import events as ev
from skillopt_core.run.reader import RunReader
from sleep.ui import coerce as c
from sleep.ui.coerce import Ignore  # the list shows no problems: the run page does
from sleep.ui.labels import LABELS, Labels, read_labels
from sleep.ui.outbound import outbound
from sleep.ui.runconfig import RunConfig, read_config
from sleep.ui.runfiles import file_sig

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
    config: RunConfig = field(default_factory=RunConfig)  # config.yaml (the table's config columns)
    labels: Labels = field(default_factory=Labels)  # labels.json: name, tags, note, archived (the dashboard's)

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
    last_at: str | None = None

    def add(self, e: ev.Event) -> None:
        if isinstance(e, ev.RunStarted):
            self.started_at = self.started_at or outbound(e.at) or None
            self.env = outbound(e.env) or self.env
            self.total_steps = e.total_steps or self.total_steps
            self.step = max(self.step, e.resumed_at_step)
        elif isinstance(e, ev.RolloutDone) and e.label == "val baseline":
            self.initial_val = self.best_val = c.finite(e.score)
        elif isinstance(e, ev.BestChanged):
            self.best_val = c.finite(e.val)
        elif isinstance(e, ev.GateDecided):
            self.step = max(self.step, e.step)
        self.last_at = outbound(e.at) or self.last_at


# ----- the row -------------------------------------------------------------------------------

def row_sig(run: Path) -> tuple:
    """What the row depends on: the summary's, the events' and the config's file versions."""
    return (file_sig(run / RunReader.SUMMARY), file_sig(run / RunReader.EVENTS), file_sig(run / RunReader.CONFIG),
            file_sig(run / LABELS))


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
    p, where = Ignore(), "summary.json"
    reader = RunReader(path)
    summary = reader.summary()
    size, head, tail = reader.head_and_tail()
    started = head if isinstance(head, ev.RunStarted) else None
    row = RunRow(ref, env=outbound(started.env) if started and started.env else ref.env, status="unknown",
                 started_at=outbound(head.at) or None if head else None,
                 last_event_at=outbound(tail.at) or None if tail else None,
                 total_steps=started.total_steps or None if started else None,
                 config=read_config(path), labels=read_labels(path))
    if summary:
        usage = c.mapping(summary.get("usage"), p, where, "usage")
        num = lambda key: c.number(summary.get(key), p, where, key)  # noqa: E731
        whole = lambda key: c.integer(summary.get(key), p, where, key)  # noqa: E731
        calls = c.integer(usage.get("calls"), p, where, "usage.calls")
        tokens = (c.count(usage.get("input_tokens"), p, where, "usage.input_tokens")
                  + c.count(usage.get("output_tokens"), p, where, "usage.output_tokens")) if usage else None
        row = replace(row, status=c.text(summary.get("status"), p, where, "status") or "unknown",
                      steps_done=whole("steps_done"), total_steps=whole("total_steps") or row.total_steps,
                      initial_val=num("initial_val"), best_val=num("best_val"),
                      initial_test=num("initial_test"), best_test=num("best_test"),
                      accepted=whole("accepted"), rejected=whole("rejected"), calls=calls, tokens=tokens,
                      error=c.text(summary.get("error"), p, where, "error"))
    if summary is not None and "status" not in summary:
        # `skillopt eval` and `skillopt compare` have no run_end event: they end by writing their
        # summary, which (unlike a training run's) carries no status.
        return replace(row, status="completed"), None
    if tail is None or isinstance(tail, ev.RunEnd):
        if tail is not None:
            row = replace(row, status=outbound(tail.status) or row.status)
        return row, None
    # No run_end after the last start: the run is going (or its process died).
    fold = fold if fold is not None and fold.offset <= size else EventFold()
    new, fold.offset = reader.events(fold.offset)
    for e in new:
        fold.add(e)
    silent = (now or time.time()) - (_epoch_of(fold.last_at) or 0)
    status = "running" if silent < STALL_SECONDS else "interrupted"
    row = replace(row, status=status, steps_done=fold.step, total_steps=fold.total_steps or row.total_steps,
                  initial_val=fold.initial_val if fold.initial_val is not None else row.initial_val,
                  best_val=fold.best_val if fold.best_val is not None else row.best_val,
                  last_event_at=fold.last_at or row.last_event_at)
    return row, fold
