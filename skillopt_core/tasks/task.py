"""Tasks, scores and the judge interface.

A task is a prompt (+ context, reference, tags). A judge turns a response into
a :class:`Score`: ``hard`` (0..1, pass/fail), ``soft`` (0..1, partial credit)
and one ``feedback`` sentence. The feedback is what the optimizer sees; it must
never reveal the judge's internals (regexes, gold answers).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable


@dataclass(frozen=True)
class Task:
    """One replayable item.

    ``judge`` is a judge spec (a dict with a ``type`` key, or a list of them,
    see :mod:`skillopt_core.tasks.judges`). ``reference`` holds gold data used by
    judges; it is shown to the optimizer only for train items, if at all.
    """

    id: str
    prompt: str
    context: str = ""
    reference: Any = None
    judge: Any = None
    tags: tuple[str, ...] = ()
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Score:
    hard: float
    soft: float
    feedback: str = ""

    def __post_init__(self) -> None:
        for name in ("hard", "soft"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"Score.{name} must be within 0..1, got {value}")

    @property
    def passed(self) -> bool:
        return self.hard >= 1.0


@runtime_checkable
class Judge(Protocol):
    """Scores one response. Never raises for a bad response: score it 0 and
    say why in ``feedback``. Raise only for systemic failure (e.g. the judge
    backend is unreachable)."""

    async def score(self, task: Task, response: str) -> Score: ...
