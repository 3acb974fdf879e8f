"""Noted files and watch epochs: when a harvest may read only what the watcher saw change.

The watcher notes every transcript file that changes (``noted_files``, one row
per path; ``version`` grows with each note) during a *watch epoch*
(``watch_epochs``: its process, heartbeat, roots and the time each root has been
watched since). A harvest trusts the noted list for a host only when

1. the epoch is live (not stopped, heartbeat fresh, process alive, this machine),
2. every transcript root of the host that exists now is watched by it, and
3. a full scan of the host finished after all its roots were being watched
   (the host is *anchored*): before that, files changed earlier are unknown.

Otherwise it scans as always (the normal cursor scan), and that scan anchors the
host for the next harvest. A harvest deletes the rows it consumed (same path and
version as when it started, so a file noted again meanwhile stays), and notes
itself the files it saw change but left unread (out of the ``--project`` scope,
unreadable), so a later harvest of another project still finds them.
A queue overflow, a root appearing or a root replaced resets the host's
``since``, which un-anchors it until the next scan.
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timezone

from skillopt_core.timestamps import utc_now
from sleep.index import Index
from sleep.scheduler.roots import Root, existing, transcript_roots

STALE_FACTOR = 3.0
MIN_STALE_S = 10.0

_UPSERT = ("INSERT INTO noted_files (path, host, noted_at, version, source) VALUES (?,?,?,1,?)"
           " ON CONFLICT(path) DO UPDATE SET host=excluded.host, noted_at=excluded.noted_at,"
           " version=noted_files.version+1, source=excluded.source")


def note(index: Index, items: Iterable[tuple[str, str]], source: str, at: str | None = None) -> int:
    """Note ``(path, host)`` pairs as changed, in one transaction; returns how many."""
    rows = [(path, host, at or utc_now(), source) for path, host in items]
    if rows:
        with index.transaction():
            index.conn.executemany(_UPSERT, rows)
    return len(rows)


def noted_count(index: Index) -> int:
    return int(index.conn.execute("SELECT COUNT(*) FROM noted_files").fetchone()[0])


@dataclass
class Epoch:
    id: int
    pid: int
    hostname: str
    started_at: str
    heartbeat_at: str
    heartbeat_s: float
    stopped_at: str | None
    roots: list[dict]
    anchors: dict[str, str]

    def host_roots(self, host: str) -> list[dict]:
        return [r for r in self.roots if r["host"] == host]

    def covered_since(self, host: str) -> str | None:
        """Since when every watched root of ``host`` has been watched (None: none is)."""
        roots = self.host_roots(host)
        return max(r["since"] for r in roots) if roots else None


def _epoch(row: tuple) -> Epoch:
    eid, pid, hostname, started_at, heartbeat_at, heartbeat_s, stopped_at, roots, anchors = row
    return Epoch(eid, pid, hostname, started_at, heartbeat_at, heartbeat_s, stopped_at,
                 roots=json.loads(roots), anchors=json.loads(anchors))


def _age_s(iso: str) -> float:
    then = datetime.fromisoformat(iso.replace("Z", "+00:00"))
    return (datetime.now(timezone.utc) - then).total_seconds()


def pid_alive(pid: int) -> bool:
    if os.name == "nt":  # os.kill would terminate the process there; the heartbeat decides
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def live_epoch(index: Index) -> tuple[Epoch | None, str]:
    """The running watcher's epoch, or None and why there is none."""
    row = index.conn.execute(
        "SELECT id, pid, hostname, started_at, heartbeat_at, heartbeat_s, stopped_at, roots, anchors"
        " FROM watch_epochs ORDER BY id DESC LIMIT 1").fetchone()
    if row is None:
        return None, "no watcher has run (start `skillopt-sleep daemon`)"
    e = _epoch(row)
    if e.stopped_at:
        return None, f"the watcher stopped at {e.stopped_at}"
    if e.hostname != socket.gethostname():
        return None, f"the last watcher ran on another machine ({e.hostname})"
    if _age_s(e.heartbeat_at) > max(MIN_STALE_S, STALE_FACTOR * e.heartbeat_s) or not pid_alive(e.pid):
        return None, f"the watcher (pid {e.pid}) stopped without saying so (last heartbeat {e.heartbeat_at})"
    return e, ""


@dataclass
class HarvestPlan:
    """Per host: read only the noted files (``noted``) or scan (``scan``, with the reason)."""

    started_at: str
    epoch: Epoch | None
    modes: dict[str, str]
    reasons: dict[str, str]
    snapshot: dict[str, tuple[str, int]]  # path -> (host, version)
    since_given: bool
    unfinished: set[str] = field(default_factory=set)

    def allows(self, host: str, path: str) -> bool:
        return self.modes.get(host) != "noted" or path in self.snapshot

    def leave(self, path: str) -> None:
        """The harvest saw ``path`` change but did not bring its cursor up to date."""
        self.unfinished.add(path)

    def summary(self) -> dict[str, str]:
        noted = {}
        for host, mode in self.modes.items():
            if mode == "noted":
                n = sum(1 for h, _ in self.snapshot.values() if h == host)
                noted[host] = f"noted files only ({n} noted by the watcher)"
            else:
                noted[host] = f"full scan: {self.reasons.get(host, '')}"
        return noted


def plan_harvest(index: Index, hosts: tuple[str, ...], since_given: bool,
                 roots: list[Root] | None = None) -> HarvestPlan:
    """Decide each host's mode; call inside the harvest's write transaction."""
    from sleep.scheduler.hook import drain_spool

    drain_spool(index)
    epoch, why = live_epoch(index)
    snapshot = {p: (h, v) for p, h, v in index.conn.execute("SELECT path, host, version FROM noted_files")}
    current = existing(roots if roots is not None else transcript_roots())
    modes, reasons = {}, {}
    for host in hosts:
        modes[host], reasons[host] = "scan", why
        if epoch is None:
            continue
        watched = {r["path"] for r in epoch.host_roots(host)}
        missing = [r.path for r in current if r.host == host and r.path not in watched]
        since, anchor = epoch.covered_since(host), epoch.anchors.get(host)
        if missing:
            reasons[host] = f"the watcher does not watch {missing[0]} yet"
        elif since is None:
            reasons[host] = "the watcher watches no folder of this host"
        elif anchor is None or anchor <= since:
            reasons[host] = "first scan since the watcher started watching this host"
        else:
            modes[host], reasons[host] = "noted", ""
    return HarvestPlan(started_at=utc_now(), epoch=epoch, modes=modes, reasons=reasons, snapshot=snapshot,
                       since_given=since_given)


def finish_harvest(index: Index, plan: HarvestPlan, hosts: tuple[str, ...],
                   roots: list[Root] | None = None) -> None:
    """Consume the noted rows the harvest handled, note what it left, anchor scanned hosts.
    Call inside the harvest's write transaction, before its final commit."""
    consumed = [(path, version) for path, (host, version) in plan.snapshot.items()
                if host in hosts and path not in plan.unfinished]
    index.conn.executemany("DELETE FROM noted_files WHERE path = ? AND version = ?", consumed)
    host_of: dict[str, str] = {}
    for r in roots if roots is not None else transcript_roots():
        host_of.setdefault(r.path, r.host)
    left = [(path, _host_for(path, host_of, hosts), utc_now()) for path in sorted(plan.unfinished)
            if path not in plan.snapshot]
    index.conn.executemany("INSERT INTO noted_files (path, host, noted_at, version, source) VALUES (?,?,?,1,"
                           "'harvest') ON CONFLICT(path) DO NOTHING", left)
    if plan.epoch is None or plan.since_given:
        return
    epoch, _ = live_epoch(index)
    if epoch is None or epoch.id != plan.epoch.id:
        return
    current = existing(roots if roots is not None else transcript_roots())
    anchors = dict(epoch.anchors)
    for host in hosts:
        if plan.modes.get(host) != "scan":
            continue
        watched = {r["path"] for r in epoch.host_roots(host)}
        since = epoch.covered_since(host)
        if since is None or since >= plan.started_at:
            continue
        if all(r.path in watched for r in current if r.host == host):
            anchors[host] = plan.started_at
    if anchors != epoch.anchors:
        index.conn.execute("UPDATE watch_epochs SET anchors = ? WHERE id = ?", (json.dumps(anchors), epoch.id))


def _host_for(path: str, host_of: dict[str, str], hosts: tuple[str, ...]) -> str:
    best = ""
    for root in host_of:
        if path.startswith(root.rstrip(os.sep) + os.sep) and len(root) > len(best):
            best = root
    return host_of.get(best) or (hosts[0] if hosts else "unknown")
