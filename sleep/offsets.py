"""Read offsets per transcript file (``FileCursor``): how much of each transcript has been harvested.

A cursor remembers a file's identity and size at the last harvest (device,
inode, size, mtime) and the offset just past its last complete line. From a
fresh ``stat`` alone :func:`plan_read` decides, without reading content:

- ``unchanged``: identity and size/mtime equal, nothing to read;
- ``append``: same file, grown, and its first KiB unchanged: read from the offset;
- ``touched``: same size, first KiB unchanged: only the stat is refreshed;
- ``reread``: new, replaced (other inode), truncated (smaller), rewritten, or a
  whole-file format that changed: read from byte 0 and replace what it gave.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

HEAD_BYTES = 1024

STATUS_OK = "ok"
STATUS_REPLAY = "replay"
STATUS_PEEK = "peek"  # only the project is known (a --project harvest looked and left it)
STATUS_SKIPPED = "skipped:"  # + reason: the whole file was unusable as it was


class FileStat(Protocol):
    """What a cursor compares of a file: ``os.stat_result``, or a row file's
    :class:`sleep.harvest.pool.RowStat`."""

    @property
    def st_dev(self) -> int: ...
    @property
    def st_ino(self) -> int: ...
    @property
    def st_size(self) -> int: ...
    @property
    def st_mtime_ns(self) -> int: ...


@dataclass
class FileCursor:
    path: str
    host: str
    kind: str
    device: int | None = None
    inode: int | None = None
    size: int | None = None
    mtime_ns: int | None = None
    offset: int = 0
    head: str | None = None
    status: str = STATUS_OK
    session_key: str | None = None
    project_dir: str | None = None

    def same_stat(self, st: FileStat) -> bool:
        return (self.device == st.st_dev and self.inode == st.st_ino
                and self.size == st.st_size and self.mtime_ns == st.st_mtime_ns)

    def set_stat(self, st: FileStat) -> None:
        self.device, self.inode = st.st_dev, st.st_ino
        self.size, self.mtime_ns = st.st_size, st.st_mtime_ns


@dataclass(frozen=True)
class ReadPlan:
    action: str  # unchanged | append | touched | reread
    offset: int = 0
    reason: str = ""  # for reread: new | replaced | truncated | rewritten | changed


def head_digest(data: bytes) -> str:
    """Fingerprint of a file's first bytes (shorter files: all of them)."""
    return hashlib.blake2b(data[:HEAD_BYTES], digest_size=12).hexdigest()


def plan_read(cursor: FileCursor | None, st: FileStat, incremental: bool,
              read_head: Callable[[int], bytes]) -> ReadPlan:
    """Decide how to read a file (see module docstring). ``read_head(n)`` returns
    the file's first ``n`` bytes; it is only called when the file has changed."""
    if cursor is None or cursor.status == STATUS_PEEK or cursor.size is None:
        return ReadPlan("reread", 0, "new")
    if cursor.same_stat(st):
        return ReadPlan("unchanged", cursor.offset)
    if cursor.device != st.st_dev or cursor.inode != st.st_ino:
        return ReadPlan("reread", 0, "replaced")
    if st.st_size < cursor.size or st.st_size < cursor.offset:
        return ReadPlan("reread", 0, "truncated")
    if cursor.head is not None:
        head_len = min(HEAD_BYTES, cursor.size)
        if head_digest(read_head(head_len)) != cursor.head:
            return ReadPlan("reread", 0, "rewritten")
    if st.st_size == cursor.size:
        return ReadPlan("touched", cursor.offset)
    if not incremental or cursor.status.startswith(STATUS_SKIPPED):
        return ReadPlan("reread", 0, "changed")
    return ReadPlan("append", cursor.offset)
