"""Following a job while a tool call waits: MCP progress notifications from the
run's ``events.jsonl`` (the engine's typed events), until the job ends or the
wait is over. The job itself never depends on the wait: a client that goes
away only ends the wait.

Progress is ``steps finished (+ a fraction for events inside a step)`` out of
``total_steps``; it strictly increases, as the protocol asks, and never exceeds
the total: until the job ends it stays below it (the test phase after the last
step adds nothing), and the last notification is the total itself. When there
is no room left to increase, a heartbeat is skipped rather than sent with a
value that does not grow. A job without a run directory (a night) has no total
and reports its elapsed time and the last line it wrote to stderr.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio

from skillopt_core.run import events as ev
from skillopt_core.run.reader import RunReader
from sleep.mcp import jobs

POLL_S = 0.25
HEARTBEAT_S = 10.0

Report = Callable[[float, float | None, str | None], Awaitable[None]]


class Progress:
    """Turns events into (progress, total, message): strictly increasing, never above the total."""

    STEP = 0.001
    HEADROOM = 0.01  # below the total until the end

    def __init__(self) -> None:
        self.total: float | None = None
        self.last = 0.0
        self.done_steps = 0
        self.in_step = 0

    def update(self, e: ev.Event) -> tuple[float | None, float | None, str]:
        """The notification for event ``e`` (progress None: no room to increase; send nothing)."""
        total = getattr(e, "total_steps", None)
        if total:
            self.total = float(total)
        if isinstance(e, ev.StepStarted):
            self.done_steps, self.in_step = max(self.done_steps, e.step - 1), 0
        elif isinstance(e, ev.GateDecided):
            self.done_steps, self.in_step = max(self.done_steps, e.step), 0
        elif isinstance(e, ev.RunEnd):
            self.done_steps = e.steps_done or self.done_steps
        else:
            self.in_step += 1
        return self._bump(self.done_steps + min(0.9, self.in_step * 0.1)), self.total, ev.event_line(e)

    def tick(self) -> float | None:
        """A heartbeat's progress (None: no room to increase)."""
        return self._bump(self.last)

    def finish(self) -> float | None:
        """The last notification's progress: the total when there is one."""
        if self.total is not None:
            if self.total <= self.last:
                return None
            self.last = self.total
            return self.total
        return self.tick()

    def _bump(self, value: float) -> float | None:
        ceiling = self.total - self.HEADROOM if self.total is not None else float("inf")
        value = round(min(value, ceiling), 3)
        if value <= self.last:
            value = round(self.last + self.STEP, 3)
        if value > ceiling or value <= self.last:
            return None
        self.last = value
        return value


class _Tail:
    """New complete events of a growing ``events.jsonl``, from where the last read stopped."""

    def __init__(self, run_dir: Path) -> None:
        self.reader = RunReader(run_dir)
        self.offset = 0

    def read(self) -> list[ev.Event]:
        events, self.offset = self.reader.events(self.offset)
        return events


async def follow(job_id: str, wait_seconds: float, report: Report) -> jobs.JobRecord:
    """Report progress of ``job_id`` until it ends or ``wait_seconds`` pass; return its record."""
    job = jobs.read(job_id)
    deadline = time.monotonic() + max(0.0, wait_seconds)
    progress = Progress()
    tail = _Tail(Path(job.spec.run_dir)) if job.spec.run_dir else None
    started = time.monotonic()
    last_sent = started
    while True:
        job = jobs.read(job_id)
        sent = await _send_new(tail, progress, report)
        now = time.monotonic()
        if not job.active:
            await _send_new(tail, progress, report)  # events written just before the end
            final = progress.finish()
            if final is not None:
                await report(final, progress.total, f"job {job_id} {job.state}")
            return job
        if now >= deadline:
            return job
        if sent:
            last_sent = now
        elif now - last_sent >= HEARTBEAT_S or (tail is None and now - last_sent >= 2.0):
            beat = progress.tick()
            if beat is not None:
                await report(beat, progress.total, _heartbeat(job, now - started))
            last_sent = now
        await anyio.sleep(min(POLL_S, max(0.0, deadline - now)))


async def _send_new(tail: _Tail | None, progress: Progress, report: Report) -> bool:
    """One notification for the events since the last poll (the newest event's line)."""
    events = tail.read() if tail is not None else []
    if not events:
        return False
    for e in events:
        update = progress.update(e)
    if update[0] is not None:
        await report(update[0], update[1], update[2])
    return True


def _heartbeat(job: jobs.JobRecord, elapsed: float) -> str:
    if job.spec.run_dir is None:
        lines = [ln for ln in job.stderr_tail(500).splitlines() if ln.strip()]
        if lines:
            return f"{job.state} for {elapsed:.0f}s: {lines[-1][:200]}"
    return f"{job.state} for {elapsed:.0f}s"
