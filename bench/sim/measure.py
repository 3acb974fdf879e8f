"""Run the real trainer on a simulated world and score what it did against
the world's exact truth.

Every gate decision of the run (steps and gated slow updates) is replayed
from the run directory: the skill that was current, the candidate, whether it
was accepted and how many val items the gate evaluated before deciding. The
true quality of each skill is computed exactly on the run's test split, so
a false accept (a truly worse candidate kept) and a false reject (a truly
better one dropped) are facts, not estimates.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from skillopt_core.run import events as ev
from skillopt_core.run.api import prepare_training

from bench.sim.world import WorldSpec, register_world

TIE = 1e-12


@dataclass(frozen=True)
class Decision:
    where: str               # "step 3" or "slow update 1"
    accepted: bool
    q_current: float
    q_candidate: float
    evaluated: int           # val items the gate scored before deciding

    @property
    def truly_better(self) -> bool:
        return self.q_candidate > self.q_current + TIE

    @property
    def truly_worse(self) -> bool:
        return self.q_candidate < self.q_current - TIE


@dataclass
class SimRun:
    status: str
    q_initial: float
    q_best: float
    calls: int
    val_calls: int
    wall_s: float
    val_size: int
    samples: int
    decisions: list[Decision] = field(default_factory=list)
    phase_calls: dict[str, int] = field(default_factory=dict)   # target calls by rollout phase (train, screen, val, ...)
    optimizer_calls: int = 0
    best_rules: frozenset[str] = frozenset()                     # rule ids the best skill states
    stopped_early: bool = False                                  # train.patience ended the run before its last step

    @property
    def lift(self) -> float:
        return self.q_best - self.q_initial

    @property
    def false_accept_loss(self) -> float:
        """True quality given up by accepting truly worse candidates (summed over the run)."""
        return sum(d.q_current - d.q_candidate for d in self.decisions if d.accepted and d.truly_worse)

    @property
    def false_reject_cost(self) -> float:
        """True quality left on the table by rejecting truly better candidates (summed)."""
        return sum(d.q_candidate - d.q_current for d in self.decisions if not d.accepted and d.truly_better)


def sim_overrides(spec: WorldSpec, root: Path, run_id: str) -> list[str]:
    """The settings that point a run at the simulated world ``spec`` (registered here)."""
    register_world(spec)
    return [
        "env.name=sim", f"env.options.world={json.dumps(spec.to_dict())}", "env.split_ratio=[1,2,3]",
        "model.backend=sim", f"model.target={spec.key}", f"model.optimizer={spec.key}",
        f"output.root={root}", f"output.run_id={run_id}", "output.plot=false", "evaluation.eval_test=false",
    ]


class _ValCalls:
    """Counts rollouts that reached the backend (not served by the cache), by phase."""

    def __init__(self) -> None:
        self.by_phase: dict[str, int] = {}

    @property
    def calls(self) -> int:
        return self.by_phase.get("val", 0)

    def __call__(self, event: ev.Event) -> None:
        if isinstance(event, ev.RolloutDone):
            self.by_phase[event.phase] = self.by_phase.get(event.phase, 0) + event.n_items - event.cached


async def run_sim(spec: WorldSpec, settings: Sequence[str], root: Path, run_id: str) -> SimRun:
    """Train on the world of ``spec`` with ``settings`` (``section.key=value``
    overrides of the defaults) and score the run against the truth."""
    world = register_world(spec)
    counter = _ValCalls()
    started = time.perf_counter()
    run = prepare_training(None, overrides=[*sim_overrides(spec, root, run_id), *settings], subscribers=[counter])
    summary = await run.run()
    wall = time.perf_counter() - started
    path = Path(summary.run_dir)
    splits = json.loads((path / "dataset.json").read_text())["splits"]
    test = world.items_by_id(splits["test"])
    s = run.settings
    val_size = min(len(splits["val"]), s.evaluation.val_limit or len(splits["val"]))
    initial = (path / "skills" / "step_0000.md").read_text()
    best = (path / "best_skill.md").read_text()
    result = SimRun(summary.status, world.true_quality(initial, test), world.true_quality(best, test),
                    int(summary.usage["calls"]), counter.calls, wall, val_size, s.train.samples_per_item)
    result.decisions = replay_decisions(path, world, test, initial)
    result.phase_calls = dict(counter.by_phase)
    ledger = json.loads((path / "state.json").read_text()).get("ledger", {}).get("usage", {})
    result.optimizer_calls = sum(int(b.get("calls", 0)) for b in ledger.get("optimizer", {}).values())
    result.best_rules = world.stated(best)
    result.stopped_early = summary.status == "completed" and summary.steps_done < summary.total_steps
    return result


def replay_decisions(path: Path, world, test, initial: str) -> list[Decision]:
    """Every gate decision of the run in ``path``, in order, with its truth."""
    history = json.loads((path / "history.json").read_text())
    quality: dict[str, float] = {}

    def q(text: str) -> float:
        if text not in quality:
            quality[text] = world.true_quality(text, test)
        return quality[text]

    decisions: list[Decision] = []
    current, epoch_seen = initial, 1
    for record in history:
        if record["epoch"] > epoch_seen:  # the epoch boundary before this step
            current = _slow_update(path, epoch_seen, current, q, decisions)
            epoch_seen = record["epoch"]
        if record["action"] in ("accept", "reject"):
            candidate = (path / "steps" / f"step_{record['step']:04d}" / "candidate.md").read_text()
            accepted = record["action"] == "accept"
            decisions.append(Decision(f"step {record['step']}", accepted, q(current), q(candidate),
                                      record["gate_evaluated"]))
            if accepted:
                current = candidate
    if history:
        _slow_update(path, epoch_seen, current, q, decisions)
    return decisions


def _slow_update(path: Path, epoch: int, current: str, q, decisions: list[Decision]) -> str:
    folder = path / "slow_update" / f"epoch_{epoch:02d}"
    record_path = folder / "comparison.json"
    if not record_path.exists():
        return current
    record = json.loads(record_path.read_text())
    gate = record.get("gate")
    if gate is None:
        candidate = folder / "candidate.md"
        return candidate.read_text() if record.get("action") == "accept_ungated" and candidate.exists() else current
    candidate = (folder / "candidate.md").read_text()
    decisions.append(Decision(f"slow update {epoch}", gate["accept"], q(current), q(candidate), gate["n_evaluated"]))
    return candidate if gate["accept"] else current
