"""The gate study: how safely and cheaply each gate configuration learns,
measured on the simulated world where the truth is known exactly.

For every seed (a new world and a new training seed), every val size and
every configuration, the real trainer runs a full training with the sim env
and backends (bench/sim). Each gate decision is then checked against the
exact true quality (on the run's test split) of the current and candidate
skills:

- lift: true quality of the best skill minus that of the initial skill;
- false-accept rate: accepted / decisions whose candidate was truly worse;
- false-reject rate: rejected / decisions whose candidate was truly better;
- val rollouts per decision: val items (x samples) the gate scored before it
  decided (early stopping lowers this, never the decision);
- calls: model calls of the whole run (target and optimizer; the test-split
  evaluation is off, the lift is exact); wall: seconds per run (noisy on a
  shared machine; the counts are not).

Configurations: ``default`` (configs/_base_/default.yaml) with each gate
policy, with and without early stopping, and ``paper`` (mean gate, full val
evaluation, no slow update, no meta notes, 4 epochs). ``--variant
NAME:key=value,...`` adds one more (e.g. a proposed default); the pseudo-key
``bench.patience=K`` stops a run after K step gates in a row that did not
accept (a stopping rule the engine lacks, emulated by cancelling the run).

Usage: ``python bench/gate.py [--quick] [--json] [--seeds N] [--jobs N] [--out DIR]``.
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import json
import math
import os
import statistics
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.sim import WorldSpec  # noqa: E402
from bench.sim.measure import SimRun, run_sim  # noqa: E402

VAL_SIZES = (10, 20, 40, 200)
DEFAULT_VAL_SIZE = 40  # the engine has no default val size; the study's middle size stands for it
POLICIES = ("mean", "paired", "no_regression")
# The paper's procedure, pinned so that a change of our defaults does not move it.
PAPER = ("evaluation.gate_policy=mean", "evaluation.early_stop=false", "train.num_epochs=4",
         "optimizer.use_slow_update=false", "optimizer.use_meta_skill=false")
N_ITEMS = 700  # split 1:2:3 → ≈117 train, ≈233 val (enough for the 200 val size), ≈350 test


@dataclass(frozen=True)
class Config:
    name: str
    policy: str
    early_stop: bool
    settings: tuple[str, ...]


def configurations(variants: list[str]) -> list[Config]:
    configs = [Config("default", p, e, (f"evaluation.gate_policy={p}", f"evaluation.early_stop={str(e).lower()}"))
               for p in POLICIES for e in (True, False)]
    configs.append(Config("paper", "mean", False, PAPER))
    for text in variants:
        name, _, body = text.partition(":")
        settings = tuple(s.strip() for s in body.split(",") if s.strip())
        policy = next((s.split("=", 1)[1] for s in settings if s.startswith("evaluation.gate_policy=")), "mean")
        early = next((s.split("=", 1)[1] for s in settings if s.startswith("evaluation.early_stop=")), "true")
        configs.append(Config(name, policy, early.lower() == "true", settings))
    return configs


def _one(job: tuple[Config, int, int, tuple[str, ...], str]) -> tuple[Config, int, int, SimRun]:
    config, val_size, seed, extra, root = job
    settings = [*config.settings, f"evaluation.val_limit={val_size}", f"train.seed={seed}", *extra]
    run_id = f"{config.name}-{config.policy}-{int(config.early_stop)}-v{val_size}-s{seed}"
    result = asyncio.run(run_sim(WorldSpec(seed=seed, n_items=N_ITEMS), settings, Path(root), run_id))
    return config, val_size, seed, result


def _rate(numerator: int, denominator: int) -> float | None:
    return numerator / denominator if denominator else None


def summarise(config: Config, val_size: int, runs: list[SimRun]) -> dict:
    decisions = [d for r in runs for d in r.decisions]
    worse = [d for d in decisions if d.truly_worse]
    better = [d for d in decisions if d.truly_better]
    lifts = [r.lift for r in runs]
    samples = runs[0].samples
    per_decision = statistics.fmean(d.evaluated * samples for d in decisions) if decisions else 0.0
    return {
        "config": config.name, "policy": config.policy, "early_stop": config.early_stop, "val_size": val_size,
        "seeds": len(runs),
        "lift": statistics.fmean(lifts), "lift_sem": statistics.stdev(lifts) / math.sqrt(len(lifts)) if len(lifts) > 1 else 0.0,
        "false_accept_rate": _rate(sum(d.accepted for d in worse), len(worse)),
        "false_reject_rate": _rate(sum(not d.accepted for d in better), len(better)),
        "truly_worse": len(worse), "truly_better": len(better), "decisions": len(decisions),
        "accepted": sum(d.accepted for d in decisions),
        "val_rollouts_per_decision": per_decision, "val_fraction": per_decision / (val_size * samples),
        "val_calls": statistics.fmean(r.val_calls for r in runs),
        "calls": statistics.fmean(r.calls for r in runs), "wall_s": statistics.fmean(r.wall_s for r in runs),
        "failed_runs": sum(r.status not in ("completed", "cancelled") for r in runs),
        "patience_stops": sum(r.status == "cancelled" for r in runs),
    }


def run_study(seeds: int, val_sizes: tuple[int, ...], configs: list[Config], extra: tuple[str, ...], jobs: int,
              root: Path, progress=None) -> list[dict]:
    work = [(c, v, s, extra, str(root)) for c in configs for v in val_sizes for s in range(seeds)]
    results: dict[tuple, list[SimRun]] = {}
    if jobs > 1:
        with ProcessPoolExecutor(jobs) as pool:
            done = pool.map(_one, work)
            for n, (c, v, s, r) in enumerate(done, 1):
                results.setdefault((c, v), []).append(r)
                if progress:
                    progress(n, len(work))
    else:
        for n, job in enumerate(work, 1):
            c, v, s, r = _one(job)
            results.setdefault((c, v), []).append(r)
            if progress:
                progress(n, len(work))
    return [summarise(c, v, results[(c, v)]) for c in configs for v in val_sizes]


def _fmt(value, digits: int = 3) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def print_table(rows: list[dict], out=sys.stdout) -> None:
    head = ("config", "policy", "early", "val", "lift", "±sem", "FA rate", "(n)", "FR rate", "(n)",
            "val/decision", "frac", "calls", "wall s")
    print(("{:<9} {:<13} {:>5} {:>4} {:>7} {:>6} {:>8} {:>5} {:>8} {:>5} {:>12} {:>5} {:>7} {:>7}").format(*head), file=out)
    for r in rows:
        print(("{:<9} {:<13} {:>5} {:>4} {:>7} {:>6} {:>8} {:>5} {:>8} {:>5} {:>12} {:>5} {:>7} {:>7}").format(
            r["config"], r["policy"], _fmt(r["early_stop"]), r["val_size"], _fmt(r["lift"]), _fmt(r["lift_sem"]),
            _fmt(r["false_accept_rate"]), r["truly_worse"], _fmt(r["false_reject_rate"]), r["truly_better"],
            _fmt(r["val_rollouts_per_decision"], 1), _fmt(r["val_fraction"], 2), _fmt(r["calls"], 0),
            _fmt(r["wall_s"], 2)), file=out)


def targets(rows: list[dict], default_val: int) -> list[str]:
    """The issue's targets, each with its figure and met / not met."""
    lines = []
    pairs = [(a, b) for a in rows for b in rows if a["config"] == b["config"] == "default" and a["policy"] == b["policy"]
             and a["val_size"] == b["val_size"] and a["early_stop"] and not b["early_stop"]]
    if pairs:
        ratio = statistics.fmean(a["val_rollouts_per_decision"] / b["val_rollouts_per_decision"] for a, b in pairs)
        same = all(a["accepted"] == b["accepted"] and a["decisions"] == b["decisions"] for a, b in pairs)
        lines.append(f"early stopping: {ratio:.0%} of full evaluation's val rollouts per decision on average "
                     f"(target ≤ 80%: {'met' if ratio <= 0.8 else 'NOT met'}); same decisions in every cell: {same}")
    default = next((r for r in rows if r["config"] == "default" and r["policy"] == "mean" and r["early_stop"]
                    and r["val_size"] == default_val), None)
    paper = next((r for r in rows if r["config"] == "paper" and r["val_size"] == default_val), None)
    if default:
        fa = default["false_accept_rate"]
        lines.append(f"default (mean, early stop) false-accept rate at val {default_val}: {_fmt(fa)} over "
                     f"{default['truly_worse']} truly worse candidates (target ≤ 0.02: "
                     f"{'met' if fa is not None and fa <= 0.02 else 'NOT met'})")
    if default and paper:
        lift_ok = default["lift"] >= paper["lift"]
        calls = default["calls"] / paper["calls"]
        lines.append(f"default vs paper at val {default_val}: lift {default['lift']:.3f} vs {paper['lift']:.3f} "
                     f"({'met' if lift_ok else 'NOT met'}: at least paper's); calls {calls:.0%} of paper's "
                     f"(target ≤ 60%: {'met' if calls <= 0.6 else 'NOT met'})")
    return lines


def plot(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    markers = {10: "o", 20: "s", 40: "^", 200: "D"}
    labels = sorted({(r["config"], r["policy"], r["early_stop"]) for r in rows})
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for n, label in enumerate(labels):
        mine = [r for r in rows if (r["config"], r["policy"], r["early_stop"]) == label]
        for r in mine:
            ax.errorbar(r["calls"], r["lift"], yerr=r["lift_sem"], marker=markers.get(r["val_size"], "x"),
                        color=colors[n % len(colors)], linestyle="none",
                        label=f"{label[0]} {label[1]}{' early' if label[2] else ''}" if r is mine[0] else None)
    ax.set_xlabel("model calls per run")
    ax.set_ylabel("true held-out lift (exact)")
    ax.set_title("Lift against calls (markers: val 10 ○, 20 □, 40 △, 200 ◇)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="3 seeds and 2 epochs (about two minutes on 2 cores)")
    ap.add_argument("--json", action="store_true", help="print the table as JSON on stdout (progress on stderr)")
    ap.add_argument("--seeds", type=int, help="seeds per cell (default 10; --quick 3)")
    ap.add_argument("--val-sizes", type=lambda s: tuple(int(x) for x in s.split(",")), default=VAL_SIZES)
    ap.add_argument("--variant", action="append", default=[], metavar="NAME:key=value,...",
                    help="add a configuration: the defaults plus these settings")
    ap.add_argument("--set", action="append", default=[], metavar="key=value",
                    help="a setting for every configuration (e.g. train.num_epochs=2)")
    ap.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1), help="runs in parallel (processes)")
    ap.add_argument("--out", type=Path, default=REPO / "outputs" / "bench", help="where gate.csv and gate.png go")
    args = ap.parse_args(argv)
    seeds = args.seeds or (3 if args.quick else 10)
    extra = tuple(args.set) + (("train.num_epochs=2",) if args.quick else ())
    configs = configurations(args.variant)
    log = sys.stderr if args.json else sys.stdout
    print(f"gate study: {len(configs)} configurations x {len(args.val_sizes)} val sizes x {seeds} seeds "
          f"({len(configs) * len(args.val_sizes) * seeds} training runs, {args.jobs} at a time)", file=log)
    started = time.perf_counter()

    def progress(done: int, total: int) -> None:
        if done == total or done % max(1, total // 10) == 0:
            print(f"  {done}/{total} runs ({time.perf_counter() - started:.0f} s)", file=sys.stderr)

    with tempfile.TemporaryDirectory(prefix="skillopt-gate-") as tmp:
        rows = run_study(seeds, args.val_sizes, configs, extra, args.jobs, Path(tmp), progress)
    args.out.mkdir(parents=True, exist_ok=True)
    with open(args.out / "gate.csv", "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    plot(rows, args.out / "gate.png")
    if args.json:
        print(json.dumps(rows, indent=1))
    else:
        print_table(rows)
    default_val = DEFAULT_VAL_SIZE if DEFAULT_VAL_SIZE in args.val_sizes else args.val_sizes[-1]
    for line in targets(rows, default_val):
        print(line, file=log)
    print(f"{time.perf_counter() - started:.0f} s in all; wrote {args.out / 'gate.csv'} and {args.out / 'gate.png'}",
          file=log)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
