"""Recognising explicit feedback in what the person typed.

Pure functions of text. A prompt that answers the agent's previous turn with a
correction ("no, use pnpm", "don't touch the tests", "that's wrong") or an
approval ("perfect, thanks", "lgtm") is explicit feedback; the miner turns
corrections into candidate rules. Only short replies are classified: a long
prompt that happens to start with "no" is usually a new task.
"""

from __future__ import annotations

import re

MAX_FEEDBACK_CHARS = 400

_CORRECTION = re.compile(
    r"""^\s*(?:
        no(?:pe)?\b[\s,.!:;-]* |
        (?:don'?t|do\ not|never|stop|wrong|incorrect|not\ (?:like\ )?that|that'?s\ (?:not|wrong|incorrect)
          |this\ is\ (?:not|wrong)|that\ is\ (?:not|wrong)|wait\b|undo|revert|you\ (?:broke|forgot|missed)
          |actually\b|instead\b|please\ don'?t|why\ did\ you)
    )""",
    re.IGNORECASE | re.VERBOSE,
)
# "use X instead", "should be X, not Y" anywhere in a short reply.
_CORRECTION_ANYWHERE = re.compile(
    r"\b(?:instead(?:\ of)?|not\ what\ I|I\ said|I\ told\ you|should\ (?:have|be)\b.*\bnot\b)",
    re.IGNORECASE | re.VERBOSE,
)
_APPROVAL = re.compile(
    r"""^\s*(?:
        yes\b|yep\b|yeah\b|perfect\b|great\b|excellent\b|nice\b|awesome\b|good\ job\b|well\ done\b
        |thanks?\b|thank\ you\b|lgtm\b|looks\ good\b|that\ works\b|it\ works\b|exactly\b|correct\b
        |ship\ it\b|approved?\b|works\ now\b
    )""",
    re.IGNORECASE | re.VERBOSE,
)


def classify_feedback(text: str, *, follows_agent_turn: bool) -> str | None:
    """``"correction"``, ``"approval"`` or None for a typed prompt.

    ``follows_agent_turn``: the prompt answers an earlier agent turn (the first
    prompt of a session is a task, never feedback).
    """
    if not follows_agent_turn or not text:
        return None
    stripped = text.strip()
    if not stripped or len(stripped) > MAX_FEEDBACK_CHARS:
        return None
    if _CORRECTION.match(stripped) or _CORRECTION_ANYWHERE.search(stripped):
        return "correction"
    if _APPROVAL.match(stripped):
        return "approval"
    return None
