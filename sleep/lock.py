"""An exclusive, process-wide lock so that two harvests of one index never interleave.

The lock is an OS advisory lock on a file next to the index (``flock`` on
POSIX, ``msvcrt.locking`` on Windows); the OS releases it if the holder dies,
so a crashed harvest never leaves a stale lock behind.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from sleep import paths


class LockBusy(RuntimeError):
    """Another process holds the lock."""


class FileLock:
    def __init__(self, path: Path, what: str = "harvest") -> None:
        self.path = Path(path)
        self.what = what
        self._fd: int | None = None

    def acquire(self, wait: float = 0.0) -> FileLock:
        """Take the lock, waiting up to ``wait`` seconds; raise :class:`LockBusy` otherwise."""
        paths.private_dir(self.path.parent)  # locks live in the data dir: only its owner enters
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        deadline = time.monotonic() + max(0.0, wait)
        while True:
            if _try_lock(fd):
                break
            if time.monotonic() >= deadline:
                holder = _read_holder(fd)
                os.close(fd)
                raise LockBusy(
                    f"another {self.what} is already running on this index{holder} "
                    f"(lock: {self.path}). Wait for it to finish, or pass --wait SECONDS.")
            time.sleep(0.05)
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        self._fd = fd
        return self

    def held(self) -> bool:
        """Whether a process holds the lock now. A probe: it never creates or writes the file,
        and holds the lock (when free) only for the instant of the test."""
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except OSError:
            return False  # no lock file: nobody ever took it
        try:
            if _try_lock(fd):
                _unlock(fd)
                return False
            return True
        finally:
            os.close(fd)

    def release(self) -> None:
        if self._fd is not None:
            _unlock(self._fd)
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> FileLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


def _read_holder(fd: int) -> str:
    try:
        pid = os.pread(fd, 32, 0).decode().strip() if hasattr(os, "pread") else ""
    except OSError:
        pid = ""
    return f" (pid {pid})" if pid.isdigit() else ""


if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
    import msvcrt

    def _try_lock(fd: int) -> bool:
        try:
            os.lseek(fd, 0, os.SEEK_SET)
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
            return True
        except OSError:
            return False

    def _unlock(fd: int) -> None:
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
else:
    import fcntl

    def _try_lock(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except OSError:
            return False

    def _unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)
