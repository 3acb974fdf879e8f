"""The launchd mode (macOS): a LaunchAgent per project.

``com.skillopt.sleep.<key>.plist`` in ``~/Library/LaunchAgents`` runs the night
with ``ProgramArguments`` (an argv, no shell) at ``StartCalendarInterval``
(local time; launchd runs a night missed during sleep when the Mac wakes), and
is loaded with ``launchctl bootstrap gui/<uid>``. The file carries a marker
comment; a plist without it is never overwritten or removed.
"""

from __future__ import annotations

import os
import plistlib
import shutil
from pathlib import Path

from skillopt_core.run.rundir import atomic_write_text
from sleep.scheduler.entries import Entry, Rendered, make_dirs, read_text, remove_created_dirs, run_tool
from sleep.scheduler.model import ScheduleError
from sleep.scheduler.quoting import check_plist_text

LABEL_PREFIX = "com.skillopt.sleep."
MARKER = "<!-- Managed by skillopt-sleep: `skillopt-sleep unschedule` removes this file. -->"


def agents_dir() -> Path:
    override = os.environ.get("SKILLOPT_LAUNCHD_DIR")
    if override:
        return Path(override).expanduser()
    return Path(os.environ.get("HOME") or Path.home()) / "Library" / "LaunchAgents"


def label(key: str) -> str:
    return LABEL_PREFIX + key


def plist_path(key: str) -> Path:
    return agents_dir() / f"{label(key)}.plist"


def unavailable() -> str | None:
    if shutil.which("launchctl") is None:
        return "no `launchctl` command (launchd is macOS only)"
    return None


def _domain() -> str:
    return f"gui/{os.getuid()}"


def plist_text(entry: Entry) -> str:
    check_plist_text(entry.command.argv[0], "the executable")
    check_plist_text(entry.project, "the project path")
    for name, value in entry.command.env:
        check_plist_text(value, name)
    check_plist_text(entry.command.log, "the log file")
    data = {
        "Label": label(entry.key),
        "ProgramArguments": list(entry.command.argv),
        "EnvironmentVariables": dict(entry.command.env),
        "StartCalendarInterval": {"Hour": entry.hour, "Minute": entry.minute},
        "StandardOutPath": entry.command.log,
        "StandardErrorPath": entry.command.log,
        "ProcessType": "Background",
        "Nice": 10,
    }
    text = plistlib.dumps(data, sort_keys=True).decode("utf-8")
    head, sep, rest = text.partition("\n")  # after the XML declaration
    return head + sep + MARKER + "\n" + rest


def render(entry: Entry) -> Rendered:
    path = plist_path(entry.key)
    return Rendered(mode="launchd", files={str(path): plist_text(entry)},
                    commands=[["launchctl", "bootout", f"{_domain()}/{label(entry.key)}"],
                              ["launchctl", "bootstrap", _domain(), str(path)]],
                    notes=["launchd runs it at the given local time, and a night missed while the Mac slept "
                           "when it wakes", f"night output: {entry.command.log}"])


def _ours(path: Path) -> bool:
    text = read_text(path)
    return text is not None and MARKER in text.split("\n", 2)[1:2]


def install(entry: Entry) -> dict:
    rendered = render(entry)
    path = plist_path(entry.key)
    if path.exists() and not _ours(path):
        raise ScheduleError(f"{path} exists and was not written by skillopt-sleep; nothing was changed. "
                            "Move it away if it is yours, then schedule again")
    created = make_dirs(path.parent)
    text = rendered.files[str(path)]
    changed = read_text(path) != text
    if changed:
        atomic_write_text(path, text)
    run_tool(rendered.commands[0], check=False)  # not loaded yet is fine
    run_tool(rendered.commands[1])
    return {"files": [str(path)], "created_dirs": created, "changed": changed}


def remove(key: str, installed: dict | None = None) -> list[str]:
    path = plist_path(key)
    if not path.exists() or not _ours(path):
        return []
    changes = []
    try:
        proc = run_tool(["launchctl", "bootout", f"{_domain()}/{label(key)}"], check=False)
        if proc.returncode == 0:
            changes.append(f"unloaded {label(key)}")
    except ScheduleError:
        changes.append(f"could not unload {label(key)} (no launchctl); removing its file")
    path.unlink()
    changes.append(f"removed {path}")
    changes += remove_created_dirs((installed or {}).get("created_dirs", []))
    return changes


def present(key: str) -> bool:
    return _ours(plist_path(key))


def orphans() -> list[str]:
    d = agents_dir()
    if not d.is_dir():
        return []
    return [p.name[len(LABEL_PREFIX):-len(".plist")] for p in sorted(d.glob(f"{LABEL_PREFIX}*.plist")) if _ours(p)]
