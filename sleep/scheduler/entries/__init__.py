"""OS entries that run a project's night: cron, systemd user timers, launchd agents.

Each mode module offers the same five functions, used by :mod:`sleep.scheduler.api`:

- ``unavailable() -> str | None``: why this machine cannot use the mode (None: it can);
  cron also has ``not_running()``: a ``crontab`` binary with no cron daemon to fire it;
- ``render(entry) -> Rendered``: exactly what ``install`` would write and run (``--print``);
- ``install(entry) -> dict``: write the entry (idempotent) and return what was done, kept
  in the schedule's ``installed`` column so ``remove`` can undo exactly that;
- ``remove(key, installed) -> list[str]``: remove only our entry; one sentence per change;
- ``present(key) -> bool`` and ``orphans() -> list[str]`` (keys of our entries on disk).

Locations are overridable for tests and unusual set-ups: ``SKILLOPT_SYSTEMD_USER_DIR``
(default ``$XDG_CONFIG_HOME/systemd/user``) and ``SKILLOPT_LAUNCHD_DIR`` (default
``~/Library/LaunchAgents``); ``crontab``, ``systemctl`` and ``launchctl`` are found on PATH.
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

from sleep.scheduler.model import ModeUnavailable, NightCommand, ScheduleError

TOOL_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class Entry:
    """What one project's OS entry must do."""

    key: str
    project: str
    at: str
    command: NightCommand

    @property
    def hour(self) -> int:
        return int(self.at[:2])

    @property
    def minute(self) -> int:
        return int(self.at[3:])


@dataclass
class Rendered:
    """What ``install`` would write (``files``: path -> text) and run (``commands``)."""

    mode: str
    files: dict[str, str] = field(default_factory=dict)
    commands: list[list[str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def mode_module(name: str) -> ModuleType:
    if name not in ("cron", "systemd", "launchd"):
        raise ScheduleError(f"unknown mode {name!r}: use cron, systemd, launchd or daemon")
    return importlib.import_module(f"sleep.scheduler.entries.{name}")


def os_modes() -> tuple[str, ...]:
    """The OS modes in the order ``auto`` tries them on this platform."""
    return ("launchd", "cron") if sys.platform == "darwin" else ("systemd", "cron", "launchd")


def detect() -> tuple[str | None, dict[str, str]]:
    """The mode ``auto`` picks (None: no OS scheduler) and why each other one was not usable."""
    reasons: dict[str, str] = {}
    for name in os_modes():
        why = not_firing(name)
        if why is None:
            return name, reasons
        reasons[name] = why
    return None, reasons


def not_firing(name: str) -> str | None:
    """Why an entry of mode ``name`` would not run nights here: the mode's tool is missing, or
    the scheduler behind it is not running (a ``crontab`` binary without a cron daemon)."""
    mod = mode_module(name)
    why = mod.unavailable()
    if why is None and hasattr(mod, "not_running"):
        why = mod.not_running()
    return why


def require(name: str) -> ModuleType:
    mod = mode_module(name)
    why = mod.unavailable()
    if why is not None:
        raise ModeUnavailable(f"--mode {name} is not usable here: {why}. Use another --mode, or --mode "
                              "daemon with `skillopt-sleep daemon` kept running by a process supervisor; "
                              f"`skillopt-sleep schedule --print --mode {name}` shows the entry anyway.")
    return mod


def run_tool(argv: list[str], *, stdin: str | None = None, check: bool = True,
             timeout: float = TOOL_TIMEOUT_S) -> subprocess.CompletedProcess:
    """Run an OS tool; with ``check``, a failure raises :class:`ScheduleError` quoting its message."""
    try:
        proc = subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=timeout,
                              stdin=None if stdin is not None else subprocess.DEVNULL)
    except FileNotFoundError:
        raise ScheduleError(f"`{argv[0]}` is not installed or not on PATH") from None
    except subprocess.TimeoutExpired:
        raise ScheduleError(f"`{' '.join(argv)}` did not finish within {timeout:.0f} s") from None
    if check and proc.returncode != 0:
        message = (proc.stderr or proc.stdout or "").strip().splitlines()
        raise ScheduleError(f"`{' '.join(argv)}` failed (exit {proc.returncode})"
                            + (f": {message[-1]}" if message else ""))
    return proc


def make_dirs(path: Path) -> list[str]:
    """Create ``path`` and missing parents; the ones created, outermost first."""
    missing = []
    p = path
    while not p.exists():
        missing.append(p)
        if p.parent == p:
            break
        p = p.parent
    path.mkdir(parents=True, exist_ok=True)
    return [str(d) for d in reversed(missing)]


def remove_created_dirs(created: list[str]) -> list[str]:
    """Remove the directories we created, innermost first, where empty."""
    removed = []
    for d in reversed(created or []):
        try:
            os.rmdir(d)
            removed.append(f"removed the empty folder {d} (created when scheduling)")
        except OSError:
            pass  # not empty (something else lives there now) or already gone: leave it
    return removed


def read_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except UnicodeDecodeError:
        return path.read_bytes().decode("utf-8", "replace")
