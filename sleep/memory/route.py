"""Lesson routing: does a correction belong in the project's memory file or in a skill?

A memory file is read for every request in the repository; a skill only when
its task comes up. So a rule about the whole repository ("this repo uses pnpm",
"never touch the generated client") belongs in memory, and a procedure for one
kind of task ("run the unit tests before writing the changelog entry") in the
skill. The decision is made from the person's own words and from where they
said it, and always comes with its reason (the night record and the proposal
carry it):

- memory, when the words speak of the whole repository (``this repo``, ``in this
  project``, ``we use``, ``everywhere``, ``never touch/edit ... generated/vendor``),
  or when the same correction was given in two or more different recurring tasks;
- skill, otherwise (a procedure for one kind of task), also when the project has
  no memory file for the host (a lesson creates no memory file).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MEMORY = "memory"
SKILL = "skill"

_REPO = re.compile(
    r"\b(?:(?:this|the|our|whole|entire)\s+(?:repo|repository|project|codebase|monorepo|workspace|code\s?base)"
    r"|we\s+(?:use|always|never)|everywhere|anywhere\s+in|across\s+the\s+(?:repo|codebase|project)"
    r"|(?:always|never)\b[^.;]*\bhere)\b", re.I)
_NEVER_TOUCH = re.compile(
    r"\b(?:never|don'?t|do\s+not)\s+(?:touch|edit|modify|change|hand-?edit)\b[^.;]*"
    r"\b(?:generated|vendor(?:ed)?|lock\s?file|migrations?|dist|build\s+output)\b", re.I)


@dataclass(frozen=True)
class Route:
    to: str  # MEMORY | SKILL
    reason: str

    def to_dict(self) -> dict[str, str]:
        return {"to": self.to, "reason": self.reason}


def classify(said: str, tasks: int = 1) -> Route:
    """Where a correction the person gave (``said``, in ``tasks`` different recurring tasks) belongs."""
    words = _REPO.search(said) or _NEVER_TOUCH.search(said)
    if words:
        return Route(MEMORY, f"it is about the whole repository (the person said \"{words.group(0).strip()}\")")
    if tasks >= 2:
        return Route(MEMORY, f"the same correction was given in {tasks} different recurring tasks, so it holds "
                             "for the whole repository")
    return Route(SKILL, "it is about how to do one kind of task (no words about the whole repository, "
                        "given in one recurring task)")
