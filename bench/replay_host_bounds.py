"""What a hostile rollout costs the night's host process (issue 35, item 4): peak memory and wall time of

- a check command printing ``--output-gb`` GB, read with the night's output cap (run_cli);
- the host-side steps after a rollout (``git status``, diff stat, line counts) over a checkout holding a
  2 GB sparse untracked file, a link to /dev/zero and a link to a FIFO.

Each runs in a fresh interpreter, so its peak resident memory is its own. Targets: memory stays within
tens of MB whatever the output or files; the steps finish in seconds. Usage:
``python bench/replay_host_bounds.py [--output-gb 2]``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

OUTPUT = """
import asyncio, json, resource, time
from pathlib import Path
from skillopt_core.backends.cli_common import run_cli
from sleep.cycle.backends import ACTION_OUTPUT_CAP
start = time.monotonic()
r = asyncio.run(run_cli(['sh', '-c', 'yes 0123456789abcdef | head -c {size}'], cwd=Path('.'), timeout=600,
                        backend='bench', output_cap=ACTION_OUTPUT_CAP))
print(json.dumps({{"kept": len(r.stdout), "dropped": r.cut, "s": time.monotonic() - start,
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}}))
"""

HOST = """
import json, os, resource, subprocess, time
from pathlib import Path
from sleep.replay.checkout import replay_checkout
from sleep.replay.backend import observed_changes, with_diff_stat
repo = Path({repo!r})
with replay_checkout(repo) as template, replay_checkout(template) as work:
    with open(work / 'huge.bin', 'wb') as fh:
        fh.truncate(2 * 1024**3)
    os.symlink('/dev/zero', work / 'zero.txt')
    os.mkfifo(work.parent / 'fifo')
    os.symlink(work.parent / 'fifo', work / 'fifo.txt')
    start = time.monotonic()
    changes = with_diff_stat(work, observed_changes(work, None))
    took = time.monotonic() - start
    os.unlink(work.parent / 'fifo')
print(json.dumps({{"changes": len(changes), "s": took,
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}}))
"""


def child(code: str, env: dict[str, str]) -> dict:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=900,
                          env={**os.environ, **env, "PYTHONPATH": str(ROOT)}, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output-gb", type=float, default=2.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="skillopt-bench-bounds-") as scratch:
        root = Path(scratch)
        env = {"SKILLOPT_REPLAY_ROOT": str(root / "replays" / "skillopt-replay"), "SKILLOPT_HOME": str(root / "h")}
        repo = root / "project"
        repo.mkdir()
        (repo / "a.txt").write_text("one\n")
        for cmd in (["init", "-q", "-b", "main"], ["add", "."], ["-c", "user.name=b", "-c", "user.email=b@b",
                                                                  "commit", "-qm", "x"]):
            subprocess.run(["git", "-C", str(repo), *cmd], check=True)
        baseline = child("import json, resource\nimport skillopt_core.backends.cli_common, sleep.replay.backend\n"
                         "print(json.dumps({'peak_mb': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))",
                         env)
        output = child(OUTPUT.format(size=int(args.output_gb * 1024**3)), env)
        host = child(HOST.format(repo=str(repo)), env)
    print(f"interpreter with the modules loaded: {baseline['peak_mb']:.0f} MB peak")
    print(f"{args.output_gb:g} GB of check output: kept {output['kept']} B, dropped {output['dropped']} B, "
          f"{output['s']:.1f} s, {output['peak_mb']:.0f} MB peak")
    print(f"host steps over a 2 GB sparse file, a /dev/zero link, a FIFO link: {host['changes']} changes, "
          f"{host['s']:.2f} s, {host['peak_mb']:.0f} MB peak")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
