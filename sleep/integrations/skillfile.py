"""A SKILL.md copied into an agent's skills folder, and taken out again.

A file the person (or an adopted SkillOpt proposal) changed after the install is
never overwritten by a later install, and an uninstall keeps a copy of it in
``$SKILLOPT_HOME/integrations/removed/`` before it goes.
"""

from __future__ import annotations

import shutil
from datetime import datetime, timezone
from pathlib import Path

from sleep.integrations.managed import ManagedFile, Outcome, records_dir, sha256


def install_skill(source: Path, dest: Path, owner: str) -> Outcome:
    data = Path(source).read_bytes()
    skill = ManagedFile(dest, owner)
    current = skill.read()
    if current == data:
        skill.begin()
        skill.finish()
        return Outcome(skill.path, "unchanged")
    if (skill.record is not None and current is not None
            and sha256(current) != skill.record.get("installed_sha256")):
        return Outcome(skill.path, "kept", "changed since the last install; left as it is "
                                           "(run with --uninstall first to replace it)")
    skill.begin()
    skill.write(data, new_mode=0o644)
    skill.finish()
    if current is None:
        return Outcome(skill.path, "created")
    return Outcome(skill.path, "updated", "the earlier file comes back with --uninstall")


def uninstall_skill(dest: Path, owner: str, source: Path) -> Outcome:
    skill = ManagedFile(dest, owner)
    ours = Path(source).read_bytes()

    saved: list[Path] = []

    def remove(current: bytes) -> bytes | None:
        if skill.record is None:
            return None if current == ours else current  # no record and not our copy: leave it
        kept = records_dir() / "removed" / f"{datetime.now(timezone.utc):%Y%m%dT%H%M%SZ}-{skill.path.parent.name}.md"
        kept.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(skill.target, kept)
        saved.append(kept)
        return skill.original()

    outcome = skill.undo(remove)
    if saved:
        outcome.detail += f"; your changed copy is kept in {saved[0]}"
    return outcome
