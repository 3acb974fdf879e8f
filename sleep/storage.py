"""Errors of the data directory and the index, said so that a person can act on them.

A full disk, a read-only or unwritable data directory, a damaged index file and
an index written by a newer SkillOpt all end in one line: what happened, which
file, what to do. :class:`StorageError` carries that line; the CLI prints it
and exits 2. Nothing here deletes or rewrites the file it talks about.
"""

from __future__ import annotations

import errno
import os
import shutil
import sqlite3
from pathlib import Path

# SQLite primary result codes (sqlite3.h); ``sqlite_errorcode & 0xFF`` is the primary code.
_SQLITE_BUSY, _SQLITE_LOCKED, _SQLITE_READONLY, _SQLITE_IOERR = 5, 6, 8, 10
_SQLITE_CORRUPT, _SQLITE_FULL, _SQLITE_CANTOPEN, _SQLITE_NOTADB = 11, 13, 14, 26

_NOT_WRITABLE = {errno.EACCES, errno.EPERM, errno.EROFS}
_FULL = {errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)}


class StorageError(RuntimeError):
    """The index or the data directory cannot be used as it is; the message says what to do.
    Whatever was stored before is still there."""

    def __init__(self, message: str, path: Path | str | None = None) -> None:
        super().__init__(message)
        self.path = str(path) if path is not None else None


def _code(exc: sqlite3.Error) -> int | None:
    code = getattr(exc, "sqlite_errorcode", None)
    return None if code is None else int(code) & 0xFF


# Below this much free space, an SQLite I/O error (it cannot even map its -shm file) is a full disk.
_NEARLY_FULL = 64 * 1024


def is_disk_full(exc: BaseException) -> bool:
    """A full disk (or quota), whether SQLite or the OS said so."""
    if isinstance(exc, sqlite3.Error):
        return _code(exc) == _SQLITE_FULL or "disk is full" in str(exc)
    return isinstance(exc, OSError) and exc.errno in _FULL


def _free_bytes(folder: Path) -> int | None:
    try:
        return shutil.disk_usage(folder).free
    except OSError:
        return None


def _where_to(folder: Path) -> str:
    """What to do about a folder that cannot be written: in the data directory, SKILLOPT_HOME
    can move it; elsewhere (a skill file's folder) only its permissions can be fixed."""
    from sleep import paths

    data = paths.data_dir().absolute()
    inside = folder.absolute() == data or data in folder.absolute().parents
    return (f"make {folder} writable by you" + (", or set SKILLOPT_HOME to a folder you can write "
                                               "(and move the data there)" if inside else ""))


def explain_sqlite(exc: sqlite3.Error, path: Path | str) -> str:
    """One line for an SQLite error on the index at ``path``."""
    path = Path(path)
    folder = path.parent
    text = str(exc)
    code = _code(exc)
    free = _free_bytes(folder) if folder.exists() else None
    if is_disk_full(exc) or (code == _SQLITE_IOERR and free is not None and free < _NEARLY_FULL):
        return (f"the disk holding the index {path} is full (SQLite: {text}; {free if free is not None else '?'} "
                "bytes free); the last change was rolled back and nothing stored before was lost. Free some "
                "space, then run the command again.")
    if code == _SQLITE_READONLY or "readonly" in text:
        return f"the index {path} is read-only ({text}); nothing was changed. To continue, {_where_to(folder)}."
    if code == _SQLITE_CANTOPEN or "unable to open" in text:
        why = "the folder is not writable" if folder.exists() and not os.access(folder, os.W_OK) else text
        return f"cannot open the index {path} ({why}); nothing was changed. To continue, {_where_to(folder)}."
    if code in (_SQLITE_NOTADB, _SQLITE_CORRUPT) or "not a database" in text or "malformed" in text:
        return (f"the index {path} is damaged ({text}); nothing was changed. Move it aside "
                f"(`mv {path} {path}.damaged`; `sqlite3 {path}.damaged .recover` may rescue its records) and run "
                "`skillopt-sleep harvest` to start a new index from your transcripts; proposal branches stay in "
                "your repositories.")
    if code in (_SQLITE_BUSY, _SQLITE_LOCKED) or "locked" in text:
        return (f"the index {path} stayed locked by another SkillOpt process for 30 s ({text}); nothing was "
                "changed. Wait for it to finish (`skillopt-sleep status`), then run the command again.")
    if code == _SQLITE_IOERR or "disk I/O" in text:
        return (f"reading or writing the index {path} failed ({text}); nothing stored before was lost. Check "
                "that the disk is present, writable and not full, then run the command again.")
    return f"the index {path} could not be used ({text}); nothing was changed."


def explain_os(exc: OSError, where: str | os.PathLike = "") -> str:
    """One line for an OS error on a file SkillOpt writes. ``where`` (the data directory, say)
    stands in when the error does not name its file (a write to an open file)."""
    name = str(exc.filename or where or "a file")
    reason = exc.strerror or str(exc)
    folder = Path(name).parent if exc.filename else Path(name)
    if exc.errno in _FULL:
        return (f"the disk holding {name} is full ({reason}); nothing stored before was lost. Free some space, "
                "then run the command again.")
    if exc.errno in _NOT_WRITABLE:
        return f"cannot write {name} ({reason}); nothing was changed. To continue, {_where_to(folder)}."
    if exc.errno == errno.ENOENT:
        return (f"{name} does not exist and cannot be created ({reason}); nothing was changed. Set SKILLOPT_HOME "
                "to a folder you can write, or create the folder above it.")
    return f"{name}: {reason}; nothing was changed."
