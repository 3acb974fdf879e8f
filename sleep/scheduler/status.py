"""``skillopt-sleep status``: per project the schedule, next night, last night and
proposals waiting; and whether the daemon and its watcher are running.

Everything is read; the one write marks a night whose process is gone
``interrupted`` (:func:`sleep.nightstore.settle_dead`). The last night comes from the cycle's
``cycles`` table, read by column name and only if it exists ("no nights yet"
otherwise); proposals from :func:`sleep.proposals.list_proposals`.
"""

from __future__ import annotations

import os
import sqlite3
from typing import Any

from sleep import paths
from sleep.index import Index
from sleep.scheduler import store
from sleep.scheduler.model import Schedule, next_run

NIGHT_COLUMNS = ("id", "project", "started_at", "finished_at", "outcome", "reason", "proposal_id")


def last_night(index: Index, project: str) -> dict[str, Any] | None:
    """The newest night of ``project`` (the named columns that exist), or None."""
    try:
        cols = {r[1] for r in index.conn.execute("PRAGMA table_info(cycles)")}
        if not cols or "project" not in cols:
            return None
        wanted = [c for c in NIGHT_COLUMNS if c in cols]
        order = "started_at" if "started_at" in cols else "rowid"
        row = index.conn.execute(f"SELECT {', '.join(wanted)} FROM cycles WHERE project = ?"
                                 f" ORDER BY {order} DESC LIMIT 1", (project,)).fetchone()
    except sqlite3.Error:
        return None
    return dict(zip(wanted, row, strict=True)) if row else None


def _proposals(project: str, index: Index) -> dict[str, Any]:
    try:
        from sleep.proposals import list_proposals

        items = list_proposals(project=project, index=index)
    except Exception as exc:  # a broken repository must not break status
        return {"pending": None, "stale": None, "note": f"could not list proposals: {exc}"}
    return {"pending": sum(1 for p in items if p.state == "pending"),
            "stale": sum(1 for p in items if p.state == "stale"), "note": ""}


def _installed(s: Schedule) -> bool | None:
    if s.mode == "daemon":
        return None
    from sleep.scheduler.entries import mode_module

    try:
        return bool(mode_module(s.mode).present(s.key))
    except Exception:
        return False


def _daemon() -> dict[str, Any]:
    from sleep.scheduler.daemon import daemon_running

    running, state = daemon_running()
    return {"running": running, "pid": state.get("pid") if running else None,
            "started_at": state.get("started_at") if running else None,
            "last_pid": state.get("pid"), "stopped_at": state.get("stopped_at"),
            "log": str(paths.data_dir() / "logs" / "daemon.log")}


def _watcher(index: Index) -> dict[str, Any]:
    from sleep.scheduler.noted import live_epoch, noted_count

    epoch, why = live_epoch(index)
    out: dict[str, Any] = {"running": epoch is not None, "noted_files": noted_count(index)}
    if epoch is None:
        out["note"] = why
    else:
        out.update(pid=epoch.pid, since=epoch.started_at, heartbeat_at=epoch.heartbeat_at,
                   folders=len(epoch.roots), anchored_hosts=sorted(epoch.anchors))
    return out


def _not_firing(mode: str) -> str | None:
    """Why the OS scheduler of ``mode`` would not run the entry now (None: it would, or daemon)."""
    if mode == "daemon":
        return None
    from sleep.scheduler.entries import not_firing

    return not_firing(mode)


def project_status(index: Index, project: str, s: Schedule | None) -> dict[str, Any]:
    entry: dict[str, Any] = {"project": project, "schedule": None, "next_run": None}
    if s is not None:
        entry["schedule"] = {"mode": s.mode, "at": s.at, "jitter_s": s.jitter_s, "installed": _installed(s),
                             "since": s.created_at, "not_firing": _not_firing(s.mode)}
        entry["next_run"] = next_run(s.at).isoformat(timespec="minutes")
    night = last_night(index, project)
    entry["last_night"] = night
    entry["last_night_note"] = "" if night else "no nights yet"
    entry["proposals"] = _proposals(project, index)
    return entry


def status(project: str | None = None) -> dict[str, Any]:
    """What ``status --json`` prints. ``project`` None: every scheduled project (or the
    current folder when nothing is scheduled)."""
    if not paths.index_path().exists():
        folder = _folder(project)
        return {"projects": [{"project": folder, "schedule": None, "next_run": None, "last_night": None,
                              "last_night_note": "no nights yet",
                              "proposals": {"pending": 0, "stale": 0, "note": ""}}],
                "daemon": _daemon(), "watcher": {"running": False, "noted_files": 0,
                                                 "note": "no index yet (nothing harvested)"},
                "index": str(paths.index_path())}
    with Index.open() as index:
        from sleep.nightstore import settle_dead

        settle_dead(index)  # a night whose process is gone shows as interrupted at once
        schedules = {s.project: s for s in store.all_schedules(index)}
        if project is not None:
            folders = [_folder(project)]
        else:
            folders = sorted(schedules) or [_folder(None)]
        projects = [project_status(index, f, schedules.get(f)) for f in folders]
        return {"projects": projects, "daemon": _daemon(), "watcher": _watcher(index),
                "index": str(index.path)}


def _folder(project: str | None) -> str:
    from pathlib import Path

    return str(Path(os.fspath(project) if project else os.getcwd()).expanduser().resolve())


def render(data: dict[str, Any]) -> str:
    """The human text of :func:`status`."""
    lines = []
    daemon_up = data["daemon"]["running"]
    for p in data["projects"]:
        lines.append(p["project"])
        s = p["schedule"]
        if s is None:
            lines.append("  schedule:   none (add one with `skillopt-sleep schedule`)")
        else:
            extra = f", up to {s['jitter_s'] // 60} min later" if s["mode"] == "daemon" and s["jitter_s"] else ""
            lines.append(f"  schedule:   nightly at {s['at']} ({s['mode']}{extra})")
            if s.get("not_firing"):
                lines.append(f"  WARNING:    {s['not_firing']}; no night will run until it does "
                             "(or use `skillopt-sleep schedule --mode daemon`)")
            if s["installed"] is False:
                lines.append(f"  WARNING:    the {s['mode']} entry is missing; run `skillopt-sleep schedule` again")
            when = p["next_run"].replace("T", " ")
            if s["mode"] == "daemon" and not daemon_up:
                when += " (only if `skillopt-sleep daemon` is running: it is not)"
            lines.append(f"  next night: {when}")
        night = p["last_night"]
        if night:
            proposal = f", proposal {night['proposal_id']}" if night.get("proposal_id") else ""
            lines.append(f"  last night: {str(night.get('started_at', '?'))[:16].replace('T', ' ')} UTC, "
                         f"{night.get('outcome', '?')}{proposal}")
            if night.get("reason"):
                lines.append(f"              {night['reason']}")
        else:
            lines.append("  last night: no nights yet")
        pr = p["proposals"]
        if pr.get("pending") is None:
            lines.append(f"  proposals:  {pr.get('note')}")
        else:
            stale = f", {pr['stale']} stale" if pr.get("stale") else ""
            lines.append(f"  proposals:  {pr['pending']} pending{stale}"
                         + (" (`skillopt-sleep review`)" if pr["pending"] or pr.get("stale") else ""))
    d, w = data["daemon"], data["watcher"]
    lines.append("")
    lines.append(f"daemon:  running (pid {d['pid']}, since {d['started_at']})" if daemon_up
                 else "daemon:  not running" + (f" (last pid {d['last_pid']}, stopped {d['stopped_at']})"
                                                if d.get("last_pid") else ""))
    if w["running"]:
        lines.append(f"watcher: running ({w['folders']} transcript folders, {w['noted_files']} files noted, "
                     f"heartbeat {w['heartbeat_at']})")
    else:
        lines.append(f"watcher: not running ({w.get('note', '')})")
    lines.append(f"log:     {d['log']}")
    return "\n".join(lines)
