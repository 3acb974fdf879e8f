"""``skillopt-sleep daemon``: APScheduler runs each daemon schedule's night; watchdog notes transcripts.

- One cron trigger per project schedule of mode ``daemon`` (its local time plus up
  to ``jitter_s`` seconds), re-read from the index every ``refresh_s`` seconds.
- Nights run one at a time, each as a child process (:mod:`sleep.scheduler.nightproc`);
  a firing while the project's night still runs is skipped and logged
  (``max_instances=1``), and the night's own lock refuses a second night started
  elsewhere (exit 3, logged as skipped).
- A night missed while the machine slept runs once when it wakes (APScheduler's
  misfire grace and coalescing; the ``refresh_s`` tick bounds how late it notices),
  and one missed while the daemon was down runs once at its next start, within
  ``grace_s`` of its time, unless a night of the project ran since.
- SIGTERM/SIGINT stop it cleanly: no new night starts, a running night is
  interrupted (it records itself as such), the watcher closes its epoch.
- Logs go to ``logs/daemon.log`` (rotating) in the data directory and to stderr.
"""

from __future__ import annotations

import json
import logging
import logging.handlers
import os
import signal
import sys
import threading
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from skillopt_core.run.rundir import atomic_write_json
from skillopt_core.timestamps import utc_iso, utc_now
from sleep import paths
from sleep.index import Index
from sleep.lock import FileLock, LockBusy
from sleep.scheduler import store
from sleep.scheduler.model import Schedule, cron_trigger, logs_dir, previous_run
from sleep.scheduler.nightproc import NightRunner

log = logging.getLogger("skillopt.sleep.daemon")
DEFAULT_GRACE_S = 12 * 3600
REFRESH_S = 60.0
LOCK_FILE = "daemon.lock"
STATE_FILE = "daemon.json"


def _iso(dt: datetime) -> str:
    return utc_iso(dt)


def _parse(iso: str) -> datetime:
    return datetime.fromisoformat(iso.replace("Z", "+00:00"))


def night_started_since(index: Index, project: str, since: datetime) -> bool:
    """Whether the project had a night (any mode, or by hand) since ``since`` (``cycles``, read defensively)."""
    try:
        row = index.conn.execute("SELECT MAX(started_at) FROM cycles WHERE project = ?", (project,)).fetchone()
    except Exception:  # no cycles table in this install
        return False
    return bool(row and row[0] and row[0] >= _iso(since))


class NightScheduler:
    """The daemon's APScheduler: jobs for the daemon schedules of the index."""

    def __init__(self, runner: Callable[[str], Any], *, grace_s: float = DEFAULT_GRACE_S,
                 refresh_s: float = REFRESH_S, index_path: Path | None = None,
                 trigger_for: Callable[[Schedule], Any] | None = None) -> None:
        from apscheduler.executors.pool import ThreadPoolExecutor
        from apscheduler.schedulers.background import BackgroundScheduler

        self.runner = runner
        self.grace_s = grace_s
        self.refresh_s = refresh_s
        self.index_path = index_path
        self.trigger_for = trigger_for or (lambda s: cron_trigger(s.at, s.jitter_s))
        self.skipped: list[str] = []
        self.missed: list[str] = []
        self._fingerprint: tuple | None = None
        self._lock = threading.Lock()
        self.scheduler = BackgroundScheduler(
            executors={"default": ThreadPoolExecutor(1), "housekeeping": ThreadPoolExecutor(1)},
            job_defaults={"coalesce": True, "max_instances": 1, "misfire_grace_time": int(grace_s)})

    def start(self) -> None:
        from apscheduler.events import EVENT_JOB_ERROR, EVENT_JOB_MAX_INSTANCES, EVENT_JOB_MISSED

        self.scheduler.add_listener(self._on_event, EVENT_JOB_MAX_INSTANCES | EVENT_JOB_MISSED | EVENT_JOB_ERROR)
        self.scheduler.start()
        self.refresh(first=True)
        # Also bounds how late a night is noticed after the machine wakes from sleep.
        self.scheduler.add_job(self.refresh, "interval", seconds=self.refresh_s, id="refresh",
                               executor="housekeeping", misfire_grace_time=None)

    def shutdown(self) -> None:
        self.scheduler.shutdown(wait=True)

    def jobs(self) -> dict[str, datetime | None]:
        return {j.args[0]: j.next_run_time for j in self.scheduler.get_jobs() if j.id != "refresh"}

    def refresh(self, first: bool = False) -> None:
        """Make the jobs match the daemon schedules in the index."""
        with self._lock, Index.open(self.index_path) as index:
            schedules = [s for s in store.all_schedules(index) if s.mode == "daemon"]
            fingerprint = store.fingerprint(schedules)
            if fingerprint == self._fingerprint:
                return
            self._fingerprint = fingerprint
            wanted = {s.key: s for s in schedules}
            for job in self.scheduler.get_jobs():
                if job.id != "refresh" and job.id not in wanted:
                    job.remove()
                    log.info("schedule removed: %s", job.args[0])
            for s in schedules:
                existing = self.scheduler.get_job(s.key)
                if existing is not None and existing.kwargs.get("fingerprint") == store.fingerprint([s]):
                    continue
                kwargs: dict[str, Any] = {}
                catch_up = self._catch_up(index, s) if first else None
                if catch_up is not None:
                    kwargs["next_run_time"] = catch_up
                job = self.scheduler.add_job(self._fire, self.trigger_for(s), args=[s.project],
                                             kwargs={"fingerprint": store.fingerprint([s])}, id=s.key,
                                             name=f"night {s.project}", replace_existing=True, **kwargs)
                if catch_up is not None:
                    log.info("night for %s missed at %s: runs once now", s.project, catch_up.isoformat())
                else:
                    log.info("scheduled night for %s at %s (next %s)", s.project, s.at,
                             job.next_run_time.isoformat() if job.next_run_time else "never")

    def _catch_up(self, index: Index, s: Schedule) -> datetime | None:
        now = datetime.now(timezone.utc).astimezone()
        prev = previous_run(s.at, now)
        if now - prev > timedelta(seconds=self.grace_s) or prev <= _parse(s.updated_at):
            return None
        if s.last_fired_at and _parse(s.last_fired_at) >= prev:
            return None
        if night_started_since(index, s.project, prev):
            return None
        return prev

    def _fire(self, project: str, fingerprint: tuple = ()) -> Any:
        try:
            with Index.open(self.index_path) as index:
                store.mark_fired(index, project)
        except Exception as exc:  # the night still runs; catch-up may repeat it once after a restart
            log.warning("could not record the firing for %s: %s", project, exc)
        return self.runner(project)

    def _on_event(self, event: Any) -> None:
        from apscheduler.events import EVENT_JOB_ERROR, EVENT_JOB_MAX_INSTANCES, EVENT_JOB_MISSED

        job = self.scheduler.get_job(event.job_id)
        project = job.args[0] if job is not None and job.args else event.job_id
        if event.code == EVENT_JOB_MAX_INSTANCES:
            self.skipped.append(project)
            log.warning("night for %s skipped: the previous night of this project is still running", project)
        elif event.code == EVENT_JOB_MISSED:
            self.missed.append(project)
            log.warning("night for %s at %s missed by more than %.0f h; waiting for the next one", project,
                        event.scheduled_run_time, self.grace_s / 3600)
        elif event.code == EVENT_JOB_ERROR:
            log.error("night job for %s raised %r", project, event.exception)


# ----- the process --------------------------------------------------------------------------

def daemon_lock() -> FileLock:
    return FileLock(paths.data_dir() / LOCK_FILE, what="daemon")


def setup_logging(stderr: bool = True) -> Path:
    path = logs_dir() / "daemon.log"
    path.parent.mkdir(parents=True, exist_ok=True)
    fmt = logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    handlers: list[logging.Handler] = [logging.handlers.RotatingFileHandler(path, maxBytes=1 << 20, backupCount=3,
                                                                            encoding="utf-8")]
    if stderr:
        handlers.append(logging.StreamHandler(sys.stderr))
    for h in handlers:
        h.setFormatter(fmt)
    for name, level in (("skillopt.sleep", logging.INFO), ("apscheduler", logging.WARNING),
                        ("watchdog", logging.WARNING)):
        logger = logging.getLogger(name)
        logger.setLevel(level)
        logger.propagate = False
        for h in handlers:
            logger.addHandler(h)
    return path


def run_daemon(*, watch: bool = True, grace_s: float = DEFAULT_GRACE_S, stop_timeout_s: float = 30.0,
               refresh_s: float = REFRESH_S, heartbeat_s: float = 60.0, executable: str | None = None,
               stderr: bool = True) -> int:
    """Run until SIGTERM/SIGINT; returns the exit code (0 clean stop, 3 another daemon runs)."""
    from sleep.scheduler.model import resolve_executable

    lock = daemon_lock()
    try:
        lock.acquire(wait=2.0)  # a status probe may hold it for an instant
    except LockBusy:
        state = read_state()
        print(f"skillopt-sleep: a daemon is already running (pid {state.get('pid', '?')}); "
              "stop it first or leave it running.", file=sys.stderr)
        return 3
    stop = threading.Event()
    previous = {sig: signal.signal(sig, lambda *_: stop.set()) for sig in (signal.SIGTERM, signal.SIGINT)}
    log_path = setup_logging(stderr)
    watcher = scheduler = None
    try:
        exe = executable or resolve_executable()
        runner = NightRunner(exe, stop, stop_timeout_s=stop_timeout_s)
        if watch and not stop.is_set():
            from sleep.scheduler.watcher import Watcher

            try:
                watcher = Watcher(heartbeat_s=heartbeat_s).start()
                log.info("watching %d transcript folders", len(watcher.watched()))
            except Exception as exc:
                log.warning("the watcher did not start (%s); nights use the full scan", exc)
                watcher = None
        if not stop.is_set():
            scheduler = NightScheduler(runner, grace_s=grace_s, refresh_s=refresh_s)
            scheduler.start()
            write_state({"pid": os.getpid(), "started_at": utc_now(), "executable": exe, "watcher": watcher is not None,
                         "log": str(log_path), "stopped_at": None})
            log.info("daemon running (pid %d); nights run %s", os.getpid(), exe)
            stop.wait()
        log.info("stopping: no new night starts; a running night is interrupted")
    finally:
        if scheduler is not None:
            scheduler.shutdown()
        if watcher is not None:
            watcher.stop()
        state = read_state()
        if state.get("pid") == os.getpid():
            write_state(dict(state, stopped_at=utc_now()))
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        lock.release()
        log.info("daemon stopped")
    return 0


def write_state(state: dict) -> None:
    atomic_write_json(paths.data_dir() / STATE_FILE, state)


def read_state() -> dict:
    try:
        data = json.loads((paths.data_dir() / STATE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def daemon_running() -> tuple[bool, dict]:
    """Whether a daemon holds the lock now (its state file says which)."""
    lock_path = paths.data_dir() / LOCK_FILE
    if not lock_path.exists():
        return False, read_state()
    try:
        FileLock(lock_path, what="daemon").acquire(0).release()
    except LockBusy:
        return True, read_state()
    return False, read_state()
