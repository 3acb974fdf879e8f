"""Putting the person's git index back after an interrupted ``adopt --commit``.

``adopt --commit`` runs ``git add`` on the skill file, then ``git commit
--only``. Killed between the two, it leaves the skill staged. Its journal
record keeps the index file's bytes from before ``git add``; the undo writes
them back (through ``index.lock``, as git does) when nothing else in the index
changed since, so the person's index is byte for byte what it was, and
otherwise resets only the skill file's entry to ``HEAD``.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import git

from sleep.proposals import gitobjects as g
from sleep.proposals.errors import IndexBusy


def restore_index(repo: git.Repo, saved: bytes | None, tree_path: str) -> None:
    """The person's index as it was before ``git add``: byte for byte when nothing else in it
    changed since, else only the skill file's entry reset to HEAD."""
    index_file = Path(repo.git_dir) / "index"
    current = index_file.read_bytes() if index_file.is_file() else None
    if current == saved:
        return
    if (Path(repo.git_dir) / "index.lock").exists():
        raise IndexBusy(f"another git process holds {Path(repo.git_dir) / 'index.lock'}; the skill file's "
                        "staged entry is undone once it finishes (any skillopt-sleep command does it).")
    if saved is not None and current is not None \
            and _entries(repo, current, tree_path) == _entries(repo, saved, tree_path):
        _replace_index(index_file, saved)
    else:
        g.run(repo, "reset", "-q", "--", tree_path, env={"GIT_LITERAL_PATHSPECS": "1"})


def _entries(repo: git.Repo, index_bytes: bytes, except_path: str) -> list[str]:
    """The staged entries of an index file's bytes, but ``except_path``'s."""
    with tempfile.NamedTemporaryFile(prefix="skillopt-index-", delete=False) as fh:
        fh.write(index_bytes)
    try:
        out = str(g.run(repo, "ls-files", "--stage", "-z", env={"GIT_INDEX_FILE": fh.name}))
    finally:
        os.unlink(fh.name)
    return [e for e in out.split("\0") if e and e.split("\t", 1)[-1] != except_path]


def _replace_index(index_file: Path, data: bytes) -> None:
    """Write ``data`` as the index the way git does: through ``index.lock``, then a rename."""
    lock = index_file.with_name("index.lock")
    mode = index_file.stat().st_mode & 0o777 if index_file.exists() else 0o644
    fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(lock, index_file)
    except BaseException:
        lock.unlink(missing_ok=True)
        raise
