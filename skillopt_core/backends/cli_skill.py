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
  for one call and undoes exactly that afterwards: a file already at that path
  (e.g. the project's own version of the skill in a caller's checkout) is
  moved aside, outside the working directory so the agent cannot read it, and
  put back byte for byte; folders the install created are removed again when
  empty; nothing else in the directory is touched. A skill folder that leads
  outside the working directory through a symlink is refused.
- **One at a time per path.** Calls on one event loop that would install at the
  same path (the same checkout) wait for each other, so concurrent calls never
  see each other's skill or restore the wrong file. For parallel rollouts give
  each concurrent call its own checkout.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import shutil
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Any, AsyncIterator, Iterator

import yaml

from skillopt_core.backends.base import BackendError, CompletionRequest, RequestRejected
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
    for path in reversed(created):
        try:
            path.rmdir()
        except OSError:  # not empty: something else is in it now; leave it
            pass


@contextlib.contextmanager
def installed_skill(work: Path, skill_dir: str, skill: SkillDoc, aside: Path, backend: str) -> Iterator[str]:
    """Install ``skill`` at ``<work>/<skill_dir>/<name>/SKILL.md`` for the block;
    yields that path relative to ``work``. ``aside`` (a folder outside ``work``)
    holds what was at the path until it is put back. If it cannot be put back,
    a :class:`BackendError` says where the original is (systemic: the working
    directory is no longer as the caller left it)."""
    rel = f"{skill_dir}/{skill.name}/{SKILL_FILE}"
    target = work / rel
    created = _make_folders(target.parent, work, backend)
    backup: Path | None = None
    written = False
    try:
        if target.is_symlink() or target.exists():
            if target.is_dir() and not target.is_symlink():
                raise RequestRejected(f"{backend}: cannot install the skill: {target} is a folder. Fix the checkout.")
            backup = aside / SKILL_FILE
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


# Per event loop, one lock per install path (see "One at a time per path").
_locks: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, asyncio.Lock]]" = weakref.WeakKeyDictionary()


@contextlib.asynccontextmanager
async def install_lock(work: Path, skill_dir: str, skill: SkillDoc) -> AsyncIterator[None]:
    key = os.path.normcase(str((work / skill_dir / skill.name).resolve()))
    locks = _locks.setdefault(asyncio.get_running_loop(), {})
    lock = locks.setdefault(key, asyncio.Lock())
    if lock.locked():
        log.info("waiting for another call that uses the skill path %s in the same working directory", key)
    async with lock:
        yield
