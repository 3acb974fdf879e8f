"""The person's explicit corrections, as candidate edits for the night's first step.

A correction ("no, use pnpm not npm. this repo is pnpm only.") is what the
person already told the agent. It becomes an ``add`` edit holding the rule
written from it as a person would write it, in the skill's own style ("- Use
pnpm, not npm: this repo is pnpm only.", :mod:`sleep.rule_text`), with
``origin="correction"`` and, as rationale, the number of sessions it came from
and the correction's own words (they travel to the proposal's evidence). It
joins the optimizer's proposals and the gate decides as for any edit; the
judge guard does not screen it (it is the person's, not the optimizer's).

The text comes from the index, so it was redacted at harvest; a clause or
sentence that holds a redaction marker (``the staging token is
[REDACTED:github-token]``) is dropped from the rule, so a marker never becomes
a line of a skill, and a correction with nothing instructive left gives no edit.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from skillopt_core import Edit
from skillopt_core.tasks.text_metrics import one_line
from sleep.rule_text import Style, write_rule

MAX_QUOTE_CHARS = 300


def corrections_of(evidence: Iterable[dict[str, Any]]) -> list[str]:
    """The texts of the corrections in the member prompts' evidence, in order."""
    out = []
    for ev in evidence:
        for correction in ev.get("corrections") or []:
            text = correction.get("text") if isinstance(correction, dict) else None
            if isinstance(text, str) and text.strip():
                out.append(text)
    return out


def rule_key(rule: str) -> str:
    """One key for the same rule however it is cased, spaced or ended (the dedupe key of correction edits)."""
    return " ".join(rule.casefold().rstrip(".!?").split())


def correction_edits(evidence: Iterable[dict[str, Any]], limit: int, style: Style | None = None) -> list[Edit]:
    """Deduplicated rule edits from the member prompts' evidence (most repeated first)."""
    style = style or Style()
    counts: Counter[str] = Counter()
    first: dict[str, tuple[str, str]] = {}
    for text in corrections_of(evidence):
        rule = write_rule(text, style)
        if rule:
            key = rule_key(rule)
            counts[key] += 1
            first.setdefault(key, (rule, text))
    edits = []
    for key, n in counts.most_common(limit):
        rule, said = first[key]
        sessions = "a session" if n == 1 else f"{n} sessions"
        edits.append(Edit(op="add", content=f"{style.bullet}{rule}", origin="correction",
                          rationale=f"You gave this correction to the agent in {sessions} of this task: "
                                    f"\"{one_line(said, MAX_QUOTE_CHARS)}\""))
    return edits


def own_words(evidence: Iterable[dict[str, Any]], style: Style | None = None) -> list[str]:
    """The person's own words a task's judge is built from: each correction and the rule
    written from it (for the judge guard, ``metadata["own_words"]``)."""
    out: dict[str, None] = {}
    for text in corrections_of(evidence):
        out.setdefault(text, None)
        rule = write_rule(text, style)
        if rule:
            out.setdefault(rule, None)
    return list(out)


def with_own_words(tasks: list, members: dict[str, list]) -> list:
    """``tasks`` with ``metadata["own_words"]``: the own words of the member prompts of
    each one's mined task (``members``: task id -> pool items)."""
    from dataclasses import replace

    from skillopt_core.optim.judge_guard import OWN_WORDS_KEY

    cache: dict[str, list[str]] = {}
    out = []
    for t in tasks:
        tid = str(t.metadata.get("task_id", t.id))
        if tid not in cache:
            cache[tid] = own_words(item.evidence for item in members.get(tid, []))
        out.append(replace(t, metadata={**t.metadata, OWN_WORDS_KEY: cache[tid]}) if cache[tid] else t)
    return out
