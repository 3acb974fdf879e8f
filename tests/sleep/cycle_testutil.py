"""The scripted backend's rules for the night tests (the demo transcripts' pnpm correction)."""

from __future__ import annotations

import json

GOOD_ANSWER = "ANSWER-PNPM: ran `pnpm test`; 2 tests fail in src/parse.test.ts."
SECRET = "ghp_R8cY2mK7qT4wZ9xN3vB6jH1sD5fL0pA8eU2i"


# A judge that tells answers apart passes the answers the person accepted in the demo transcripts (what
# the model judge probe, sleep.cycle.judgeprobe, grades besides an unrelated answer; no replay answers so).
ACCEPTED_PASSES = {"stage": "judge", "regex": r"## Response to grade\n(?:fix: |feat|ESLint: |2 problems: |\d+\.\d\d USD$"
                                              r"|Failing \(2|Two tests fail|All 15 tests|pnpm test: 2 failures)",
                   "response": json.dumps({"score": 9, "pass": True, "feedback": "Done."})}


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
        ACCEPTED_PASSES,
        {"stage": "judge", "response": json.dumps({"score": 1, "pass": False, "feedback": "Not what was asked."})},
        {"stage": "rollout", "regex": "Use pnpm", "response": follows},
        {"stage": "rollout", "response": otherwise},
    ]}
