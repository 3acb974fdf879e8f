"""The daemon: nights fire on time as child processes (a fake ``skillopt-sleep`` first on
PATH records them), a firing during a running night is skipped and logged, a missed
night runs once, a stop interrupts the running night, and the real process starts,
reports itself, refuses a second copy and stops cleanly on SIGTERM. One test runs
the real ``skillopt-sleep run``."""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.interval import IntervalTrigger
from sched_testutil import Fakes, fake_tools

from sleep import paths
from sleep.index import Index
from sleep.scheduler import api, store
from sleep.scheduler.daemon import NightScheduler
from sleep.scheduler.model import resolve_executable
from sleep.scheduler.nightproc import NightRunner


@pytest.fixture
def fakes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Fakes:
    return fake_tools(tmp_path, monkeypatch, cron=False)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    p = tmp_path / "proj"
    p.mkdir()
    return p


def wait_for(predicate, timeout: float = 20.0, step: float = 0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(step)
    raise AssertionError("timed out waiting")


def started(fakes: Fakes) -> list[dict]:
    return [n for n in fakes.nights() if n["event"] == "start"]


def set_updated_at(project: Path, when: datetime) -> None:
    stamp = when.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    with Index.open() as index:
        index.conn.execute("UPDATE schedules SET updated_at = ?, created_at = ? WHERE project = ?",
                           (stamp, stamp, str(project)))


def missed_schedule(project: Path, minutes_ago: int = 2) -> None:
    """A daemon schedule whose time passed ``minutes_ago`` minutes ago, created hours before."""
    at = (datetime.now().astimezone() - timedelta(minutes=minutes_ago)).strftime("%H:%M")
    api.schedule(project, at, "daemon", jitter_s=0)
    set_updated_at(project, datetime.now(timezone.utc) - timedelta(hours=3))


@pytest.fixture
def make(fakes: Fakes):
    """A NightScheduler with a real NightRunner; stopped at the end of the test."""
    made: list[tuple[NightScheduler, threading.Event]] = []

    def build(trigger_for=None, **kw) -> tuple[NightScheduler, NightRunner, threading.Event]:
        stop = threading.Event()
        runner = NightRunner(resolve_executable(), stop, stop_timeout_s=5)
        sched = NightScheduler(runner, trigger_for=trigger_for, **kw)
        made.append((sched, stop))
        return sched, runner, stop

    yield build
    for sched, stop in made:
        stop.set()
        if sched.scheduler.running:
            sched.shutdown()


def test_the_daemon_runs_a_night_at_its_time(fakes: Fakes, project: Path, make) -> None:
    api.schedule(project, "03:17", "daemon", jitter_s=0)
    target = (datetime.now().astimezone() + timedelta(seconds=2.5)).replace(microsecond=0)
    sched, runner, _ = make(lambda s: CronTrigger(hour=target.hour, minute=target.minute, second=target.second))
    sched.start()
    wait_for(lambda: runner.results)
    night = started(fakes)[0]
    assert target.timestamp() <= night["time"] < target.timestamp() + 1.5
    assert night["argv"][1:] == ["run", "--project", str(project), "--json"]
    assert night["argv"][0] == str(fakes.bin / "skillopt-sleep")
    assert night["env"]["SKILLOPT_HOME"] == str(paths.data_dir())
    r = runner.results[0]
    assert (r.status, r.exit_code, r.outcome) == ("finished", 0, "idle")
    with Index.open() as index:
        assert store.get(index, str(project)).last_fired_at is not None


def test_a_firing_while_the_night_runs_is_skipped_and_logged(fakes: Fakes, project: Path, make, monkeypatch,
                                                           caplog) -> None:
    monkeypatch.setenv("FAKE_NIGHT_SECONDS", "2.5")
    api.schedule(project, "03:17", "daemon", jitter_s=0)
    sched, runner, _ = make(lambda s: IntervalTrigger(seconds=1))
    with caplog.at_level(logging.WARNING, logger="skillopt.sleep.daemon"):
        sched.start()
        wait_for(lambda: sched.skipped, timeout=10)
        wait_for(lambda: runner.results, timeout=10)
    assert sched.skipped[0] == str(project)
    assert f"night for {project} skipped: the previous night of this project is still running" in caplog.text
    events = [n["event"] for n in fakes.nights()]
    assert all(a != b for a, b in zip(events, events[1:])), f"two nights overlapped: {events}"


def test_a_night_already_running_elsewhere_is_skipped_and_logged(fakes: Fakes, project: Path, monkeypatch,
                                                                 caplog) -> None:
    monkeypatch.setenv("FAKE_NIGHT_EXIT", "3")
    runner = NightRunner(resolve_executable(), threading.Event())
    with caplog.at_level(logging.INFO, logger="skillopt.sleep.daemon"):
        r = runner(str(project))
    assert (r.status, r.exit_code) == ("skipped_running", 3)
    assert f"night for {project} skipped: another night of this project is running" in caplog.text


def test_a_missed_night_runs_once_at_the_next_start(fakes: Fakes, project: Path, make) -> None:
    missed_schedule(project)
    sched, runner, _ = make()
    sched.start()
    wait_for(lambda: runner.results)
    time.sleep(1.5)
    assert len(started(fakes)) == 1
    sched.shutdown()
    again, runner2, _ = make()  # a restart: the night already ran for that time
    again.start()
    time.sleep(1.5)
    assert len(started(fakes)) == 1 and runner2.results == []
    assert list(again.jobs()) == [str(project)]


def test_a_missed_night_is_not_caught_up_if_a_night_ran_since(fakes: Fakes, project: Path, make) -> None:
    missed_schedule(project)
    with Index.open() as index:  # the cycle's own record of a night started by hand a minute ago
        index.conn.execute("INSERT INTO cycles (id, project, started_at, stage, outcome) VALUES (?,?,?,?,?)",
                           ("n1", str(project), datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000Z"),
                            "gate", "no_improvement"))
    sched, runner, _ = make()
    sched.start()
    time.sleep(1.5)
    assert started(fakes) == [] and runner.results == []


def test_a_night_missed_by_more_than_the_grace_waits_for_the_next_one(fakes: Fakes, project: Path, make) -> None:
    missed_schedule(project, minutes_ago=30)
    sched, runner, _ = make(grace_s=600)
    sched.start()
    time.sleep(1.5)
    assert started(fakes) == []
    assert sched.jobs()[str(project)] > datetime.now(timezone.utc) + timedelta(hours=23)


def test_stop_interrupts_the_running_night(fakes: Fakes, project: Path, make, monkeypatch) -> None:
    monkeypatch.setenv("FAKE_NIGHT_SECONDS", "60")
    missed_schedule(project)
    sched, runner, stop = make()
    sched.start()
    wait_for(lambda: started(fakes))
    t0 = time.monotonic()
    stop.set()
    sched.shutdown()
    assert time.monotonic() - t0 < 10
    assert [n["event"] for n in fakes.nights()] == ["start", "interrupted"]
    assert (runner.results[0].status, runner.results[0].exit_code) == ("interrupted", 130)


def test_refresh_follows_the_schedules_in_the_index(fakes: Fakes, project: Path, tmp_path: Path, make) -> None:
    sched, _, _ = make()
    sched.start()
    assert sched.jobs() == {}
    api.schedule(project, "04:05", "daemon", jitter_s=0)
    sched.refresh()
    (nxt,) = sched.jobs().values()
    assert nxt.astimezone().strftime("%H:%M:%S") == "04:05:00"
    api.schedule(project, "04:30", "daemon")  # the default jitter: up to 5 minutes later
    sched.refresh()
    assert "04:30:00" <= list(sched.jobs().values())[0].astimezone().strftime("%H:%M:%S") <= "04:35:00"
    api.unschedule(project)
    sched.refresh()
    assert sched.jobs() == {}


def test_os_mode_schedules_are_not_the_daemons(tmp_path: Path, monkeypatch, project: Path, make) -> None:
    fake_tools(tmp_path, monkeypatch, cron=True)
    api.schedule(project, "03:17", "cron")
    sched, _, _ = make()
    sched.start()
    assert sched.jobs() == {}


# ----- the process ---------------------------------------------------------------------------

def daemon_proc(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "sleep.cli", "daemon", "--quiet", *args], env=dict(os.environ),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def cli_json(*args: str) -> dict:
    out = subprocess.run([sys.executable, "-m", "sleep.cli", *args, "--json"], env=dict(os.environ),
                         capture_output=True, text=True, timeout=60, check=True).stdout
    return json.loads(out)


def test_the_daemon_process_catches_up_reports_itself_and_stops_on_sigterm(fakes: Fakes, project: Path) -> None:
    missed_schedule(project)
    proc = daemon_proc()
    try:
        wait_for(lambda: any(n["event"] == "end" for n in fakes.nights()), timeout=30)
        status = wait_for(lambda: (s := cli_json("status"))["watcher"]["running"] and s, timeout=30)
        assert status["daemon"]["running"] and status["daemon"]["pid"] == proc.pid
        assert status["projects"][0]["schedule"]["mode"] == "daemon"
        second = subprocess.run([sys.executable, "-m", "sleep.cli", "daemon", "--quiet"], env=dict(os.environ),
                                capture_output=True, text=True, timeout=60)
        assert second.returncode == 3
        assert f"a daemon is already running (pid {proc.pid})" in second.stderr
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    log = (paths.data_dir() / "logs" / "daemon.log").read_text()
    assert f"night for {project} missed at" in log and f"night for {project} finished in" in log
    assert "daemon stopped" in log
    after = cli_json("status")
    assert not after["daemon"]["running"] and after["daemon"]["last_pid"] == proc.pid
    assert not after["watcher"]["running"] and "the watcher stopped at" in after["watcher"]["note"]
    assert len(started(fakes)) == 1


# ----- the real night --------------------------------------------------------------------------

REAL = Path(sys.executable).parent / "skillopt-sleep"


@pytest.mark.skipif(not REAL.exists(), reason="the skillopt-sleep console script is not installed next to this "
                                              "interpreter (pip install -e .)")
def test_the_daemons_runner_runs_the_real_night(project: Path) -> None:
    runner = NightRunner(str(REAL), threading.Event())
    r = runner(str(project))
    assert r.status == "finished" and r.exit_code == 0, r
    assert r.outcome == "too_few_tasks" and r.night_id
    with Index.open() as index:
        row = index.conn.execute("SELECT id, outcome FROM cycles WHERE project = ?", (str(project),)).fetchone()
    assert row == (r.night_id, "too_few_tasks")
