"""Wall time of a default night on the embedded local model, stage by stage.

Builds the demo home (the team's two weeks of Claude Code, Codex and Copilot
sessions for tiny-ledger, ``sleep/demo_transcripts``, with the demo's own
``amounts`` sessions) in a scratch directory,
then runs ``skillopt-sleep run --dry-run`` in a child process with the
default settings and ``--backend local`` (so the local-model profile,
``sleep/configs/local.yaml``, applies as it does for a person without an agent
CLI or API key). Each ``[Stage]`` line the night prints is
timestamped, so the figures say where the time goes. ``--set`` passes night
settings through (e.g. the settings before the profile, to compare).

Prints the wall time next to the issue's baselines (default settings before
the local profile: 1,200 s for a dry run; the demo's sizes: 308 s) and the
target (300 s on 2 cores). This is a shared machine: the load average is
printed before and after, and the figure only means something next to it.

Usage::

    nice -n 15 python bench/night_local.py [--set KEY=VALUE ...] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

BASELINES = {"default settings before the local profile (dry run)": 1200.0, "the demo's sizes (real night)": 308.0}
TARGET_S = 300.0
_STAGE = re.compile(r"^\[(Harvest|Mine|Tasks|Replay|Setup|Step \d+/\d+|Gate|Proposal|Night|Test)\]")


def build_home(root: Path) -> tuple[Path, dict[str, str]]:
    from sleep.cycle.demo import DEMO_SETS, install_transcripts, make_project, scratch_env

    project = make_project(root / "tiny-ledger")
    env = scratch_env(root)
    install_transcripts(Path(env["HOME"]), project, DEMO_SETS)
    return project, env


def run(project: Path, env: dict[str, str], overrides: list[str], dry_run: bool
        ) -> tuple[float, int, list[tuple[float, str]]]:
    argv = [sys.executable, "-m", "sleep.cli", "run", "--project", str(project), "--backend", "local",
            "--skill", str(project / ".claude/skills/ledger-dev/SKILL.md"), *(["--dry-run"] if dry_run else []),
            *[a for o in overrides for a in ("--set", o)]]
    started = time.perf_counter()
    marks: list[tuple[float, str]] = []
    with subprocess.Popen(argv, env=env, cwd=project, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          bufsize=1) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            line = line.rstrip("\n")
            at = time.perf_counter() - started
            if _STAGE.match(line) or line.startswith("Night "):
                marks.append((at, line))
                print(f"{at:7.1f} s  {line[:150]}", flush=True)
    return time.perf_counter() - started, proc.returncode, marks


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--set", dest="overrides", action="append", default=[], metavar="SECTION.KEY=VALUE")
    ap.add_argument("--real", action="store_true", help="a real night (stages a proposal) instead of --dry-run")
    ap.add_argument("--keep", type=Path, metavar="DIR", help="build the home in DIR and keep it")
    args = ap.parse_args(argv)
    root = args.keep.resolve() if args.keep else Path(tempfile.mkdtemp(prefix="skillopt-night-bench-"))
    try:
        project, env = build_home(root)
        load = os.getloadavg()
        print(f"cores {os.cpu_count()}, load average before {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; "
              f"settings: defaults + local profile{' + ' + ' '.join(args.overrides) if args.overrides else ''}")
        wall, code, _ = run(project, env, args.overrides, dry_run=not args.real)
        load = os.getloadavg()
        print(f"load average after {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
        print(f"\n{'night':<58} {'wall s':>8}")
        finished = "" if code == 0 else f"  (did not finish: exit {code})"
        print(f"{'this run (' + ('real' if args.real else 'dry run') + ')':<58} {wall:>8.1f}{finished}")
        for name, seconds in BASELINES.items():
            print(f"{'baseline: ' + name:<58} {seconds:>8.1f}")
        met = code == 0 and wall <= TARGET_S
        print(f"{'target (2 cores)':<58} {TARGET_S:>8.1f}  {'met' if met else 'NOT met'}")
        return 0 if code == 0 else 1
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
