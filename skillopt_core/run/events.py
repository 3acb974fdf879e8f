"""Typed events the trainer emits. Renderers (console, JSONL log, MCP progress,
dashboard) subscribe; no layer parses another layer's printed text.

Every event carries the run id and a UTC timestamp (``at``), stamped by the
:class:`EventBus` when it is emitted. A subscriber that raises is logged and
detached; it never stops the run.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import time
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import MISSING, asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from skillopt_core.timestamps import utc_now

log = logging.getLogger(__name__)


def _snake(name: str) -> str:
    return "".join("_" + c.lower() if c.isupper() else c for c in name).lstrip("_")


@dataclass(frozen=True, kw_only=True)
class Event:
    run_id: str = ""
    at: str = ""  # ISO 8601 UTC with milliseconds

    @property
    def kind(self) -> str:
        return _snake(type(self).__name__)

    def to_dict(self) -> dict[str, Any]:
        return {"event": self.kind, **asdict(self)}

    @staticmethod
    def from_dict(data: Any, problems: list[str] | None = None, where: str = "events.jsonl") -> Event:
        """The typed event of one ``events.jsonl`` line (``to_dict()`` of it). Lenient, never raising:
        unknown keys are ignored; a value of the wrong type is noted in ``problems`` (when given:
        ``events.jsonl, gate_decided: candidate is "high", not a number``) and read as the field's
        default (or a neutral value: 0, "", None, {}), like a field an older engine did not write
        yet; an unknown kind, or a line that is no object, is an :class:`OtherEvent` holding it."""
        noted = problems if problems is not None else []
        if not isinstance(data, Mapping):
            noted.append(f"{where}: a line is {show(data)}, not an event object")
            return OtherEvent()
        name = data.get("event")
        name = name if isinstance(name, str) else ""
        cls = _KINDS.get(name)
        if cls is None:
            return OtherEvent(name=name, data=dict(data), run_id=_str_or_empty(data.get("run_id")),
                              at=_str_or_empty(data.get("at")))
        values: dict[str, Any] = {}
        for f in fields(cls):
            none = (f.default if f.default is not MISSING else f.default_factory() if f.default_factory is not MISSING
                    else _NEUTRAL.get(str(f.type)))
            if f.name not in data:
                values[f.name] = none
                continue
            value, ok = _typed(str(f.type), data[f.name])
            if not ok:
                noted.append(f"{where}, {name}: {f.name} is {show(data[f.name])}, not {_EXPECTED[str(f.type)]}")
            values[f.name] = value if ok else none
        return cls(**values)


def show(value: Any, limit: int = 60) -> str:
    """A short rendering of a bad value for a problem line."""
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError):
        text = f"a {type(value).__name__}"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _str_or_empty(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _typed(annotation: str, value: Any) -> tuple[Any, bool]:
    """``value`` as a field annotated ``annotation`` holds it, and whether it had that type (an
    integral float is a whole number; a whole number is a number and stays one, so a line reads
    back as written)."""
    if annotation.endswith(" | None"):
        return (None, True) if value is None else _typed(annotation[:-7], value)
    if annotation == "int":
        if isinstance(value, float) and value.is_integer():
            return int(value), True
        return value, isinstance(value, int) and not isinstance(value, bool)
    if annotation == "float":
        return value, _is_number(value)
    if annotation == "str":
        return value, isinstance(value, str)
    if annotation == "bool":
        return value, isinstance(value, bool)
    if annotation.startswith("dict["):
        if not isinstance(value, Mapping):
            return None, False
        entry = {"dict[str, int]": "int", "dict[str, str]": "str"}.get(annotation)
        if entry is not None and not all(_typed(entry, v)[1] for v in value.values()):
            return None, False
        return dict(value), True
    return value, True


@dataclass(frozen=True)
class RunStarted(Event):
    env: str
    run_dir: str
    total_steps: int
    splits: dict[str, int]
    backends: dict[str, str]
    resumed_at_step: int = 0


@dataclass(frozen=True)
class StepStarted(Event):
    step: int
    total_steps: int
    epoch: int


@dataclass(frozen=True)
class RolloutStarted(Event):
    step: int
    total_steps: int
    phase: str  # train | val | test | slow_update
    n_items: int
    workers: int
    label: str = ""


@dataclass(frozen=True)
class RolloutProgress(Event):
    step: int
    phase: str
    done: int
    total: int
    label: str = ""


@dataclass(frozen=True)
class RolloutDone(Event):
    step: int
    total_steps: int
    phase: str
    score: float
    n_items: int
    cached: int
    label: str = ""
    failed: int = 0  # items scored 0 because their call failed


@dataclass(frozen=True)
class PatchesGenerated(Event):
    step: int
    total_steps: int
    n_patches: int
    n_invalid_replies: int
    n_skipped_edits: int = 0
    n_caller_edits: int = 0  # edits supplied by the caller that joined this step


@dataclass(frozen=True)
class EditsSelected(Event):
    step: int
    total_steps: int
    n_selected: int
    n_candidates: int
    budget: int
    budget_text: str


@dataclass(frozen=True)
class EditsApplied(Event):
    step: int
    total_steps: int
    outcomes: dict[str, int]


@dataclass(frozen=True)
class GateDecided(Event):
    step: int
    total_steps: int
    action: str  # accept | reject | no_change | accept_ungated
    reason: str
    current: float | None = None
    candidate: float | None = None
    n_evaluated: int = 0
    n_items: int = 0


@dataclass(frozen=True)
class BestChanged(Event):
    step: int
    source: str  # "initial", "step 3", "slow update after epoch 1"
    val: float
    previous: float | None
    reason: str


@dataclass(frozen=True)
class EpochEnd(Event):
    epoch: int
    num_epochs: int
    slow_update: dict[str, Any] = field(default_factory=dict)
    meta_notes: bool = False


@dataclass(frozen=True)
class Notice(Event):
    level: str  # info | warning
    text: str
    step: int = 0


@dataclass(frozen=True)
class RunStopped(Event):
    """The run stopped before finishing: budget_exhausted, cancelled or failed.
    ``message`` says why and how to resume."""

    step: int
    status: str
    message: str


@dataclass(frozen=True)
class RunEnd(Event):
    run_dir: str
    status: str  # completed | budget_exhausted | cancelled | failed
    best_val: float | None
    initial_test: float | None
    best_test: float | None
    steps_done: int
    best_source: str = ""
    error: str = ""


@dataclass(frozen=True)
class OtherEvent(Event):
    """An event line of a kind this build does not know (a newer engine's), kept as read."""

    name: str = ""
    data: dict[str, Any] = field(default_factory=dict)

    @property
    def kind(self) -> str:
        return self.name

    def to_dict(self) -> dict[str, Any]:
        return dict(self.data)


_KINDS: dict[str, type[Event]] = {}
_NEUTRAL: dict[str, Any] = {"int": 0, "str": "", "float": 0.0, "bool": False, "dict[str, int]": {},
                            "dict[str, str]": {}, "dict[str, Any]": {}}
_EXPECTED = {"int": "a whole number", "float": "a number", "float | None": "a number", "str": "text",
             "bool": "true or false", "dict[str, int]": "an object of whole numbers",
             "dict[str, str]": "an object of texts", "dict[str, Any]": "an object"}


_KINDS.update((_snake(cls.__name__), cls) for cls in (
    RunStarted, StepStarted, RolloutStarted, RolloutProgress, RolloutDone, PatchesGenerated, EditsSelected,
    EditsApplied, GateDecided, BestChanged, EpochEnd, Notice, RunStopped, RunEnd))


def score_text(value: Any) -> str:
    """A score as the event lines show it (``0.75``; ``-`` when there is none, or NaN: not evaluated)."""
    try:
        return f"{value:.2f}" if _is_number(value) and math.isfinite(value) else "-"
    except OverflowError:  # an integer too large for a float
        return "-"


_LINES: dict[type[Event], Callable[[Any, str], str]] = {
    RunStarted: lambda e, _: (f"Run {e.run_id} ({e.env}): {e.total_steps} steps"
                              + (f", resumed after step {e.resumed_at_step}" if e.resumed_at_step else "")),
    StepStarted: lambda e, where: f"{where} started (epoch {e.epoch})",
    RolloutDone: lambda e, where: (f"{where or '[Eval]'} {e.label or e.phase} score {score_text(e.score)} over "
                                   f"{e.n_items} items" + (f", {e.failed} failed" if e.failed else "")
                                   + ("; the optimizer is reflecting on the results…" if e.phase == "train" else "")),
    RolloutStarted: lambda e, where: f"{where or '[Eval]'} rollout ({e.label or e.phase}): {e.n_items} items",
    RolloutProgress: lambda e, where: (f"{where or '[Eval]'} rollout ({e.label or e.phase}): {e.done} of {e.total} "
                                       "items done"),
    PatchesGenerated: lambda e, where: f"{where} {e.n_patches} edit patches generated",
    EditsSelected: lambda e, where: f"{where} selected {e.n_selected} of {e.n_candidates} edits ({e.budget_text})",
    EditsApplied: lambda e, where: (f"{where} update: {e.outcomes or 'no edits'}"
                                    + ("; the gate is scoring the candidate on val…" if e.outcomes.get("applied")
                                       else "")),
    GateDecided: lambda e, where: (f"{where} gate: {e.action} (candidate {score_text(e.candidate)} vs current "
                                   f"{score_text(e.current)}): {e.reason}"),
    BestChanged: lambda e, _: f"[Best] {e.source}: {e.reason}",
    EpochEnd: lambda e, _: f"[Epoch {e.epoch}/{e.num_epochs}] ended",
    Notice: lambda e, _: f"[{e.level or 'info'}] {e.text}",
    RunStopped: lambda e, _: f"[Stopped] {e.status}: {e.message}",
    RunEnd: lambda e, _: (f"Done ({e.status}) after {e.steps_done} step{'' if e.steps_done == 1 else 's'}; "
                          f"best val {score_text(e.best_val)}"),
}


def event_line(e: Event) -> str:
    """One short line for an event, the same wherever a run is followed (MCP progress and job
    views, the dashboard's activity line): ``[Step 2/8] gate: accept (candidate 0.75 vs current
    0.62): ...``."""
    step, total = getattr(e, "step", None), getattr(e, "total_steps", None)
    if step and total:
        where = f"[Step {step}/{total}]"
    elif step:
        where = f"[Step {step}]"
    elif step == 0 and total:
        where = "[Test]" if getattr(e, "phase", "") == "test" else "[Setup]"
    else:
        where = ""
    render = _LINES.get(type(e))
    return render(e, where) if render is not None else (e.kind or "?")


Subscriber = Callable[[Event], None]


class EventBus:
    """Delivers each event, stamped with the run id and time, to every subscriber in order."""

    def __init__(self, subscribers: list[Subscriber] | None = None, run_id: str = "") -> None:
        self._subscribers: list[Subscriber] = list(subscribers or [])
        self.run_id = run_id

    def subscribe(self, fn: Subscriber) -> None:
        self._subscribers.append(fn)

    def unsubscribe(self, fn: Subscriber) -> None:
        if fn in self._subscribers:
            self._subscribers.remove(fn)

    def emit(self, event: Event) -> Event:
        event = replace(event, run_id=event.run_id or self.run_id, at=event.at or utc_now())
        broken: list[tuple[Subscriber, Exception]] = []
        for fn in list(self._subscribers):
            try:
                fn(event)
            except Exception as exc:  # a renderer's bug must not stop training
                log.warning("event subscriber %r raised %s; detached", fn, exc, exc_info=True)
                self.unsubscribe(fn)
                broken.append((fn, exc))
        for fn, error in broken:
            self.emit(Notice("warning", f"an event subscriber ({_name(fn)}) raised {type(error).__name__}: {error}; "
                                        "it was detached and the run goes on"))
        return event


def _name(fn: Subscriber) -> str:
    return getattr(fn, "__qualname__", None) or type(fn).__name__


PROGRESS_EVERY = 1.0  # seconds between the progress ticks events.jsonl keeps of one rollout


class JsonlEventLog:
    """Appends every event as one JSON line (events.jsonl in the run directory).

    Progress ticks (:class:`RolloutProgress`) are kept sparsely, for a dashboard following
    the file: one no sooner than :data:`PROGRESS_EVERY` seconds after the rollout started or
    the last one kept, and never the last tick (``rollout_done`` follows). A rollout
    finishing within a second leaves none."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._progress_at = time.monotonic()

    def __call__(self, event: Event) -> None:
        if isinstance(event, RolloutStarted):
            self._progress_at = time.monotonic()
        elif isinstance(event, RolloutProgress):
            now = time.monotonic()
            if event.done >= event.total or now - self._progress_at < PROGRESS_EVERY:
                return
            self._progress_at = now
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(event.to_dict(), ensure_ascii=False, default=str) + "\n")


class EventStream:
    """A subscriber that an ``async for`` can read: events in order, ending after
    :class:`RunEnd`. Safe to feed from the event loop's thread only."""

    def __init__(self) -> None:
        self._queue: asyncio.Queue[Event | None] = asyncio.Queue()

    def __call__(self, event: Event) -> None:
        self._queue.put_nowait(event)
        if isinstance(event, RunEnd):
            self._queue.put_nowait(None)

    def close(self) -> None:
        self._queue.put_nowait(None)

    def __aiter__(self) -> AsyncIterator[Event]:
        return self

    async def __anext__(self) -> Event:
        item = await self._queue.get()
        if item is None:
            raise StopAsyncIteration
        return item
