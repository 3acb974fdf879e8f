"""Benchmark of ``skillopt-sleep daemon``: idle cost, memory, and how fast the watcher marks files.

In a temporary home holding a generated corpus of ``--files`` transcript files
(bench/corpus_realistic.py; Claude Code, Codex, VS Code Copilot Chat and Copilot
CLI in their real folder layouts) with ``--projects`` daemon schedules (hours
away, so no night runs), it starts ``python -m sleep.cli daemon`` with its
watcher on every transcript root, waits until the watcher is up and settled, then:

- **idle CPU**: the daemon process's user + system CPU time over ``--idle``
  seconds (one heartbeat and one schedule refresh included), as % of one core;
- **RSS**: the daemon's resident and peak memory (VmRSS, VmHWM) after that;
- **marking latency**: ``--samples`` times, a line is appended to a random
  session file and the index is polled (every 10 ms) until that file's note
  appears or changes; the samples are spaced so each is its own burst;
- **the night's harvest**: a full-scan harvest (which anchors the watch), then
  appends to 5 files and the next harvest, which reads only the noted files;
  both wall times, next to a full scan of the same unchanged corpus.

Targets (issue 12): idle CPU ≤ 1 % of one core, RSS ≤ 120 MB, marking latency ≤ 2 s.
Linux only (reads /proc). Nothing touches the real home: every location is an
environment variable pointed into the temporary folder.

    python bench/daemon.py [--files 2000] [--projects 3] [--idle 60] [--samples 20] [--json]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

import corpus_realistic as corpus  # noqa: E402

SPLIT = {"claude-code": 0.6, "codex": 0.25, "copilot-vscode": 0.1, "copilot-cli": 0.05}
TICK = os.sysconf("SC_CLK_TCK")


def generate(home: Path, n_files: int, seed: int = 12) -> list[Path]:
    """About ``n_files`` small sessions split by :data:`SPLIT`; returns the transcript files."""
    g = corpus.Gen(seed)
    for host, share in SPLIT.items():
        for i in range(int(n_files * share)):
            corpus.GENERATORS[host](g, home, i, 3_000)
    files = [p for group in corpus.files_by_host(home).values() for p in group]
    return files


def env_for(tmp: Path) -> dict[str, str]:
    env = dict(os.environ)
    for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "COPILOT_HOME", "APPDATA", "XDG_DATA_HOME"):
        env.pop(name, None)
    env.update(HOME=str(tmp / "home"), SKILLOPT_HOME=str(tmp / "data"), PYTHONPATH=str(REPO))
    return env


def cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sleep.cli", *args], env=env, capture_output=True, text=True,
                          check=True, timeout=1800)


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime, stime


def memory_mb(pid: int) -> dict[str, float]:
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key = line.split(":")[0]
        if key in ("VmRSS", "VmHWM", "Threads"):
            value = int(line.split()[1])
            out[key] = value / 1024 if key != "Threads" else value
    return out


def note_version(db: Path, path: str) -> int:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
    try:
        row = conn.execute("SELECT version FROM noted_files WHERE path = ?", (path,)).fetchone()
    finally:
        conn.close()
    return row[0] if row else 0


def watcher_up(db: Path) -> bool:
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
        try:
            row = conn.execute("SELECT roots FROM watch_epochs WHERE stopped_at IS NULL ORDER BY id DESC").fetchone()
        finally:
            conn.close()
    except sqlite3.Error:
        return False
    return bool(row and json.loads(row[0]))


def append_line(path: Path) -> None:
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps({"type": "user", "message": {"role": "user", "content": "bench line"},
                            "timestamp": datetime.utcnow().isoformat() + "Z"}) + "\n")


def latency(db: Path, files: list[Path], samples: int, rng: random.Random) -> list[float]:
    out = []
    for _ in range(samples):
        path = rng.choice(files)
        before = note_version(db, str(path))
        t0 = time.perf_counter()
        append_line(path)
        while note_version(db, str(path)) == before:
            if time.perf_counter() - t0 > 30:
                raise RuntimeError(f"{path} was not marked within 30 s")
            time.sleep(0.01)
        out.append(time.perf_counter() - t0)
        time.sleep(1.5)
    return out


def timed_harvest(env: dict[str, str]) -> tuple[float, dict]:
    t0 = time.perf_counter()
    report = json.loads(cli(env, "harvest", "--all-projects", "--json").stdout)
    return time.perf_counter() - t0, report


def run(args: argparse.Namespace) -> dict:
    tmp = Path(tempfile.mkdtemp(prefix="skillopt-bench-daemon-"))
    env = env_for(tmp)
    home = tmp / "home"
    t0 = time.perf_counter()
    files = generate(home, args.files)
    result: dict = {"files": len(files), "corpus_mb": round(sum(p.stat().st_size for p in files) / 1e6, 1),
                    "generate_s": round(time.perf_counter() - t0, 1), "projects": args.projects}
    later = (datetime.now() + timedelta(hours=6)).strftime("%H:%M")
    for i in range(args.projects):
        project = tmp / f"project{i}"
        project.mkdir()
        cli(env, "schedule", "--mode", "daemon", "--project", str(project), "--at", later)
    db = tmp / "data" / "sleep.sqlite3"
    proc = subprocess.Popen([sys.executable, "-m", "sleep.cli", "daemon", "--quiet"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        t0 = time.perf_counter()
        while not watcher_up(db):
            if proc.poll() is not None:
                raise RuntimeError(f"the daemon exited: {proc.stderr.read() if proc.stderr else ''}")
            time.sleep(0.1)
        result["watcher_start_s"] = round(time.perf_counter() - t0, 2)
        time.sleep(args.settle)
        c0, w0 = cpu_s(proc.pid), time.perf_counter()
        time.sleep(args.idle)
        c1, w1 = cpu_s(proc.pid), time.perf_counter()
        result["idle_s"] = round(w1 - w0, 1)
        result["idle_cpu_s"] = round(c1 - c0, 3)
        result["idle_cpu_pct"] = round(100 * (c1 - c0) / (w1 - w0), 3)
        result["cpu_resolution_s"] = 1 / TICK
        result.update({k.lower() + ("_mb" if k != "Threads" else ""): round(v, 1)
                       for k, v in memory_mb(proc.pid).items()})
        lat = latency(db, files, args.samples, random.Random(7))
        ranked = sorted(lat)
        result["latency_s"] = {"median": round(statistics.median(lat), 3),
                               "p90": round(ranked[math.ceil(0.9 * len(ranked)) - 1], 3), "max": round(ranked[-1], 3)}
        anchor_s, anchor = timed_harvest(env)  # the first scan since the watcher started: anchors every host
        for path in random.Random(9).sample(files, 5):
            append_line(path)
        time.sleep(2.0)
        noted_s, noted_report = timed_harvest(env)
        result["harvest"] = {"first_full_scan_s": round(anchor_s, 2), "first_full_scan_work_s": anchor["elapsed_s"],
                             "noted_after_5_appends_s": round(noted_s, 2),
                             "noted_after_5_appends_work_s": noted_report["elapsed_s"],
                             "noted_files_read": noted_report["files_read"], "modes": noted_report["watch"]}
        proc.send_signal(signal.SIGTERM)
        t0 = time.perf_counter()
        result["stop_exit"] = proc.wait(timeout=60)
        result["stop_s"] = round(time.perf_counter() - t0, 2)
        scan_s, scan_report = timed_harvest(env)  # watcher gone: the full cursor scan, nothing changed
        result["harvest"]["full_scan_unchanged_s"] = round(scan_s, 2)
        result["harvest"]["full_scan_unchanged_work_s"] = scan_report["elapsed_s"]
        result["harvest"]["full_scan_mode"] = scan_report["watch"].get("claude-code", "")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if not args.keep:
            import shutil

            shutil.rmtree(tmp, ignore_errors=True)
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--files", type=int, default=2000)
    ap.add_argument("--projects", type=int, default=3)
    ap.add_argument("--idle", type=float, default=60.0)
    ap.add_argument("--samples", type=int, default=20)
    ap.add_argument("--settle", type=float, default=5.0, help="seconds between the watcher starting and measuring")
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    r = run(args)
    if args.json:
        print(json.dumps(r, indent=2))
        return 0
    lat, h = r["latency_s"], r["harvest"]
    print(f"corpus: {r['files']} transcript files, {r['corpus_mb']} MB; {r['projects']} daemon schedules; "
          f"load average {os.getloadavg()[0]:.2f}")
    print(f"watcher up in {r['watcher_start_s']} s")
    print(f"idle CPU over {r['idle_s']} s: {r['idle_cpu_s']} s = {r['idle_cpu_pct']:.3f} % of one core "
          f"(counted in {r['cpu_resolution_s']} s ticks)   (target <= 1 %)")
    print(f"RSS {r['vmrss_mb']} MB, peak {r['vmhwm_mb']} MB, {r['threads']} threads   (target <= 120 MB)")
    print(f"marking latency: median {lat['median']} s, p90 {lat['p90']} s, max {lat['max']} s   (target <= 2 s)")
    print("harvest (process wall / the harvest's own work):")
    print(f"  first scan, anchors the watch     {h['first_full_scan_s']:>6} s / {h['first_full_scan_work_s']} s")
    print(f"  5 appends, noted files only       {h['noted_after_5_appends_s']:>6} s / "
          f"{h['noted_after_5_appends_work_s']} s ({h['noted_files_read']} files read)")
    print(f"  unchanged, full scan (no watcher) {h['full_scan_unchanged_s']:>6} s / {h['full_scan_unchanged_work_s']} s")
    print(f"SIGTERM: exit {r['stop_exit']} in {r['stop_s']} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
