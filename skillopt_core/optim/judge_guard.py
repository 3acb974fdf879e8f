"""Refuse skill edits that address the judge rather than the task.

An optimizer that sees what is graded can learn to talk to the grader: a
skill line that claims the answer complies ("this answer meets every rubric
criterion"), quotes the rubric, or instructs about grading ("the grader
should...", "to get full marks..."). A fallible judge rewards such lines and
no gate can tell, because the gate asks the same judge. This module is the
check: :func:`judge_addressing_reason` says why a text addresses the judge
(or ``None``), and :func:`refuse_judge_edits` splits edits into the ones to
keep and the ones refused, with the reason recorded for each.

The patterns below are a word list and rewording defeats them (issue 34: 10
of 10 paraphrases passed). With ``learned=True`` (the default of the trainer,
``optimizer.judge_check: learned``) a learned classifier of claims
(:mod:`skillopt_core.optim.claim_check`) also screens every sentence, measured
on a held-out paraphrase set.

The check is deliberately about *wording aimed at grading*, not about
quality: an edit that says "check the units of each number" passes, whatever
it does to the score. Rubric quotes are found by word overlap: a run of
:data:`QUOTE_WORDS` consecutive words shared with a judge's rubric text.

A judge built from a person's own words (a rubric line that restates their
correction, "run pnpm gen api instead of the script") is not the judge's to
own: the guard is given those words (``own``; a task carries them in
``metadata["own_words"]``, see :func:`own_words`) and a run of words shared
with them is never a rubric quote, so an edit that carries the person's
correction, or a faithful rewording of it, is not refused. Only the
optimizer's edits are screened: the caller's edits (the person's corrections,
``origin`` other than ``optimizer``) are the caller's to vouch for.
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
     re.compile(r"\b(?:state|claim|say|declare|assert|write|add|end with|note|mention)\b[^.]{0,30}?"
                r"\b(?:that\s+)?(?:the|your|this)\s+(?:answer|response|output)\s+"
                r"(?:is\s+(?:correct|complete|compliant|right)|meets|satisfies|passes|fulfils|fulfills)", re.I)),
    ("instructs about grading",
     re.compile(rf"\b{_GRADER}\b", re.I)),
    ("instructs about grading",
     re.compile(r"\b(?:full marks|full credit|maximum score|highest score|perfect score|score "
                r"(?:well|highly|higher)|be graded|gets? graded|graded as|marked (?:as )?correct)\b", re.I)),
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


OWN_WORDS_KEY = "own_words"
"""The task metadata key that lists the person's own words its judge was built from."""


def own_words(tasks: Iterable[object], edits: Iterable[Edit] = ()) -> list[str]:
    """The person's own words: each task's ``metadata["own_words"]`` (strings) and the
    content of the caller's edits (any origin but ``optimizer``), deduplicated, in order."""
    seen: dict[str, None] = {}
    for task in tasks:
        meta = getattr(task, "metadata", None)
        values = meta.get(OWN_WORDS_KEY) if isinstance(meta, dict) else None
        for value in values if isinstance(values, (list, tuple)) else ():
            if isinstance(value, str) and value.strip():
                seen.setdefault(value, None)
    for edit in edits:
        if not is_optimizer_edit(edit) and edit.content:
            seen.setdefault(edit.content, None)
    return list(seen)


def is_optimizer_edit(edit: Edit) -> bool:
    """Did the optimizer propose ``edit`` (alone)? A merge of an optimizer edit with a
    caller's edit (``optimizer+correction``) carries the caller's text and counts as theirs."""
    return set(edit.origin.split("+")) <= {"optimizer", ""}


def _shingles(texts: Iterable[str]) -> set[tuple[str, ...]]:
    out: set[tuple[str, ...]] = set()
    for text in texts:
        words = _words(text)
        out.update(tuple(words[i:i + QUOTE_WORDS]) for i in range(len(words) - QUOTE_WORDS + 1))
    return out


class JudgeGuard:
    """The check, with the rubric shingles computed once for a run. ``own``: the person's
    own words (their corrections and the rules written from them); a run of words the
    rubric shares with them is theirs, not the judge's, and quoting it is no refusal."""

    def __init__(self, rubrics: Sequence[str] = (), own: Sequence[str] = (), learned: bool = False) -> None:
        self._shingles = _shingles(rubrics) - _shingles(own)
        self._claims = None
        if learned:  # the learned check of claims (skillopt_core.optim.claim_check): not bound to these patterns' words
            from skillopt_core.optim.claim_check import ClaimCheck

            self._claims = ClaimCheck()

    def reason(self, text: str) -> str | None:
        """Why ``text`` addresses the judge rather than the task, or None."""
        for label, pattern in _PATTERNS:
            match = pattern.search(text)
            if match:
                return f"{label}: {match.group(0).strip()!r}"
        if self._claims is not None:
            why = self._claims.reason(text)
            if why is not None:
                return why
        if self._shingles:
            words = _words(text)
            for i in range(len(words) - QUOTE_WORDS + 1):
                if tuple(words[i:i + QUOTE_WORDS]) in self._shingles:
                    return f"quotes the judge's rubric: {' '.join(words[i:i + QUOTE_WORDS])!r}"
        return None

    def split(self, edits: Iterable[Edit]) -> tuple[list[Edit], list[Refusal]]:
        """``(kept, refused)``; only the optimizer's edits are screened (the caller's,
        e.g. the person's corrections, are kept as they are), and only the text an edit
        would write is checked (a delete writes nothing and is always kept)."""
        kept: list[Edit] = []
        refused: list[Refusal] = []
        for edit in edits:
            screened = is_optimizer_edit(edit) and edit.op != "delete" and edit.content
            why = self.reason(edit.content) if screened else None
            if why is None:
                kept.append(edit)
            else:
                refused.append(Refusal(edit, f"addresses the judge, not the task ({why})"))
        return kept, refused


def judge_addressing_reason(text: str, rubrics: Sequence[str] = (), own: Sequence[str] = (),
                            learned: bool = False) -> str | None:
    """Why ``text`` addresses the judge rather than the task, or None."""
    return JudgeGuard(rubrics, own, learned).reason(text)
