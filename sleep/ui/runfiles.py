"""Reading the files of one run directory, and nothing outside it.

Every read of the dashboard goes through the engine's run reader
(:func:`skillopt_core.run.reader.open_in_run`: a link out of the run
directory, a FIFO or a device is refused with :class:`RunFileError`). The run
directory is given by its real path (the catalog's :attr:`RunRef.path` is
one: it resolves links when it finds runs), so no path is resolved per file;
should the run directory itself later become a link, every file under it is
refused.

:class:`FileCache` keeps what a reader built from a file (parsed, coerced,
passed through :func:`sleep.ui.outbound.outbound`) until the file changes
(device, inode, size and mtime), so a page does not redo that work for files
it has already shown.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from skillopt_core.run.reader import RunFileError, json_object, list_in_run, open_in_run, parse_json, read_bytes
from sleep.ui import outbound

__all__ = ["FileCache", "RunFileError", "file_sig", "json_object", "list_in_run", "open_in_run", "parse_json",
           "read_bytes"]

T = TypeVar("T")


def file_sig(path: Path | str) -> tuple[int, int, int, int] | None:
    """(device, inode, mtime, size) of a file, else None: a cache key (reading it still goes
    through :func:`open_in_run`)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_size)


class FileCache:
    """What was built from a file, reused until the file changes (LRU, thread-safe)."""

    def __init__(self, entries: int = 256, max_bytes: int = 8 << 20) -> None:
        self.entries = entries
        self.max_bytes = max_bytes  # larger files are built every time
        self._items: OrderedDict[tuple, object] = OrderedDict()
        self._lock = threading.Lock()

    def build(self, run_dir: Path | str, rel: str, kind: str, make: Callable[[bytes], T],
              limit: int | None = None) -> T | None:
        """``make(bytes)`` for the file ``rel`` of the run (None when absent), from the cache when the
        same file was built with the same ``kind`` before. :class:`RunFileError` when refused."""
        try:
            fh, st = open_in_run(run_dir, rel)
        except FileNotFoundError:
            return None
        with fh:
            key = (kind, rel, st.st_dev, st.st_ino, st.st_mtime_ns, st.st_size, limit, outbound.generation())
            with self._lock:
                if key in self._items:
                    self._items.move_to_end(key)
                    return self._items[key]  # type: ignore[return-value]
            try:
                data = fh.read() if limit is None else fh.read(limit)
            except OSError as exc:
                raise RunFileError(rel, f"cannot be read: {exc.strerror or exc}") from None
        value = make(data)
        if st.st_size <= self.max_bytes:
            with self._lock:
                self._items[key] = value
                while len(self._items) > self.entries:
                    self._items.popitem(last=False)
        return value
