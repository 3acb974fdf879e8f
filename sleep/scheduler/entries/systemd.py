"""The systemd mode: a user service and timer per project.

``skillopt-sleep-<key>.service`` runs the night once (``Type=oneshot``; exit 3,
"another night is running", is not a failure) and ``skillopt-sleep-<key>.timer``
starts it daily at the local time, exactly (``AccuracySec=1s``), catching up a
night missed while the machine was off (``Persistent=true``). Both files start
with a marker line; files without it are never overwritten or removed.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from skillopt_core.run.rundir import atomic_write_text
from sleep.scheduler.entries import Entry, Rendered, make_dirs, read_text, remove_created_dirs, run_tool
from sleep.scheduler.model import ScheduleError
from sleep.scheduler.quoting import systemd_environment, systemd_exec

MARKER = "# Managed by skillopt-sleep: `skillopt-sleep unschedule` removes this file."
PREFIX = "skillopt-sleep-"


def unit_dir() -> Path:
    override = os.environ.get("SKILLOPT_SYSTEMD_USER_DIR")
    if override:
        return Path(override).expanduser()
    config = os.environ.get("XDG_CONFIG_HOME") or str(Path(os.environ.get("HOME") or Path.home()) / ".config")
    return Path(config) / "systemd" / "user"


def names(key: str) -> tuple[str, str]:
    return f"{PREFIX}{key}.service", f"{PREFIX}{key}.timer"


def unavailable() -> str | None:
    if shutil.which("systemctl") is None:
        return "no `systemctl` command on PATH"
    try:
        proc = run_tool(["systemctl", "--user", "show-environment"], check=False, timeout=10)
    except ScheduleError as exc:
        return str(exc)
    if proc.returncode != 0:
        why = (proc.stderr or "").strip().splitlines()
        return "no systemd user manager is running (`systemctl --user` failed" + (f": {why[-1]})" if why else ")")
    return None


def service_text(entry: Entry) -> str:
    return "\n".join([
        MARKER,
        f"# project: {json.dumps(entry.project)}",
        "[Unit]",
        f"Description=SkillOpt-Sleep night for project {entry.key}",
        "",
        "[Service]",
        "Type=oneshot",
        f"Environment={systemd_environment(entry.command.env)}",
        f"ExecStart={systemd_exec(entry.command.argv)}",
        "SuccessExitStatus=3",
        "Nice=10",
        "",
    ])


def timer_text(entry: Entry) -> str:
    service, _ = names(entry.key)
    return "\n".join([
        MARKER,
        f"# project: {json.dumps(entry.project)}",
        "[Unit]",
        f"Description=SkillOpt-Sleep nightly run at {entry.at} for project {entry.key}",
        "",
        "[Timer]",
        f"OnCalendar=*-*-* {entry.at}:00",
        "AccuracySec=1s",
        "Persistent=true",
        f"Unit={service}",
        "",
        "[Install]",
        "WantedBy=timers.target",
        "",
    ])


def render(entry: Entry) -> Rendered:
    service, timer = names(entry.key)
    d = unit_dir()
    return Rendered(mode="systemd", files={str(d / service): service_text(entry), str(d / timer): timer_text(entry)},
                    commands=[["systemctl", "--user", "daemon-reload"],
                              ["systemctl", "--user", "enable", "--now", timer]],
                    notes=["the timer fires at the given local time; a night missed while the machine was off "
                           "runs once when it is next up (Persistent=true)",
                           "night output goes to the journal: journalctl --user -u " + service])


def _ours(path: Path) -> bool:
    text = read_text(path)
    return text is not None and text.startswith(MARKER)


def install(entry: Entry) -> dict:
    rendered = render(entry)
    d = unit_dir()
    for path in rendered.files:
        if Path(path).exists() and not _ours(Path(path)):
            raise ScheduleError(f"{path} exists and was not written by skillopt-sleep; nothing was changed. "
                                "Move it away if it is yours, then schedule again")
    created = make_dirs(d)
    wants = d / "timers.target.wants"  # `systemctl enable` links the timer in here
    wants_existed = wants.exists()
    changed = False
    for path, text in rendered.files.items():
        if read_text(Path(path)) != text:
            atomic_write_text(Path(path), text)
            changed = True
    for argv in rendered.commands:
        run_tool(argv)
    if not wants_existed and wants.is_dir():
        created.append(str(wants))
    return {"files": list(rendered.files), "created_dirs": created, "changed": changed}


def remove(key: str, installed: dict | None = None) -> list[str]:
    d = unit_dir()
    service, timer = names(key)
    paths = [d / timer, d / service]
    if not any(p.exists() for p in paths):
        return []
    changes = []
    proc = _systemctl("disable", "--now", timer)
    if proc is not None and proc.returncode == 0:
        changes.append(f"stopped and disabled {timer}")
    else:
        changes.append(f"could not disable {timer} through systemctl (no user manager?); removing its files")
    for p in paths:
        if p.exists() and _ours(p):
            p.unlink()
            changes.append(f"removed {p}")
    _systemctl("daemon-reload")
    changes += remove_created_dirs((installed or {}).get("created_dirs", []))
    return changes


def _systemctl(*args: str):
    try:
        return run_tool(["systemctl", "--user", *args], check=False)
    except ScheduleError:
        return None


def present(key: str) -> bool:
    d = unit_dir()
    return all(_ours(d / n) for n in names(key))


def orphans() -> list[str]:
    d = unit_dir()
    if not d.is_dir():
        return []
    keys = []
    for p in sorted(d.glob(f"{PREFIX}*.timer")):
        key = p.name[len(PREFIX):-len(".timer")]
        if _ours(p):
            keys.append(key)
    return keys
