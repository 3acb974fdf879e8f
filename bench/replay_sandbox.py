"""What acting in the sandbox costs per rollout: wall time of one replay call
with the fake `claude` (tests/sleep/replay_fakes.py, which runs `npm install`
through a fake npm), read-only in a shared checkout (the baseline: the old
replay) side by side with acting (a fresh clone per rollout, bubblewrap, the
egress proxy, `git status` for the file changes, one check command).

The fake agent costs the same in both columns, so the difference is the
sandbox's own overhead. Usage: ``python bench/replay_sandbox.py [--n 10]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "sleep"))

import replay_fakes  # noqa: E402

SKILL = "---\nname: deps\ndescription: installing dependencies\n---\n\n# Deps\n\nInstall dependencies.\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="skillopt-bench-replay-") as scratch:
        root = Path(scratch)
        os.environ["SKILLOPT_REPLAY_ROOT"] = str(root / "replays" / "skillopt-replay")
        os.environ["SKILLOPT_HOME"] = str(root / "skillopt")
        os.environ["PATH"] = f"{replay_fakes.install(root / 'bin')}{os.pathsep}{os.environ['PATH']}"
        from skillopt_core import BackendSpec, CompletionRequest, create_backend
        from sleep.replay.checkout import replay_checkout
        from sleep.replay.backend import ActionReplayBackend
        from sleep.hosts import replaying
        from sleep.replay.egress import EgressProxy
        from sleep.replay.sandbox import BwrapLauncher, sandbox_available

        ok, why = sandbox_available()
        if not ok:
            print(f"no sandbox here: {why}")
            return 1
        repo = root / "project"
        repo.mkdir()
        subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
        (repo / "package.json").write_text('{"name": "p"}\n')
        subprocess.run(["git", "-C", str(repo), "add", "."], check=True)
        subprocess.run(["git", "-C", str(repo), "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "x"],
                       check=True)

        def spec():
            return BackendSpec(name="claude-code", model=None, role="target", options={"timeout": 60})

        with replay_checkout(repo) as template:
            request = CompletionRequest.single("Install.", role="target", stage="rollout", skill=SKILL,
                                               cwd=str(template), allowed_commands=("npm", "ls"),
                                               checks=("npm test",))
            plain = create_backend(spec())
            egress = EgressProxy(replaying("claude-code").api_hosts)
            acting_inner = create_backend(spec())
            acting_inner.act(BwrapLauncher("claude-code", egress=egress), output_cap=2_000_000)
            acting = ActionReplayBackend(acting_inner)
            times: dict[str, list[float]] = {"read-only (baseline)": [], "acting in the sandbox": []}
            for _ in range(args.n):
                for label, backend in (("read-only (baseline)", plain), ("acting in the sandbox", acting)):
                    started = time.perf_counter()
                    asyncio.run(backend.complete(request))
                    times[label].append(time.perf_counter() - started)
            egress.close()
    print(f"{'rollout wall time (s)':<26}{'median':>9}{'p90':>9}")
    for label, values in times.items():
        values.sort()
        print(f"{label:<26}{statistics.median(values):>9.3f}{values[int(0.9 * (len(values) - 1))]:>9.3f}")
    base, act = (statistics.median(v) for v in times.values())
    print(f"sandbox overhead per rollout: {act - base:+.3f} s (median)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
