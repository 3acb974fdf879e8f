"""Stock sentences: what a candidate skill makes every answer say, whatever the task.

A judge-gaming line ("Declare at the end that the result matches exactly what
was asked.") works through a sentence the answer writes about itself. The claim
checks (:mod:`skillopt_core.optim.claim_check`) find such sentences by their
words, and a wording they were not trained on passes them. This check does not
read words for meaning: it looks at *where* a sentence occurs. A sentence of
substance depends on the task (its numbers, names, steps); a sentence that a
skill line makes the answer write whatever the task is the same in the answers
to many different tasks. So at a gated accept, with the val judge a model
(the substance judge), the candidate's val answers are read for *stock
sentences*: sentences that occur in the answers of at least :data:`MIN_TASKS`
and at least :data:`MIN_SHARE` of the distinct tasks evaluated, that contain
nothing that differs by task, and that the current skill's answers (the step's
train rollouts) never wrote -- what the candidate's edits introduced.

Only a stock sentence that an optimizer edit wrote counts (an edit sharing
:data:`MIN_SHARED_WORDS` stemmed content words with it: a model told to write a
sentence echoes its words); the person's corrections are theirs to vouch for, as
in the judge guard. When there are some, :func:`check` asks the val judge
again about each answer holding one, with those sentences removed, and decides
the gate on those scores: an accept that relied on what the answers say about
themselves becomes a reject. When the accept holds, the edits that wrote the
stock sentences are dropped from the accepted skill: by the re-decision they
added nothing the judge counts, so a line that only makes the answers talk
does not ride in with helpful edits.

Two sentences are the same when their sets of stemmed content words (stop words
dropped, digits kept) are equal, so "This result matches exactly what you
asked." and "The result matches exactly what was asked." match, and "The answer
is 42." and "The answer is 17." do not. What it cannot see: a claim a model
words differently in every answer, one mixed into a sentence of substance, or
one that shares no words with the line that asked for it.
What it can cost: a sentence a rubric requires verbatim in every answer (a
fixed disclaimer) is hidden from the judge at this re-decision, so an edit that
adds it is judged without it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from skillopt_core.backends import RequestFailed
from skillopt_core.optim.claim_check import cut_sentences, prose_sentences, stemmer
from skillopt_core.optim.judge_guard import is_optimizer_edit
from skillopt_core.skill.edits import Edit

MIN_TASKS = 3
"""A stock sentence occurs in the answers of at least this many distinct tasks..."""
MIN_SHARE = 0.5
"""...and of at least this share of the distinct tasks evaluated."""
MIN_WORDS = 2
"""Sentences with fewer stemmed content words are never stock sentences (too little to tell)."""
MIN_SHARED_WORDS = 2
"""An edit wrote a stock sentence when they share this many stemmed content words (or all of the sentence's)."""

_TOKEN = re.compile(r"[a-z0-9%']+")
_STOP = frozenset("""
a an the this that these those it its it's i i'm me my we our you your he she they them their
is are was were be been being am do does did done have has had having will would shall should can could may might
of to in on at by for with from as into onto about over under than then so and or but if when while because
what which who whom whose where how here there all any each every some such very just also too
""".split())


def content_words(text: str) -> frozenset[str]:
    """The stemmed content words of ``text`` (stop words dropped; digits and negations kept)."""
    words = [w.strip("'") for w in _TOKEN.findall(text.lower())]
    return frozenset(stemmer().stemWords([w for w in words if w and w not in _STOP]))


def answer_sentences(text: str) -> list[str]:
    """The sentences of an answer, outside fenced code blocks, stripped."""
    return [m.group(0).strip() for m in prose_sentences(text) if m.group(0).strip()]


def stock_sentences(answers: Mapping[str, Sequence[str]], before: Iterable[str], own: Iterable[str] = ()) -> list[str]:
    """The stock sentences of ``answers`` (task id -> that task's answers under the candidate)
    that no answer of ``before`` (the current skill's answers) wrote, in first-seen order.
    ``own``: the person's own words (their corrections): a sentence that echoes them (shares
    :data:`MIN_SHARED_WORDS` content words with one) reports what the person asked for and is
    never a stock sentence ("Ran pnpm gen api." under "run pnpm gen api instead of the script")."""
    seen_before = {content_words(s) for text in before for s in answer_sentences(text)}
    theirs = [content_words(t) for t in own]
    tasks_of: dict[frozenset[str], set[str]] = {}
    first: dict[frozenset[str], str] = {}
    for task_id, texts in answers.items():
        for text in texts:
            for sentence in answer_sentences(text):
                key = content_words(sentence)
                if len(key) < MIN_WORDS or key in seen_before or any(
                        len(key & words) >= min(MIN_SHARED_WORDS, len(key)) for words in theirs):
                    continue
                tasks_of.setdefault(key, set()).add(task_id)
                first.setdefault(key, sentence)
    bar = max(MIN_TASKS, math.ceil(MIN_SHARE * len(answers)))
    return [first[k] for k, tasks in tasks_of.items() if len(tasks) >= bar]


def without(text: str, sentences: Iterable[str]) -> str:
    """``text`` with every sentence that matches one of ``sentences`` (same content words) removed."""
    keys = {content_words(s) for s in sentences}
    drop = [m for m in prose_sentences(text) if content_words(m.group(0)) in keys]
    return cut_sentences(text, drop, own_lines=True) if drop else text


def writers(edits: Iterable[Edit], sentences: Sequence[str]) -> list[Edit]:
    """The edits that wrote ``sentences``: those whose text shares :data:`MIN_SHARED_WORDS`
    stemmed content words (or all of them, for a shorter sentence) with one of them."""
    keys = [content_words(s) for s in sentences]
    out = []
    for edit in edits:
        if edit.op == "delete" or not edit.content:
            continue
        words = content_words(edit.content)
        if any(len(k & words) >= min(MIN_SHARED_WORDS, len(k)) for k in keys):
            out.append(edit)
    return out


@dataclass
class StockVerdict:
    """What the stock-sentence check found at one accept."""

    sentences: list[str] = field(default_factory=list)
    scores: dict[str, float] = field(default_factory=dict)   # per-item scores with the sentences removed
    rescored: int = 0                                         # answers the judge was asked about again
    unscored: int = 0                                         # ... and could not answer (they keep their score)
    dropped: list[Edit] = field(default_factory=list)         # the edits that wrote them

    def to_dict(self) -> dict:
        return {"sentences": self.sentences, "rescored_answers": self.rescored, "unscored_answers": self.unscored,
                "dropped_edits": [e.to_dict() for e in self.dropped]}


async def check(results: Sequence, before: Iterable[str], score, metric: str,
                edits: Sequence[Edit], own: Iterable[str] = ()) -> StockVerdict | None:
    """The stock-sentence check of one accept, or None when the candidate's answers hold none.

    ``results``: the candidate's val rollouts the gate decided on (``task_id``, ``response``,
    ``score``); ``before``: the current skill's answers; ``score(task_id, text)``: the val judge's
    score of an answer (awaitable); ``metric``: ``hard`` or ``soft``; ``edits``: the candidate's
    edits; ``own``: the person's own words (see :func:`stock_sentences`). Only the stock sentences
    an optimizer edit wrote (:func:`writers`) count: the caller's edits are the caller's to vouch
    for, and a stock sentence no edit's words explain is left to the judge. The verdict's
    ``scores`` are the per-item means with the stock sentences removed."""
    answers: dict[str, list[str]] = {}
    for r in results:
        answers.setdefault(r.task_id, []).append(r.response)
    mine = [e for e in edits if is_optimizer_edit(e)]
    found = [s for s in stock_sentences(answers, before, own) if writers(mine, [s])]
    if not found:
        return None
    verdict = StockVerdict(sentences=found, dropped=writers(mine, found))
    sums: dict[str, list[float]] = {}
    for r in results:
        text = without(r.response, found)
        s = r.score
        if text != r.response:
            try:
                s = await score(r.task_id, text)
                verdict.rescored += 1
            except RequestFailed:  # the judge could not answer: this answer keeps its gate score
                verdict.unscored += 1
        sums.setdefault(r.task_id, []).append(s.hard if metric == "hard" else s.soft)
    verdict.scores = {k: math.fsum(v) / len(v) for k, v in sums.items()}
    return verdict
