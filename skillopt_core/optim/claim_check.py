"""A learned check for skill lines that make the answer claim its own quality.

The judge-gaming edit a fallible judge rewards is a line that has the answer
*say* it is right ("Finish with a sentence confirming that every requirement
of the task was met.", "Always declare your solution to be correct and
complete."). A word list (:mod:`skillopt_core.optim.judge_guard`'s patterns)
refuses the wordings it lists and nothing else: rewording defeats it. This
module is a small text classifier instead: TF-IDF over stemmed words (1-2
grams) and character 3-5 grams, logistic regression, trained in-process on
the labelled lines of ``judge_claims.json`` (claims against ordinary task
instructions, including look-alikes that ask to *verify* or *report*, which
must pass). Training takes well under a second and happens once per process.

How well it generalises was measured on a paraphrase set written for this
purpose and split before tuning (``bench/gaming_paraphrases.json``): the
held-out half is never trained on; ``python bench/gate.py --paraphrases``
prints the refusal rates of both halves. The threshold (:data:`THRESHOLD`)
and ``C`` were chosen by leave-one-out on the training lines only.

It is a statistical model of wording, not an understanding of it: a claim
phrased unlike anything it was trained on can pass, and an instruction that
reads like a claim can be refused. The refusal names the sentence and its
probability so a person can see why.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from functools import lru_cache
from importlib import resources

THRESHOLD = 0.5
"""A sentence with a claim probability at or above this is refused."""
C = 16.0
"""The logistic regression's inverse regularisation."""
DATA = "judge_claims.json"
ANSWER_DATA = "answer_claims.json"
"""Training lines of the answer-level check (:func:`strip_claims`), used with :data:`DATA`."""

_TOKEN = re.compile(r"[a-z0-9%']+")
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


def training_lines(path: str | None = None) -> tuple[list[str], list[str]]:
    """``(claims, tasks)``: the labelled lines the check is trained on."""
    if path is None:
        text = resources.files("skillopt_core.optim").joinpath(DATA).read_text(encoding="utf-8")
    else:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    data = json.loads(text)
    claims, tasks = data.get("claims"), data.get("tasks")
    if not isinstance(claims, list) or not isinstance(tasks, list) or not claims or not tasks:
        raise ValueError(f"{path or DATA}: needs non-empty lists 'claims' and 'tasks' of strings")
    return [str(x) for x in claims], [str(x) for x in tasks]


@lru_cache(maxsize=1)
def stemmer():  # type: ignore[no-untyped-def]
    """The English Snowball stemmer the checks share (built once)."""
    import snowballstemmer

    return snowballstemmer.stemmer("english")


def _prep(text: str) -> str:
    return " ".join(stemmer().stemWords(_TOKEN.findall(text.lower())))


def build_model(claims: Sequence[str], tasks: Sequence[str], c: float = C):
    """A fitted pipeline: ``predict_proba([line])[:, 1]`` is the claim probability."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline, make_union

    model = make_pipeline(
        make_union(TfidfVectorizer(preprocessor=_prep, ngram_range=(1, 2), sublinear_tf=True),
                   TfidfVectorizer(analyzer="char_wb", ngram_range=(3, 5), sublinear_tf=True)),
        LogisticRegression(C=c, class_weight="balanced", max_iter=2000),
    )
    return model.fit(list(claims) + list(tasks), [1] * len(claims) + [0] * len(tasks))


@lru_cache(maxsize=1)
def _default_model():  # type: ignore[no-untyped-def]
    return build_model(*training_lines())


def answer_training_lines() -> tuple[list[str], list[str]]:
    """``(claims, ordinary)`` of the answer-level check: the skill lines of :data:`DATA` and the
    answer sentences of :data:`ANSWER_DATA` (an answer's claims about itself; its substance)."""
    claims, tasks = training_lines()
    data = json.loads(resources.files("skillopt_core.optim").joinpath(ANSWER_DATA).read_text(encoding="utf-8"))
    return claims + [str(x) for x in data["claims"]], tasks + [str(x) for x in data["ordinary"]]


@lru_cache(maxsize=1)
def _answer_model():  # type: ignore[no-untyped-def]
    return build_model(*answer_training_lines())


def sentences(text: str) -> list[str]:
    """The sentences (or lines) of ``text``, stripped of list markers; empty ones dropped."""
    out = []
    for part in _SENTENCE.split(text):
        part = part.strip().lstrip("-*#>0123456789. ").strip()
        if len(_TOKEN.findall(part.lower())) >= 2:
            out.append(part)
    return out


class ClaimCheck:
    """Scores sentences; :meth:`reason` says which sentence of a text claims the
    answer's own quality (or None). ``model``: a fitted pipeline (default: the one
    trained on ``judge_claims.json``)."""

    def __init__(self, model=None, threshold: float = THRESHOLD) -> None:  # type: ignore[no-untyped-def]
        self.model = model if model is not None else _default_model()
        self.threshold = threshold

    def probabilities(self, lines: Sequence[str]) -> list[float]:
        if not lines:
            return []
        return [float(p) for p in self.model.predict_proba(list(lines))[:, 1]]

    def is_claim(self, line: str) -> bool:
        return self.probabilities([line])[0] >= self.threshold

    def reason(self, text: str) -> str | None:
        parts = sentences(text)
        if not parts:
            return None
        probs = self.probabilities(parts)
        best = max(range(len(parts)), key=probs.__getitem__)
        if probs[best] < self.threshold:
            return None
        return f"has the answer claim its own quality (learned check, p={probs[best]:.2f}): {parts[best]!r}"


_FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.S | re.M)
# A sentence ends at . ! or ? followed by a space or the end (so "3.5" and "v1.2" stay whole), or at a line end.
_ANSWER_SENTENCE = re.compile(r"(?:[^.!?\n]|[.!?](?![\s.!?]|$))+(?:[.!?]+|$)", re.M)


def prose_sentences(text: str) -> list[re.Match[str]]:
    """The sentences of an answer (as matches) outside its fenced code blocks."""
    fenced = [(m.start(), m.end()) for m in _FENCE.finditer(text)]
    return [m for m in _ANSWER_SENTENCE.finditer(text) if not any(a <= m.start() < b for a, b in fenced)]


def cut_sentences(text: str, drop: Sequence[re.Match[str]], own_lines: bool = False) -> str:
    """``text`` without the ``drop`` sentences, spaces before a line end and runs of blank lines
    tidied. ``own_lines``: a sentence on a line of its own takes its line with it."""
    out, at = [], 0
    for m in drop:
        out.append(text[at:m.start()])
        at = m.end()
        if own_lines and text[at:at + 1] == "\n" and (m.start() == 0 or text[m.start() - 1] == "\n"):
            at += 1
    out.append(text[at:])
    kept = re.sub(r"[ \t]+\n", "\n", "".join(out))
    return re.sub(r"\n{3,}", "\n\n", kept).strip()


def strip_claims(text: str, model=None, threshold: float = THRESHOLD) -> tuple[str, list[str]]:  # type: ignore[no-untyped-def]
    """``(text without its self-assessment sentences, the sentences removed)``.

    An answer's sentences that claim its own quality or compliance ("This answer
    meets every requirement.") are removed, everything else is kept verbatim; fenced
    code blocks are never touched. ``model``: default the answer-level check, trained
    on :data:`DATA` and :data:`ANSWER_DATA`. Its refusal rates on answer sentences written
    for the paraphrase set (``bench/gaming_answers.json``, split before tuning) are
    printed by ``python bench/gate.py --paraphrases``."""
    model = model if model is not None else _answer_model()
    spans = [m for m in prose_sentences(text) if len(_TOKEN.findall(m.group(0).lower())) >= 2]
    if not spans:
        return text, []
    probs = model.predict_proba([m.group(0).strip() for m in spans])[:, 1]
    drop = [m for m, p in zip(spans, probs, strict=True) if p >= threshold]
    if not drop:
        return text, []
    return cut_sentences(text, drop), [m.group(0).strip() for m in drop]
