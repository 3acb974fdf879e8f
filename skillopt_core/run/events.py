"""Typed events the trainer emits. Renderers (console, JSONL log, MCP progress)
subscribe; no layer parses another layer's printed text."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable


@dataclass(frozen=True)
class Event:
    @property
    def kind(self) -> str:
        name = type(self).__name__
        return "".join("_" + c.lower() if c.isupper() else c for c in name).lstrip("_")

    def to_dict(self) -> dict[str, Any]:
        return {"event": self.kind, **asdict(self)}


@dataclass(frozen=True)
class RunStarted(Event):
    run_id: str
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


@dataclass(frozen=True)
class RolloutDone(Event):
    step: int
    total_steps: int
    phase: str
    score: float
    n_items: int
    cached: int
    label: str = ""


@dataclass(frozen=True)
class PatchesGenerated(Event):
    step: int
    total_steps: int
    n_patches: int
    n_invalid_replies: int
    n_skipped_edits: int = 0


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
class BudgetStopped(Event):
    step: int
    message: str


@dataclass(frozen=True)
class RunEnd(Event):
    run_id: str
    run_dir: str
    status: str  # completed | budget_exhausted
    best_val: float | None
    initial_test: float | None
    best_test: float | None
    steps_done: int


Subscriber = Callable[[Event], None]


class EventBus:
    def __init__(self, subscribers: list[Subscriber] | None = None) -> None:
        self._subscribers: list[Subscriber] = list(subscribers or [])

    def subscribe(self, fn: Subscriber) -> None:
        self._subscribers.append(fn)

    def emit(self, event: Event) -> None:
        for fn in self._subscribers:
            fn(event)


class JsonlEventLog:
    """Appends every event as one JSON line (events.jsonl in the run directory)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)

    def __call__(self, event: Event) -> None:
        if isinstance(event, RolloutProgress):
            return  # progress ticks are for live displays, not the record
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(event.to_dict(), ensure_ascii=False, default=str) + "\n")
