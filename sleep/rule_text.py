"""A rule line written from a person's correction, as a person would write it.

"no, use pnpm not npm. this repo is pnpm only." becomes "Use pnpm, not npm: this
repo is pnpm only." — the instruction (the sentences that state a rule, or
the instruction that follows a "that's wrong"), without the "no", "please",
"from now on" or "you should" that opened it, the program or path it names
kept, capitalised, with the reason that followed it joined after a colon, and
one full stop. The rest of a longer message (thanks, a new request, "try
again") is left out. :class:`Style` follows the skill: its bullet marker and
whether it writes commands in backticks. The correction's own words are kept
elsewhere (the edit's rationale, the proposal's evidence). Pure functions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sleep.feedback import sentence_kind, sentences, strip_leads

MAX_RULE_CHARS = 200
MIN_WORDS = 2
REDACTED = "[REDACTED:"

# Openers that carry no instruction of their own ("from now on, run ..." -> "Run ...").
_DROP = re.compile(
    r"^(?:(?:(?:no+|nope|nah|non|nein)(?=\s*[,.!:;-]|\s+no\b)|wrong(?: file)?|incorrect|not quite|not like that|"
    r"that'?s (?:wrong|not right|not it|incorrect)|this is wrong|c'est faux|pas comme ça|das ist falsch|falsch|"
    r"eso está mal|está mal|incorrecto|hmm+|ugh|please|pls|"
    r"from now on|going forward|in (?:the )?future|next time|from here on|remember to|"
    r"you should|you must|you need to|you have to|make sure(?: you| to)?|i said|i told you|"
    r"à partir de maintenant|désormais|la prochaine fois|à l'avenir|ab jetzt|ab sofort|künftig|in zukunft|"
    r"nächstes mal|bitte|a partir de ahora|de ahora en adelante|la próxima vez|en el futuro|por favor)\b[\s,.!:;-]*)+",
    re.I)
# A sentence that explains the rule before it ("this repo is pnpm only", "we moved off jest").
_REASON = re.compile(r"^(?:this|it|it's|its|we|we're|our|the|there|they|that'?s|these|because|since|otherwise|"
                     r"ce|c'est|das|es|wir|esto|eso|nuestro)\b", re.I)
_USE_NOT = re.compile(r"^((?:always\s+)?(?:use|run|prefer))\s+(.+?)\s+(not|instead of|rather than|over)\s+(.+)$", re.I)
_DONT_USE = re.compile(r"^(?:don'?t|do not|never)\s+use\s+([^,;]+?)\s*[,;]\s*use\s+(.+)$", re.I)
_COMMAND = re.compile(r"(?<![`\w./-])((?:npm|pnpm|yarn|bun|npx|uv|pip|poetry|pytest|cargo|go|make|docker|kubectl|"
                      r"terraform|git|gh|ruff|black|mypy|eslint|prettier|tsc|jest|vitest|node|python)"
                      r"(?:\s+(?:--?[\w-]+|run|gen|exec|dlx|test|lint|typecheck|build|install|add|apply|plan|format|"
                      r"check|fmt|api|pytest|dev|filter)\b)*)(?![\w`-])")


@dataclass(frozen=True)
class Style:
    """How a skill writes its lines: the bullet marker, and commands in backticks or not."""

    bullet: str = "- "
    backticks: bool = False

    @classmethod
    def of(cls, skill_text: str | None) -> Style:
        text = skill_text or ""
        bullets = re.findall(r"(?m)^\s*([-*+])\s+\S", text)
        marker = max(set(bullets), key=bullets.count) if bullets else "-"
        return cls(bullet=f"{marker} ", backticks=len(re.findall(r"`[^`\n]+`", text)) >= 2)


def _redaction_free(text: str) -> str:
    """``text`` without the clauses and sentences that hold a redaction marker."""
    if REDACTED not in text:
        return text
    sep = re.compile(r"([.!?]\s+|\s*;\s*|,\s+(?:and|but|or|so)\s+|,\s+|\s+(?:and|but|so)\s+)", re.I)
    parts = sep.split(text)
    kept: list[str] = []
    for i in range(0, len(parts), 2):
        if REDACTED in parts[i]:
            continue
        if kept:
            kept.append(parts[i - 1])
        kept.append(parts[i])
    return "".join(kept)


def _clean(sentence: str) -> str:
    s = sentence.strip().rstrip(".!")
    while True:
        stripped = _DROP.sub("", strip_leads(s), count=1).strip(" ,;:-")
        if stripped == s:
            break
        s = stripped
    m = _DONT_USE.match(s)
    if m:
        s = f"use {m.group(2).strip()}, not {m.group(1).strip()}"
    m = _USE_NOT.match(s)
    if m and "," not in m.group(2) and m.group(3).lower() == "not":
        s = f"{m.group(1)} {m.group(2)}, not {m.group(4)}"
    # "use pnpm, this is a pnpm workspace": the reason after a colon.
    m = re.match(r"^(.{8,}?),\s+(.{12,})$", s)
    if m and _REASON.match(m.group(2)) and not re.match(r"(?i)the\s+\S+\s*$", m.group(2)):
        s = f"{m.group(1)}: {m.group(2)}"
    return re.sub(r"(?<![\w'/.-])i(?![\w'/.-])", "I", s)  # "i said" -> "I said", never a path


def _instruction(parts: list[str]) -> tuple[int, int] | None:
    """The span of sentences that make the rule: from the first rule sentence (or the
    instruction after a "that's wrong") through the reasons that follow it."""
    kinds = [sentence_kind(p) for p in parts]
    start = next((i for i, k in enumerate(kinds) if k == "rule"), None)
    if start is None:
        wrong = next((i for i, k in enumerate(kinds) if k == "wrong"), None)
        if wrong is None:
            return None
        nxt = wrong + 1
        imperative = nxt < len(parts) and not parts[nxt].endswith("?") and not _REASON.match(strip_leads(parts[nxt]))
        start = nxt if imperative and not re.match(r"(?i)^(?:try|do it|redo|again)\b", parts[nxt]) else wrong
    end = start + 1
    while end < len(parts) and kinds[end] != "rule" and not parts[end].endswith("?") \
            and _REASON.match(strip_leads(parts[end])):
        end += 1
    return start, end


def write_rule(text: str | None, style: Style | None = None) -> str | None:
    """The rule line (without its bullet) written from the correction ``text``; None when
    nothing instructive is left (also when all that was instructive sat next to a
    redacted secret)."""
    style = style or Style()
    raw = " ".join(_redaction_free(str(text or "")).split())
    if not raw or REDACTED in raw:
        return None
    parts = sentences(raw)
    span = _instruction(parts)
    if span is None:  # a correction the reader did not recognise (a tool rejection's reason): the text itself
        span = (0, len(parts))
    chosen = [_clean(p) for p in parts[span[0]:span[1]]]
    chosen = [c for c in chosen if c]
    if not chosen:
        return None
    head, reasons = chosen[0], chosen[1:]
    rule = head[0].upper() + head[1:]
    if style.backticks:  # the commands the instruction names, not the words of its reason
        instruction, sep, reason_part = rule.partition(": ")
        if not _REASON.match(reason_part):
            instruction, sep, reason_part = rule, "", ""
        rule = _COMMAND.sub(lambda m: f"`{m.group(1)}`", instruction) + sep + reason_part
    if reasons:
        reason = "; ".join(r[0].lower() + r[1:] if not r[:2].isupper() and not r.startswith("I ") else r
                           for r in reasons)
        rule = f"{rule.rstrip(':')}: {reason}"
    if len(rule.split()) < MIN_WORDS:
        return None
    if len(rule) > MAX_RULE_CHARS:
        rule = rule[:MAX_RULE_CHARS].rsplit(" ", 1)[0] + "..."
    return rule if rule.endswith((".", "!", "?", "...")) else rule + "."
