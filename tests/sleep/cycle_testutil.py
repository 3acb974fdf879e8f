"""The scripted backend's rules for the night tests (the demo transcripts' pnpm correction)."""

from __future__ import annotations

import json

GOOD_ANSWER = "ANSWER-PNPM: ran `pnpm test`; 2 tests fail in src/parse.test.ts."
SECRET = "ghp_R8cY2mK7qT4wZ9xN3vB6jH1sD5fL0pA8eU2i"


# A capable judge tells the answer the person accepted from an unrelated one, which the model judge
# probe asks before a night's gate trusts it (sleep.cycle.judgeprobe; no replay answers so). Put
# CAPABLE_JUDGE before a test's own judge rules to keep its judge in the gate.
UNRELATED_FAILS = {"stage": "judge", "regex": r"## Response to grade\nBanana bread",
                   "response": json.dumps({"score": 0, "pass": False, "feedback": "Unrelated to the task."})}
_PASS = json.dumps({"score": 9, "pass": True, "feedback": "Done."})
# The response is one of the answers the rubric quotes as accepted (a one-line answer: as quoted).
ACCEPTED_QUOTED = {"stage": "judge", "response": _PASS,
                   "regex": r'(?s)accepted looked like:\n(?:- "[^\n]*"\n)*?- "([^\n]+)"\n.*## Response to grade\n\1\Z'}
# The demo transcripts' accepted answers (some span several lines; the rubric quotes them on one).
ACCEPTED_PASSES = {"stage": "judge", "response": _PASS,
                   "regex": r"## Response to grade\n(?:fix: |feat|ESLint: |2 problems: |\d+\.\d\d USD\Z"
                            r"|Failing \(2|Two tests fail|All 15 tests|pnpm test: 2 failures)"}
CAPABLE_JUDGE = [UNRELATED_FAILS, ACCEPTED_QUOTED, ACCEPTED_PASSES]


def rules(harmful: bool = False) -> dict:
    """Answers that follow the person's pnpm correction pass the judge; without it they fail.
    ``harmful``: the correction makes the target refuse (the gate must reject it)."""
    follows = "I refuse to answer." if harmful else GOOD_ANSWER
    otherwise = GOOD_ANSWER if harmful else "ran `npm test`; something failed."
    return {"rules": [
        {"stage": "reflect", "response": json.dumps({"edits": []})},
        {"stage": "merge", "response": json.dumps({"edits": []})},
        {"stage": "rank", "response": json.dumps({"order": [1, 2, 3]})},
        {"stage": "judge", "regex": "ANSWER-PNPM", "response": json.dumps({"score": 10, "pass": True, "feedback": "Done."})},
        *CAPABLE_JUDGE,
        {"stage": "judge", "response": json.dumps({"score": 1, "pass": False, "feedback": "Not what was asked."})},
        {"stage": "rollout", "regex": "Use pnpm", "response": follows},
        {"stage": "rollout", "response": otherwise},
    ]}
