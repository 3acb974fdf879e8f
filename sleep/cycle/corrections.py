"""The person's explicit corrections, as candidate edits for the night's first step.

A correction ("no, use pnpm not npm in this repo") is what the person already
told the agent. It becomes an ``add`` edit phrased as a rule for the skill,
with ``origin="correction"`` and the number of sessions it came from as
rationale; it joins the optimizer's proposals and the gate decides as for any
edit. The text comes from the index, so it was redacted at harvest; a clause or
sentence that holds a redaction marker (``the staging token is
[REDACTED:github-token]``) is dropped from the rule, so a marker never becomes a
line of a skill, and a correction with nothing instructive left gives no edit.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any, Iterable

from skillopt_core import Edit

_LEAD = re.compile(r"^(?:no+|nope|nah|yes|yeah|yep|ok(?:ay)?|wrong|incorrect|not quite|not like that|actually|wait|hmm+|ugh|please|pls|"
                   r"that'?s (?:wrong|not right|not it))\b[\s,.!:;-]*", re.I)
MAX_RULE_CHARS = 200
MIN_WORDS = 3
REDACTED = "[REDACTED:"
# Where one clause of a correction ends and the next begins (the separator is kept).
_CLAUSE_SEP = re.compile(r"([.!?]\s+|\s*;\s*|,\s+(?:and|but|or|so)\s+|,\s+|\s+(?:and|but|so)\s+)", re.I)


def without_redacted(text: str) -> str:
    """``text`` without the clauses and sentences that hold a redaction marker."""
    if REDACTED not in text:
        return text
    parts = _CLAUSE_SEP.split(text)  # clause, separator, clause, ...
    kept: list[str] = []
    for i in range(0, len(parts), 2):
        if REDACTED in parts[i]:
            continue
        if kept:
            kept.append(parts[i - 1])
        kept.append(parts[i])
    return "".join(kept)


def phrase_rule(text: str) -> str | None:
    """A correction as a rule sentence; None when nothing instructive is left (also
    when all that was instructive sat next to a redacted secret)."""
    rule = " ".join(without_redacted(str(text or "")).split())
    if REDACTED in rule:  # a marker outside any clause: never written into a skill
        return None
    while True:
        stripped = _LEAD.sub("", rule, count=1)
        if stripped == rule:
            break
        rule = stripped
    rule = rule.strip(" ,;:-")
    if len(rule.split()) < MIN_WORDS:
        return None
    rule = rule[0].upper() + rule[1:]
    if len(rule) > MAX_RULE_CHARS:
        rule = rule[:MAX_RULE_CHARS].rsplit(" ", 1)[0] + "..."
    return rule if rule.endswith((".", "!", "?", "...")) else rule + "."


def correction_edits(evidence: Iterable[dict[str, Any]], limit: int) -> list[Edit]:
    """Deduplicated rule edits from the member prompts' evidence (most repeated first)."""
    counts: Counter[str] = Counter()
    first: dict[str, str] = {}
    for ev in evidence:
        for correction in ev.get("corrections") or []:
            rule = phrase_rule(correction.get("text") if isinstance(correction, dict) else None)
            if rule:
                key = rule.casefold().rstrip(".!?")
                counts[key] += 1
                first.setdefault(key, rule)
    edits = []
    for key, n in counts.most_common(limit):
        sessions = "a session" if n == 1 else f"{n} sessions"
        edits.append(Edit(op="add", content=f"- {first[key]}", origin="correction",
                          rationale=f"You gave this correction to the agent in {sessions} of this task."))
    return edits
