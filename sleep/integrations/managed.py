"""Edits to a person's own files that an uninstall undoes byte for byte.

The first install that touches a file keeps its bytes (or the fact that it did
not exist) and its mode in a record under ``$SKILLOPT_HOME/integrations/``,
before anything is written. Uninstall puts those bytes back exactly when the
file is still what the last install left. When the person changed it since,
only SkillOpt's own entry is taken out, their later changes stay, and the
outcome says so. A file reached through a symlink (a dotfiles repository) is
edited where the link points; the link itself stays.

Records hold copies of configuration files, which may carry tokens: the
folder is private to the user (0700, files 0600).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from skillopt_core.timestamps import utc_now
from sleep import paths

RECORDS_DIR = "integrations"


def records_dir() -> Path:
    return paths.data_dir() / RECORDS_DIR


def sha256(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


@dataclass
class Outcome:
    """What an install or uninstall did to one file."""

    path: Path
    action: str  # created, updated, unchanged, restored, removed-entry, deleted, absent
    detail: str = ""

    def line(self) -> str:
        return f"{self.path}: {self.action}" + (f" ({self.detail})" if self.detail else "")


def atomic_write(target: Path, data: bytes, mode: int) -> None:
    """Write ``data`` to ``target`` through a temporary file in the same folder, then rename."""
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class ManagedFile:
    """One file SkillOpt-Sleep edits on the person's behalf (``owner`` names the integration)."""

    def __init__(self, path: Path, owner: str) -> None:
        self.path = Path(os.path.abspath(Path(path).expanduser()))
        self.target = self.path.resolve()
        self.owner = owner
        key = hashlib.sha256(str(self.target).encode()).hexdigest()[:20]
        self.record_path = records_dir() / f"{key}.json"
        self.record = self._load()

    # ----- reading -------------------------------------------------------------------

    def read(self) -> bytes | None:
        try:
            return self.target.read_bytes()
        except FileNotFoundError:
            return None

    def _load(self) -> dict | None:
        try:
            record = json.loads(self.record_path.read_text(encoding="utf-8"))
        except (FileNotFoundError, ValueError):
            return None
        return record if isinstance(record, dict) and record.get("target") == str(self.target) else None

    def original(self) -> bytes | None:
        """The bytes before SkillOpt's first install (None: the file did not exist, or no record)."""
        if not self.record or self.record.get("original") is None:
            return None
        return base64.b64decode(self.record["original"])

    # ----- installing ----------------------------------------------------------------

    def begin(self) -> None:
        """Keep the file's current bytes as the original, unless an earlier install already did."""
        if self.record is not None:
            return
        current = self.read()
        self.record = {
            "owner": self.owner, "path": str(self.path), "target": str(self.target),
            "original": None if current is None else base64.b64encode(current).decode("ascii"),
            "mode": (self.target.stat().st_mode & 0o7777) if current is not None else None,
            "created_dirs": [], "installed_sha256": None,
            "first_installed_at": utc_now(),
        }
        self._save()

    def make_parents(self) -> None:
        """Create the file's missing folders (after :meth:`begin`), noting them for uninstall."""
        assert self.record is not None, "begin() first"
        created = self._make_parents()
        if created:
            self.record["created_dirs"] = [*self.record["created_dirs"], *created]
            self._save()

    def write(self, data: bytes, new_mode: int = 0o644) -> None:
        """Write the file (after :meth:`begin`), creating missing folders and noting them."""
        self.make_parents()
        mode = (self.target.stat().st_mode & 0o7777) if self.target.exists() else new_mode
        atomic_write(self.target, data, mode)

    def finish(self) -> None:
        """Remember what the install left, so uninstall can tell whether the person changed it since."""
        assert self.record is not None, "begin() first"
        digest = sha256(self.read())
        if self.record.get("installed_sha256") != digest:
            self.record["installed_sha256"] = digest
            self._save()

    def _make_parents(self) -> list[str]:
        missing: list[Path] = []
        folder = self.target.parent
        while not folder.exists():
            missing.append(folder)
            folder = folder.parent
        for folder in reversed(missing):
            folder.mkdir()
        return [str(f) for f in reversed(missing)]

    # ----- uninstalling --------------------------------------------------------------

    def undo(self, remove_entry: Callable[[bytes], bytes | None]) -> Outcome:
        """Undo the installs: the original bytes when the file is as they left it, else
        ``remove_entry(current)`` (None deletes the file). Forgets the record once done;
        an exception (say, a file that no longer parses) leaves file and record as they were."""
        outcome = self._undo(remove_entry)
        self.forget()
        return outcome

    def _undo(self, remove_entry: Callable[[bytes], bytes | None]) -> Outcome:
        current = self.read()
        record = self.record
        if record is not None and current is not None and sha256(current) == record.get("installed_sha256"):
            original = self.original()
            if original is None:
                self.target.unlink()
                self._remove_created_dirs()
                return Outcome(self.path, "deleted", "it did not exist before the install")
            atomic_write(self.target, original, record.get("mode") or 0o644)
            return Outcome(self.path, "restored", "byte for byte, as before the install")
        if current is None:
            return Outcome(self.path, "absent")
        new = remove_entry(current)
        if new == current:
            return Outcome(self.path, "unchanged", "no SkillOpt entry in it")
        why = ("changed since the install: only SkillOpt's part was removed, your changes stay"
               if record is not None else "no install record: only SkillOpt's part was removed")
        if new is None:
            self.target.unlink()
            self._remove_created_dirs()
            return Outcome(self.path, "deleted", why)
        atomic_write(self.target, new, self.target.stat().st_mode & 0o7777)
        return Outcome(self.path, "removed-entry", why)

    def forget(self) -> None:
        self.record_path.unlink(missing_ok=True)
        self.record = None

    def _remove_created_dirs(self) -> None:
        for folder in sorted((self.record or {}).get("created_dirs", []), key=len, reverse=True):
            try:
                Path(folder).rmdir()
            except OSError:
                pass  # not empty (something else lives there now) or gone: leave it

    def _save(self) -> None:
        folder = records_dir()
        folder.mkdir(parents=True, exist_ok=True)
        os.chmod(folder, 0o700)
        atomic_write(self.record_path, (json.dumps(self.record, indent=2) + "\n").encode("utf-8"), 0o600)


def records(owner: str) -> list[ManagedFile]:
    """Every file an install by ``owner`` touched and no uninstall has undone yet."""
    found: list[ManagedFile] = []
    folder = records_dir()
    if not folder.is_dir():
        return found
    for entry in sorted(folder.glob("*.json")):
        try:
            record = json.loads(entry.read_text(encoding="utf-8"))
        except ValueError:
            continue
        if isinstance(record, dict) and record.get("owner") == owner and record.get("path"):
            managed = ManagedFile(Path(record["path"]), owner)
            if managed.record is None and record.get("target"):  # the symlink points elsewhere now
                managed = ManagedFile(Path(record["target"]), owner)
            if managed.record is not None:
                found.append(managed)
    return found
