"""Scaling of CPU-heavy rollout checks: SpreadsheetBench's solution.py runs on
the local executor vs a local Ray instance with 2 worker CPUs.

Each item is one task of the bundled SpreadsheetBench sample with a solution
that does ``--work`` million loop iterations of pure Python before writing its
answer, then is compared cell by cell, on both test cases; that is the check
``execution.executor`` moves to Ray. Three ways of running the same
``--items`` checks:

- ``local, one at a time``: the baseline (a single worker);
- ``local, concurrent``: every check submitted at once to the local executor
  (threads, each running its own sandboxed subprocess), as the rollout does;
- ``ray, 2 CPUs``: the same on ``ray.init(num_cpus=2)``, one CPU per task.

Prints wall time, checks per second and the speed-up over the baseline, and
checks that all three give the same scores. On a 2-core machine the ceiling
is about 2x for both concurrent rows; Ray's value is that the same setting
reaches a cluster (``execution.ray_address``). Wall times on a shared machine
are noisy; the score equality is not.

    python bench/ray_rollouts.py [--items 16] [--work 3] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from skillopt_core.envs import create_env  # noqa: E402
from skillopt_core.evaluation.executor import Job, LocalExecutor, RayExecutor  # noqa: E402
from skillopt_core.envs.spreadsheetbench.execute import check_solution  # noqa: E402

SOLUTION = """\
import sys
from openpyxl import load_workbook
total = 0
for i in range({work} * 1_000_000):
    total += i % 7
wb = load_workbook(sys.argv[1]); ws = wb.active
for r in range(2, ws.max_row + 1):
    ws.cell(r, 4).value = ws.cell(r, 2).value + ws.cell(r, 3).value
wb.save(sys.argv[2])
"""


def jobs(items: int, work: int) -> list[Job]:
    env = create_env("spreadsheetbench", {})
    tasks = env.load_tasks()
    code = SOLUTION.format(work=work)
    out = []
    for n in range(items):
        task = tasks[n % len(tasks)]
        out.append(Job(check_solution, (code, [tuple(c) for c in task.metadata["cases"]],
                                        task.metadata["answer_position"], 120.0, env.launcher), label=task.id))
    return out


async def timed(executor, batch: list[Job], concurrent: bool) -> tuple[float, list]:
    start = time.perf_counter()
    if concurrent:
        results = await asyncio.gather(*(executor.run(j) for j in batch))
    else:
        results = [await executor.run(j) for j in batch]
    return time.perf_counter() - start, [[c.passed for c in r] for r in results]


async def measure(items: int, work: int) -> dict:
    import ray

    batch = jobs(items, work)
    rows = {}
    rows["local, one at a time"] = await timed(LocalExecutor(), batch, concurrent=False)
    rows["local, concurrent"] = await timed(LocalExecutor(), batch, concurrent=True)
    start = time.perf_counter()
    ray.init(num_cpus=2, include_dashboard=False, logging_level="ERROR")
    startup = time.perf_counter() - start
    try:
        executor = RayExecutor(num_cpus=1)
        await executor.run(batch[0])  # warm one worker up: start-up is reported apart
        rows["ray, 2 CPUs"] = await timed(executor, batch, concurrent=True)
    finally:
        ray.shutdown()
    base = rows["local, one at a time"][0]
    outcomes = {name: r[1] for name, r in rows.items()}
    return {
        "items": items, "work_millions": work, "cpus": os.cpu_count(), "ray_startup_s": round(startup, 1),
        "load_avg": [round(x, 2) for x in os.getloadavg()],
        "same_scores": len({json.dumps(v) for v in outcomes.values()}) == 1,
        "rows": [{"how": name, "wall_s": round(wall, 2), "checks_per_s": round(items / wall, 2),
                  "speedup": round(base / wall, 2)} for name, (wall, _) in rows.items()],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=16)
    parser.add_argument("--work", type=int, default=3, help="million loop iterations per solution run")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = asyncio.run(measure(args.items, args.work))
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"{args.items} SpreadsheetBench checks (2 test cases each, {args.work}M loop iterations per run), "
          f"{result['cpus']} CPUs, load {result['load_avg']}, Ray start-up {result['ray_startup_s']} s")
    print(f"{'how':<24}{'wall s':>8}{'checks/s':>10}{'speed-up':>10}")
    for row in result["rows"]:
        print(f"{row['how']:<24}{row['wall_s']:>8}{row['checks_per_s']:>10}{row['speedup']:>9}x")
    print("same scores on all three: " + ("yes" if result["same_scores"] else "NO"))


if __name__ == "__main__":
    main()
