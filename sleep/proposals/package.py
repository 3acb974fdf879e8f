"""Package proposals: a skill's ``SKILL.md`` plus other text files of its folder, as one unit.

A skill is a folder (``SKILL.md``, ``scripts/``, ``references/``, ``assets/``).
A package proposal (report ``kind`` ``package``) changes ``SKILL.md`` and adds or
replaces files below the same folder, given relative to it
(``scripts/check.sh``, ``references/api.md``). Its branch carries every changed
file in one commit; ``show`` diffs the whole folder; ``adopt`` writes every file
or none; ``undo`` gives every file back its bytes from before (a file the
proposal added is removed).

The report's ``package`` holds, per extra file, ``before_sha256`` (None: the
file is new), ``after_sha256`` and ``mode``. Before bytes come from the staging's
parent commit, so staging refuses an extra file whose live bytes differ from the
committed ones (the person's uncommitted work is theirs), and a package
proposal needs a skill inside a project repository.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Any

import git

from sleep.proposals import gitobjects as g
from sleep.proposals.errors import LiveFileChanged, ProposalError

EXEC_MODE = "100755"


def _sha(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


def check_rel(rel: str) -> tuple[str, ...]:
    """The parts of a file path relative to the skill folder; refuses escapes and SKILL.md itself."""
    p = PurePosixPath(rel)
    if p.is_absolute() or not p.parts or any(part in ("", ".", "..") for part in p.parts) or rel == "SKILL.md":
        raise ProposalError(f"{rel!r} is not a file path inside the skill folder (relative, no '..', not SKILL.md)")
    return p.parts


def tree_parts(tree_path: str, rel: str) -> tuple[str, ...]:
    return (*tree_path.split("/")[:-1], *check_rel(rel))


def write_files(repo: git.Repo, tree: str, tree_path: str, skill_dir: Path, files: Mapping[str, bytes],
                modes: Mapping[str, str]) -> tuple[str, dict[str, Any]]:
    """``tree`` with ``files`` (relative to the skill folder) written; and the report's ``package``.
    Refuses a file whose live bytes differ from the committed ones."""
    record: dict[str, Any] = {}
    for rel, data in sorted(files.items()):
        parts = tree_parts(tree_path, rel)
        entry = g.blob_at(repo, tree, parts)
        committed = g.read_blob(repo, entry.sha) if entry is not None else None
        live_path = skill_dir / rel
        live = live_path.read_bytes() if live_path.is_file() else None
        if live != committed:
            raise ProposalError(f"{live_path} has uncommitted changes (or is not committed); commit or discard them "
                                "first: a package proposal restores files from the repository on undo.")
        mode = modes.get(rel) or (entry.mode if entry is not None else g.BLOB_MODE)
        tree = g.replace_path(repo, tree, parts, g.write_blob(repo, data), mode=mode)
        record[rel] = {"before_sha256": _sha(committed), "after_sha256": _sha(data), "mode": mode}
    return tree, record


def check_live(skill_dir: Path, package: Mapping[str, Any], expect: str) -> None:
    """Every extra file's live bytes have the ``expect`` (``before_sha256`` / ``after_sha256``) sha."""
    for rel, info in package.items():
        path = skill_dir / rel
        now = _sha(path.read_bytes()) if path.is_file() else None
        if now != info[expect]:
            what = "changed" if now is not None else "is missing"
            when = "staged" if expect == "before_sha256" else "adopted"
            raise LiveFileChanged(f"{path} {what} since the proposal was {when}; nothing was written. "
                                  "Edit the skill folder by hand.")


def tree_path_of(tree_path: str, rel: str) -> str:
    return "/".join(tree_parts(tree_path, rel))


def file_bytes(repo: git.Repo, commit: str, tree_path: str, rel: str) -> bytes | None:
    entry = g.blob_at(repo, g.tree_of(repo, commit), tree_parts(tree_path, rel))
    return g.read_blob(repo, entry.sha) if entry is not None else None


def put(path: Path, data: bytes | None, mode: str | None = None) -> None:
    """Write (atomically) or remove one file of the package; ``mode`` 100755 makes it executable."""
    from sleep.proposals.decide import _atomic_write

    if data is None:
        path.unlink(missing_ok=True)
        return
    _atomic_write(path, data)
    if mode == EXEC_MODE:
        os.chmod(path, path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


def snapshot(skill_dir: Path, package: Mapping[str, Any]) -> dict[str, str | None]:
    """The live extra files' bytes (latin-1 text of the bytes, for the journal), None when absent."""
    out: dict[str, str | None] = {}
    for rel in package:
        path = skill_dir / rel
        out[rel] = path.read_bytes().decode("latin-1") if path.is_file() else None
    return out


def restore(skill_dir: Path, saved: Mapping[str, str | None], package: Mapping[str, Any]) -> None:
    for rel, text in saved.items():
        put(skill_dir / rel, None if text is None else text.encode("latin-1"), package.get(rel, {}).get("mode"))
