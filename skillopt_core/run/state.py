"""What a run keeps between steps (``state.json``) and what it reports at the end.

The trainer never mutates the state in place while a step or an epoch
boundary is running: it works on a copy and commits it when the whole unit has
finished. A stop anywhere inside (budget, cancellation, a systemic failure, a
crash) therefore leaves the last committed state on disk, and resuming redoes
the interrupted unit from the start -- with deterministic backends the history
is then the same as an uninterrupted run's.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

STATE_VERSION = 2

# Bounds of the optimizer-side memories (by size, not by a silent count cap):
# what state.json keeps, and how much of it one reflection prompt shows.
MEMORY_MAX_CHARS = 60_000
PROMPT_MEMORY_CHARS = 4_000


@dataclass
class TrainState:
    global_step: int  # steps finished
    epochs_done: int  # epoch boundaries finished
    initial_skill: str
    current_skill: str
    epoch_start_skill: str
    best_skill: str
    best_val: float | None
    best_source: str = "initial"
    best_reason: str = "the initial skill"
    initial_val: float | None = None
    # Per-item val scores of the current skill (None until the baseline ran).
    current_scores: dict[str, float] | None = None
    # Rejected edits (dicts of Edit.to_dict()), oldest first, across epochs.
    rejected: list[dict] = field(default_factory=list)
    # Edits that could not be applied: {"edit": {...}, "status": ..., "detail": ...}, oldest first.
    unapplied: list[dict] = field(default_factory=list)
    meta_notes: str = ""
    history: list[dict] = field(default_factory=list)
    ledger: dict = field(default_factory=dict)
    # Which round of val sample seeds the current skill's scores come from
    # (a new round after each accept when evaluation.remeasure is on).
    gate_round: int = 0
    # Val items whose scores come from an older round than gate_round (item id → round), after
    # accepts re-measured only on the items that differed (evaluation.remeasure_scope: disagreements).
    val_rounds: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"version": STATE_VERSION, **self.__dict__}

    @classmethod
    def from_dict(cls, data: dict) -> TrainState:
        data = dict(data)
        version = data.pop("version", None)
        if version != STATE_VERSION:
            raise ValueError(
                f"state.json version {version} is not supported by this build (expected {STATE_VERSION}); "
                "start a new run, or resume it with the version of SkillOpt that created it."
            )
        return cls(**data)

    def copy(self) -> TrainState:
        return copy.deepcopy(self)

    def remember(self, attr: str, items: list[dict]) -> None:
        """Append to a bounded memory (``rejected`` or ``unapplied``), dropping the oldest past the size bound."""
        memory = getattr(self, attr) + list(items)
        while len(memory) > 1 and sum(len(str(m)) for m in memory) > MEMORY_MAX_CHARS:
            memory.pop(0)
        setattr(self, attr, memory)


@dataclass(frozen=True)
class RunSummary:
    run_id: str
    run_dir: str
    status: str  # completed | budget_exhausted | cancelled | failed
    steps_done: int
    total_steps: int
    initial_val: float | None
    best_val: float | None
    initial_test: float | None
    best_test: float | None
    usage: dict
    accepted: int
    rejected: int
    best_source: str = "initial"
    best_reason: str = ""
    error: str = ""
    failed_items: int = 0
    # The preflight estimate made when the run (or this resume of it) started: skillopt_core.run.estimate.
    preflight: dict | None = None

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)
