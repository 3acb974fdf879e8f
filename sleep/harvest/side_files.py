"""The small files a source reads beside its transcripts, read with bounds.

A source learns where a session belongs from files its host keeps next to the
transcripts: Gemini CLI's ``~/.gemini/projects.json`` and ``.project_root``,
VS Code's and Cursor's ``workspace.json``, Copilot CLI's ``workspace.yaml``,
OpenCode's ``project/<id>.json``. Each is a few hundred bytes; each is read
whole. So each is read through :func:`read_side_file`, which refuses:

- anything that is not a regular file, also behind a symbolic link (a link to
  ``/dev/zero`` would be read until the memory runs out; a FIFO would block the
  harvest, and the project's lock, for ever): it is looked at (``stat``) before
  it is opened, opened without blocking and looked at again once open;
- a file larger than :data:`SIDE_FILE_MAX_BYTES` (reading stops there).

Either refusal raises :class:`SideFileError`, which says which file, what is
wrong with it and what to do. The harvest catches it per source: the source
whose side file is bad reads nothing this time and the report says why; every
other source is harvested as usual. A side file that is missing or unreadable
(``OSError``) or holds bad JSON stays what it always was for its source: a
file that says nothing.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

__all__ = ["SIDE_FILE_MAX_BYTES", "SideFileError", "read_side_file"]

SIDE_FILE_MAX_BYTES = 4 << 20  # 4 MiB: a host's side files are a few kB


class SideFileError(Exception):
    """A side file that cannot be read safely: not a regular file, or too large."""


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISDIR, "a directory")):
        if test(mode):
            return name
    return "not a regular file"


def _refuse(path: Path, why: str) -> SideFileError:
    return SideFileError(f"{path}: {why}; it was not read, and this host's sessions were not harvested. "
                         f"Remove or replace that file, then harvest again.")


def read_side_file(path: str | os.PathLike[str], max_bytes: int = SIDE_FILE_MAX_BYTES) -> bytes:
    """The bytes of the side file ``path``: a regular file (a link to one is followed) of at most
    ``max_bytes``. Raises ``OSError`` (e.g. ``FileNotFoundError``) as opening it would, and
    :class:`SideFileError` for a special file or one that is too large."""
    path = Path(path)
    st = os.stat(path)  # follows a link: a dotfile manager's link to a regular file is fine
    if not stat.S_ISREG(st.st_mode):
        raise _refuse(path, f"{_kind(st.st_mode)}, not a regular file")
    if st.st_size > max_bytes:
        raise _refuse(path, f"{st.st_size:,} bytes, more than the {max_bytes:,} bytes a side file may have")
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags)
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())  # what was opened (the path may have changed since the stat)
        if not stat.S_ISREG(st.st_mode):
            raise _refuse(path, f"{_kind(st.st_mode)}, not a regular file")
        data = fh.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise _refuse(path, f"more than the {max_bytes:,} bytes a side file may have")
    return data
