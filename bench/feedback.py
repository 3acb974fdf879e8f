"""Recognising corrections, on the hand-labelled feedback set (issue 30 §2).

Set: tests/sleep/feedback_labelled.py (corrections of every form, look-alike requests,
thanks; English, French, German, Spanish; split tune / held, written before tuning).
Every message is scored as the reply that follows an agent's answer.

- **is a correction**: precision = labelled corrections among the messages called a
  correction; recall = labelled corrections called one.
- **which rule**: the rule line written from a message called a correction must hold
  every labelled term of its rule and none of the words of the rest of the message
  (``absent``); precision over the messages that got a rule, recall over the
  labelled corrections.

Methods: ``today`` is the classifier and rule writer before issue 30 (frozen here:
``classify_feedback`` from the first prompt words, the correction pasted as the rule);
``now`` is :func:`sleep.feedback.classify_feedback` with
:func:`sleep.rule_text.write_rule`.
Targets: precision >= 0.95 and recall >= 0.90 for "is a correction".

Usage: ``python bench/feedback.py`` (add ``--misses`` to list the mistakes of ``now``)
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Callable

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tests" / "sleep")]

# ----- today's method, frozen (sleep/feedback.py and sleep/cycle/corrections.py before issue 30) -----

_T_CORRECTION = re.compile(
    r"""^\s*(?:
        no(?:pe)?\b[\s,.!:;-]* |
        (?:don'?t|do\ not|never|stop|wrong|incorrect|not\ (?:like\ )?that|that'?s\ (?:not|wrong|incorrect)
          |this\ is\ (?:not|wrong)|that\ is\ (?:not|wrong)|wait\b|undo|revert|you\ (?:broke|forgot|missed)
          |actually\b|instead\b|please\ don'?t|why\ did\ you)
    )""",
    re.IGNORECASE | re.VERBOSE,
)
_T_ANYWHERE = re.compile(r"\b(?:instead(?:\ of)?|not\ what\ I|I\ said|I\ told\ you|should\ (?:have|be)\b.*\bnot\b)",
                         re.IGNORECASE | re.VERBOSE)
_T_LEAD = re.compile(r"^(?:no+|nope|nah|yes|yeah|yep|ok(?:ay)?|wrong|incorrect|not quite|not like that|actually|"
                     r"wait|hmm+|ugh|please|pls|that'?s (?:wrong|not right|not it))\b[\s,.!:;-]*", re.I)


def today_is_correction(text: str) -> bool:
    stripped = text.strip()
    if not stripped or len(stripped) > 400:
        return False
    return bool(_T_CORRECTION.match(stripped) or _T_ANYWHERE.search(stripped))


def today_rule(text: str) -> str | None:
    rule = " ".join(text.split())
    while True:
        stripped = _T_LEAD.sub("", rule, count=1)
        if stripped == rule:
            break
        rule = stripped
    rule = rule.strip(" ,;:-")
    if len(rule.split()) < 3:
        return None
    rule = rule[0].upper() + rule[1:]
    if len(rule) > 200:
        rule = rule[:200].rsplit(" ", 1)[0] + "..."
    return rule if rule.endswith((".", "!", "?", "...")) else rule + "."


# ----- now ------------------------------------------------------------------------------------------


def now_is_correction(text: str) -> bool:
    from sleep.feedback import classify_feedback

    return classify_feedback(text, follows_agent_turn=True) == "correction"


def now_rule(text: str) -> str | None:
    from sleep.rule_text import write_rule

    return write_rule(text)


METHODS: dict[str, tuple[Callable[[str], bool], Callable[[str], str | None]]] = {
    "today": (today_is_correction, today_rule),
    "now": (now_is_correction, now_rule),
}


def rule_ok(rule: str | None, terms: tuple[str, ...], absent: tuple[str, ...]) -> bool:
    if not rule:
        return False
    low = rule.casefold()
    return all(t.casefold() in low for t in terms) and not any(a.casefold() in low for a in absent)


def score(method: str, part: str = "all") -> dict:
    from feedback_labelled import LABELLED

    is_corr, write = METHODS[method]
    items = [x for x in LABELLED if part == "all" or x.split == part]
    tp = fp = fn = 0
    rules_written = rules_right = 0
    misses: list[str] = []
    for x in items:
        said = is_corr(x.text)
        truth = x.kind == "correction"
        tp += said and truth
        fp += said and not truth
        fn += truth and not said
        if said != truth:
            misses.append(f"{'FP' if said else 'FN'} [{x.split}] {x.text}")
        if said:
            rule = write(x.text)
            if rule:
                rules_written += 1
                good = truth and rule_ok(rule, x.terms, x.absent)
                rules_right += good
                if truth and not good:
                    misses.append(f"RULE [{x.split}] {x.text!r} -> {rule!r}")
    n_corr = sum(x.kind == "correction" for x in items)
    return {"messages": len(items), "corrections": n_corr,
            "precision": tp / (tp + fp) if tp + fp else 1.0, "recall": tp / n_corr if n_corr else 1.0,
            "rule_precision": rules_right / rules_written if rules_written else 1.0,
            "rule_recall": rules_right / n_corr if n_corr else 1.0, "misses": misses}


def main() -> None:
    print(f"{'part':<5} {'method':<6} {'msgs':>5} {'corr.':>5} {'precision':>9} {'recall':>7} "
          f"{'rule prec.':>10} {'rule rec.':>9}")
    for part in ("all", "tune", "held"):
        for method in METHODS:
            r = score(method, part)
            print(f"{part:<5} {method:<6} {r['messages']:>5} {r['corrections']:>5} {r['precision']:>9.2f} "
                  f"{r['recall']:>7.2f} {r['rule_precision']:>10.2f} {r['rule_recall']:>9.2f}")
    if "--misses" in sys.argv:
        for part in ("tune", "held"):
            for line in score("now", part)["misses"]:
                print(line)


if __name__ == "__main__":
    main()
