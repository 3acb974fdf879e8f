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
with min-max, and the ratio of the harvest to the plain loop is the median of the
per-round ratios. Peak RSS is each process's own high-water mark (VmHWM). Then:
peak RSS of a full harvest on the corpus and on one a quarter its size (memory
must be flat in corpus size), and a no-change re-harvest (must read 0 bytes).

``--stress`` adds the old synthetic corpus (bench/corpus_stress.py: huge tool
outputs, images, one 50 MB line) as a separate table.

Usage: ``python bench/harvest.py [--size-mb 150] [--runs 5] [--dir DIR] [--keep] [--stress]``.
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
import sleep.cli as cli, sleep.harvest as h
def _no_ds(opts, _orig=h.harvest):
    opts.use_detect_secrets = False
    return _orig(opts)
cli.harvest = _no_ds
""",
    "-actions": """
from sleep.sources.actions import TurnActions
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
class Column:
    walls: list[float] = field(default_factory=list)
    peaks_mb: list[float] = field(default_factory=list)
    mb: float = 0.0

    def rates(self) -> list[float]:
        return [self.mb / w for w in self.walls]

    def cell(self) -> str:
        r = self.rates()
        return f"{statistics.median(r):6.0f} ({min(r):.0f}-{max(r):.0f})"


def _env(home: Path, skillopt: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(HOME=str(home), SKILLOPT_HOME=str(skillopt), CLAUDE_CONFIG_DIR=str(home / ".claude"),
               CODEX_HOME=str(home / ".codex"), COPILOT_HOME=str(home / ".copilot"), PYTHONPATH=str(REPO))
    env.pop("APPDATA", None)
    env.pop("XDG_DATA_HOME", None)
    return env


def _run(argv: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """(wall seconds from spawn to exit, peak RSS MiB, stdout) of one process."""
    started = time.perf_counter()
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, cwd=str(env["HOME"]))
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"benchmark process failed ({proc.returncode}): {' '.join(argv[:3])}\n{proc.stderr[-2000:]}")
    peak = next((int(line.split()[1]) / 1024 for line in proc.stderr.splitlines() if line.startswith("VMHWM_KB")), 0.0)
    return wall, peak, proc.stdout


def harvest_once(home: Path, index_dir: Path, source: str, variant: str = "harvest") -> tuple[float, float, dict]:
    shutil.rmtree(index_dir, ignore_errors=True)
    argv = [sys.executable, "-c", _HARVEST.format(variant=_VARIANTS[variant]), "harvest", "--source", source,
            "--all-projects", "--json"]
    wall, peak, out = _run(argv, _env(home, index_dir))
    return wall, peak, json.loads(out)


def loop_once(home: Path, list_file: Path, mod: str) -> tuple[float, float, int]:
    wall, peak, out = _run([sys.executable, "-c", _LOOP.format(mod=mod), str(list_file)], _env(home, home / "none"))
    return wall, peak, int(out.strip())


def measure(home: Path, files: dict[str, list[Path]], work: Path, runs: int, variants: list[str]) -> None:
    names = list(variants) + ["json", "orjson"]
    cols = {(src, name): Column() for src in files for name in names}
    ratios: dict[str, list[float]] = {src: [] for src in files}
    reports: dict[str, dict] = {}
    for src, paths in files.items():
        (work / f"{src}.list").write_text("\n".join(map(str, paths)))
    for _ in range(runs):
        for src, paths in files.items():
            wall_h = 0.0
            for name in names:
                col = cols[(src, name)]
                if name in ("json", "orjson"):
                    wall, peak, total = loop_once(home, work / f"{src}.list", name)
                    col.mb = total / 1e6
                else:
                    wall, peak, rep = harvest_once(home, work / "index", src, name)
                    col.mb = rep["bytes_read"] / 1e6
                    reports.setdefault(src, rep)
                    if name == "harvest":
                        wall_h = wall
                col.walls.append(wall)
                col.peaks_mb.append(peak)
                if name == "json":
                    ratios[src].append(wall / wall_h)
    print(f"MB/s, whole process incl. start-up, median (min-max) of {runs} interleaved runs")
    print(f"{'host':<12} {'MB':>6} " + " ".join(f"{n:>17}" for n in names) + f" {'harvest/json':>13} {'RSS MiB':>8}")
    for src in files:
        c = cols[(src, "harvest")]
        print(f"{src:<12} {c.mb:>6.0f} " + " ".join(f"{cols[(src, n)].cell():>17}" for n in names)
              + f" {statistics.median(ratios[src]):>12.2f}x {max(c.peaks_mb):>8.0f}")
    print("\nper host (first run): " + "; ".join(
        f"{src}: {r['sessions_new']} sessions, {r['lines_total']:,} lines, {r['lines_skipped_undecoded']:,} judged "
        f"from bytes, {r['secrets_redacted']} secrets redacted, actions {r['actions']}"
        for src, r in reports.items()))


def flat_memory_and_rereads(home: Path, small: Path, work: Path, runs: int) -> None:
    full = [harvest_once(home, work / f"all-{k}", "all") for k in range(runs)]
    tiny = [harvest_once(small, work / "small", "all") for _ in range(runs)]
    big_mb, small_mb = full[0][2]["bytes_read"] / 1e6, tiny[0][2]["bytes_read"] / 1e6
    print(f"\npeak RSS of a full harvest (all hosts): {max(p for _, p, _ in full):.0f} MiB for {big_mb:,.0f} MB, "
          f"{max(p for _, p, _ in tiny):.0f} MiB for {small_mb:,.0f} MB")
    again = [harvest_once_keep(home, work / "all-0") for _ in range(runs)]
    walls = [w for w, _, _ in again]
    r = again[-1][2]
    print(f"no-change re-harvest of {r['files_seen']:,} files: {statistics.median(walls):.3f} s whole process "
          f"(min {min(walls):.3f}), files read {r['files_read']}, transcript bytes read {r['bytes_read']}")


def harvest_once_keep(home: Path, index_dir: Path) -> tuple[float, float, dict]:
    argv = [sys.executable, "-c", _HARVEST.format(variant=""), "harvest", "--all-projects", "--json"]
    wall, peak, out = _run(argv, _env(home, index_dir))
    return wall, peak, json.loads(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size-mb", type=float, default=150, help="realistic corpus size (default 150)")
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
              f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs (shared machines add noise)\n")
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
