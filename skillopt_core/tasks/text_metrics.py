"""Answer normalisation, exact match, token F1 and final-answer extraction.

Pure functions shared by the rule judges and the question-answering envs.
Normalisation follows the usual reading-comprehension convention: compare
answers after lowercasing, removing accents, punctuation and the articles
"a", "an", "the", and collapsing whitespace. Numbers lose their punctuation
too ("1,000" == "1000"), which is what short-answer benchmarks expect.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_WHITESPACE = re.compile(r"\s+")
# "Answer:" with optional Markdown emphasis around the word ("**Answer:**",
# "**Answer**:"); "Final answer:" matches too because we search for the word.
_ANSWER_MARKER = re.compile(r"answer[*_\s]*:", re.IGNORECASE)
_DECORATION = " \t*_`\"'"


def _strip_accents(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def _strip_punctuation(text: str) -> str:
    # Unicode category P* covers ASCII punctuation plus curly quotes, dashes etc.
    return "".join(" " if unicodedata.category(ch).startswith("P") else ch for ch in text)


def normalize_answer(text: str, case_sensitive: bool = False) -> str:
    """The comparable form of an answer: accents, punctuation and articles
    removed, whitespace collapsed, lowercased unless ``case_sensitive``.

    Punctuation becomes a space (so "Saint-Rémy" -> "saint remy"), except
    inside numbers, where it is dropped ("1,000" -> "1000")."""
    text = _strip_accents(text)
    text = re.sub(r"(?<=\d)[.,'’](?=\d)", "", text)
    if not case_sensitive:
        text = text.lower()
    text = _strip_punctuation(text)
    articles = _ARTICLES if not case_sensitive else re.compile(r"\b(a|an|the|A|An|The)\b")
    text = articles.sub(" ", text)
    return _WHITESPACE.sub(" ", text).strip()


def answer_tokens(text: str, case_sensitive: bool = False) -> list[str]:
    normalised = normalize_answer(text, case_sensitive)
    return normalised.split() if normalised else []


def token_f1(prediction: str, gold: str, case_sensitive: bool = False) -> float:
    """Bag-of-tokens F1 between two answers after normalisation.

    Two empty answers score 1.0; one empty answer scores 0.0."""
    pred = answer_tokens(prediction, case_sensitive)
    ref = answer_tokens(gold, case_sensitive)
    if not pred or not ref:
        return 1.0 if pred == ref else 0.0
    common = sum((Counter(pred) & Counter(ref)).values())
    if common == 0:
        return 0.0
    precision = common / len(pred)
    recall = common / len(ref)
    return 2 * precision * recall / (precision + recall)


def exact_match(prediction: str, golds: Iterable[str], case_sensitive: bool = False) -> bool:
    """True if the normalised prediction equals any normalised gold answer."""
    pred = normalize_answer(prediction, case_sensitive)
    return any(pred == normalize_answer(gold, case_sensitive) for gold in golds)


def best_f1(prediction: str, golds: Iterable[str], case_sensitive: bool = False) -> float:
    """The highest token F1 of the prediction against any gold answer (0.0 if none)."""
    return max((token_f1(prediction, gold, case_sensitive) for gold in golds), default=0.0)


@dataclass(frozen=True)
class ExtractedAnswer:
    """The final answer pulled out of a free-text response.

    ``found`` is False when no ``Answer:`` line was present and ``text`` is the
    response's first non-empty line instead (the fallback)."""

    text: str
    found: bool


def _clean(line: str) -> str:
    line = line.strip().strip(_DECORATION).strip()
    # A sentence-final period is not part of the answer ("Paris." -> "Paris").
    return line[:-1].rstrip() if line.endswith(".") and not line.endswith("..") else line


def extract_final_answer(response: str) -> ExtractedAnswer:
    """Text after the last ``Answer:`` marker (case-insensitive, Markdown
    emphasis tolerated), up to the end of its line; if that line is empty, the
    next non-empty line. Without a marker: the first non-empty line."""
    matches = list(_ANSWER_MARKER.finditer(response))
    rest = response[matches[-1].end():] if matches else response
    for line in rest.splitlines():
        cleaned = _clean(line)
        if cleaned:
            return ExtractedAnswer(cleaned, bool(matches))
    return ExtractedAnswer("", bool(matches))


def one_line(text: str, limit: int) -> str:
    """``text`` with its white space folded to single spaces, cut to ``limit`` characters ending in ``...``."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
