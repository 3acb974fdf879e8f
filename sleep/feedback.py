"""Recognising explicit feedback in what the person typed.

Pure functions of text. A prompt that answers the agent's previous turn with a
correction or a standing rule is a ``correction``, however it is worded: "no,
use pnpm", "don't touch the tests", "that's wrong", but also "always use pnpm
here", "use conventional commits: start the subject with feat: or fix:",
"prefer ripgrep over grep", "from now on ...", "please don't ...", "next time
...", "you used npm again", in English, French, German and Spanish, alone or
inside a longer message ("thanks. one thing though: always run pnpm gen api
... can you also add a test?"). A thanks or "lgtm" is an ``approval``. The
miner turns corrections into candidate rules and never into tasks.

Each sentence (and each clause after a comma, colon or semicolon) is read on
its own: a rule opens it ("always", "never", "don't", "prefer", "keep",
"from now on" followed by an instruction, "use X" without a purpose clause),
or it says the answer was wrong ("that's wrong", "you forgot", "not what I
asked"), or it names what to use in place of what ("X instead of Y", "X, not
Y"). Look-alike requests stay tasks: "use the logger module to add a debug line"
(a purpose clause), "stop the dev server", "no rush, but ...", "never mind",
"make the button always visible" (the rule word is not the clause's first).
Figures on a labelled set: bench/feedback.py, docs/sleep-mine.md.
"""

from __future__ import annotations

import re

MAX_FEEDBACK_CHARS = 1500
"""A longer prompt (a pasted log, a specification) is a task, not feedback."""

_F = re.IGNORECASE

# Words that may open a clause before what it says ("ok", "but", "one thing though:").
_LEADS = re.compile(
    r"^(?:(?:ok(?:ay)?|hmm+|ugh|so|and|but|also|though|well|alright|right|good|great|thanks|thank you|sure|"
    r"one (?:more )?thing(?: though)?|btw|fyi|please|pls|plz|"
    r"mais|et|alors|merci|bon|aber|und|danke|gut|pero|y|bueno|gracias|vale)\b[\s,.!:;-]*)+", _F)

# A clause that states a rule, by its first words (after the leads).
_RULE_OPENERS = re.compile(r"""^(?:
      (?:you\ (?:should|must)\ )?(?:always|never)\b(?!\ mind\b)(?!\ (?:seen|heard|had|been|the|a|an|this|that|same)\b)
    | don'?t\ (?!know\b|worry\b|mind\b|think\b|get\b|understand\b|see\b|care\b)\w+
    | do\ not\b | dont\b | doesn'?t\ need\b
    | (?:please\ )?stop\ \w+ing\b
    | avoid\b | prefer\s | i\ (?:would\ )?prefer\b | i'?d\ prefer\b | i\ (?:want|need)\b.*\bnot\b
    | (?:only|just)\ (?:use|run|call|touch|edit|change)\b
    | keep\ (?!going\b|working\b|at\b|on\b|trying\b|it\ up\b)\w+
    | remember\ to\b | make\ sure\ (?:you\ |to\ )?(?:always|never|every|each)\b
    | you\ (?:should|must|need\ to|have\ to)\b (?!.*\?$)
    | from\ now\ on\b | going\ forward\b | in\ (?:the\ )?future\b | next\ time\b | from\ here\ on\b
    | in\ this\ (?:repo|repository|project|codebase)\b | here\ we\b
    | we\ (?:always|never|use|don'?t|do\ not|prefer|only)\b
    | (?:i\ )?(?:said|told\ you)\b
    | (?:it|this|that|they|these|those|the\ [\w\ -]{1,40}?)\ (?:should|must)
      \ (?:always|never|not|be|start|end|use|go|live|stay|come)\b
    | (?:the\ )?[\w/.-]+\ (?:go|goes|live|lives|belong|belongs)\ (?:in|into|under|next\ to)\b
    # French
    | toujours\b | jamais\b | n'(?:utilise|ajoute|édite|touche|lance|modifie|fais)\b
    | ne\ (?:\w+\ ){1,2}(?:pas|jamais)\b
    | évite\b | je\ préfère\b | préfère\b | à\ partir\ de\ maintenant\b | désormais\b | la\ prochaine\ fois\b
    | à\ l'avenir\b | il\ faut\ (?:toujours|jamais)\b | pas\ comme\ ça\b | c'est\ faux\b
    # German
    | immer\b | niemals\b | nie\b | bitte\ (?:kein|keine|nicht|immer|nie)\b
    | kein(?:e|en)?\ \w+\b(?=.*\b(?:wir|nutzen|verwenden|nehmen|bitte)\b)
    | ab\ (?:jetzt|sofort)\b | künftig\b | in\ zukunft\b | nächstes\ mal\b | lieber\b | das\ ist\ falsch\b | falsch\b
    | fass\b.*\bnicht\ an\b | (?:\w+\ ){0,3}(?:verwenden|benutzen|nutzen|nehmen),?\ nicht\b
    # Spanish
    | siempre\b | nunca\b | jamás\b | a\ partir\ de\ ahora\b | de\ ahora\ en\ adelante\b | la\ próxima\ vez\b
    | en\ el\ futuro\b | por\ favor\ no\b | no\ (?:toques|uses|ejecutes|hagas|edites|cambies|añadas|pongas)\b
    | prefiero\b | prefiere\b | eso\ está\ mal\b | está\ mal\b | incorrecto\b
)""", _F | re.VERBOSE)

# A clause that says the answer was wrong (by its first words).
_WRONG_OPENERS = re.compile(r"""^(?:
      no+\b(?:\s*[,.!:;-]|\s+no\b|\s+(?:use|run|it|that|this|the\ \w+\ (?:is|are|go)|we|i|you|not|just|please)\b)
    | nope\b | nah\b | non\s*[,.!:;] | nein\b
    | wrong\b | incorrect\b | not\ (?:like\ )?that\b | not\ quite\b
    | that'?s\ (?:not\ (?:it|right|what)|wrong|incorrect) | this\ is\ (?:not\ what|wrong)
    | that\ is\ (?:not\ what|wrong)
    | you\ (?:broke|forgot|missed|ignored|didn'?t)\b | you\ (?:used|ran|added|did|changed|edited)\b.*\bagain\b
    | why\ did\ you\b | undo\ (?:that|this|it)\b | revert\ (?:that|this|it|your)\b
)""", _F | re.VERBOSE)

# Anywhere in a clause: what to use in place of what.
_IN_PLACE = re.compile(r"""(?:
      \binstead\ of\b | \brather\ than\b | \bnot\ what\ I\b | \bI\ told\ you\b
    | \w,\ not\ (?!sure\b|yet\b|working\b|able\b|a\ problem\b)[`'"]?[\w./-]+ | \bnot\ [\w.-]+\s*[,:]\ use\b
    | \bau\ lieu\ de\b | \bplutôt\ que\b | \bet\ pas\b | \bstatt\b | \banstatt\b | \bals\b(?=.*\blieber\b)
    | \ben\ (?:lugar|vez)\ de\b | \by\ no\b
)""", _F | re.VERBOSE)

# Words one of the _IN_PLACE forms needs (a cheap test before the regex; lower case).
_IN_PLACE_CUES = ("instead of", "rather than", "not what", "told you", ", not ", "not ", "au lieu de", "plutôt que",
                  "et pas", "statt", "lieber", "en lugar de", "en vez de", " y no ")

# "use X" opening a clause: a rule unless a purpose clause follows ("use X to add ...").
_USE_OPENER = re.compile(r"^(?:use|utilise|utilisez|nimm|nutze|verwende|usa)\s+\S", _F)
_PURPOSE = re.compile(r"\b(?:to|and)\s+(?!the\b|a\b|it\b)\w+|\bpour\b|,\s*um\b|\bum\b.*\bzu\b|\bpara\b"
                      r"|\bfor\s+(?:the\s+)?\w+ing\b"
                      r"|^\w+\s+(?:the\s+)?(?:changes|die\s+änderungen)\b", _F)

# A plain "no" that is not a "no" to the answer.
_NOT_A_NO = re.compile(r"^(?:no\s+(?:rush|worries|problem|need|idea|hurry|pressure)\b|no-|non-|never\s+mind\b)", _F)

_APPROVAL = re.compile(
    r"""^\s*(?:
        yes\b|yep\b|yeah\b|perfect\b|great\b|excellent\b|nice\b|awesome\b|good\ job\b|well\ done\b
        |thanks?\b|thank\ you\b|lgtm\b|looks\ good\b|that\ works\b|it\ works\b|exactly\b|correct\b
        |ship\ it\b|approved?\b|works\ now\b|cool\b|no\ (?:worries|problem)\b|never\ mind\b
        |merci\b|parfait\b|c'est\ bon\b|super\b|génial\b|danke\b|perfekt\b|passt\b|prima\b|toll\b
        |gracias\b|perfecto\b|genial\b|vale\b|muy\ bien\b
    )""",
    re.IGNORECASE | re.VERBOSE,
)

_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_CLAUSE = re.compile(r"\s*(?:[,;:]|\s-\s|\s—\s)\s*")


def sentences(text: str) -> list[str]:
    """``text`` cut into sentences (a full stop inside a path or version stays)."""
    return [s.strip() for s in _SENTENCE.split(text) if s and s.strip()]


def strip_leads(text: str) -> str:
    return _LEADS.sub("", text.strip(), count=1).strip()


def clause_kind(clause: str) -> str | None:
    """``"rule"`` (the clause states a rule), ``"wrong"`` (it says the answer was wrong)
    or None, by the clause's first words (after the leads)."""
    c = strip_leads(clause)
    if not c or _NOT_A_NO.match(c):
        return None
    if _WRONG_OPENERS.match(c):
        return "wrong"
    if _RULE_OPENERS.match(c):
        return "rule"
    if _USE_OPENER.match(c) and not _PURPOSE.search(c) and not c.rstrip().endswith("?"):
        return "rule"
    return None


def sentence_kind(sentence: str) -> str | None:
    """How a sentence corrects the agent: ``"rule"``, ``"wrong"`` or None."""
    s = sentence.strip()
    if not s or _NOT_A_NO.match(strip_leads(s)):
        return None
    first = clause_kind(s)
    if first:
        return first
    question = s.endswith("?")
    for clause in _CLAUSE.split(s)[1:]:
        kind = clause_kind(clause)
        if kind == "rule" and question:
            continue
        if kind:
            return kind
    low = s.lower()
    if (not question and any(cue in low for cue in _IN_PLACE_CUES) and _IN_PLACE.search(s)
            and not re.match(r"^\s*instead\s*,", s, _F)):
        return "rule"
    return None


def is_correction(text: str) -> bool:
    """Does ``text`` (a reply to the agent) correct it or state a rule, in any sentence?"""
    return any(sentence_kind(s) for s in sentences(text))


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
    if is_correction(stripped):
        return "correction"
    if _APPROVAL.match(stripped):
        return "approval"
    return None
