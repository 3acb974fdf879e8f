"""The Claude Code SessionEnd hook's wall time next to Python's own start-up, in one run.

Claude Code gives all SessionEnd hooks together max(1.5 s, the largest SessionEnd
``timeout`` in the person's settings files); plugin hooks do not raise it (2.1.197,
``getSessionEndHookTimeoutMs``). Ours must return well within that, beside whatever
other plugins run. Interleaved, several times (median, min in brackets):

- the floor: ``python -c pass`` with the same interpreter (site-packages and all);
- ``skillopt-sleep hook session-end`` with a realistic hook JSON on stdin, the index
  present (the usual case);
- the same through the plugin's launcher as ``hooks/hooks.json`` runs it
  (``/bin/sh -c '"$CLAUDE_PLUGIN_ROOT/bin/skillopt-sleep" hook session-end || true'``).

Then what the hook imports (``python -X importtime``): the total import time and
the modules that cost most, and the count of SkillOpt modules loaded.

Target (issue 19): the hook's median ≤ 0.5 s (well under the shared 1.5 s), and
≤ the floor + 0.15 s. Wall times on a loaded machine are noisy; compare the
columns of one run, not runs of different days.

    python bench/hook.py [--repeat 7]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
HOOK_LINE = json.loads((REPO / "plugins" / "claude-code" / "hooks" / "hooks.json").read_text())[
    "hooks"]["SessionEnd"][0]["hooks"][0]["command"]


def _timed(argv: list[str], env: dict[str, str], stdin: bytes) -> float:
    started = time.perf_counter()
    done = subprocess.run(argv, env=env, input=stdin, capture_output=True, timeout=60)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"{argv} exited {done.returncode}: {done.stderr.decode()[-500:]}")
    return elapsed


def import_profile(env: dict[str, str], stdin: bytes) -> tuple[float, list[tuple[float, str]], int]:
    """Total import time of the hook run (s), its costliest top-level imports, SkillOpt modules loaded."""
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "sleep.cli", "hook", "session-end"], env=env,
                          input=stdin, capture_output=True, timeout=60)
    rows = []
    for line in done.stderr.decode().splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)", line)
        if m:
            rows.append((int(m.group(2)) / 1e6, len(m.group(3)), m.group(4)))
    top = [(cum, name) for cum, depth, name in rows if depth == 1]
    ours = sum(1 for _, _, name in rows if name == "sleep" or name.startswith(("sleep.", "skillopt_core")))
    return sum(c for c, _ in top), sorted(top, reverse=True)[:6], ours


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7, help="runs of each (default 7)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="hook-bench-") as tmp:
        home = Path(tmp) / "home"
        home.mkdir()
        env = {**os.environ, "HOME": str(home), "SKILLOPT_HOME": str(home / ".skillopt"),
               "CLAUDE_CONFIG_DIR": str(home / ".claude"), "CLAUDE_PLUGIN_ROOT": str(REPO / "plugins" / "claude-code"),
               "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])}
        subprocess.run([sys.executable, "-c", "from sleep.index import Index; Index.open().close()"], env=env,
                       check=True, timeout=120)  # the index exists, as after any harvest
        transcript = home / ".claude" / "projects" / "-w-app" / "s1.jsonl"
        stdin = json.dumps({"session_id": "s1", "transcript_path": str(transcript), "cwd": "/w/app",
                            "hook_event_name": "SessionEnd", "reason": "prompt_input_exit"}).encode()
        cases = {
            "python -c pass (floor)": [sys.executable, "-c", "pass"],
            "skillopt-sleep hook session-end": [sys.executable, "-m", "sleep.cli", "hook", "session-end"],
            "hooks.json line (launcher)": ["/bin/sh", "-c", HOOK_LINE],
        }
        samples: dict[str, list[float]] = {name: [] for name in cases}
        for argv in cases.values():  # warm the file cache once
            _timed(argv, env, stdin)
        for _ in range(args.repeat):
            for name, argv in cases.items():  # interleaved: each sees the same load
                samples[name].append(_timed(argv, env, stdin))
        total_import, top, ours = import_profile(env, stdin)
    print(f"SessionEnd hook, median of {args.repeat} (min in brackets); load average {os.getloadavg()[0]:.1f}")
    medians = {}
    for name, values in samples.items():
        medians[name] = statistics.median(values)
        print(f"  {name:<34} {medians[name] * 1000:>6.0f} ms ({min(values) * 1000:>4.0f})")
    hook = medians["hooks.json line (launcher)"]
    floor = medians["python -c pass (floor)"]
    print(f"imports of the hook run: {total_import * 1000:.0f} ms in all, {ours} SkillOpt modules; costliest:")
    for cum, name in top:
        print(f"  {name:<34} {cum * 1000:>6.1f} ms")
    met_abs, met_floor = hook <= 0.5, hook - floor <= 0.15
    print(f"hook (launcher) median: {hook * 1000:.0f} ms (target ≤ 500 ms: {'met' if met_abs else 'MISSED'}); "
          f"over the floor: {(hook - floor) * 1000:+.0f} ms (target ≤ +150 ms: {'met' if met_floor else 'MISSED'})")
    return 0 if met_abs and met_floor else 1


if __name__ == "__main__":
    raise SystemExit(main())
