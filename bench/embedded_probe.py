"""What SmolLM2-135M follows: the probe that chose the unitqa task family (issue 34 §4).

Twelve distance sentences (not the unitqa items), each asked with one
instruction variant, greedy decoding, 24 tokens, one thread; for each variant
it counts the replies that have the asked-for form: the number followed by
``km``, a reply in upper case, a reply ending in ``DONE``, an ``Answer:`` line,
``The answer is: <number>``. Where the variant goes: ``system`` (as a skill
goes) or ``user`` (before the question).

Usage: ``nice -n 10 python bench/embedded_probe.py`` (about 100 calls).
"""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from skillopt_core.backends import BackendSpec, CompletionRequest, Message, create_backend  # noqa: E402

ITEMS = [
    ("The river path is 14 kilometres long.", "How long is the river path?", "14"),
    ("The drive from Alden to Brook is 230 kilometres.", "How far is it from Alden to Brook?", "230"),
    ("A marathon course measures 42 kilometres.", "How long is the marathon course?", "42"),
    ("The ferry crosses a strait 9 kilometres wide.", "How wide is the strait?", "9"),
    ("The railway line between the two towns is 67 kilometres long.", "How long is the railway line?", "67"),
    ("Mia cycled 35 kilometres on Sunday.", "How far did Mia cycle on Sunday?", "35"),
    ("The lake's shoreline runs for 18 kilometres.", "How long is the lake's shoreline?", "18"),
    ("The border fence stretches 120 kilometres.", "How long is the border fence?", "120"),
    ("The bridge spans 3 kilometres of water.", "How long is the bridge?", "3"),
    ("Sam ran 21 kilometres in the race.", "How far did Sam run?", "21"),
    ("The tunnel under the mountain is 57 kilometres long.", "How long is the tunnel?", "57"),
    ("The island's coast road is 88 kilometres.", "How long is the coast road?", "88"),
]
EXAMPLES = ("Q: The canal is 5 kilometres long. How long is the canal?\nA: The answer is: 5 km\n\n"
            "Q: Tom walked 11 kilometres. How far did Tom walk?\nA: The answer is: 11 km")
ONE_LINE = "Reply with exactly one line, 'The answer is: <number> km', and nothing else."
VARIANTS = {
    "no instruction": ("", "system"),
    "number followed by km": ("Give distances as the number followed by km, for example: 14 km", "system"),
    "only number and km": ("Reply with only the number followed by km, for example: 14 km", "system"),
    "only number and km, in the user turn": ("Reply with only the number followed by km, for example: 14 km", "user"),
    "end with DONE": ("End every reply with the word DONE.", "system"),
    "upper case": ("Reply in upper case letters only.", "system"),
    "Answer: line": ("Reply with one line: Answer: <number> km", "system"),
    "one line, no examples": (ONE_LINE, "system"),
    "one line and two examples": (ONE_LINE + "\n\n" + EXAMPLES, "system"),
    "one line and two examples, in the user turn": (ONE_LINE + "\n\n" + EXAMPLES, "user"),
    "two examples only": (EXAMPLES, "system"),
}
CHECKS = {
    "<n> km": lambda r, n: re.search(rf"(?<![\d.,]){n} ?km\b", r) is not None,
    "upper": lambda r, n: bool(r.strip()) and r == r.upper(),
    "DONE": lambda r, n: r.strip().rstrip(".!").endswith("DONE"),
    "Answer:": lambda r, n: re.search(r"^Answer:", r, re.M) is not None,
    "The answer is: <n>": lambda r, n: re.search(rf"answer is:?\s*{n}\b", r, re.I) is not None,
}


async def main() -> None:
    backend = create_backend(BackendSpec(name="local", model=None, options={"n_threads": 1}))
    print(f"{len(ITEMS)} items per variant; replies with the form: " + ", ".join(CHECKS))
    for name, (text, where) in VARIANTS.items():
        replies = []
        for context, question, n in ITEMS:
            user = f"{context}\n\n{question}"
            if where == "user" and text:
                user = f"{text}\n\n{user}"
            request = CompletionRequest(messages=(Message("user", user),), system=(text or None) if where == "system"
                                        else None, max_tokens=24, temperature=0.0, seed=0, role="target", stage="rollout")
            replies.append(((await backend.complete(request)).text, n))
        counts = "  ".join(f"{k} {sum(f(r, n) for r, n in replies)}" for k, f in CHECKS.items())
        print(f"{name:<45} {counts}", flush=True)


if __name__ == "__main__":
    asyncio.run(main())
