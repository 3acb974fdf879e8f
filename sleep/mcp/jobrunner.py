"""``python -m sleep.mcp.jobrunner JOB_DIR``: supervise one job's command.

Holds ``JOB_DIR/runner.lock`` while alive, starts the command from
``job.json`` with its output in ``stdout.txt`` / ``stderr.txt``, passes SIGINT
and SIGTERM on to it (the engine then stops cleanly, resumably), and writes
``exit.json`` with the command's exit code when it ends. Only the standard
library and ``sleep.lock`` are imported: a runner costs a few milliseconds.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from skillopt_core.run.rundir import atomic_write_json
from skillopt_core.timestamps import utc_now
from sleep.lock import FileLock, LockBusy


def run(folder: Path) -> int:
    lock = FileLock(folder / "runner.lock", what="job runner")
    try:
        lock.acquire(wait=10.0)  # a status probe may hold it for an instant
    except LockBusy:
        print(f"jobrunner: another runner holds {folder / 'runner.lock'}", file=sys.stderr)
        return 3
    spec = json.loads((folder / "job.json").read_text(encoding="utf-8"))
    child: subprocess.Popen | None = None
    pending: list[int] = []

    def forward(signum: int, _frame: object) -> None:
        if child is not None and child.poll() is None:
            child.send_signal(signum)
        else:
            pending.append(signum)

    signal.signal(signal.SIGINT, forward)
    signal.signal(signal.SIGTERM, forward)
    try:
        with open(folder / "stdout.txt", "wb") as out, open(folder / "stderr.txt", "wb") as err:
            try:
                child = subprocess.Popen(spec["argv"], cwd=spec["cwd"], stdin=subprocess.DEVNULL,
                                         stdout=out, stderr=err)
            except OSError as exc:
                err.write(f"could not start {spec['argv'][0]}: {exc}\n".encode())
                atomic_write_json(folder / "exit.json", {"exit_code": 2, "ended_at": utc_now()})
                return 2
            atomic_write_json(folder / "process.json", {"runner_pid": os.getpid(), "child_pid": child.pid,
                                                  "started_at": utc_now()})
            for signum in pending:  # a cancel that came before the command started
                child.send_signal(signum)
            code = child.wait()
        # A command killed by a signal reports -N; record it as a shell would (128 + N).
        exit_code = 128 - code if code < 0 else code
        atomic_write_json(folder / "exit.json", {"exit_code": exit_code, "ended_at": utc_now()})
        return 0
    finally:
        lock.release()


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m sleep.mcp.jobrunner JOB_DIR", file=sys.stderr)
        return 2
    return run(Path(args[0]))


if __name__ == "__main__":
    raise SystemExit(main())
