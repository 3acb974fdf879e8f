"""Benchmark of ``skillopt-sleep mine`` against the reference behaviour, on planted data.

For each size (default 1k, 10k, 100k prompts) it generates a synthetic prompt set
with planted recurring tasks, near-miss pairs, one-offs and noise
(bench/mine_synth.py), stores the sessions in a fresh index under a private
``SKILLOPT_HOME``, and then, each in its own child process (so wall time and peak
RSS belong to that run alone):

- **mine**: a full ``sleep.mine.mine`` run (selection, clustering, judges, one
  transaction), then a second run with nothing new;
- **reference**: the reference implementation's rule on the same index: one task
  per session from its first prompt, and a task is "recurring" when the identical
  first prompt appears in at least two sessions.

Scores against the planted truth, for both:

- *recall*: share of planted recurring tasks found, i.e. some task holds at least
  half of that task's prompts and at least 80 % of its own members are from it;
- *precision*: share of found tasks that are such a pure planted task;
- *near-miss merges*: planted near-miss pairs that share a task where each side
  has at least 10 % of its members (single strays are counted under *strays*);
- B-cubed precision and recall over prompts, for a finer view.

Targets (from issue 8): 100k prompts in <= 20 s and <= 500 MB; 10x the prompts in
<= 15x the time; recall >= 0.9, precision >= 0.9, no near-miss merge. The machine
is shared: wall times are noisy, so each timed run is the best of ``--repeat``, and
the CPU time of the run (user + system of the mining process) is printed next to it.

Usage: ``python bench/mine.py [--sizes 1000,10000,100000] [--repeat 1] [--keep DIR]``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

TARGET_S, TARGET_MB = 20.0, 500.0


def _child(mode: str, home: str) -> dict:
    """Run one measured step in a fresh process; returns its JSON result plus wall time and peak RSS."""
    env = dict(os.environ, SKILLOPT_HOME=home)
    code = f"import sys; sys.path.insert(0, {str(REPO / 'bench')!r}); import mine; mine._in_child({mode!r})"
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=REPO)
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"{mode} failed:\n{proc.stderr}")
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    out["wall_s"] = round(wall, 3)
    return out


def _in_child(mode: str) -> None:
    from sleep.index import Index
    from sleep.mine.miner import MineOptions, mine

    t0, c0 = time.perf_counter(), time.process_time()
    if mode == "mine":
        report = mine(MineOptions())
        run_s, cpu_s = time.perf_counter() - t0, time.process_time() - c0
        again = mine(MineOptions())
        result = {"run_s": round(run_s, 3), "cpu_s": round(cpu_s, 3), "again_s": again.elapsed_s,
                  "again_nothing_new": again.nothing_new, "tasks": report.tasks_total}
    else:
        import orjson

        groups: dict[tuple[str, str], list[list]] = defaultdict(list)
        with Index.open() as index:
            for host, sid, project, data in index.conn.execute(
                    "SELECT host, session_id, project_dir, data FROM sessions WHERE is_subagent = 0 AND scripted = 0"):
                prompts = orjson.loads(data)["prompts"]
                if prompts:
                    groups[(project, prompts[0]["text"])].append([host, sid, 0])
        tasks = [members for members in groups.values() if len(members) >= 2]
        Path(os.environ["SKILLOPT_HOME"], "reference.json").write_text(json.dumps(tasks))
        result = {"run_s": round(time.perf_counter() - t0, 3), "cpu_s": round(time.process_time() - c0, 3),
                  "tasks": len(tasks)}
    result["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    print(json.dumps(result))


def _mined_tasks(home: str) -> list[list[tuple[str, str, int]]]:
    from sleep.index import Index

    os.environ["SKILLOPT_HOME"] = home
    out: dict[str, list[tuple[str, str, int]]] = defaultdict(list)
    with Index.open() as index:
        for tid, host, sid, idx in index.conn.execute("SELECT task_id, host, session_id, prompt_index FROM task_members"):
            out[tid].append((host, sid, idx))
    return list(out.values())


def score(tasks: list[list[tuple[str, str, int]]], labels: dict, near_pairs: set) -> dict:
    """Recall, precision, near-miss merges and B-cubed figures of ``tasks`` against the planted labels."""
    planted: dict[str, set] = defaultdict(set)
    for key, label in labels.items():
        if not label.startswith(("noise:", "oneoff:")):
            planted[label].add(key)
    found, pure, merges, strays = set(), 0, set(), 0
    task_of = {}
    for n, members in enumerate(tasks):
        counts = Counter(labels.get(tuple(k), "?") for k in members)
        label, top = counts.most_common(1)[0]
        for k in members:
            task_of[tuple(k)] = n
        if label in planted and top / len(members) >= 0.8:
            pure += 1
            if top / len(planted[label]) >= 0.5:
                found.add(label)
        for pair in near_pairs:
            a, b = tuple(pair)
            if counts[a] and counts[b]:
                if min(counts[a], counts[b]) / len(members) >= 0.1:
                    merges.add(pair)
                else:
                    strays += 1
    sizes = Counter(task_of.values())
    keys = [k for k, lab in labels.items() if not lab.startswith("noise:")]
    p_sum = r_sum = 0.0
    same: dict[tuple[int, str], int] = Counter((task_of[k], labels[k]) for k in keys if k in task_of)
    for k in keys:
        lab = labels[k]
        gold = len(planted[lab]) if lab in planted else 1
        if k in task_of:
            inter = same[(task_of[k], lab)] if lab in planted else 1
            p_sum += inter / sizes[task_of[k]]
            r_sum += inter / gold
        else:
            p_sum += 1.0
            r_sum += 1.0 / gold
    return {"recall": len(found) / max(1, len(planted)), "precision": pure / max(1, len(tasks)),
            "near_miss_merges": len(merges), "strays": strays, "near_miss_pairs": len(near_pairs),
            "planted": len(planted), "tasks": len(tasks), "b3_precision": p_sum / len(keys), "b3_recall": r_sum / len(keys)}


def build(n: int, home: str) -> tuple[dict, set, int]:
    import mine_synth

    from sleep.index import Index

    os.environ["SKILLOPT_HOME"] = home
    synth = mine_synth.generate(n)
    with Index.open() as index, index.transaction():
        for s in synth.sessions:
            index.put_session(s)
    prompts = sum(len(s.prompts) for s in synth.sessions)
    return synth.labels, synth.near_miss_pairs, prompts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--keep", metavar="DIR", help="keep the indexes here")
    args = ap.parse_args()
    rows = []
    base = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="mine-bench-"))
    try:
        for n in [int(x) for x in args.sizes.split(",")]:
            home = str(base / f"n{n}")
            shutil.rmtree(home, ignore_errors=True)
            labels, pairs, prompts = build(n, home)
            runs = [_child("mine", home) for _ in range(args.repeat)]
            mined = min(runs, key=lambda r: r["run_s"])
            ref = _child("reference", home)
            reference_tasks = [[tuple(k) for k in t] for t in json.loads(Path(home, "reference.json").read_text())]
            rows.append((n, prompts, mined, score(_mined_tasks(home), labels, pairs), ref,
                         score(reference_tasks, labels, pairs)))
            if len(runs) > 1:
                for r in runs:
                    shutil.rmtree(home, ignore_errors=True)
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
    _print(rows)


def _print(rows: list) -> None:
    head = (f"{'prompts':>8} {'method':<10} {'time s':>7} {'cpu s':>6} {'peak MB':>8} {'recall':>7} {'prec.':>6} "
            f"{'near-miss':>9} {'strays':>6} {'B3 P':>5} {'B3 R':>5} {'tasks':>6} {'planted':>7}")
    print(head)
    print("-" * len(head))
    for n, prompts, mined, ms, ref, rs in rows:
        for name, run, s in (("mine", mined, ms), ("reference", ref, rs)):
            print(f"{prompts:>8,} {name:<10} {run['run_s']:>7.2f} {run['cpu_s']:>6.2f} {run['peak_rss_mb']:>8.0f} {s['recall']:>7.3f} "
                  f"{s['precision']:>6.3f} {s['near_miss_merges']:>4}/{s['near_miss_pairs']:<4} {s['strays']:>6} "
                  f"{s['b3_precision']:>5.2f} {s['b3_recall']:>5.2f} {s['tasks']:>6} {s['planted']:>7}")
        print(f"{'':>8} re-mine with nothing new: {mined['again_s']:.3f} s")
    if len(rows) >= 2:
        for (n1, _, m1, *_), (n2, _, m2, *_) in zip(rows, rows[1:]):
            print(f"growth {n1:,} -> {n2:,} prompts: {m2['run_s'] / max(m1['run_s'], 1e-9):.1f}x the time "
                  f"(target <= {15 * n2 / n1 / 10:.0f}x)")
    big = rows[-1]
    print(f"load average now: {os.getloadavg()[0]:.1f} (2 cores)")
    print(f"targets at {big[1]:,} prompts: time {big[2]['run_s']:.1f} s, cpu {big[2]['cpu_s']:.1f} s (<= {TARGET_S:.0f}), "
          f"peak {big[2]['peak_rss_mb']:.0f} MB (<= {TARGET_MB:.0f}), recall >= 0.9, precision >= 0.9, "
          "no near-miss merge. Shared 2-core machine: timings are noisy.")


if __name__ == "__main__":
    main()
