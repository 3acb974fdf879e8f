"""Reading the files of one run directory, and nothing outside it.

A run directory can come from anywhere (an unpacked archive, a shared
folder), so any of its files may be a symbolic link (``best_skill.md ->
/etc/passwd``), a FIFO or a device. Every read of the dashboard goes through
:func:`open_in_run`, which

- opens the file by its name inside the run directory's real path, following
  links, but non-blocking (a FIFO cannot hang a worker thread);
- refuses anything that is not a regular file;
- refuses the file when the *opened* file lies outside the run directory.
  On Linux the opened descriptor's path (``/proc/self/fd``) is checked, so
  the file read is the file checked, with no window between the two; elsewhere
  the path is resolved after opening.

A link that stays inside the run directory is followed. Refusals raise
:class:`RunFileError` with a sentence a page can show. The run directory is
given by its real path (the catalog's :attr:`RunRef.path` is one: it resolves
links when it finds runs), so no path is resolved per file; should the run
directory itself later become a link, every file under it is refused.

:class:`FileCache` keeps what a reader built from a file (parsed, coerced,
passed through :func:`sleep.ui.outbound.outbound`) until the file changes
(device, inode, size and mtime), so a page does not redo that work for files
it has already shown.
"""

from __future__ import annotations

import json
import os
import stat
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

import orjson

from sleep.ui import outbound

T = TypeVar("T")
_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)


class RunFileError(Exception):
    """A file of the run that is not served: it leads outside the run directory, is not a regular
    file, or cannot be read. ``str()`` is the sentence to show."""

    def __init__(self, rel: str, why: str) -> None:
        super().__init__(f"{Path(rel).name} {why}")
        self.rel = rel


def parse_json(data: bytes) -> Any:
    """JSON as the trainer writes it (Python's ``json``, which may write NaN): orjson, else the
    standard library for what orjson refuses. :class:`ValueError` when it is not JSON."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        try:
            return json.loads(data.decode("utf-8", "replace"))
        except RecursionError:
            raise ValueError("nested too deeply") from None


def json_object(line: bytes) -> dict[Any, Any] | None:
    """One JSON line as an object, or None (not JSON, or not an object)."""
    try:
        item = parse_json(line)
    except ValueError:
        return None
    return item if isinstance(item, dict) else None


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _opened_path(fd: int, fallback: str) -> str:
    """Where the open file ``fd`` really is."""
    if sys.platform.startswith("linux"):
        try:
            return os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            pass
    elif sys.platform == "darwin":
        import fcntl

        try:
            raw = fcntl.fcntl(fd, fcntl.F_GETPATH, bytes(1024))  # type: ignore[attr-defined]
            return os.fsdecode(raw.split(b"\0", 1)[0])
        except (OSError, AttributeError):
            pass
    return os.path.realpath(fallback)


def open_in_run(run_dir: Path | str, rel: str) -> tuple[BinaryIO, os.stat_result]:
    """The file ``rel`` (a relative path built by the caller, never from a URL) of the run whose real
    path is ``run_dir``, open for reading, and its status. :class:`FileNotFoundError` when absent;
    :class:`RunFileError` when refused."""
    base = os.path.abspath(run_dir)
    path = os.path.join(base, rel)
    try:
        fd = os.open(path, _FLAGS)
    except FileNotFoundError:
        raise
    except NotADirectoryError:
        raise FileNotFoundError(path) from None
    except OSError as exc:
        if os.path.islink(path) and not _inside(os.path.realpath(path), base):
            raise RunFileError(rel, "leads outside the run directory; it is not shown") from None
        raise RunFileError(rel, f"cannot be read: {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)
        if not _inside(_opened_path(fd, path), base):
            raise RunFileError(rel, "leads outside the run directory; it is not shown "
                                    "(`ls -l` in the run directory shows where it points)")
        if not stat.S_ISREG(st.st_mode):
            raise RunFileError(rel, "is not a regular file; it is not shown")
        return os.fdopen(fd, "rb"), st
    except BaseException:
        os.close(fd)
        raise


def read_bytes(run_dir: Path | str, rel: str, limit: int | None = None) -> bytes | None:
    """The bytes of ``rel`` (at most ``limit``), None when absent; :class:`RunFileError` when refused."""
    try:
        fh, _ = open_in_run(run_dir, rel)
    except FileNotFoundError:
        return None
    with fh:
        try:
            return fh.read() if limit is None else fh.read(limit)
        except OSError as exc:
            raise RunFileError(rel, f"cannot be read: {exc.strerror or exc}") from None


def file_sig(path: Path | str) -> tuple[int, int, int, int] | None:
    """(device, inode, mtime, size) of a file, else None: a cache key (reading it still goes
    through :func:`open_in_run`)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_size)


def list_in_run(run_dir: Path | str, rel: str) -> list[str]:
    """The names in the folder ``rel`` of the run; [] when absent or when it leads outside the run."""
    base = os.path.abspath(run_dir)
    folder = os.path.realpath(os.path.join(base, rel))
    if not _inside(folder, base):
        return []
    try:
        return os.listdir(folder)
    except OSError:
        return []


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
