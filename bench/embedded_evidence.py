"""Real-model evidence on the embedded model (issue 34 §4): does the loop, with
SmolLM2-135M as the target, learn a skill that helps it on held-out items?

Env ``unitqa`` (distance questions answered as ``<number> km``, a regex
judge), config ``unitqa/local``. For each seed: one training run (target
SmolLM2-135M through llama.cpp in this process, the optimizer chosen by
``--optimizer``; with the pool the seed is the proposer's, with SmolLM2 the
training seed), then ``skillopt compare`` on the test split (the same code:
:func:`skillopt_core.run.compare.compare_skills`) of the env's seed skill (A)
against the run's best skill (B): B minus A with its 95 % paired bootstrap
interval over test items. Over the seeds it prints the mean lift with a
Student-t 95 % interval (seeds are the unit: each is a separate run), how
many runs accepted an edit, and which pool lines (by their intended label)
ended in the best skills.

Optimizers:

- ``pool`` (default): :mod:`bench.embedded_pool`, edits drawn from lines
  written before the study, some helpful, some neutral, some harmful. The
  question it answers: does measuring on the real model keep the helpful ones?
- ``local``: SmolLM2-135M itself writes the edits (JSON constrained by a
  grammar; a reply that is still not JSON is counted and skipped by the engine).

A run whose best skill is the seed skill has lift exactly 0 on every item; its
compare is not run (printed as ``identical``) to save the model's time.

Usage::

    nice -n 10 python bench/embedded_evidence.py --seeds 10 [--optimizer pool|local] [--out DIR] [--json FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench import embedded_pool  # noqa: E402  (registers the "embedded_pool" backend)
from skillopt_core.evaluation.stats import mean_ci  # noqa: E402
from skillopt_core.run.api import prepare_training  # noqa: E402
from skillopt_core.run.compare import compare_skills  # noqa: E402
from skillopt_core.run.config import load_settings  # noqa: E402
from skillopt_core.skill.document import load_skill  # noqa: E402

CONFIG = "unitqa/local"
SHARED_CACHE = "shared_rollout_cache.jsonl"


def seed_cache(run_dir: Path, shared: Path) -> None:
    """Start a run directory with every completion and score the earlier runs made.

    The rollout cache is content-addressed (backend identity and the whole request;
    skillopt_core/evaluation/cache.py), so an entry is valid in any run that sends
    the same request: the same skill text on the same item gets the same answer."""
    run_dir.mkdir(parents=True, exist_ok=True)
    if shared.exists() and not (run_dir / "rollout_cache.jsonl").exists():
        (run_dir / "rollout_cache.jsonl").write_bytes(shared.read_bytes())


def collect_cache(run_dir: Path, shared: Path) -> None:
    """Append the run's new cache rows (by key) to the shared cache."""
    known = set()
    if shared.exists():
        known = {json.loads(line)["key"] for line in shared.read_text(encoding="utf-8").splitlines() if line.strip()}
    own = run_dir / "rollout_cache.jsonl"
    new = [line for line in own.read_text(encoding="utf-8").splitlines()
           if line.strip() and json.loads(line)["key"] not in known] if own.exists() else []
    with shared.open("a", encoding="utf-8") as fh:
        fh.writelines(line + "\n" for line in new)


def settings_for(seed: int, optimizer: str, out: Path, extra: list[str]):
    # With the pool, train.seed stays 0: the target is greedy (temperature 0), so the rollout seed
    # changes only the cache key, and a fixed one lets every run reuse the others' answers
    # (SHARED_CACHE); the seed is the proposer's. A greedy SmolLM2 optimizer has no seed of its
    # own: there the seed is train.seed (batch order, hence what the optimizer is shown).
    overrides = [f"train.seed={0 if optimizer == 'pool' else seed}", f"output.root={out}", f"output.run_id=seed{seed}", "evaluation.eval_test=false",
                 "output.plot=false"]
    if optimizer == "pool":
        # model.judge defaults to the optimizer's model name; the judges here are regexes, never a model.
        overrides += ["model.optimizer_backend=embedded_pool", f"model.optimizer=seed{seed}", "model.judge=SmolLM2"]
    return load_settings(CONFIG, overrides + extra)


def pool_labels(skill_text: str) -> list[str]:
    """The labels of the pool lines present in a skill."""
    return [line.label for line in embedded_pool.POOL if line.text in skill_text]


def invalid_replies(run_dir: Path) -> tuple[int, int]:
    """(invalid optimizer replies, reflection rounds) from the run's ``patches_generated`` events."""
    invalid = rounds = 0
    events = run_dir / "events.jsonl"
    for line in events.read_text(encoding="utf-8").splitlines() if events.exists() else ():
        event = json.loads(line)
        if event.get("event") == "patches_generated":
            invalid += int(event.get("n_invalid_replies") or 0)
            rounds += 1
    return invalid, rounds


def decisions(run_dir: Path) -> list[tuple[str, str]]:
    """(pool label or "other", accept/reject) of every gated step of a run."""
    actions = {}
    events = run_dir / "events.jsonl"
    for line in events.read_text(encoding="utf-8").splitlines() if events.exists() else ():
        event = json.loads(line)
        if event.get("event") == "gate_decided":
            actions[int(event["step"])] = event["action"]
    out = []
    for step, action in sorted(actions.items()):
        selected = run_dir / "steps" / f"step_{step:04d}" / "selected.json"
        record = json.loads(selected.read_text(encoding="utf-8")) if selected.exists() else {}
        for edit in record.get("edits") or []:
            out.append((embedded_pool.label_of(str(edit.get("content") or "")) or "other", action))
    return out


async def one_seed(seed: int, optimizer: str, out: Path, extra: list[str]) -> dict:
    started = time.perf_counter()
    settings = settings_for(seed, optimizer, out, extra)
    shared = out / SHARED_CACHE
    seed_cache(out / "unitqa" / f"seed{seed}", shared)
    summary = await prepare_training(settings, force=True).run()
    run_dir = Path(summary.run_dir)
    collect_cache(run_dir, shared)
    best = (run_dir / "best_skill.md").read_text(encoding="utf-8")
    seed_skill = load_skill(run_dir / "initial_skill.md").render() if (run_dir / "initial_skill.md").exists() else None
    row = {"seed": seed, "status": summary.status, "accepted": summary.accepted, "rejected": summary.rejected,
           "initial_val": summary.initial_val, "best_val": summary.best_val, "labels": pool_labels(best),
           "run_dir": str(run_dir), "invalid_replies": invalid_replies(run_dir)}
    if summary.accepted == 0 or (seed_skill is not None and seed_skill.strip() == best.strip()):
        row.update(lift=0.0, ci=[0.0, 0.0], identical=True, test_a=None, test_b=None)
    else:
        seed_cache(out / "unitqa" / f"compare-seed{seed}", shared)
        cmp = await compare_skills(settings, None, run_dir, split="test")
        collect_cache(Path(cmp["run_dir"]), shared)
        t = cmp["targets"][0]
        row.update(lift=t["diff"], ci=[t["ci_low"], t["ci_high"]], identical=False, test_a=t["mean_a"],
                   test_b=t["mean_b"], wins=t["wins"], losses=t["losses"], n_items=t["n_items"])
    row["seconds"] = round(time.perf_counter() - started, 1)
    return row


def report(rows: list[dict]) -> dict:
    lifts = [r["lift"] for r in rows]
    mean, low, high = mean_ci(lifts)
    labels = [label for r in rows for label in r["labels"]]
    gated = [d for r in rows for d in decisions(Path(r["run_dir"]))] if all("run_dir" in r for r in rows) else []
    by_label = {k: {"accepted": sum(1 for lab, act in gated if lab == k and act == "accept"),
                    "rejected": sum(1 for lab, act in gated if lab == k and act != "accept")}
                for k in ("helpful", "neutral", "harmful")}
    return {"seeds": len(rows), "mean_lift": mean, "ci95": [low, high],
            "runs_accepting": sum(r["accepted"] > 0 for r in rows),
            "best_skills_with": {k: sum(k in r["labels"] for r in rows) for k in ("helpful", "neutral", "harmful")},
            "pool_lines_in_best": {k: labels.count(k) for k in ("helpful", "neutral", "harmful")},
            "gate_by_label": by_label}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--first-seed", type=int, default=0)
    ap.add_argument("--optimizer", choices=("pool", "local"), default="pool")
    ap.add_argument("--out", type=Path, default=Path("outputs/embedded-evidence"))
    ap.add_argument("--json", type=Path, help="also write the rows and the summary here")
    ap.add_argument("--set", dest="extra", action="append", default=[], metavar="SECTION.KEY=VALUE")
    ap.add_argument("--report", type=Path, nargs="+", metavar="JSON",
                    help="run nothing: print the summary over the rows of these --json files (seed ranges run apart)")
    args = ap.parse_args(argv)
    if args.report:
        rows = [row for f in args.report for row in json.loads(f.read_text(encoding="utf-8"))["rows"]]
        print_summary(sorted(rows, key=lambda r: r["seed"]))
        return 0
    out = (args.out / args.optimizer).resolve()
    load = os.getloadavg()
    print(f"cores {os.cpu_count()}, load average before {load[0]:.2f}; optimizer {args.optimizer}", flush=True)
    rows = []
    for seed in range(args.first_seed, args.first_seed + args.seeds):
        row = asyncio.run(one_seed(seed, args.optimizer, out, args.extra))
        rows.append(row)
        what = "identical (nothing accepted)" if row["identical"] else (
            f"test {row['test_a']:.3f} -> {row['test_b']:.3f}, lift {row['lift']:+.3f} "
            f"[{row['ci'][0]:+.3f}, {row['ci'][1]:+.3f}]")
        print(f"seed {seed}: accepted {row['accepted']}, rejected {row['rejected']}, val {row['initial_val']:.3f} -> "
              f"{row['best_val']:.3f}, {what}; pool labels in best {row['labels']}; invalid replies "
              f"{row['invalid_replies'][0]}; {row['seconds']} s", flush=True)
        if args.json:
            args.json.write_text(json.dumps({"rows": rows, "summary": report(rows)}, indent=2), encoding="utf-8")
    print_summary(rows)
    load = os.getloadavg()
    print(f"load average after {load[0]:.2f}")
    return 0


def print_summary(rows: list[dict]) -> None:
    summary = report(rows)
    print(f"seeds {[r['seed'] for r in rows]}")
    print(f"mean lift over {summary['seeds']} seeds: {summary['mean_lift']:+.3f} "
          f"[{summary['ci95'][0]:+.3f}, {summary['ci95'][1]:+.3f}] (95 %, Student t over seeds); "
          f"runs accepting an edit: {summary['runs_accepting']}; best skills holding a helpful / neutral / harmful "
          f"pool line: {summary['best_skills_with']}", flush=True)
    print(f"gate decisions by the line's intended label: {summary['gate_by_label']}", flush=True)


if __name__ == "__main__":
    raise SystemExit(main())
