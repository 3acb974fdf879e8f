"""The gate study: how much each loop configuration truly learns, what its
gate's mistakes cost, and how many calls it spends, measured on the simulated
world where the truth is known exactly -- with an exact judge ("plain"), with
a fallible one ("fallible": judge errors, a verbosity bias, a rule that
games the judge, rule dilution and interaction, drift; bench/sim/world.py),
and the fallible world with the gaming rule reworded ("reworded": per seed two
wordings drawn from the held-out half of bench/gaming_paraphrases.json;
"reworded-tune" draws from the tune half).

For every world, seed and configuration, the real trainer runs a full
training with the sim env and backends (bench/sim). Seeds are *paired*: seed
s is the same world and the same training seed for every configuration, so
differences between configurations are measured per seed. Each gate decision
is checked against the exact true quality (on the run's test split) of the
current and candidate skills. Per run:

- lift: true quality of the best skill minus that of the initial skill;
- quality lost to false accepts: the sum, over accepted truly worse
  candidates, of how much worse each one was;
- false-reject cost: the sum, over rejected truly better candidates, of how
  much better each one was (an upper bound on what the rejections cost);
- calls by role: target rollouts by phase (train, screen, val) and optimizer
  calls; the test-split evaluation is off, the lift is exact;
- the share of seeds whose best skill states the judge-gaming rule (and the
  verbose rule the fallible judge favours).

Every figure is a mean over seeds with a 95 % Student-t interval; "default
- paper" rows are paired differences per seed.

Configurations: ``default`` (configs/_base_/default.yaml; in the fallible
worlds its val judge is the substance judge derived from the world's model
judge, and its accepts pass the stock-sentence check), ``paper`` (mean gate,
full val evaluation, no screen, no re-measurement, no judge guard, no
substance judge, no stock-sentence check, no slow update, no meta
notes, 4 epochs) and ``default+holdout``: the default
with the held-out check, val scored by a second judge the optimizer never
sees (``evaluation.holdout_judge``; in the fallible world a judge with its own
errors that neither the verbose nor the gaming rule sways). ``--all-policies`` adds the default
loop with each gate policy, with and without early stopping. ``--variant
NAME:key=value,...`` adds one more (e.g. a proposed default), e.g.
``--variant no-remeasure:evaluation.remeasure=false`` or
``--variant p6:train.patience=6``; the cost study of issue 34 §2 added
``--variant r164p4:evaluation.race_z=1.64,train.patience=4`` (racing and
patience: docs/bench.md, "Racing and partial re-measurement").

Every variant is paired with the default as well as with paper-style
(``variant − default`` lines); ``--skip NAME,...`` leaves configurations out
(paper-style always runs: the pairs need it). The gate defaults' study (racing
at the gate only, z 2.5): docs/bench.md, "The gate's defaults".

Usage: ``python bench/gate.py [--quick] [--json] [--seeds N] [--jobs N] [--out DIR] [--readme]``;
``--paraphrases`` prints the judge guard's refusal rates on both halves of the
paraphrase set; ``--from-json gate.json [--readme]`` rebuilds the tables from a
saved study.
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
from bench.sim.world import JudgeSpec, OptimizerMix  # noqa: E402
from skillopt_core.evaluation.stats import mean_ci  # noqa: E402

VAL_SIZES = (40,)
DEFAULT_VAL_SIZE = 40  # the engine has no default val size; the study's middle size stands for it
POLICIES = ("mean", "paired", "no_regression")
# The paper's procedure, pinned so that a change of our defaults does not move it.
PAPER = ("evaluation.gate_policy=mean", "evaluation.early_stop=false", "train.num_epochs=4",
         "train.batch_size=40", "evaluation.screen_items=0", "evaluation.remeasure=false",
         "evaluation.gate_metric=hard", "evaluation.resample_disagreements=0",
         "optimizer.refuse_judge_edits=false", "evaluation.substance_judge=false",
         "evaluation.stock_sentences=false", "optimizer.use_slow_update=false", "optimizer.use_meta_skill=false",
         "train.patience=null")
N_ITEMS = 700  # split 1:2:3 → ≈117 train, ≈233 val (enough for the 200 val size), ≈350 test
WORLDS = ("plain", "fallible")
# The fallible world's optimizer proposes the judge-gaming or verbose rule in 10 % of its edits.
FALLIBLE_MIX = OptimizerMix(gaming=0.1)
# The held-out check of the fallible world: its second judge's verdict (bench/sim/world.py).
HOLDOUT = "evaluation.holdout_judge={type: regex, pattern: '\\[alt pass\\]'}"


PARAPHRASES = REPO / "bench" / "gaming_paraphrases.json"
ANSWERS = REPO / "bench" / "gaming_answers.json"  # the sentence an answer writes for each gaming line


def paraphrases(half: str) -> dict[str, list[str]]:
    """``{"gaming": [...], "harmless": [...]}`` of one half (``tune`` or ``heldout``) of the
    paraphrase set, split before any defence was tuned."""
    data = json.loads(PARAPHRASES.read_text())
    if half not in ("tune", "heldout"):
        raise ValueError(f"unknown paraphrase half {half!r}; use tune or heldout")
    return data[half]


def reworded_texts(half: str, seed: int) -> tuple[str, str]:
    """The gaming rule's two wordings in the reworded world of ``seed``: drawn from one half."""
    import random

    return tuple(random.Random(f"reworded:{seed}").sample(paraphrases(half)["gaming"], 2))  # type: ignore[return-value]


def world_spec(world: str, seed: int) -> WorldSpec:
    if world in ("reworded", "reworded-tune"):
        half = "heldout" if world == "reworded" else "tune"
        return WorldSpec(seed=seed, n_items=N_ITEMS, judge=JudgeSpec(), optimizer=FALLIBLE_MIX,
                         gaming_texts=reworded_texts(half, seed))
    if world == "plain":
        return WorldSpec(seed=seed, n_items=N_ITEMS)
    if world == "fallible":
        return WorldSpec(seed=seed, n_items=N_ITEMS, judge=JudgeSpec(), optimizer=FALLIBLE_MIX)
    if world == "graded":
        return WorldSpec(seed=seed, n_items=N_ITEMS, judge=JudgeSpec(graded=True), optimizer=FALLIBLE_MIX)
    raise ValueError(f"unknown world {world!r}; use plain, fallible, reworded, reworded-tune or graded")


@dataclass(frozen=True)
class Config:
    name: str
    policy: str
    early_stop: bool
    settings: tuple[str, ...]


def configurations(variants: list[str], all_policies: bool = False) -> list[Config]:
    configs = [Config("default", "mean", True, ()), Config("paper", "mean", False, PAPER),
               Config("default+holdout", "mean", True, (HOLDOUT,))]
    if all_policies:
        configs += [Config(f"default-{p}-{'early' if e else 'full'}", p, e,
                           (f"evaluation.gate_policy={p}", f"evaluation.early_stop={str(e).lower()}"))
                    for p in POLICIES for e in (True, False)]
    for text in variants:
        name, _, body = text.partition(":")
        settings = tuple(s.strip() for s in body.split(",") if s.strip())
        policy = next((s.split("=", 1)[1] for s in settings if s.startswith("evaluation.gate_policy=")), "mean")
        early = next((s.split("=", 1)[1] for s in settings if s.startswith("evaluation.early_stop=")), "true")
        configs.append(Config(name, policy, early.lower() == "true", settings))
    return configs


def _one(job: tuple[Config, str, int, int, tuple[str, ...], str]) -> tuple[Config, str, int, int, SimRun]:
    config, world, val_size, seed, extra, root = job
    settings = [*config.settings, f"evaluation.val_limit={val_size}", f"train.seed={seed}", *extra]
    run_id = f"{config.name}-{world}-v{val_size}-s{seed}"
    result = asyncio.run(run_sim(world_spec(world, seed), settings, Path(root), run_id))
    return config, world, val_size, seed, result


def _rate(numerator: int, denominator: int) -> float | None:
    return numerator / denominator if denominator else None


def _ci(values: list[float]) -> dict:
    mean, low, high = mean_ci(values)
    return {"mean": mean, "low": low, "high": high}


def summarise(config: Config, world: str, val_size: int, runs: list[SimRun]) -> dict:
    decisions = [d for r in runs for d in r.decisions]
    worse = [d for d in decisions if d.truly_worse]
    better = [d for d in decisions if d.truly_better]
    lifts = [r.lift for r in runs]
    samples = runs[0].samples
    gated = [d for d in decisions if d.evaluated]
    per_decision = statistics.fmean(d.evaluated * samples for d in decisions) if decisions else 0.0
    phases = sorted({p for r in runs for p in r.phase_calls})
    return {
        "config": config.name, "world": world, "policy": config.policy, "early_stop": config.early_stop,
        "val_size": val_size, "seeds": len(runs),
        "lift": statistics.fmean(lifts), "lift_ci": _ci(lifts),
        "lift_sem": statistics.stdev(lifts) / math.sqrt(len(lifts)) if len(lifts) > 1 else 0.0,
        "fa_loss": statistics.fmean(r.false_accept_loss for r in runs), "fa_loss_ci": _ci([r.false_accept_loss for r in runs]),
        "fr_cost": statistics.fmean(r.false_reject_cost for r in runs), "fr_cost_ci": _ci([r.false_reject_cost for r in runs]),
        "false_accept_rate": _rate(sum(d.accepted for d in worse), len(worse)),
        "false_reject_rate": _rate(sum(not d.accepted for d in better), len(better)),
        "truly_worse": len(worse), "truly_better": len(better), "decisions": len(decisions),
        "accepted": sum(d.accepted for d in decisions), "reached_val_gate": len(gated),
        "val_rollouts_per_decision": per_decision, "val_fraction": per_decision / (val_size * samples),
        "val_calls": statistics.fmean(r.val_calls for r in runs),
        "calls": statistics.fmean(r.calls for r in runs), "calls_ci": _ci([float(r.calls) for r in runs]),
        "calls_by_role": {**{f"target.{p}": statistics.fmean(r.phase_calls.get(p, 0) for r in runs) for p in phases},
                          "optimizer": statistics.fmean(r.optimizer_calls for r in runs)},
        "gaming_in_best": statistics.fmean("gaming" in r.best_rules for r in runs),
        "verbose_in_best": statistics.fmean("verbose" in r.best_rules for r in runs),
        "wall_s": statistics.fmean(r.wall_s for r in runs),
        "failed_runs": sum(r.status not in ("completed", "cancelled") for r in runs),
        "patience_stops": sum(r.stopped_early for r in runs),
    }


def paired(results: dict[tuple, dict[int, SimRun]], configs: list[Config], worlds, val_sizes, base: str = "paper") -> list[dict]:
    """Each configuration minus ``base``, seed by seed."""
    rows = []
    for world in worlds:
        for v in val_sizes:
            ref = results.get((base, world, v))
            if not ref:
                continue
            for c in configs:
                if c.name == base:
                    continue
                mine = results[(c.name, world, v)]
                seeds = sorted(set(mine) & set(ref))
                rows.append({
                    "config": c.name, "minus": base, "world": world, "val_size": v, "seeds": len(seeds),
                    "d_lift": _ci([mine[s].lift - ref[s].lift for s in seeds]),
                    "d_fa_loss": _ci([mine[s].false_accept_loss - ref[s].false_accept_loss for s in seeds]),
                    "calls_ratio": _ci([mine[s].calls / ref[s].calls for s in seeds]),
                })
    return rows


def run_study(seeds: int, val_sizes: tuple[int, ...], configs: list[Config], extra: tuple[str, ...], jobs: int,
              root: Path, progress=None, worlds: tuple[str, ...] = WORLDS, first_seed: int = 0) -> tuple[list[dict], list[dict]]:
    work = [(c, w, v, s, extra, str(root)) for w in worlds for c in configs for v in val_sizes
            for s in range(first_seed, first_seed + seeds)]
    results: dict[tuple, dict[int, SimRun]] = {}

    def keep(n: int, c: Config, w: str, v: int, s: int, r: SimRun) -> None:
        results.setdefault((c.name, w, v), {})[s] = r
        if progress:
            progress(n, len(work))

    if jobs > 1:
        with ProcessPoolExecutor(jobs) as pool:
            for n, (c, w, v, s, r) in enumerate(pool.map(_one, work), 1):
                keep(n, c, w, v, s, r)
    else:
        for n, job in enumerate(work, 1):
            keep(n, *_one(job))
    rows = [summarise(c, w, v, list(results[(c.name, w, v)].values())) for w in worlds for c in configs for v in val_sizes]
    # Each variant minus the default too (a proposed default must not lose lift against it).
    variants = [c for c in configs if c.name not in ("default", "paper", "default+holdout")
                and not c.name.startswith("default-")]
    against_default = paired(results, variants, worlds, val_sizes, base="default") if variants else []
    return rows, paired(results, configs, worlds, val_sizes) + against_default


def _fmt(value, digits: int = 3) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _ci_text(ci: dict, digits: int = 3, signed: bool = False) -> str:
    f = f"{{:+.{digits}f}}" if signed else f"{{:.{digits}f}}"
    return f"{f.format(ci['mean'])} [{f.format(ci['low'])}, {f.format(ci['high'])}]"


def _roles(row: dict) -> str:
    return ", ".join(f"{k.removeprefix('target.')} {v:.0f}" for k, v in row["calls_by_role"].items())


def print_table(rows: list[dict], pairs: list[dict], out=sys.stdout) -> None:
    head = ("world", "config", "val", "lift [95% CI]", "FA loss/run", "FR cost/run", "FA rate (n)", "FR rate (n)",
            "calls", "gaming", "verbose", "calls by role")
    fmt = "{:<8} {:<22} {:>4} {:>24} {:>24} {:>24} {:>12} {:>12} {:>6} {:>6} {:>7}  {}"
    print(fmt.format(*head), file=out)
    for r in rows:
        print(fmt.format(
            r["world"], r["config"], r["val_size"], _ci_text(r["lift_ci"]), _ci_text(r["fa_loss_ci"], 4),
            _ci_text(r["fr_cost_ci"]), f"{_fmt(r['false_accept_rate'], 2)} ({r['truly_worse']})",
            f"{_fmt(r['false_reject_rate'], 2)} ({r['truly_better']})", f"{r['calls']:.0f}",
            f"{r['gaming_in_best']:.0%}", f"{r['verbose_in_best']:.0%}", _roles(r)), file=out)
    if pairs:
        print("\npaired differences per seed (95% CI):", file=out)
        for p in pairs:
            print(f"  {p['world']:<8} {p['config']} - {p['minus']} at val {p['val_size']} ({p['seeds']} seeds): "
                  f"Δlift {_ci_text(p['d_lift'], signed=True)}, ΔFA loss {_ci_text(p['d_fa_loss'], 4, signed=True)}, "
                  f"calls {_ci_text(p['calls_ratio'], 2)}×", file=out)


# The default's false-reject rates before issue 34 (plain / fallible / independent world), from the issue.
FR_BEFORE = {"plain": 0.48, "fallible": 0.68, "reworded": 0.70}


def targets(rows: list[dict], pairs: list[dict], default_val: int, config: str = "default") -> list[str]:
    """Issue 34's targets, each with its figure and met / not met: gaming rule in <= 10 % of
    best skills, the lift's lower 95 % bound >= paper-style's mean lift, calls <= 0.8x
    paper-style's, false-reject rate lower than before."""
    lines = []
    for world in sorted({r["world"] for r in rows}):
        mine = next((r for r in rows if r["config"] == config and r["world"] == world and r["val_size"] == default_val), None)
        paper = next((r for r in rows if r["config"] == "paper" and r["world"] == world and r["val_size"] == default_val), None)
        pair = next((p for p in pairs if p["config"] == config and p["world"] == world and p["val_size"] == default_val
                     and p["minus"] == "paper"), None)
        if not mine or not paper or not pair:
            continue
        low = mine["lift_ci"]["low"]
        lines.append(f"{world}: {config} lift {_ci_text(mine['lift_ci'])}, paper-style mean {paper['lift']:.3f} "
                     f"(target: lower bound ≥ paper's mean: {'met' if low >= paper['lift'] else 'NOT met'})")
        ratio = pair["calls_ratio"]
        lines.append(f"{world}: calls {ratio['mean']:.2f}× paper-style's [{ratio['low']:.2f}, {ratio['high']:.2f}] "
                     f"(target ≤ 0.8×: {'met' if ratio['mean'] <= 0.8 else 'NOT met'})")
        fr, before = mine["false_reject_rate"], FR_BEFORE.get(world)
        if fr is not None:
            verdict = (f"before {before:.2f}: {'met' if fr < before else 'NOT met'}" if before is not None
                       else "no earlier figure for this world")
            lines.append(f"{world}: false-reject rate {fr:.2f} ({mine['truly_better']} truly better candidates; "
                         f"false-accept rate {_fmt(mine['false_accept_rate'], 2)}) ({verdict})")
        if world != "plain":
            lines.append(f"{world}: judge-gaming rule in {mine['gaming_in_best']:.0%} of best skills "
                         f"(paper-style: {paper['gaming_in_best']:.0%}) "
                         f"(target ≤ 10%: {'met' if mine['gaming_in_best'] <= 0.10 else 'NOT met'})")
    return lines


README_START = "<!-- gate-table:start (generated by bench/gate.py --readme) -->"
README_END = "<!-- gate-table:end -->"


def readme_table(rows: list[dict], pairs: list[dict], lines: list[str], seeds: int, commit: str) -> str:
    out = [README_START, "",
           f"Generated by `python bench/gate.py --readme` at commit `{commit}`: {seeds} paired seeds, "
           f"val {rows[0]['val_size']}, mean over seeds with a 95 % interval; FA loss = true quality lost to false "
           "accepts per run, FR cost = true quality of rejected better candidates per run, gaming = share of best "
           "skills stating the judge-gaming rule.", "",
           "| world | config | lift | FA loss / run | FR cost / run | FA rate (n) | FR rate (n) | calls / run | gaming | verbose | calls by role |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if r["world"] == "plain" and r["config"] == "default+holdout":
            continue  # with an exact judge the held-out judge's verdict is the same: the row would copy `default`
        out.append(f"| {r['world']} | {r['config']} | {_ci_text(r['lift_ci'])} | {_ci_text(r['fa_loss_ci'], 4)} | "
                   f"{_ci_text(r['fr_cost_ci'])} | {_fmt(r['false_accept_rate'], 3)} ({r['truly_worse']}) | "
                   f"{_fmt(r['false_reject_rate'], 3)} ({r['truly_better']}) | "
                   f"{r['calls']:.0f} | {r['gaming_in_best']:.0%} | {r['verbose_in_best']:.0%} | {_roles(r)} |")
    out += ["", "Paired differences (per seed):", ""]
    out += [f"- {p['world']}, {p['config']} − {p['minus']}: Δlift {_ci_text(p['d_lift'], signed=True)}, "
            f"calls {_ci_text(p['calls_ratio'], 2)}×" for p in pairs
            if not (p["world"] == "plain" and p["config"] == "default+holdout")]
    out += ["", "Targets (issue 34):", ""] + [f"- {line}" for line in lines] + ["", README_END]
    return "\n".join(out)


def write_readme(text: str, path: Path = REPO / "docs" / "bench.md") -> None:
    """Replace the gate table between the markers of ``path`` (docs/bench.md, where the study's
    figures live since the README became a short page; the flag keeps its name)."""
    readme = path.read_text()
    if README_START not in readme or README_END not in readme:
        raise SystemExit(f"{path} has no gate-table markers ({README_START!r} ... {README_END!r})")
    head, rest = readme.split(README_START, 1)
    _, tail = rest.split(README_END, 1)
    path.write_text(head + text + tail)


def _commit() -> str:
    import subprocess

    try:
        sha = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                             check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True).stdout.strip()
        return sha + ("+changes" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def plot(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    markers = {"plain": "o", "fallible": "s", "graded": "^"}
    configs = sorted({r["config"] for r in rows})
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for r in rows:
        n = configs.index(r["config"])
        ci = r["lift_ci"]
        ax.errorbar(r["calls"], ci["mean"], yerr=[[ci["mean"] - ci["low"]], [ci["high"] - ci["mean"]]],
                    marker=markers.get(r["world"], "x"), color=colors[n % len(colors)], linestyle="none",
                    label=f"{r['config']} ({r['world']})")
    ax.set_xlabel("model calls per run")
    ax.set_ylabel("true held-out lift (exact), 95% CI")
    ax.set_title("Lift against calls (○ plain judge, □ fallible judge)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def paraphrase_report() -> list[str]:
    """Refusal rates of the word patterns and of the learned check on both halves of the paraphrase set."""
    from skillopt_core.optim.judge_guard import JudgeGuard

    guards = {"words": JudgeGuard(), "learned": JudgeGuard(learned=True)}
    lines = []
    for half in ("tune", "heldout"):
        data = paraphrases(half)
        for name, guard in guards.items():
            g = sum(guard.reason(t) is not None for t in data["gaming"])
            h = sum(guard.reason(t) is not None for t in data["harmless"])
            lines.append(f"{half:<8} {name:<8} rewordings refused {g}/{len(data['gaming'])} ({g / len(data['gaming']):.0%}), "
                         f"look-alikes refused {h}/{len(data['harmless'])} ({h / len(data['harmless']):.0%})")
    # The substance judge's answer-level check (skillopt_core.optim.claim_check.strip_claims), on the
    # answer sentences written for each gaming line (bench/gaming_answers.json, same halves).
    from skillopt_core.optim.claim_check import strip_claims

    answers = json.loads(ANSWERS.read_text())
    for half in ("tune", "heldout"):
        claims, ordinary = list(answers[half]["claims"].values()), answers[half]["ordinary"]
        c = sum(bool(strip_claims(t)[1]) for t in claims)
        o = sum(bool(strip_claims(t)[1]) for t in ordinary)
        lines.append(f"{half:<8} answers  claims removed {c}/{len(claims)} ({c / len(claims):.0%}), "
                     f"ordinary sentences removed {o}/{len(ordinary)} ({o / len(ordinary):.0%})")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="5 seeds and 2 epochs (about a minute on 2 cores)")
    ap.add_argument("--json", action="store_true", help="print the rows as JSON on stdout (progress on stderr)")
    ap.add_argument("--seeds", type=int, help="paired seeds per cell (default 20; --quick 5)")
    ap.add_argument("--first-seed", type=int, default=0, help="seeds are first-seed, first-seed+1, ... (a replicate study)")
    ap.add_argument("--val-sizes", type=lambda s: tuple(int(x) for x in s.split(",")), default=VAL_SIZES)
    ap.add_argument("--worlds", type=lambda s: tuple(x for x in s.split(",") if x), default=WORLDS,
                    help="plain, fallible and/or graded (a fallible judge that also grades 0-10), comma-separated")
    ap.add_argument("--all-policies", action="store_true", help="also the default loop with each gate policy, early stop on/off")
    ap.add_argument("--variant", action="append", default=[], metavar="NAME:key=value,...",
                    help="add a configuration: the defaults plus these settings")
    ap.add_argument("--skip", type=lambda s: tuple(x for x in s.split(",") if x), default=(), metavar="NAME,...",
                    help="leave these configurations out (e.g. default+holdout; paper stays: the pairs need it)")
    ap.add_argument("--set", action="append", default=[], metavar="key=value",
                    help="a setting for every configuration (e.g. train.num_epochs=2)")
    ap.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1), help="runs in parallel (processes)")
    ap.add_argument("--out", type=Path, default=REPO / "outputs" / "bench", help="where gate.csv, gate.json and gate.png go")
    ap.add_argument("--readme", action="store_true", help="rewrite the gate table of docs/bench.md from this study")
    ap.add_argument("--paraphrases", action="store_true",
                    help="only print the judge guard's refusal rates on the paraphrase set's tune and held-out halves")
    ap.add_argument("--from-json", type=Path, metavar="GATE_JSON",
                    help="no study: rebuild the tables (and with --readme the docs table) from a saved gate.json")
    args = ap.parse_args(argv)
    if args.paraphrases:
        for line in paraphrase_report():
            print(line)
        return 0
    if args.from_json:
        saved = json.loads(args.from_json.read_text())
        rows, pairs = saved["rows"], saved["paired"]
        default_val = DEFAULT_VAL_SIZE if any(r["val_size"] == DEFAULT_VAL_SIZE for r in rows) else rows[-1]["val_size"]
        lines = targets(rows, pairs, default_val)
        print_table(rows, pairs)
        for line in lines:
            print(line)
        if args.readme:
            write_readme(readme_table([r for r in rows if r["val_size"] == default_val],
                                      [p for p in pairs if p["val_size"] == default_val], lines, saved["seeds"],
                                      saved["commit"]))
            print("docs/bench.md gate table rewritten")
        return 0
    seeds = args.seeds or (5 if args.quick else 20)
    extra = tuple(args.set) + (("train.num_epochs=2",) if args.quick else ())
    configs = [c for c in configurations(args.variant, args.all_policies)
               if c.name == "paper" or c.name not in args.skip]
    log = sys.stderr if args.json else sys.stdout
    n_runs = len(configs) * len(args.val_sizes) * len(args.worlds) * seeds
    print(f"gate study: {len(configs)} configurations x {len(args.worlds)} worlds x {len(args.val_sizes)} val sizes x "
          f"{seeds} seeds ({n_runs} training runs, {args.jobs} at a time)", file=log)
    started = time.perf_counter()
    commit = _commit()

    def progress(done: int, total: int) -> None:
        if done == total or done % max(1, total // 10) == 0:
            print(f"  {done}/{total} runs ({time.perf_counter() - started:.0f} s)", file=sys.stderr)

    with tempfile.TemporaryDirectory(prefix="skillopt-gate-") as tmp:
        rows, pairs = run_study(seeds, args.val_sizes, configs, extra, args.jobs, Path(tmp), progress, args.worlds,
                                args.first_seed)
    args.out.mkdir(parents=True, exist_ok=True)
    flat = [{k: (json.dumps(v) if isinstance(v, dict) else v) for k, v in r.items()} for r in rows]
    with open(args.out / "gate.csv", "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(flat[0]))
        writer.writeheader()
        writer.writerows(flat)
    default_val = DEFAULT_VAL_SIZE if DEFAULT_VAL_SIZE in args.val_sizes else args.val_sizes[-1]
    lines = targets(rows, pairs, default_val)
    (args.out / "gate.json").write_text(json.dumps({"commit": commit, "seeds": seeds, "settings": list(extra),
                                                    "rows": rows, "paired": pairs, "targets": lines}, indent=1))
    plot(rows, args.out / "gate.png")
    if args.json:
        print(json.dumps(rows, indent=1))
    else:
        print_table(rows, pairs)
    for line in lines:
        print(line, file=log)
    if args.readme:
        write_readme(readme_table([r for r in rows if r["val_size"] == default_val],
                                  [p for p in pairs if p["val_size"] == default_val], lines, seeds, commit))
        print("README.md gate table rewritten", file=log)
    print(f"{time.perf_counter() - started:.0f} s in all (commit {commit}); wrote {args.out / 'gate.csv'}, "
          f"gate.json and gate.png", file=log)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
