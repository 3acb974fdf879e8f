"""Schedule, unschedule and list nightly runs: the library behind the CLI and MCP tools.

:func:`schedule` installs one managed OS entry per project (or stores a daemon
schedule) and records it in the index; twice is one entry. :func:`unschedule`
removes exactly what was installed. :func:`plan` says what :func:`schedule`
would do and changes nothing. Errors are :class:`~sleep.scheduler.model.ScheduleError`
with a message that says what to do.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from sleep import paths
from sleep.index import Index
from sleep.lock import FileLock
from sleep.scheduler import store
from sleep.scheduler.entries import Entry, Rendered, detect, mode_module, not_firing, require
from sleep.scheduler.model import (
    DEFAULT_AT,
    DEFAULT_JITTER_S,
    MODES,
    Schedule,
    ScheduleError,
    logs_dir,
    next_run,
    night_command,
    parse_at,
    project_key,
    project_path,
)

NO_OS_SCHEDULER = ("no cron, systemd or launchd is usable on this machine (a container?): {reasons}. "
                   "The schedule is stored for the daemon instead: nights run only while `skillopt-sleep daemon` "
                   "runs, so keep it running under a process supervisor (supervisord, s6, runit, systemd, or "
                   "your container's entrypoint).")
DAEMON_NOTE = ("nights of daemon schedules run only while `skillopt-sleep daemon` runs (keep it running under "
               "a process supervisor)")


@dataclass
class Plan:
    """What :func:`schedule` would do (``--print``): the schedule and the rendered entry."""

    schedule: Schedule
    rendered: Rendered | None
    next_run: str
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        r = self.rendered
        return {"schedule": self.schedule.to_dict(), "next_run": self.next_run, "notes": self.notes,
                "files": dict(r.files) if r else {}, "commands": list(r.commands) if r else []}


@dataclass
class Outcome:
    """What :func:`schedule` or :func:`unschedule` changed, one sentence per change."""

    changes: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    schedule: Schedule | None = None
    next_run: str | None = None
    removed: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"schedule": self.schedule.to_dict() if self.schedule else None, "next_run": self.next_run,
                "changes": self.changes, "notes": self.notes, "removed": self.removed}


def _lock() -> FileLock:
    return FileLock(paths.data_dir() / "schedule.lock", what="schedule change")


def plan(project: str | os.PathLike | None = None, at: str = DEFAULT_AT, mode: str = "auto",
         jitter_s: int | None = None, *, printing: bool = False) -> Plan:
    """Resolve and render the schedule without changing anything (raises ScheduleError).
    ``printing`` (``--print``): render an explicit mode even where it is not usable, saying why."""
    folder = project_path(project)
    at = parse_at(at)
    notes: list[str] = []
    if mode == "auto":
        found, reasons = detect()
        if found is None:
            mode = "daemon"
            notes.append(NO_OS_SCHEDULER.format(reasons="; ".join(f"{k}: {v}" for k, v in reasons.items())))
        else:
            mode = found
    elif mode not in MODES:
        raise ScheduleError(f"--mode {mode!r}: use auto, cron, systemd, launchd or daemon")
    if jitter_s is not None and jitter_s < 0:
        raise ScheduleError("--jitter must be 0 or more seconds")
    command = night_command(folder)
    key = project_key(folder)
    s = Schedule(project=folder, key=key, at=at, mode=mode,
                 jitter_s=(DEFAULT_JITTER_S if jitter_s is None else int(jitter_s)) if mode == "daemon" else 0,
                 argv=list(command.argv), env=dict(command.env))
    rendered = None
    if mode != "daemon":
        why = not_firing(mode)
        if why is not None and printing:
            notes.append(f"--mode {mode} is not usable on this machine ({why}); this is what it would install")
            module = mode_module(mode)
        elif why is not None and mode_module(mode).unavailable() is None:
            notes.append(f"{why}: start it (e.g. `sudo service cron start`), or use --mode daemon")
            module = mode_module(mode)
        else:
            module = require(mode)
        rendered = module.render(Entry(key=key, project=folder, at=at, command=command))
        notes += rendered.notes
    elif not notes:
        notes.append(DAEMON_NOTE)
    if jitter_s and mode != "daemon":
        notes.append(f"--jitter applies to the daemon only; the {mode} entry runs at exactly {at}")
    return Plan(schedule=s, rendered=rendered, next_run=next_run(at).isoformat(timespec="minutes"), notes=notes)


def schedule(project: str | os.PathLike | None = None, at: str = DEFAULT_AT, mode: str = "auto",
             jitter_s: int | None = None) -> Outcome:
    """Install (or update) the project's nightly run; idempotent."""
    p = plan(project, at, mode, jitter_s)
    s = p.schedule
    out = Outcome(notes=list(p.notes), next_run=p.next_run)
    logs_dir().mkdir(parents=True, exist_ok=True)  # the entries write the night's output there
    with _lock(), Index.open() as index:
        old = store.get(index, s.project)
        if old is not None and old.mode != s.mode and old.mode != "daemon":
            out.changes += mode_module(old.mode).remove(old.key, old.installed)
        if s.mode != "daemon":
            entry = Entry(key=s.key, project=s.project, at=s.at, command=night_command(s.project, s.argv[0]))
            s.installed = mode_module(s.mode).install(entry)
            if old is not None and old.mode == s.mode:  # folders the first install created stay ours to remove
                earlier = old.installed.get("created_dirs", [])
                s.installed["created_dirs"] = earlier + [d for d in s.installed.get("created_dirs", [])
                                                         if d not in earlier]
        s.last_fired_at = old.last_fired_at if old is not None and old.at == s.at else None
        same = old is not None and (old.at, old.mode, old.jitter_s, old.argv, old.env) == \
            (s.at, s.mode, s.jitter_s, s.argv, s.env) and not s.installed.get("changed", False)
        out.schedule = store.put(index, s)
    where = {"cron": "your crontab", "systemd": "a systemd user timer", "launchd": "a launchd agent",
             "daemon": "the daemon's schedule"}[s.mode]
    out.changes.append(f"{'kept' if same else 'installed'} the nightly run at {s.at} for {s.project} in {where}"
                       + (" (already as requested)" if same else ""))
    return out


def unschedule(project: str | os.PathLike | None = None, everything: bool = False) -> Outcome:
    """Remove the project's schedule (``everything``: all of ours, including entries whose
    index record is gone). Removing what does not exist changes nothing."""
    out = Outcome()
    with _lock(), Index.open() as index:
        if everything:
            targets = store.all_schedules(index)
        else:
            folder = _folder(project)
            s = store.get(index, folder)
            targets = [s] if s else []
            if not targets:
                out.changes += _remove_orphans({project_key(folder)})
        for s in targets:
            if s.mode != "daemon":
                out.changes += mode_module(s.mode).remove(s.key, s.installed)
            store.delete(index, s.project)
            out.removed.append(s.project)
            out.changes.append(f"removed the {s.mode} schedule of {s.project}")
        if everything:
            out.changes += _remove_orphans(None)
    if not out.changes:
        out.notes.append("nothing was scheduled" + ("" if everything else f" for {_folder(project)}")
                         + "; nothing changed")
    return out


def list_schedules() -> list[Schedule]:
    if not paths.index_path().exists():
        return []
    with Index.open() as index:
        return store.all_schedules(index)


def _folder(project: str | os.PathLike | None) -> str:
    """The project path as stored, without requiring the folder to still exist."""
    from pathlib import Path

    raw = os.fspath(project) if project is not None else os.getcwd()
    return str(Path(raw).expanduser().resolve())


def _remove_orphans(keys: set[str] | None) -> list[str]:
    """Our entries on disk with no schedule record (``keys`` None: all of them)."""
    changes: list[str] = []
    for name in ("cron", "systemd", "launchd"):
        mod = mode_module(name)
        if name == "cron" and mod.unavailable() is not None:
            continue
        try:
            found = mod.orphans()
        except ScheduleError as exc:
            changes.append(f"could not look for {name} entries: {exc}")
            continue
        for key in found:
            if keys is None or key in keys:
                changes += mod.remove(key, None)
    return changes
