"""One proposal per lesson: what makes two proposals of a skill the same lesson.

A lesson is the candidate text after whitespace normalisation (:func:`lesson_key`,
kept in the report as ``lesson_sha256``; a proposal staged before it was kept is
compared by its exact ``candidate_sha256``). A night does not stage a candidate
whose lesson is already pending, adopted or rejected for the same skill file
(:func:`duplicate_of`), except a rejected lesson whose evidence changed since
(``lesson_evidence``: a digest of the corrections and tasks it came from, set by
the night; a candidate staged by hand, without one, may repeat a rejected lesson). ``review`` shows
one proposal per pending lesson (:func:`distinct`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence

from sleep.index import Index
from sleep.proposals import store
from sleep.proposals.model import Proposal

BLOCKING = ("pending", "adopted", "rejected")


def lesson_key(text: str) -> str:
    """The sha256 of ``text`` with every run of whitespace made one space, trimmed."""
    return hashlib.sha256(" ".join(text.split()).encode("utf-8")).hexdigest()


def evidence_key(items: Iterable[str]) -> str:
    """A digest of the evidence a lesson came from (order and repeats do not matter)."""
    return hashlib.sha256("\n".join(sorted({" ".join(str(i).split()) for i in items})).encode("utf-8")).hexdigest()


def _same(p: Proposal, key: str, exact: str) -> bool:
    return p.report.lesson_sha256 == key if p.report.lesson_sha256 else p.candidate_sha256 == exact


def duplicate_of(index: Index, skill_path: str, candidate_text: str, evidence: str | None) -> Proposal | None:
    """The pending, adopted or rejected proposal of ``skill_path`` with the same lesson as
    ``candidate_text``, or None. A rejected one counts only for a night's candidate (one with
    ``evidence``) while its evidence is the same (or was not recorded): a person who stages a
    rejected lesson again by hand (``propose``, no evidence) means it."""
    key = lesson_key(candidate_text)
    exact = hashlib.sha256(candidate_text.encode("utf-8")).hexdigest()
    for row in reversed(store.select(index, include_decided=True, skill_path=skill_path)):
        p = row.proposal
        if p.state not in BLOCKING or not _same(p, key, exact):
            continue
        if p.state == "rejected" and (evidence is None or (p.report.lesson_evidence or evidence) != evidence):
            continue  # rejected, but the evidence changed since (or a person stages it by hand): offered again
        return p
    return None


def distinct(proposals: list[Proposal], decided: Sequence[Proposal] = ()) -> tuple[list[Proposal], int]:
    """``proposals`` (oldest first) without the pending ones whose lesson an earlier pending
    proposal, or an adopted one (``decided``), of the same skill already holds; and how many
    were left out."""
    seen: set[tuple[str, str]] = {(p.skill_path, p.report.lesson_sha256 or p.candidate_sha256)
                                  for p in decided if p.state == "adopted"}
    out, hidden = [], 0
    for p in proposals:
        if p.state not in ("pending", "stale"):
            out.append(p)
            continue
        key = (p.skill_path, p.report.lesson_sha256 or p.candidate_sha256)
        if key in seen:
            hidden += 1
            continue
        seen.add(key)
        out.append(p)
    return out, hidden
