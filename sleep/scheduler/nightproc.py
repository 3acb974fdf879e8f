"""One scheduled night as a child process: ``<skillopt-sleep> run --project P --json``.

The night runs in its own process group (a crash never takes the daemon down;
a stop reaches the night and the agent CLIs it started). Its record (stdout,
``--json``) and progress (stderr) go to ``logs/night-<key>.json`` / ``.log`` in
the data directory, replaced each night. Exit codes are the night's contract:
0 finished (whatever it decided), 3 another night of the project is running
(skipped), 2 bad input, 1 failed (recorded in the index).

On stop, a night is interrupted with SIGINT (it records itself as interrupted
and stages nothing), then SIGTERM, then SIGKILL if it does not exit in time.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from sleep.scheduler.model import logs_dir, project_key

log = logging.getLogger("skillopt.sleep.daemon")


@dataclass
class NightResult:
    project: str
    started_at: float
    ended_at: float
    exit_code: int | None
    status: str  # finished, failed, skipped_running, bad_input, interrupted, not_started, error
    outcome: str | None = None
    night_id: str | None = None
    message: str = ""

    def to_dict(self) -> dict:
        return asdict(self)


class NightRunner:
    """Runs nights as child processes; ``stop`` (a threading.Event) interrupts them."""

    def __init__(self, executable: str, stop: threading.Event, stop_timeout_s: float = 30.0,
                 extra_args: tuple[str, ...] = ()) -> None:
        self.executable = executable
        self.stop = stop
        self.stop_timeout_s = stop_timeout_s
        self.extra_args = extra_args
        self.results: list[NightResult] = []
        self._lock = threading.Lock()
        self.running: dict[str, subprocess.Popen] = {}

    def argv(self, project: str) -> list[str]:
        return [self.executable, "run", "--project", project, "--json", *self.extra_args]

    def __call__(self, project: str) -> NightResult:
        started = time.time()
        if self.stop.is_set():
            return self._done(NightResult(project, started, started, None, "not_started",
                                          message="the daemon is stopping; the night was not started"))
        key = project_key(project)
        logs = logs_dir()
        logs.mkdir(parents=True, exist_ok=True)
        out_path, err_path = logs / f"night-{key}.json", logs / f"night-{key}.log"
        log.info("night for %s: starting %s", project, " ".join(self.argv(project)))
        try:
            with open(out_path, "wb") as out, open(err_path, "wb") as err:
                proc = subprocess.Popen(self.argv(project), stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                        start_new_session=True, close_fds=True)
                with self._lock:
                    self.running[project] = proc
                try:
                    code = self._wait(proc, project)
                finally:
                    with self._lock:
                        self.running.pop(project, None)
        except OSError as exc:
            return self._done(NightResult(project, started, time.time(), None, "error",
                                          message=f"could not start {self.executable}: {exc}"))
        return self._done(self._result(project, started, code, out_path, err_path))

    def _wait(self, proc: subprocess.Popen, project: str) -> int:
        while True:
            try:
                return proc.wait(timeout=1.0)
            except subprocess.TimeoutExpired:
                if self.stop.is_set():
                    return self._interrupt(proc, project)

    def _interrupt(self, proc: subprocess.Popen, project: str) -> int:
        log.info("night for %s: interrupting (the daemon is stopping)", project)
        for sig, wait in ((signal.SIGINT, self.stop_timeout_s), (signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
            try:
                os.killpg(proc.pid, sig)
            except ProcessLookupError:
                pass
            try:
                return proc.wait(timeout=wait)
            except subprocess.TimeoutExpired:
                log.warning("night for %s did not stop after %s", project, signal.Signals(sig).name)
        return proc.wait()

    def _result(self, project: str, started: float, code: int, out_path: Path, err_path: Path) -> NightResult:
        record = _record(out_path)
        r = NightResult(project, started, time.time(), code, "error", outcome=record.get("outcome"),
                        night_id=record.get("id"), message=str(record.get("reason") or ""))
        if code == 0:
            r.status = "finished"
        elif code == 3:
            r.status, r.message = "skipped_running", "another night of this project is running; skipped"
        elif code == 1:
            r.status = "failed"
        elif code == 2:
            r.status, r.message = "bad_input", _tail(err_path)
        elif code in (130, -signal.SIGINT, -signal.SIGTERM, -signal.SIGKILL) and self.stop.is_set():
            r.status = "interrupted"
        else:
            r.message = r.message or _tail(err_path)
        return r

    def _done(self, r: NightResult) -> NightResult:
        took = r.ended_at - r.started_at
        text = {"finished": f"finished in {took:.0f} s: {r.outcome or '?'}",
                "skipped_running": "skipped: another night of this project is running",
                "failed": f"failed (recorded as night {r.night_id})",
                "bad_input": "refused its input (exit 2)",
                "interrupted": "interrupted because the daemon is stopping",
                "not_started": "not started: the daemon is stopping"}.get(r.status, f"ended with exit {r.exit_code}")
        level = logging.WARNING if r.status in ("failed", "bad_input", "error") else logging.INFO
        log.log(level, "night for %s %s%s", r.project, text, f" — {r.message}" if r.message else "")
        with self._lock:
            self.results.append(r)
        return r


def _record(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8") or "null")
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _tail(path: Path, n: int = 3) -> str:
    try:
        lines = [ln for ln in path.read_text(encoding="utf-8", errors="replace").splitlines() if ln.strip()]
    except OSError:
        return ""
    return " | ".join(lines[-n:])
