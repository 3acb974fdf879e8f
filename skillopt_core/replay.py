"""How SkillOpt marks the agent sessions it starts itself (replays).

The CLI backends (claude-code, codex, copilot) run every call in a fresh
directory under :func:`replay_root`, or in a checkout the caller prepared
(``CompletionRequest.cwd``), which must also lie under :func:`replay_root` (the
backends refuse any other), and put :data:`REPLAY_MARKER` at the top of the
prompt. Those hosts then write transcripts whose working directory (and, for
Claude Code, project slug) contains :data:`REPLAY_DIR_NAME`, and whose first
user prompt starts with the marker. The harvester skips such sessions, so the
product's own replays are never mined as the person's work.

The replay root is private to one night (one process): by default
``<temp>/skillopt-replay-<uid>/<pid>-<start time>``, created 0700 and owned by
the user; a per-user folder that is a link, someone else's or open to others
is refused. It is removed when the process exits; leftovers of nights that
died (killed) are swept when the next process makes its root. ``SKILLOPT_REPLAY_ROOT`` names the root itself
(tests, benches): it is created 0700 (tightened if ours, refused if not).

This module is deliberately tiny and dependency-free: both the backends and the
harvester import it, and it is the single source of truth for the mechanism.
"""

from __future__ import annotations

import atexit
import os
import re
import shutil
import stat
import tempfile
from pathlib import Path

REPLAY_DIR_NAME = "skillopt-replay"
REPLAY_MARKER = "<!-- skillopt-replay: this session was started by SkillOpt; do not mine -->"
REPLAY_ROOT_ENV = "SKILLOPT_REPLAY_ROOT"

# Claude Code turns the cwd into a slug by replacing non-alphanumerics with '-'.
_SLUG_RE = re.compile(r"(^|-)skillopt-replay(-|$)")
_USER_DIR_RE = re.compile(r"^skillopt-replay-\d+$")


_NIGHT_RE = re.compile(r"^(\d+)-(\d+)$")
_ROOTS: dict[tuple[str | None, int], Path] = {}


class ReplayRootRefused(RuntimeError):
    """The replay root's folder is not safely ours; the message says what to do."""


def _uid() -> int:
    return os.getuid() if hasattr(os, "getuid") else 0


def _start_time(pid: int) -> int | None:
    """The process's start time (clock ticks since boot, from /proc; None where there is no /proc or no
    such process)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            data = fh.read()
        return int(data[data.rindex(b")") + 2:].split()[19])
    except (OSError, ValueError, IndexError):
        return None


def night_id(pid: int | None = None) -> str:
    """``<pid>-<start time>``: names this night's folders (a pid alone may be reused after a kill)."""
    pid = os.getpid() if pid is None else pid
    return f"{pid}-{_start_time(pid) or 0}"


def _alive(pid: int, start: int) -> bool:
    if os.path.isdir("/proc"):
        return _start_time(pid) == start if start else os.path.exists(f"/proc/{pid}")
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def _ours(path: Path, *, tighten: bool) -> None:
    """Refuse ``path`` unless it is a real folder owned by this user and closed to others (tightened instead
    when ``tighten``)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        try:
            path.mkdir(mode=0o700, parents=True)
        except FileExistsError:
            pass
        st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
        raise ReplayRootRefused(f"the replay folder {path} is a link or not a folder; remove it "
                                f"(or set {REPLAY_ROOT_ENV} to a private folder of yours).")
    if hasattr(os, "getuid") and st.st_uid != _uid():
        raise ReplayRootRefused(f"the replay folder {path} belongs to another user (uid {st.st_uid}); replays "
                                f"will not run in it. Remove it, or set {REPLAY_ROOT_ENV} to a private folder.")
    if st.st_mode & 0o077 and os.name == "posix":  # Windows has no such modes (its ACLs are per user)
        if not tighten:
            raise ReplayRootRefused(f"the replay folder {path} is open to other users (mode "
                                    f"{stat.S_IMODE(st.st_mode):o}); remove it (or chmod 700 it) and start again.")
        os.chmod(path, 0o700)


def replay_parent() -> Path:
    """Where the nights' replay roots are (this user's folder in the system temp dir)."""
    return Path(tempfile.gettempdir()) / f"{REPLAY_DIR_NAME}-{_uid()}"


def sweep_dead_nights(parent: Path | None = None) -> list[Path]:
    """Remove the replay roots of nights whose process is gone (killed); returns what was removed."""
    parent = replay_parent() if parent is None else parent
    removed: list[Path] = []
    try:
        entries = list(os.scandir(parent))
    except OSError:
        return removed
    for entry in entries:
        match = _NIGHT_RE.match(entry.name)
        if not match or not entry.is_dir(follow_symlinks=False) or _alive(int(match[1]), int(match[2])):
            continue
        if hasattr(os, "getuid") and entry.stat(follow_symlinks=False).st_uid != _uid():
            continue
        _remove(Path(entry.path))
        removed.append(Path(entry.path))
    return removed


def _remove(path: Path) -> None:
    def writable_again(func, name, _exc):  # a folder a replay made read-only
        try:
            os.chmod(os.path.dirname(name), 0o700)
            os.chmod(name, 0o700)
            func(name)
        except OSError:
            pass

    shutil.rmtree(path, onerror=writable_again)


def _remove_at_exit(root: Path, pid: int) -> None:
    if os.getpid() == pid:  # not in a forked child that inherited the handler
        _remove(root)


def replay_root() -> Path:
    """The directory under which every replay working directory is created: this night's private folder
    (see the module docstring). Raises :class:`ReplayRootRefused` for a folder that is not safely ours."""
    override = os.environ.get(REPLAY_ROOT_ENV)
    key = (override, os.getpid())
    root = _ROOTS.get(key)
    if root is not None and root.is_dir():
        return root
    if override:
        root = Path(override)
        _ours(root, tighten=True)
    else:
        parent = replay_parent()
        _ours(parent, tighten=False)
        sweep_dead_nights(parent)
        root = parent / night_id()
        _ours(root, tighten=False)
        atexit.register(_remove_at_exit, root, os.getpid())
    _ROOTS[key] = root
    return root


def night_folder(prefix: str) -> Path:
    """A fresh private folder for this night's use under its replay root (e.g. the egress proxy's socket)."""
    return Path(tempfile.mkdtemp(prefix=prefix, dir=replay_root()))


def is_replay_path(path: str | os.PathLike[str] | None) -> bool:
    """True if a working directory or Claude Code project slug belongs to a replay."""
    if not path:
        return False
    text = str(path)
    if any(part == REPLAY_DIR_NAME or _USER_DIR_RE.match(part) for part in Path(text).parts):
        return True
    root = os.environ.get(REPLAY_ROOT_ENV)
    if root and text.startswith(root):
        return True
    return bool(_SLUG_RE.search(text))


def is_replay_prompt(text: str | None) -> bool:
    """True if a user prompt carries the replay marker."""
    return text is not None and REPLAY_MARKER in text[:2000]
