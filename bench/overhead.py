"""The loop's own overhead: a training run against a backend whose every call
takes a fixed latency, compared with the time those calls need at best.

The backend is the simulated world (bench/sim) with ``--latency`` seconds of
sleep per call; the trainer is the real one with the default settings. The
bound is ``calls x latency / workers`` (every call needs its latency, and at
most ``train.workers`` rollouts run at once); the ratio is the run's wall time
over that bound. 1.00 would mean the engine never waits on itself and always
keeps ``workers`` calls in flight.

Where time goes: every call's start and end are recorded, and the run's wall
time is cut into spans by how many calls were in flight. Its excess over the
bound is exactly the sum over spans of ``length x (1 - in_flight / workers)``:
spans with no call in flight are the engine's own time (Python, files,
events); spans with fewer than ``workers`` calls are attributed to the stages
of the calls then in flight (e.g. sequential optimizer calls, the tail of a
rollout); spans with more than ``workers`` (concurrent reflection calls) count
negative.

Usage: ``python bench/overhead.py [--quick] [--json] [--latency 0.2] [--set key=value ...]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from skillopt_core.backends import Completion, CompletionRequest  # noqa: E402
from skillopt_core.run.api import prepare_training  # noqa: E402

from bench.sim import SimBackend, WorldSpec, register_world  # noqa: E402
from bench.sim.measure import sim_overrides  # noqa: E402


class RecordingBackend:
    """Wraps a backend; records (start, end, stage) of every call."""

    def __init__(self, inner: SimBackend) -> None:
        self.inner = inner
        self.name, self.model = inner.name, inner.model
        self.calls: list[tuple[float, float, str]] = []
        self.cancelled = 0  # calls cancelled in flight (an early stop): made, but not in the run's ledger

    def describe(self) -> str:
        return self.inner.describe() + f", {self.inner.latency_s * 1000:.0f} ms per call"

    async def complete(self, request: CompletionRequest) -> Completion:
        start = time.perf_counter()
        try:
            return await self.inner.complete(request)
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
        finally:
            self.calls.append((start, time.perf_counter(), f"{request.role}/{request.stage}"))


def breakdown(calls: list[tuple[float, float, str]], start: float, end: float, workers: int) -> dict:
    """Cut [start, end] by calls in flight; see the module docstring."""
    points = sorted({start, end, *(c[0] for c in calls), *(c[1] for c in calls)})
    by_flight: Counter = Counter()
    excess: dict[str, float] = defaultdict(float)
    for a, b in zip(points, points[1:]):
        if b <= start or a >= end:
            continue
        a, b = max(a, start), min(b, end)
        inflight = [c[2] for c in calls if c[0] <= a and c[1] >= b]
        dt = b - a
        k = len(inflight)
        by_flight[min(k, workers + 1)] += dt
        share = dt * (1 - k / workers)
        if k == workers:
            continue  # exactly at the bound: no excess
        if k == 0:
            excess["engine (no call in flight)"] += share
        else:
            for stage in inflight:
                excess[stage] += share / k
    return {"seconds_by_calls_in_flight": {(f">{workers}" if k > workers else str(k)): v
                                           for k, v in sorted(by_flight.items())},
            "excess_s_by_stage": dict(sorted(excess.items(), key=lambda kv: -kv[1]))}


async def measure(latency: float, settings: list[str], root: Path, seed: int = 0) -> dict:
    spec = WorldSpec(seed=seed, n_items=700)
    world = register_world(spec)
    backend = RecordingBackend(SimBackend(world, latency_s=latency))
    overrides = [*sim_overrides(spec, root, "overhead"), "evaluation.val_limit=40", *settings]
    run = prepare_training(None, overrides=overrides, backends={"target": backend, "optimizer": backend,
                                                                 "judge": backend})
    workers = run.settings.train.workers
    start = time.perf_counter()
    summary = await run.run()
    end = time.perf_counter()
    calls = len(backend.calls)
    mean_latency = sum(c[1] - c[0] for c in backend.calls) / calls if calls else 0.0
    bound = calls * latency / workers
    stages = Counter(c[2] for c in backend.calls)
    return {
        "status": summary.status, "steps": summary.steps_done, "workers": workers, "latency_s": latency,
        "calls": calls, "ledger_calls": summary.usage["calls"],
        "cancelled_calls": backend.cancelled, "calls_by_stage": dict(stages.most_common()),
        "mean_call_s": mean_latency, "wall_s": end - start, "bound_s": bound,
        "ratio": (end - start) / bound if bound else None,
        **breakdown(backend.calls, start, end, workers),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="2 epochs of 2 steps (about a minute)")
    ap.add_argument("--json", action="store_true", help="print the result as JSON on stdout")
    ap.add_argument("--latency", type=float, default=0.2, help="seconds per model call (default 0.2)")
    ap.add_argument("--set", action="append", default=[], metavar="key=value", help="a setting of the run")
    args = ap.parse_args(argv)
    settings = (["train.num_epochs=2", "train.steps_per_epoch=2"] if args.quick else []) + args.set
    with tempfile.TemporaryDirectory(prefix="skillopt-overhead-") as tmp:
        result = asyncio.run(measure(args.latency, settings, Path(tmp)))
    if args.json:
        print(json.dumps(result, indent=1))
        return 0
    r = result
    print(f"{r['steps']} steps, {r['calls']} calls at {r['latency_s'] * 1000:.0f} ms (measured {r['mean_call_s'] * 1000:.1f} ms "
          f"per call), {r['workers']} workers")
    print(f"wall {r['wall_s']:.1f} s, bound {r['bound_s']:.1f} s (calls x latency / workers): ratio {r['ratio']:.3f} "
          f"(target ≤ 1.15: {'met' if r['ratio'] <= 1.15 else 'NOT met'})")
    print("seconds by calls in flight: " + ", ".join(f"{k}: {v:.1f}" for k, v in r["seconds_by_calls_in_flight"].items()))
    print("excess over the bound, by stage (s):")
    for stage, seconds in r["excess_s_by_stage"].items():
        print(f"  {stage:<32} {seconds:+7.2f}   ({r['calls_by_stage'].get(stage, 0)} calls)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
