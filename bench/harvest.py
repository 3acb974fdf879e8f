"""Benchmark of the SkillOpt-Sleep harvest on a corpus shaped like real sessions.

Builds a realistic corpus (bench/corpus_realistic.py: Claude Code, Codex, VS Code
Copilot Chat and Copilot CLI sessions of typical record shapes and sizes) in a
temp dir, then measures, per host, whole processes started the way a user starts
them (interpreter start-up and imports included):

- ``harvest``: ``python -m sleep.cli harvest --source HOST --all-projects`` on a
  fresh index, redaction on (the product default);
- ``json`` / ``orjson``: a process that only runs ``json.loads`` / ``orjson.loads``
  on every line of the same files;
- ``-detect-secrets`` / ``-actions``: the harvest without the detect-secrets layer,
  and without the per-turn shell/files extraction (what each costs).

Every measurement runs ``--runs`` times, interleaved round by round (the machine
may be shared: noise hits every column alike); the table shows the median MB/s
(wall clock) with min-max, and the ratio of the harvest to the plain loop as the
median of the per-round ratios, by wall time and by CPU time (user + system of the
process, which other work on a shared machine disturbs far less). Peak RSS is each
process's own high-water mark (VmHWM). Then:
peak RSS of a full harvest on the corpus and on one a quarter its size (memory
must be flat in corpus size), and a no-change re-harvest (must read 0 bytes).

``--stress`` adds the old synthetic corpus (bench/corpus_stress.py: huge tool
outputs, images, one 50 MB line) as a separate table.

Usage: ``python bench/harvest.py [--size-mb 300] [--runs 5] [--dir DIR] [--keep] [--stress]``.
Nothing here touches the real home: every location is an environment variable
pointed at the corpus directory, and corpora are never written inside the repository.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

import corpus_realistic  # noqa: E402
import corpus_stress  # noqa: E402

_HWM = """
import atexit, sys
def _hwm():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            sys.stderr.write("VMHWM_KB %s\\n" % line.split()[1])
atexit.register(_hwm)
"""
_VARIANTS = {
    "harvest": "",
    "-detect-secrets": """
import sleep.harvest.harvester as h
def _no_ds(opts, _orig=h.harvest):
    opts.use_detect_secrets = False
    return _orig(opts)
h.harvest = _no_ds  # what the harvest command calls (sleep.harvest.cli imports it at call time)
""",
    "-actions": """
from sleep.harvest.sources.actions import TurnActions
for _name in ("command", "path", "patch", "claude_tool"):
    setattr(TurnActions, _name, lambda self, *a, **k: None)
""",
}
_HARVEST = _HWM + "{variant}\nfrom sleep.cli import main\nsys.exit(main(sys.argv[1:]))\n"
_LOOP = _HWM + """
import {mod}
loads = {mod}.loads
total = 0
for path in open(sys.argv[1]).read().split("\\n"):
    if not path:
        continue
    with open(path, "rb") as f:
        for line in f:
            total += len(line)
            try:
                loads(line)
            except ValueError:
                pass
print(total)
"""


@dataclass
class Run:
    wall: float  # seconds from spawn to exit
    cpu: float  # user + system seconds of the process
    peak_mb: float  # its peak RSS (VmHWM), MiB
    out: str


@dataclass
class Column:
    runs: list[Run] = field(default_factory=list)
    mb: float = 0.0

    def cell(self) -> str:
        r = [self.mb / x.wall for x in self.runs]
        return f"{statistics.median(r):6.0f} ({min(r):.0f}-{max(r):.0f})"

    def median_cpu(self) -> float:
        return statistics.median(x.cpu for x in self.runs)


def _workers() -> str:
    """The harvest's worker count in the measured code (asked of a process that imports it)."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    out = subprocess.run([sys.executable, "-c", "from sleep.harvest.pool import workers; print(workers())"],
                         env=env, capture_output=True, text=True, cwd=tempfile.gettempdir())
    return out.stdout.strip() if out.returncode == 0 else "1 (no pool in this code)"


def _env(home: Path, skillopt: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(HOME=str(home), SKILLOPT_HOME=str(skillopt), CLAUDE_CONFIG_DIR=str(home / ".claude"),
               CODEX_HOME=str(home / ".codex"), COPILOT_HOME=str(home / ".copilot"), PYTHONPATH=str(REPO))
    env.pop("APPDATA", None)
    env.pop("XDG_DATA_HOME", None)
    # An installed package has compiled bytecode: a process that compiles every module
    # first (PYTHONDONTWRITEBYTECODE, set on some CI machines) is not how a user runs it.
    # Bytecode goes beside the corpus, never into the repository.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(home.parent / "pycache")
    return env


def _run(argv: list[str], env: dict[str, str]) -> Run:
    with tempfile.TemporaryFile() as out_f, tempfile.TemporaryFile() as err_f:
        started = time.perf_counter()
        proc = subprocess.Popen(argv, env=env, stdout=out_f, stderr=err_f, cwd=str(env["HOME"]))
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        out_f.seek(0)
        err_f.seek(0)
        out, err = out_f.read().decode(), err_f.read().decode(errors="replace")
    if proc.returncode != 0:
        raise SystemExit(f"benchmark process failed ({proc.returncode}): {' '.join(argv[:3])}\n{err[-2000:]}")
    peak = next((int(line.split()[1]) / 1024 for line in err.splitlines() if line.startswith("VMHWM_KB")), 0.0)
    return Run(wall, usage.ru_utime + usage.ru_stime, peak, out)


def harvest_once(home: Path, index_dir: Path, source: str, variant: str = "harvest", fresh: bool = True) -> Run:
    """One harvest process (on a fresh index unless ``fresh`` is False); ``out`` is its JSON report."""
    if fresh:
        shutil.rmtree(index_dir, ignore_errors=True)
    argv = [sys.executable, "-c", _HARVEST.format(variant=_VARIANTS[variant]), "harvest", "--source", source,
            "--all-projects", "--json"]
    return _run(argv, _env(home, index_dir))


def loop_once(home: Path, list_file: Path, mod: str) -> Run:
    return _run([sys.executable, "-c", _LOOP.format(mod=mod), str(list_file)], _env(home, home / "none"))


def measure(home: Path, files: dict[str, list[Path]], work: Path, runs: int, variants: list[str]) -> None:
    names = list(variants) + ["json", "orjson"]
    cols = {(src, name): Column() for src in files for name in names}
    reports: dict[str, dict] = {}
    for src, paths in files.items():
        (work / f"{src}.list").write_text("\n".join(map(str, paths)))
    harvest_once(home, work / "warm-up", "all")  # writes the bytecode every later process loads
    for _ in range(runs):
        for src in files:
            for name in names:
                col = cols[(src, name)]
                if name in ("json", "orjson"):
                    run = loop_once(home, work / f"{src}.list", name)
                    col.mb = int(run.out.strip()) / 1e6
                else:
                    run = harvest_once(home, work / "index", src, name)
                    rep = json.loads(run.out)
                    col.mb = rep["bytes_read"] / 1e6
                    reports.setdefault(src, rep)
                col.runs.append(run)
    print(f"MB/s of whole processes incl. start-up (wall clock), median (min-max) of {runs} interleaved runs.")
    print("harvest/json: the harvest's speed over the plain json.loads loop's, median of the per-round ratios,")
    print("by wall time / by CPU time. RSS: the harvest's peak.")
    print(f"{'host':<12} {'MB':>5} " + " ".join(f"{n:>16}" for n in names) + f" {'harvest/json':>13} {'RSS MiB':>8}")
    for src in files:
        h, j = cols[(src, "harvest")], cols[(src, "json")]
        by_wall = statistics.median(jr.wall / hr.wall for jr, hr in zip(j.runs, h.runs))
        by_cpu = statistics.median(jr.cpu / hr.cpu for jr, hr in zip(j.runs, h.runs))
        print(f"{src:<12} {h.mb:>5.0f} " + " ".join(f"{cols[(src, n)].cell():>16}" for n in names)
              + f" {by_wall:>6.2f}/{by_cpu:.2f}x {max(r.peak_mb for r in h.runs):>8.0f}")
    for name in variants[1:]:
        costs = ", ".join(
            f"{src} {100 * (cols[(src, 'harvest')].median_cpu() / cols[(src, name)].median_cpu() - 1):+.0f} %"
            for src in files)
        print(f"CPU time the harvest spends on what '{name}' leaves out: {costs}")
    print("\nper host (first run): " + "; ".join(
        f"{src}: {r['sessions_new']} sessions, {r['lines_total']:,} lines, {r['lines_skipped_undecoded']:,} judged "
        f"from bytes, {r['secrets_redacted']} secrets redacted, actions {r['actions']}"
        for src, r in reports.items()))


def flat_memory_and_rereads(home: Path, small: Path, work: Path, runs: int) -> None:
    full = [harvest_once(home, work / f"all-{k}", "all") for k in range(runs)]
    tiny = [harvest_once(small, work / "small", "all") for _ in range(runs)]
    big_mb = json.loads(full[0].out)["bytes_read"] / 1e6
    small_mb = json.loads(tiny[0].out)["bytes_read"] / 1e6
    print(f"\npeak RSS of a full harvest (all hosts): {max(r.peak_mb for r in full):.0f} MiB for {big_mb:,.0f} MB, "
          f"{max(r.peak_mb for r in tiny):.0f} MiB for {small_mb:,.0f} MB")
    again = [harvest_once(home, work / "all-0", "all", fresh=False) for _ in range(runs)]
    walls = [r.wall for r in again]
    rep = json.loads(again[-1].out)
    print(f"no-change re-harvest of {rep['files_seen']:,} files: {statistics.median(walls):.3f} s whole process "
          f"(min {min(walls):.3f}), files read {rep['files_read']}, transcript bytes read {rep['bytes_read']}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size-mb", type=float, default=300, help="realistic corpus size (default 300)")
    ap.add_argument("--runs", type=int, default=5, help="runs of each measurement (median shown; default 5)")
    ap.add_argument("--dir", type=Path, help="where to build the corpora (default: a new temp dir)")
    ap.add_argument("--keep", action="store_true", help="keep the corpora afterwards")
    ap.add_argument("--stress", action="store_true", help="also run the old stress corpus (50 MB line)")
    ap.add_argument("--no-variants", action="store_true", help="skip the -detect-secrets and -actions columns")
    args = ap.parse_args()
    root = (args.dir or Path(tempfile.mkdtemp(prefix="skillopt-bench-"))).resolve()
    if root == REPO or REPO in root.parents:
        raise SystemExit("--dir must be outside the repository: corpora are never committed")
    variants = ["harvest"] if args.no_variants else list(_VARIANTS)
    try:
        t = time.perf_counter()
        home, small, work = root / "home", root / "home-small", root / "work"
        work.mkdir(parents=True, exist_ok=True)
        files = corpus_realistic.generate(home, int(args.size_mb * 1e6))
        corpus_realistic.generate(small, int(args.size_mb * 0.25e6), seed=17)
        n = sum(len(v) for v in files.values())
        mb = sum(p.stat().st_size for v in files.values() for p in v) / 1e6
        print(f"realistic corpus: {mb:,.0f} MB in {n:,} files under {home} (built in {time.perf_counter() - t:.0f} s); "
              f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs (shared machines add noise), "
              f"harvest workers {_workers()}\n")
        measure(home, files, work, args.runs, variants)
        flat_memory_and_rereads(home, small, work, args.runs)
        if args.stress:
            shome = root / "stress"
            sfiles = corpus_stress.generate(shome, int(args.size_mb * 1e6))
            print("\nstress corpus (huge tool outputs, images, one 50 MB line):")
            measure(shome, sfiles, work, max(1, args.runs // 2), ["harvest"])
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
