"""Progress notifications from a run's events: strictly increasing, never above
the total, ending on the total. The events are those of a real 2-step run
(`skillopt train` on the scripted backend, eval_test on): after the last gate
come the slow update and the test phase, which used to push progress to 2.904
of 2.0."""

from __future__ import annotations

from skillopt_core.run import events as ev
from sleep.mcp.follow import Progress

TOTAL = 2
EVENTS = [("run_started", 0), ("rollout_started", 0), ("rollout_done", 0), ("step_started", 1),
          ("rollout_started", 1), ("rollout_done", 1), ("patches_generated", 1), ("edits_selected", 1),
          ("edits_applied", 1), ("rollout_started", 1), ("rollout_done", 1), ("gate_decided", 1),
          ("rollout_started", 1), ("rollout_done", 1), ("best_changed", 1), ("step_started", 2),
          ("rollout_started", 2), ("rollout_done", 2), ("patches_generated", 2), ("edits_selected", 2),
          ("edits_applied", 2), ("gate_decided", 2)] + [("rollout_started", 2), ("rollout_done", 2)] * 3 + [
          ("epoch_end", 0), ("rollout_started", 0), ("rollout_done", 0), ("rollout_started", 0),
          ("rollout_done", 0), ("run_end", 0)]


def _event(kind: str, step: int) -> ev.Event:
    e: dict = {"event": kind, "total_steps": TOTAL}
    if step:
        e["step"] = step
    if kind == "run_end":
        e["steps_done"] = TOTAL
    return ev.Event.from_dict(e)


def _notifications(heartbeats_between: int = 0) -> list[float]:
    """Every progress value sent while the job runs, then the final one."""
    p = Progress()
    sent: list[float] = []
    for kind, step in EVENTS:
        value, total, _ = p.update(_event(kind, step))
        assert total == TOTAL
        if value is not None:
            sent.append(value)
        for _ in range(heartbeats_between):
            beat = p.tick()
            if beat is not None:
                sent.append(beat)
        assert max(sent, default=0) <= TOTAL, f"{sent[-1]} of {TOTAL} after {kind}"
    final = p.finish()
    if final is not None:
        sent.append(final)
    return sent


def test_progress_never_exceeds_the_total_and_ends_on_it() -> None:
    sent = _notifications()
    assert max(sent) == TOTAL and sent[-1] == TOTAL


def test_progress_strictly_increases() -> None:
    sent = _notifications()
    assert all(b > a for a, b in zip(sent, sent[1:])), sent


def test_many_heartbeats_near_the_end_stay_below_the_total() -> None:
    sent = _notifications(heartbeats_between=40)
    assert all(v < TOTAL for v in sent[:-1]) and sent[-1] == TOTAL
    assert all(b > a for a, b in zip(sent, sent[1:]))


def test_a_job_without_a_total_still_increases() -> None:
    p = Progress()
    beats = [p.tick() for _ in range(5)]
    assert beats == [0.001, 0.002, 0.003, 0.004, 0.005] and p.finish() == 0.006
