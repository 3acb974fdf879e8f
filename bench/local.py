"""The real-model benchmark: SmolLM2-135M-Instruct (the ``local`` backend,
llama.cpp in process) is the *target* on a format-sensitive task set, and a
simulated optimizer proposes edits from a fixed pool of instructions.

Tasks: short general questions; an answer passes when it has the required
shape, one line of at most 50 characters (a 135M model rambles unless told
not to). Correctness is not judged: a 135M model is too often wrong for that
to be a signal the skill could move.

The optimizer (backend ``pool``, registered from this file) answers each
reflection with one or two instructions drawn from the pool below, by kind
with the rates of ``MIX``, never one the skill already has or the gate
already rejected. It does not know which instructions really help this model
(the kinds are our guess); the gate finds out, under the model's real
sampling noise (temperature 0.7, a different sample seed per training seed).

Reported per seed: val and test score of the initial and the trained (best)
skill, gate decisions, target calls and wall time; then the mean and spread of
the test change over seeds. What this can show: that the loop, on a real and
noisy model, keeps instructions that move the model's real scores and drops
the ones that don't. What it cannot show: anything about a capable optimizer,
about correctness, or about skills for a model that follows instructions well.

Usage: ``python bench/local.py [--quick] [--json] [--seeds N]``.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import random
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from skillopt_core.backends import BackendSpec, Completion, CompletionRequest, Usage, register_backend  # noqa: E402
from skillopt_core.run.api import prepare_training  # noqa: E402
from skillopt_core.tasks.data import Dataset  # noqa: E402
from skillopt_core.tasks.task import Task  # noqa: E402

QUESTIONS = (
    "What is the capital of France?", "How many legs does a spider have?", "What colour is the sky on a clear day?",
    "What is 7 plus 5?", "Name the largest planet in the solar system.", "What language is spoken in Spain?",
    "What is the opposite of hot?", "How many days are in a week?", "What do bees make?",
    "Which animal is known as the king of the jungle?", "What is frozen water called?", "How many hours are in a day?",
    "What is the capital of Japan?", "What gas do plants take in from the air?", "What is 10 minus 3?",
    "Which season comes after winter?", "What do cows drink?", "What is the boiling point of water in Celsius?",
    "Name a primary colour.", "What is the largest ocean on Earth?", "How many continents are there?",
    "What shape has three sides?", "What is the capital of Italy?", "Which planet is called the red planet?",
    "What is the chemical symbol for gold?", "How many minutes are in an hour?", "What is the main ingredient of bread?",
    "Which bird is a symbol of peace?", "What is the fastest land animal?", "What is 3 times 4?",
    "What is the capital of Germany?", "What do you call a baby cat?", "Which organ pumps blood?",
    "What is the tallest animal?", "How many wheels does a bicycle have?", "What is the capital of Canada?",
    "What colour are bananas when ripe?", "What is the freezing point of water in Celsius?",
    "Which instrument has 88 keys?", "What is the square root of 9?", "What is the largest mammal?",
    "Which month has the fewest days?", "What do caterpillars turn into?", "What is the capital of Egypt?",
    "How many sides does a hexagon have?", "What is H2O commonly called?", "Which star is closest to Earth?",
    "What is the opposite of up?",
)
JUDGE = [{"type": "max_chars", "limit": 50}, {"type": "regex", "pattern": r"\w"}]
SEED_SKILL = "# Answering questions\n\n- Read the question carefully.\n- Answer the question.\n"
POOL = {
    "helpful": ("Keep the reply under ten words.", "Reply with one word only.", "Give only the answer, no explanation.",
                "Reply with one short sentence."),
    "neutral": ("Be polite.", "Use simple words.", "Think about the topic of the question."),
    "harmful": ("Explain your reasoning in detail before answering.", "Begin your reply with a friendly greeting.",
                "Give some background on the topic before the answer."),
}
MIX = {"helpful": 0.4, "neutral": 0.3, "harmful": 0.3}
KIND = {text: kind for kind, texts in POOL.items() for text in texts}


class PoolOptimizer:
    """A simulated optimizer that proposes instructions from :data:`POOL`."""

    name = "pool"
    model = "instruction-pool"

    def describe(self) -> str:
        return "simulated optimizer: instructions from a fixed pool (not a model)"

    def reply(self, request: CompletionRequest) -> str:
        prompt = "\n".join(m.content for m in request.messages)
        rng = random.Random(hashlib.sha256(prompt.encode()).hexdigest())
        if request.stage == "reflect":
            skill = prompt.split("## Examples", 1)[0]
            rejected = prompt.split("rejected by validation", 1)[1] if "rejected by validation" in prompt else ""
            edits = []
            for _ in range(rng.randint(1, 2)):
                kind = rng.choices(list(MIX), weights=list(MIX.values()))[0]
                options = [t for t in POOL[kind] if t not in skill and t not in rejected
                           and t not in [e["content"] for e in edits]]
                if options:
                    edits.append({"op": "add", "content": f"- {rng.choice(options)}", "rationale": "answers fail"})
            return json.dumps({"edits": edits})
        if request.stage == "merge":
            return json.dumps({"edits": []})
        if request.stage == "rank":  # no insight: a random order
            numbers = [int(n) for n in re.findall(r"^(\d+)\. \{", prompt, re.M)]
            rng.shuffle(numbers)
            return json.dumps({"order": numbers})
        if request.stage == "slow_update":
            return json.dumps({"guidance": "- Keep what worked."})
        return json.dumps({"notes": "- Short answers pass."})

    async def complete(self, request: CompletionRequest) -> Completion:
        text = self.reply(request)
        return Completion(text, Usage(len(request.prompt_text) // 4, len(text) // 4, 0.0), self.model)


@register_backend("pool")
def _create_pool(spec: BackendSpec) -> PoolOptimizer:
    return PoolOptimizer()


def dataset(quick: bool) -> Dataset:
    """A fixed split (train, val, test): 8/8/16 questions with --quick, else 12/16/20."""
    items = [Task(id=f"q{i:02d}", prompt=q, judge=JUDGE) for i, q in enumerate(QUESTIONS)]
    n_train, n_val, n_test = (8, 8, 16) if quick else (12, 16, 20)
    return Dataset(tuple(items[:n_train]), tuple(items[n_train:n_train + n_val]),
                   tuple(items[n_train + n_val:n_train + n_val + n_test]))


def settings_for(root: Path, seed: int, quick: bool, extra: list[str]) -> list[str]:
    return [
        "model.backend=pool", "model.target_backend=local", "model.n_threads=2", "model.temperature=0.7",
        "model.target_max_tokens=32", f"train.seed={seed}", "train.workers=2",
        f"train.num_epochs={2 if quick else 3}", "train.batch_size=16", "train.steps_per_epoch=1",
        "optimizer.use_slow_update=false", "optimizer.use_meta_skill=false",
        f"output.root={root}", f"output.run_id=local-s{seed}", "output.plot=false", *extra,
    ]


def added_lines(skill: str) -> list[str]:
    seed = set(SEED_SKILL.splitlines())
    return [line for line in skill.splitlines() if line.strip() and line not in seed]


async def one_seed(seed: int, quick: bool, root: Path, extra: list[str]) -> dict:
    run = prepare_training(None, overrides=settings_for(root, seed, quick, extra), tasks=dataset(quick),
                           seed_skill=SEED_SKILL)
    started = time.perf_counter()
    summary = await run.run()
    wall = time.perf_counter() - started
    history = json.loads((Path(summary.run_dir) / "history.json").read_text())
    best = (Path(summary.run_dir) / "best_skill.md").read_text()
    splits = json.loads((Path(summary.run_dir) / "dataset.json").read_text())["splits"]
    target_calls = sum(h["usage"].get("target", {}).get("rollout", {}).get("calls", 0) for h in history)
    return {
        "seed": seed, "status": summary.status, "train": len(splits["train"]), "val": len(splits["val"]),
        "test": len(splits["test"]), "initial_val": summary.initial_val, "best_val": summary.best_val,
        "initial_test": summary.initial_test, "trained_test": summary.best_test,
        "decisions": [{"step": h["step"], "action": h["action"], "edits": [e["content"] for e in h["selected_edits"]],
                       "kinds": [KIND.get(e["content"].lstrip("- "), "?") for e in h["selected_edits"]],
                       "evaluated": h["gate_evaluated"], "reason": h["gate_reason"]} for h in history],
        "trained_skill_adds": added_lines(best), "calls": summary.usage["calls"],
        "target_calls_in_steps": target_calls, "wall_s": wall,
    }


def summarise(runs: list[dict]) -> dict:
    deltas = [r["trained_test"] - r["initial_test"] for r in runs]
    initial = [r["initial_test"] for r in runs]
    trained = [r["trained_test"] for r in runs]

    def sd(xs: list[float]) -> float:
        return statistics.stdev(xs) if len(xs) > 1 else 0.0

    return {
        "model": "SmolLM2-135M-Instruct (local backend, llama.cpp)", "seeds": len(runs),
        "initial_test_mean": statistics.fmean(initial), "initial_test_sd": sd(initial),
        "trained_test_mean": statistics.fmean(trained), "trained_test_sd": sd(trained),
        "delta_mean": statistics.fmean(deltas), "delta_sd": sd(deltas),
        "trained_ge_initial": sum(d >= 0 for d in deltas),
        "calls_mean": statistics.fmean(r["calls"] for r in runs), "wall_s_mean": statistics.fmean(r["wall_s"] for r in runs),
        "runs": runs,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="8/8/16 questions, 2 seeds, 2 epochs (about two minutes)")
    ap.add_argument("--json", action="store_true", help="print the result as JSON on stdout")
    ap.add_argument("--seeds", type=int, help="training seeds (default 5; --quick 2)")
    ap.add_argument("--set", action="append", default=[], metavar="key=value", help="a setting of every run")
    args = ap.parse_args(argv)
    seeds = args.seeds or (2 if args.quick else 5)
    log = sys.stderr if args.json else sys.stdout
    runs = []
    with tempfile.TemporaryDirectory(prefix="skillopt-local-") as tmp:
        for seed in range(seeds):
            r = asyncio.run(one_seed(seed, args.quick, Path(tmp), args.set))
            runs.append(r)
            print(f"seed {seed}: test {r['initial_test']:.3f} → {r['trained_test']:.3f} "
                  f"(val {r['initial_val']:.3f} → {r['best_val']:.3f}; {r['train']}/{r['val']}/{r['test']} "
                  f"train/val/test), {r['calls']} calls, {r['wall_s']:.0f} s", file=log)
            for d in r["decisions"]:
                shown = "; ".join(f"{e.lstrip('- ')} [{k}]" for e, k in zip(d["edits"], d["kinds"])) or "no edits"
                print(f"    step {d['step']}: {d['action']:<9} {shown}  ({d['evaluated']} val items: {d['reason']})",
                      file=log)
    result = summarise(runs)
    if args.json:
        print(json.dumps(result, indent=1))
        return 0
    r = result
    print(f"\n{r['model']}, {r['seeds']} seeds")
    print(f"test score: initial {r['initial_test_mean']:.3f} ± {r['initial_test_sd']:.3f}, trained "
          f"{r['trained_test_mean']:.3f} ± {r['trained_test_sd']:.3f} (mean ± sd over seeds)")
    print(f"change: {r['delta_mean']:+.3f} ± {r['delta_sd']:.3f}; trained ≥ initial in {r['trained_ge_initial']} of "
          f"{r['seeds']} seeds; {r['calls_mean']:.0f} calls and {r['wall_s_mean']:.0f} s per run")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
