"""Shared behaviour of the fake agent CLIs used by tests/backends/test_cli_backends.py.

Each fake records what it was started with (argv, cwd, environment, stdin and
the files under its working directory, since the backend deletes that
directory afterwards) as JSON in ``$FAKE_CLI_RECORD_DIR``, then behaves as
``$FAKE_CLI_MODE`` says:

- ``ok`` (default): print output shaped like the real CLI's, answering
  ``$FAKE_CLI_REPLY`` (default "fake answer");
- ``hang``: start a child process and sleep (the backend must kill both);
- ``fail``: print an error on stderr and exit with code 3;
- ``error``: the CLI's own report of a login problem (exit 1);
- ``api_error``: the CLI's own report of a failed model call (exit 1);
- ``bad_model`` (claude): the CLI's report of a model that does not exist;
- ``max_turns`` (claude): out of turns;
- ``no_answer``: exit 0 without an answer.

``$FAKE_CLI_DELAY`` (seconds) makes the fake wait before answering and then
record the files it sees again (``files_after``), to catch concurrent calls
that change each other's working directory. ``$FAKE_CLI_BARRIER=N`` makes it
wait (up to 20 s) until N fakes have recorded their start, and record whether
they did (``barrier_met``): proof that N calls ran at the same time.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path


def _snapshot(root: Path) -> dict[str, str]:
    files = {}
    for path in sorted(root.rglob("*")):
        if path.is_file():
            files[path.relative_to(root).as_posix()] = path.read_text(encoding="utf-8", errors="replace")
    return files


def start(name: str, *, read_stdin: bool) -> dict:
    """Record the invocation; returns the record (also written to disk)."""
    stdin = sys.stdin.read() if read_stdin else ""
    record = {
        "name": name,
        "argv": sys.argv[1:],
        "cwd": os.getcwd(),
        "env": dict(os.environ),
        "stdin": stdin,
        "files": _snapshot(Path.cwd()),
        "pid": os.getpid(),
        "started": time.time(),
    }
    mode = os.environ.get("FAKE_CLI_MODE", "ok")
    if mode == "hang":
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
        record["child_pid"] = child.pid
    out_dir = os.environ.get("FAKE_CLI_RECORD_DIR")
    if out_dir:
        path = Path(out_dir) / f"{name}-{os.getpid()}.json"
        path.write_text(json.dumps(record), encoding="utf-8")
    barrier = int(os.environ.get("FAKE_CLI_BARRIER") or 0)
    if barrier and out_dir:
        deadline = time.monotonic() + 20
        while len(list(Path(out_dir).glob("*.json"))) < barrier and time.monotonic() < deadline:
            time.sleep(0.05)
        record["barrier_met"] = len(list(Path(out_dir).glob("*.json"))) >= barrier
        path.write_text(json.dumps(record), encoding="utf-8")
    delay = float(os.environ.get("FAKE_CLI_DELAY") or 0)
    if delay:
        time.sleep(delay)
        record["files_after"] = _snapshot(Path.cwd())
        record["ended"] = time.time()
        if out_dir:
            path.write_text(json.dumps(record), encoding="utf-8")
    if mode == "hang":
        time.sleep(120)
    if mode == "fail":
        sys.stderr.write(f"{name}: error: something went wrong talking to the service\n")
        sys.exit(3)
    return record


def mode() -> str:
    return os.environ.get("FAKE_CLI_MODE", "ok")


def reply() -> str:
    return os.environ.get("FAKE_CLI_REPLY", "fake answer")


def emit(obj: dict) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
