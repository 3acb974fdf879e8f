"""What a schedule is, and the exact command a scheduled night runs.

A schedule is one project, a local time (``HH:MM``), a mode (``cron``,
``systemd``, ``launchd`` or ``daemon``) and, for the daemon only, a jitter.
Every mode runs the same command, ``<skillopt-sleep> run --project <path>``,
with the absolute path of the installed executable and the environment a night
needs (PATH for the agent CLIs, the data directory, the hosts' homes when they
were moved). No secret is ever carried: agent CLIs use their own login.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import sys
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from sleep import paths

MODES = ("cron", "systemd", "launchd", "daemon")
DEFAULT_AT = "03:17"
DEFAULT_JITTER_S = 300
EXECUTABLE = "skillopt-sleep"


def carried_env() -> tuple[str, ...]:
    """Variables carried into OS entries when set where `schedule` runs (never credentials):
    PATH, the hosts' homes (each ``Home`` with ``carry`` in sleep/hosts/), replay and cache roots."""
    from sleep.hosts import home_env_vars

    return ("PATH", *home_env_vars(), "SKILLOPT_REPLAY_ROOT", "SKILLOPT_CACHE_DIR")


def __getattr__(name: str):
    if name == "CARRIED_ENV":  # read when asked, so a host registered later is included
        return carried_env()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_AT_RX = re.compile(r"^\s*(\d{1,2}):(\d{2})\s*$")


class ScheduleError(ValueError):
    """Bad input for scheduling; the message says what to do (CLI exit 2)."""


class UnrepresentablePath(ScheduleError):
    """A path (or value) that an OS entry cannot hold safely; nothing was installed."""


class ModeUnavailable(ScheduleError):
    """The requested mode does not exist on this machine."""


def parse_at(text: str) -> str:
    """``"3:17"`` / ``"03:17"`` -> ``"03:17"`` (local wall-clock time, 24-hour)."""
    m = _AT_RX.match(text or "")
    if not m or int(m.group(1)) > 23 or int(m.group(2)) > 59:
        raise ScheduleError(f"--at {text!r}: give a local time as HH:MM, 00:00 to 23:59 (e.g. 03:17)")
    return f"{int(m.group(1)):02d}:{int(m.group(2)):02d}"


def project_path(text: str | os.PathLike | None) -> str:
    """The project folder as the night sees it (absolute, symlinks resolved; a subfolder of a git
    repository is the repository's root, as for ``run``); it must exist."""
    raw = os.fspath(text) if text is not None else os.getcwd()
    if "\x00" in raw:
        raise ScheduleError("a project path may not contain NUL characters")
    path = Path(raw).expanduser().resolve()
    if not path.is_dir():
        raise ScheduleError(f"{path} is not a directory; pass --project with the folder you work in")
    from sleep.project import repository_root

    path = repository_root(path) or path
    text_path = str(path)
    try:
        text_path.encode("utf-8")
    except UnicodeEncodeError:
        raise UnrepresentablePath(
            f"{text_path.encode('utf-8', 'replace').decode()}: the folder name is not valid UTF-8, so no "
            "schedule entry can name it; rename the folder (or a symlink to it) with a UTF-8 name") from None
    return text_path


def project_key(project: str) -> str:
    """A short stable id for a project (unit, plist and job names; never the path itself)."""
    return hashlib.sha256(project.encode("utf-8")).hexdigest()[:12]


def logs_dir() -> Path:
    return paths.data_dir() / "logs"


def night_log(key: str) -> Path:
    """Where a scheduled night's output goes (the last night's only, for cron and the daemon)."""
    return logs_dir() / f"night-{key}.log"


def resolve_executable() -> str:
    """The installed ``skillopt-sleep`` as an absolute path (not symlink-resolved, so a
    pipx or venv upgrade keeps working).

    The command this process was started as wins; then the one on PATH; then the one
    next to this interpreter. Raises :class:`ScheduleError` when none is found.
    """
    argv0 = sys.argv[0] if sys.argv else ""
    if Path(argv0).name in (EXECUTABLE, EXECUTABLE + ".exe") and os.path.isfile(argv0):
        return os.path.abspath(argv0)
    found = shutil.which(EXECUTABLE)
    if found:
        return os.path.abspath(found)
    beside = Path(sys.executable).parent / EXECUTABLE
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    raise ScheduleError(f"cannot find the installed `{EXECUTABLE}` command (not on PATH, not next to "
                        f"{sys.executable}); install SkillOpt (pip install skillopt) so the command exists, "
                        "then schedule again")


@dataclass(frozen=True)
class NightCommand:
    """The argv and environment of one project's scheduled night, and its log file."""

    argv: tuple[str, ...]
    env: tuple[tuple[str, str], ...]
    log: str

    @property
    def executable(self) -> str:
        return self.argv[0]


def night_command(project: str, executable: str | None = None) -> NightCommand:
    exe = executable or resolve_executable()
    env = [("SKILLOPT_HOME", str(paths.data_dir().expanduser().absolute()))]
    for name in carried_env():
        value = os.environ.get(name)
        if value:
            env.append((name, _dedupe_path(value) if name == "PATH" else value))
    env.sort()
    return NightCommand(argv=(exe, "run", "--project", project), env=tuple(env),
                        log=str(night_log(project_key(project)).absolute()))


def _dedupe_path(value: str) -> str:
    """PATH without repeated folders (a later repeat never changes which command is found)."""
    seen: set[str] = set()
    kept = []
    for part in value.split(os.pathsep):
        if part not in seen:
            seen.add(part)
            kept.append(part)
    return os.pathsep.join(kept)


@dataclass
class Schedule:
    """One row of ``schedules`` (migration 6)."""

    project: str
    key: str
    at: str
    mode: str
    jitter_s: int
    argv: list[str]
    env: dict[str, str]
    installed: dict[str, Any] = field(default_factory=dict)
    last_fired_at: str | None = None
    created_at: str = ""
    updated_at: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def cron_trigger(at: str, jitter_s: int = 0):
    """The APScheduler trigger for a daily local time (the daemon's and ``next_run``'s)."""
    from apscheduler.triggers.cron import CronTrigger

    return CronTrigger(hour=int(at[:2]), minute=int(at[3:]), second=0, jitter=jitter_s or None)


def next_run(at: str, now: datetime | None = None) -> datetime:
    """The next local time ``at`` after ``now`` (aware, local zone; DST-correct)."""
    trigger = cron_trigger(at)
    now = now or datetime.now(trigger.timezone)
    nxt = trigger.get_next_fire_time(None, now)
    assert nxt is not None  # a daily trigger always has a next time
    return nxt


def previous_run(at: str, now: datetime | None = None) -> datetime:
    """The latest local time ``at`` at or before ``now``."""
    trigger = cron_trigger(at)
    now = now or datetime.now(trigger.timezone)
    nxt = trigger.get_next_fire_time(None, now - timedelta(days=1, hours=2))
    prev = nxt
    while nxt is not None and nxt <= now:
        prev, nxt = nxt, trigger.get_next_fire_time(nxt, nxt)
    assert prev is not None and prev <= now
    return prev
