"""The transcript watcher: a watchdog observer on every host's transcript roots.

File events are filtered to transcript files (:meth:`Root.wants`), coalesced in
memory (a burst of appends to one file is one row) and written to
``noted_files`` about ``coalesce_s`` after the first event of a burst, in one
transaction. One thread does all the index work: it opens the watch epoch,
flushes notes, beats the heartbeat every ``heartbeat_s`` (and then watches
roots that appeared, re-watches replaced ones) and closes the epoch on stop.
Idle, it sleeps on an event: no polling.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path

from watchdog.events import (
    DirCreatedEvent,
    DirMovedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers import Observer

from skillopt_core.timestamps import utc_now
from sleep.index import Index
from sleep.scheduler.noted import note
from sleep.scheduler.roots import Root, transcript_roots

log = logging.getLogger("skillopt.sleep.watcher")
EVENTS = [FileCreatedEvent, FileModifiedEvent, FileMovedEvent, FileDeletedEvent, DirCreatedEvent, DirMovedEvent]
MAX_WALK = 20_000  # files noted from one folder that appeared at once


class _Handler(FileSystemEventHandler):
    def __init__(self, watcher: Watcher) -> None:
        self.watcher = watcher

    def on_any_event(self, event: FileSystemEvent) -> None:
        self.watcher._event(event)


class _OverflowSpy(logging.Filter):
    """watchdog reports a kernel queue overflow (events lost) only in its log."""

    def __init__(self, watcher: Watcher) -> None:
        super().__init__()
        self.watcher = watcher

    def filter(self, record: logging.LogRecord) -> bool:
        if "overflow" in record.getMessage().lower():
            self.watcher._overflowed.set()
            self.watcher._wake.set()
        return True


class Watcher:
    def __init__(self, index_path: Path | None = None, roots: Callable[[], list[Root]] = transcript_roots,
                 coalesce_s: float = 0.5, heartbeat_s: float = 60.0) -> None:
        self.index_path = index_path
        self.roots_fn = roots
        self.coalesce_s = coalesce_s
        self.heartbeat_s = heartbeat_s
        self.epoch_id: int | None = None
        self.stats = {"events": 0, "noted": 0, "flushes": 0, "flush_retries": 0, "overflows": 0}
        self._pending: dict[str, str] = {}
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._overflowed = threading.Event()
        self._observer = Observer()
        self._watches: dict[str, tuple] = {}  # root path -> (root, watch, (dev, ino), since); index thread only
        self._active: tuple[Root, ...] = ()  # what the observer thread matches against (replaced whole)
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None
        self._spy = _OverflowSpy(self)

    # ----- lifecycle ----------------------------------------------------------------------

    def start(self) -> Watcher:
        logging.getLogger("watchdog.observers.inotify_c").addFilter(self._spy)
        self._observer.start()
        self._thread = threading.Thread(target=self._loop, name="skillopt-watcher", daemon=True)
        self._thread.start()
        self._ready.wait(30)
        if self._error is not None:
            self.stop()
            raise RuntimeError(f"the watcher could not start: {self._error}") from self._error
        return self

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(30)
        try:
            self._observer.stop()
            self._observer.join(10)
        except RuntimeError:
            pass  # never started
        logging.getLogger("watchdog.observers.inotify_c").removeFilter(self._spy)

    def alive(self) -> bool:
        return bool(self._thread and self._thread.is_alive() and self._observer.is_alive())

    def watched(self) -> list[str]:
        return sorted(self._watches)

    # ----- events (observer thread) -------------------------------------------------------

    def _event(self, event: FileSystemEvent) -> None:
        self.stats["events"] += 1
        found: dict[str, str] = {}
        paths = [os.fsdecode(event.src_path)]
        if isinstance(event, (FileMovedEvent, DirMovedEvent)) and event.dest_path:
            paths.append(os.fsdecode(event.dest_path))
        for path in paths:
            if event.is_directory:
                if isinstance(event, (DirCreatedEvent, DirMovedEvent)):
                    found.update(self._walk(path))
                continue
            root = self._root_of(path)
            if root is not None:
                found[path] = root.host
        if found:
            with self._lock:
                self._pending.update(found)
            self._wake.set()

    def _root_of(self, path: str) -> Root | None:
        for root in self._active:
            if root.wants(path):
                return root
        return None

    def _walk(self, folder: str) -> dict[str, str]:
        found: dict[str, str] = {}
        for dirpath, _dirs, files in os.walk(folder, followlinks=True):
            for name in files:
                path = os.path.join(dirpath, name)
                root = self._root_of(path)
                if root is not None:
                    found[path] = root.host
                    if len(found) >= MAX_WALK:
                        return found
        return found

    # ----- the index thread ---------------------------------------------------------------

    def _loop(self) -> None:
        index = None
        try:
            index = Index.open(self.index_path)
            index.conn.execute("PRAGMA busy_timeout=2000")
            self._open_epoch(index)
        except BaseException as exc:  # reported by start()
            self._error = exc
            self._ready.set()
            if index is not None:
                index.close()
            return
        self._ready.set()
        next_beat = time.monotonic() + self.heartbeat_s
        try:
            while not self._stop.is_set():
                woke = self._wake.wait(max(0.0, next_beat - time.monotonic()))
                if woke and not self._stop.is_set():
                    self._stop.wait(self.coalesce_s)  # let the burst finish
                self._wake.clear()
                if self._overflowed.is_set():
                    self._overflowed.clear()
                    self.stats["overflows"] += 1
                    log.warning("the kernel dropped file events; the next harvest scans every transcript folder")
                    self._bump_all(index)
                self._flush(index)
                if time.monotonic() >= next_beat:
                    self._beat(index)
                    next_beat = time.monotonic() + self.heartbeat_s
            self._flush(index)
            with index.transaction():
                index.conn.execute("UPDATE watch_epochs SET stopped_at = ? WHERE id = ?", (utc_now(), self.epoch_id))
        except Exception:
            log.exception("the watcher stopped on an error; nights fall back to the full scan")
        finally:
            index.close()

    def _open_epoch(self, index: Index) -> None:
        now = utc_now()
        with index.transaction():
            cur = index.conn.execute(
                "INSERT INTO watch_epochs (pid, hostname, started_at, heartbeat_at, heartbeat_s, roots, anchors)"
                " VALUES (?,?,?,?,?,'[]','{}')", (os.getpid(), socket.gethostname(), now, now, self.heartbeat_s))
            self.epoch_id = cur.lastrowid
        self._sync_roots(index)

    def _flush(self, index: Index) -> None:
        with self._lock:
            batch, self._pending = self._pending, {}
        if not batch:
            return
        try:
            n = note(index, batch.items(), "watcher")
        except Exception as exc:  # the index is busy (a long harvest): keep them for the next try
            with self._lock:
                for path, host in batch.items():
                    self._pending.setdefault(path, host)
            self.stats["flush_retries"] += 1
            log.info("could not note %d changed files yet (%s); retrying", len(batch), exc)
            self._stop.wait(1.0)
            self._wake.set()
            return
        self.stats["noted"] += n
        self.stats["flushes"] += 1

    def _beat(self, index: Index) -> None:
        if not self._observer.is_alive():
            raise RuntimeError("the file observer thread died")
        self._sync_roots(index)
        try:
            with index.transaction():
                index.conn.execute("UPDATE watch_epochs SET heartbeat_at = ? WHERE id = ?", (utc_now(), self.epoch_id))
        except Exception as exc:
            log.info("heartbeat not written (%s); next time", exc)

    def _sync_roots(self, index: Index) -> None:
        """Watch roots that exist and are not watched (or were replaced); forget vanished ones."""
        changed = False
        wanted = {r.path: r for r in self.roots_fn()}
        for path in list(self._watches):
            root, watch, ident, _since = self._watches[path]
            if path not in wanted or _ident(path) != ident:
                self._observer.unschedule(watch)
                del self._watches[path]
                changed = True
        for path, root in wanted.items():
            ident = _ident(path)
            if ident is None or path in self._watches:
                continue
            self._active = (*self._active, root)  # match its events as soon as they come
            try:
                watch = self._observer.schedule(_Handler(self), path, recursive=root.recursive,
                                                event_filter=EVENTS, follow_symlink=True)
            except OSError as exc:  # e.g. the inotify watch limit: that host keeps the full scan
                log.warning("cannot watch %s (%s); nights scan it fully", path, exc)
                self._active = tuple(r for r in self._active if r.path != path)
                continue
            # Changes from now on are certain to be noted (the watch is in place): a full scan
            # that starts later anchors the host.
            self._watches[path] = (root, watch, ident, utc_now())
            changed = True
        if changed:
            self._write_roots(index)

    def _bump_all(self, index: Index) -> None:
        now = utc_now()
        for path, (root, watch, ident, _since) in list(self._watches.items()):
            self._watches[path] = (root, watch, ident, now)
        self._write_roots(index)

    def _write_roots(self, index: Index) -> None:
        self._active = tuple(r for r, _w, _i, _s in self._watches.values())
        roots = [dict(r.to_dict(), since=since) for r, _w, _i, since in self._watches.values()]
        with index.transaction():
            index.conn.execute("UPDATE watch_epochs SET roots = ? WHERE id = ?", (json.dumps(roots), self.epoch_id))


def _ident(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino) if os.path.isdir(path) else None
