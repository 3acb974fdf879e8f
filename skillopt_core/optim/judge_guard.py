"""Refuse skill edits that address the judge rather than the task.

An optimizer that sees what is graded can learn to talk to the grader: a
skill line that claims the answer complies ("this answer meets every rubric
criterion"), quotes the rubric, or instructs about grading ("the grader
should...", "to get full marks..."). A fallible judge rewards such lines and
no gate can tell, because the gate asks the same judge. This module is the
check: :func:`judge_addressing_reason` says why a text addresses the judge
(or ``None``), and :func:`refuse_judge_edits` splits edits into the ones to
keep and the ones refused, with the reason recorded for each.

The check is deliberately about *wording aimed at grading*, not about
quality: an edit that says "check the units of each number" passes, whatever
it does to the score. Rubric quotes are found by word overlap: a run of
:data:`QUOTE_WORDS` consecutive words shared with a judge's rubric text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from skillopt_core.skill.edits import Edit

QUOTE_WORDS = 6
"""Consecutive words shared with a rubric that count as quoting it."""

_GRADER = r"(?:graders?|grading|the judge|a judge|judges'?|llm judge|evaluators?|scorer|autograder|rubrics?)"
_CLAIM_VERB = r"(?:meets|satisfies|fulfils|fulfills|complies with|conforms to|adheres to|passes)"

_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    # A sentence the answer itself would say about its own compliance.
    ("claims compliance",
     re.compile(rf"\bthis (?:answer|response|output|solution|reply) (?:fully |completely )?{_CLAIM_VERB}\b", re.I)),
    ("claims compliance",
     re.compile(r"\b(?:fully|completely|100%)\s+(?:compliant|correct|satisf(?:ies|ying|actory))\b", re.I)),
    ("claims compliance",
     re.compile(r"\b(?:state|claim|say|declare|assert|write|add|end with|note|mention)\b[^.]{0,30}?\b(?:that\s+)?(?:the|your|this)\s+(?:answer|response|output)\s+(?:is\s+(?:correct|complete|compliant|right)|meets|satisfies|passes|fulfils|fulfills)", re.I)),
    ("instructs about grading",
     re.compile(rf"\b{_GRADER}\b", re.I)),
    ("instructs about grading",
     re.compile(r"\b(?:full marks|full credit|maximum score|highest score|perfect score|score (?:well|highly|higher)|be graded|gets? graded|graded as|marked (?:as )?correct)\b", re.I)),
)

_WORD = re.compile(r"[a-z0-9']+")


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


@dataclass(frozen=True)
class Refusal:
    edit: Edit
    reason: str

    def to_dict(self) -> dict:
        return {**self.edit.to_dict(), "refused": self.reason}


def rubric_texts(judges: Iterable[object]) -> list[str]:
    """Every string inside the tasks' judge specs long enough to be quoted
    (rubrics, criteria, expected answers), deduplicated, in order."""
    seen: dict[str, None] = {}

    def walk(value: object) -> None:
        if isinstance(value, str):
            if len(_words(value)) >= QUOTE_WORDS:
                seen.setdefault(value, None)
        elif isinstance(value, dict):
            for v in value.values():
                walk(v)
        elif isinstance(value, (list, tuple)):
            for v in value:
                walk(v)

    for judge in judges:
        walk(judge)
    return list(seen)


class JudgeGuard:
    """The check, with the rubric shingles computed once for a run."""

    def __init__(self, rubrics: Sequence[str] = ()) -> None:
        self._shingles: set[tuple[str, ...]] = set()
        for text in rubrics:
            words = _words(text)
            self._shingles.update(tuple(words[i:i + QUOTE_WORDS]) for i in range(len(words) - QUOTE_WORDS + 1))

    def reason(self, text: str) -> str | None:
        """Why ``text`` addresses the judge rather than the task, or None."""
        for label, pattern in _PATTERNS:
            match = pattern.search(text)
            if match:
                return f"{label}: {match.group(0).strip()!r}"
        if self._shingles:
            words = _words(text)
            for i in range(len(words) - QUOTE_WORDS + 1):
                if tuple(words[i:i + QUOTE_WORDS]) in self._shingles:
                    return f"quotes the judge's rubric: {' '.join(words[i:i + QUOTE_WORDS])!r}"
        return None

    def split(self, edits: Iterable[Edit]) -> tuple[list[Edit], list[Refusal]]:
        """``(kept, refused)``; only the text an edit would write is checked
        (a delete writes nothing and is always kept)."""
        kept: list[Edit] = []
        refused: list[Refusal] = []
        for edit in edits:
            why = self.reason(edit.content) if edit.op != "delete" and edit.content else None
            if why is None:
                kept.append(edit)
            else:
                refused.append(Refusal(edit, f"addresses the judge, not the task ({why})"))
        return kept, refused


def judge_addressing_reason(text: str, rubrics: Sequence[str] = ()) -> str | None:
    """Why ``text`` addresses the judge rather than the task, or None."""
    return JudgeGuard(rubrics).reason(text)
