"""The skill under training, installed where an agent CLI reads skills.

Contract:

- **What is installed.** ``request.skill`` (the env sets it to the skill text
  of a target rollout), verbatim. Only when its front matter lacks what the
  hosts require (FORMATS.md: ``name`` of ``a-z0-9-`` equal to the folder name,
  a non-empty ``description`` of at most 1024 characters) is the front matter
  added or completed; the body is never changed. The folder is the skill's
  ``name`` (default :data:`DEFAULT_SKILL_NAME`). Front matter is read with the
  one parser, :func:`skillopt_core.skill.document.split_front_matter`.
- **What is not installed.** ``request.system`` keeps the skill *and* the
  env's fixed instruction (e.g. the answer format) for chat backends;
  :func:`instruction_of` is that system text without the skill, which the CLI
  backends put in the prompt. The instruction never ends up in SKILL.md.
- **Where.** :func:`installed_skill` writes ``<work>/<skill_dir>/<name>/SKILL.md``
  and undoes exactly that afterwards: a file already at that path (e.g. the
  project's own version of the skill in a caller's checkout) is moved aside,
  into a folder under the replay root where the agent cannot read it, and put
  back byte for byte; folders the install created are removed again when
  empty; nothing else in the directory is touched. A skill folder that leads
  outside the working directory through a symlink is refused.
- **Shared working directories.** Concurrent calls on one event loop that
  install at the same path (one checkout shared by parallel rollouts) share
  the install when their skill text is the same: it is installed by the first
  and undone by the last. A call with another text (e.g. the gate's candidate
  while the current skill's rollouts run) waits until the path is free, so no
  call ever sees another skill or restores the wrong file.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import shutil
import tempfile
import weakref
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from skillopt_core.backends.base import BackendError, CompletionRequest, RequestRejected
from skillopt_core.replay import replay_root
from skillopt_core.skill.document import SkillParseError, split_front_matter

log = logging.getLogger(__name__)

DEFAULT_SKILL_NAME = "skillopt-skill"
DEFAULT_SKILL_DESCRIPTION = "Instructions for the task at hand. Read and follow them before answering."
SKILL_FILE = "SKILL.md"
_MAX_DESCRIPTION = 1024
_NAME_BAD = re.compile(r"[^a-z0-9]+")


@dataclass(frozen=True)
class SkillDoc:
    """A skill ready to install: folder name and full SKILL.md text."""

    name: str
    text: str


def clean_skill_name(raw: Any) -> str:
    """A valid skill name (``a-z0-9-``, 1-64 chars, no edge or double hyphens)."""
    name = _NAME_BAD.sub("-", str(raw or "").lower()).strip("-")[:64].strip("-")
    return name or DEFAULT_SKILL_NAME


def _front_matter_block(meta: dict[str, Any]) -> str:
    return "---\n" + yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, width=1000) + "---\n"


def skill_doc(text: str, backend: str) -> SkillDoc:
    """``text`` as the host's SKILL.md (see the module contract). A skill whose
    front matter cannot be read is a :class:`RequestRejected`."""
    try:
        meta, body = split_front_matter(text, source="the skill to install")
    except SkillParseError as exc:
        raise RequestRejected(f"{backend}: cannot install the skill: {exc}") from None
    if meta is None:
        header = {"name": DEFAULT_SKILL_NAME, "description": DEFAULT_SKILL_DESCRIPTION}
        return SkillDoc(DEFAULT_SKILL_NAME, _front_matter_block(header) + "\n" + body)
    name = clean_skill_name(meta.get("name"))
    fixed = dict(meta)
    fixed["name"] = name
    description = meta.get("description")
    if not isinstance(description, str) or not description.strip():
        fixed["description"] = DEFAULT_SKILL_DESCRIPTION
    elif len(description) > _MAX_DESCRIPTION:
        fixed["description"] = description[: _MAX_DESCRIPTION - 3] + "..."
    if fixed == meta:
        return SkillDoc(name, text)
    return SkillDoc(name, _front_matter_block(fixed) + body)


def instruction_of(request: CompletionRequest) -> str:
    """``request.system`` without the skill text: the env's own instruction.
    All of ``system`` when the skill is not found in it verbatim."""
    system = (request.system or "").strip()
    skill = (request.skill or "").strip()
    if not system or not skill:
        return system
    at = system.find(skill)
    if at < 0:
        log.debug("the skill is not part of request.system; passing all of system as instructions")
        return system
    return (system[:at].strip() + "\n\n" + system[at + len(skill):].strip()).strip()


def _inside(path: Path, root: Path) -> bool:
    try:
        return path.resolve().is_relative_to(root.resolve())
    except OSError:
        return False


def _make_folders(folder: Path, work: Path, backend: str) -> list[Path]:
    """Create ``folder`` (under ``work``) and return the folders created, outermost
    first. Refuses when the deepest existing folder resolves outside ``work``."""
    missing: list[Path] = []
    existing = folder
    while not existing.exists():
        missing.append(existing)
        existing = existing.parent
    if not existing.is_dir() or not _inside(existing, work):
        raise RequestRejected(
            f"{backend}: cannot install the skill at {folder}: {existing} is not a folder inside the "
            f"working directory {work} (a symlink or file is in the way). Fix the checkout."
        )
    created = list(reversed(missing))
    for path in created:
        path.mkdir()
    return created


def _restore(target: Path, written: bool, backup: Path | None, created: list[Path]) -> None:
    if written:
        target.unlink(missing_ok=True)
    if backup is not None:
        shutil.move(str(backup), str(target))
        backup.parent.rmdir()
    for path in reversed(created):
        try:
            path.rmdir()
        except OSError:  # not empty: something else is in it now; leave it
            pass


@contextlib.contextmanager
def installed_skill(work: Path, skill_dir: str, skill: SkillDoc, backend: str) -> Iterator[str]:
    """Install ``skill`` at ``<work>/<skill_dir>/<name>/SKILL.md`` for the block;
    yields that path relative to ``work``. What was at the path waits in a
    fresh folder under the replay root (outside ``work``) until it is put back.
    If it cannot be put back, a :class:`BackendError` says where it is kept
    (systemic: the working directory is no longer as the caller left it)."""
    rel = f"{skill_dir}/{skill.name}/{SKILL_FILE}"
    target = work / rel
    created = _make_folders(target.parent, work, backend)
    backup: Path | None = None
    written = False
    try:
        if target.is_symlink() or target.exists():
            if target.is_dir() and not target.is_symlink():
                raise RequestRejected(f"{backend}: cannot install the skill: {target} is a folder. Fix the checkout.")
            root = replay_root()
            root.mkdir(parents=True, exist_ok=True, mode=0o700)
            backup = Path(tempfile.mkdtemp(prefix="aside-", dir=root)) / SKILL_FILE
            shutil.move(str(target), str(backup))
        with open(target, "x", encoding="utf-8", newline="") as fh:
            written = True
            fh.write(skill.text)
        yield rel
    finally:
        try:
            _restore(target, written, backup, created)
        except OSError as exc:
            raise BackendError(
                f"{backend}: could not put the original {target} back after the call "
                f"({exc.strerror or exc}); it is kept at {backup}. Restore it by hand before reusing "
                "this working directory."
            ) from None


class _Slot:
    """One install path in use: the skill text installed there, how many calls
    use it, and how to undo the install when the last one ends."""

    def __init__(self) -> None:
        self.text: str | None = None
        self.rel = ""
        self.users = 0
        self.waiting = 0
        self.undo: contextlib.ExitStack | None = None
        self.free = asyncio.Event()
        self.free.set()


# Per event loop, the install paths in use (see "Shared working directories").
_slots: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, _Slot]] = weakref.WeakKeyDictionary()


@contextlib.asynccontextmanager
async def shared_skill(work: Path, skill_dir: str, skill: SkillDoc, backend: str) -> AsyncIterator[str]:
    """:func:`installed_skill`, shared by concurrent calls that install the same
    text at the same path; a call with another text waits until the path is
    free. Yields the path relative to ``work``."""
    key = os.path.normcase(str((work / skill_dir / skill.name).resolve()))
    slots = _slots.setdefault(asyncio.get_running_loop(), {})
    slot = slots.setdefault(key, _Slot())
    # No await between a check and the change it allows: coroutines on one loop
    # cannot interleave there, so the slot needs no lock.
    while slot.users and slot.text != skill.text:
        log.info("%s: waiting for calls with another skill at %s in the same working directory", backend, key)
        slot.waiting += 1
        try:
            await slot.free.wait()
        finally:
            slot.waiting -= 1
    if slot.users == 0:
        undo = contextlib.ExitStack()
        try:
            slot.rel = undo.enter_context(installed_skill(work, skill_dir, skill, backend))
        except BaseException:
            if not slot.waiting:
                slots.pop(key, None)
            raise
        slot.text, slot.undo = skill.text, undo
        slot.free.clear()
    slot.users += 1
    try:
        yield slot.rel
    finally:
        slot.users -= 1
        if slot.users == 0:
            last, slot.undo, slot.text = slot.undo, None, None
            slot.free.set()
            if not slot.waiting:
                slots.pop(key, None)
            if last is not None:
                last.close()
