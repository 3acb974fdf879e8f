"""Names: the skill name of a live file, and proposal branch names.

A branch is ``skillopt/<skill>/<YYYY-MM-DD>`` (``-2``, ``-3``, ... when taken).
The skill part is sanitised so that no skill name, however hostile (spaces,
``..``, ``~``, ``:``, control characters, a leading ``-``, ``.lock``, thousands
of characters), can make an invalid ref or one git would read as an option:
only ``a-z 0-9 . _ -`` survive, dots never repeat or lead, and the part is
at most :data:`MAX_NAME` characters.
"""

from __future__ import annotations

import re
import secrets
from datetime import date
from pathlib import PurePath

BRANCH_PREFIX = "skillopt"
MAX_NAME = 64
FALLBACK_NAME = "skill"

_SKILL_FILE = "skill.md"
_BAD = re.compile(r"[^a-z0-9._-]+")
_DOTS = re.compile(r"\.{2,}")
_DASHES = re.compile(r"-{2,}")


def skill_name_of(path: str | PurePath) -> str:
    """The name a person knows a skill by: the folder of ``<name>/SKILL.md``, else the file stem.

    ``.claude/skills/tests/SKILL.md`` is ``tests``;
    ``.github/copilot-instructions.md`` is ``copilot-instructions``.
    """
    p = PurePath(path)
    if p.name.lower() == _SKILL_FILE and p.parent.name:
        return p.parent.name
    return p.stem or p.name


def sanitize(name: str) -> str:
    """``name`` as one safe ref component (never empty, never starting with ``-`` or ``.``)."""
    text = _BAD.sub("-", name.lower())
    text = _DOTS.sub(".", text)
    text = _DASHES.sub("-", text)
    text = text[:MAX_NAME]
    # Strip repeatedly: removing ".lock" can expose a trailing "." and vice versa.
    while True:
        before = text
        text = text.strip(".-_")
        if text.endswith(".lock"):
            text = text[: -len(".lock")]
        if text == before:
            break
    return text or FALLBACK_NAME


def branch_name(skill: str, night: date, attempt: int = 1) -> str:
    """``skillopt/<skill>/<YYYY-MM-DD>``, with ``-<attempt>`` from the second attempt on."""
    if not isinstance(night, date):
        raise TypeError(f"night must be a date, got {type(night).__name__}")
    suffix = "" if attempt <= 1 else f"-{attempt}"
    return f"{BRANCH_PREFIX}/{sanitize(skill)}/{night.isoformat()}{suffix}"


def new_proposal_id() -> str:
    """A short random id (8 hex digits) that a person can type."""
    return secrets.token_hex(4)
