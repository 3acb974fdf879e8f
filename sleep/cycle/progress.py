"""Progress lines for a night whose output is not a terminal (the scheduler's log).

On a terminal the core's console draws a progress bar; in a log file it
prints nothing between a rollout's start and its end, so a slow night looks
hung. This subscriber prints plain lines instead: each rollout at every
quarter of its items with the time it took so far and an estimate of what is
left of it, and each step's start with an estimate of the night's remaining
training time (the mean time of the steps done so far times the steps left).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from skillopt_core import events


class PlainProgress:
    """A :data:`events.Subscriber` printing progress lines through ``say``."""

    def __init__(self, say: Callable[[str], None], clock: Callable[[], float] = time.monotonic) -> None:
        self.say = say
        self.clock = clock
        self.total_steps = 0
        self.steps_started: list[float] = []
        self.rollout_started: dict[str, float] = {}
        self.reported: dict[str, int] = {}

    def __call__(self, event: events.Event) -> None:
        now = self.clock()
        if isinstance(event, events.RunStarted):
            self.total_steps = event.total_steps
        elif isinstance(event, events.StepStarted):
            self.total_steps = event.total_steps or self.total_steps
            self.steps_started.append(now)
            done = len(self.steps_started) - 1
            if done and self.total_steps:
                per_step = (now - self.steps_started[0]) / done
                left = per_step * (self.total_steps - done)
                self.say(f"[Progress] step {event.step}/{self.total_steps} starts; {done} step"
                         f"{'' if done == 1 else 's'} took {per_step:.0f} s each, about {left:.0f} s of training left")
        elif isinstance(event, events.RolloutStarted):
            key = self._key(event.step, event.phase, event.label)
            self.rollout_started[key] = now
            self.reported[key] = 0
        elif isinstance(event, events.RolloutProgress) and event.total:
            key = self._key(event.step, event.phase, event.label)
            quarter = (4 * event.done) // event.total
            if quarter <= self.reported.get(key, 0) or event.done == 0:
                return
            self.reported[key] = quarter
            started = self.rollout_started.get(key, now)
            elapsed = now - started
            left = elapsed / event.done * (event.total - event.done)
            what = event.label or event.phase
            tail = f", about {left:.0f} s left" if event.done < event.total else ""
            self.say(f"[Progress] {what}: {event.done}/{event.total} in {elapsed:.0f} s{tail}")

    @staticmethod
    def _key(step: int, phase: str, label: str) -> str:
        return f"{step}:{phase}:{label}"
