"""The unitqa task set: distance questions whose answer is stated in the text.

Every task gives one sentence with a distance in kilometres (written out as
``kilometres`` or ``kilometers``) and asks for it. Finding the number is easy
even for a 135M model; what the task checks is the form of the answer: the
number followed by the unit symbol ``km`` (``14 km``), which SmolLM2-135M never
writes unprompted (it repeats ``14 kilometres``). So success depends on one
instruction a skill can give.

:func:`generate_tasks` is a pure function of its seed; the bundled
``data/tasks.jsonl`` is its output for :data:`DEFAULT_SEED` and
:data:`DEFAULT_COUNT`, written once before any tuning (a test checks the file
still equals the generator's output, so neither drifts).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

__all__ = ["DEFAULT_COUNT", "DEFAULT_SEED", "TASKS_PATH", "answer_pattern", "generate_tasks", "write_tasks"]

TASKS_PATH = Path(__file__).resolve().parent / "data" / "tasks.jsonl"
DEFAULT_SEED = 34
DEFAULT_COUNT = 60

_PLACES = ["Alden", "Brook", "Carrow", "Dunmere", "Elston", "Fairholm", "Glenby", "Harwick", "Islay", "Jarrow",
           "Kelso", "Linford", "Marden", "Northam", "Oakley", "Penrith", "Quarry Bay", "Rydal", "Stanton", "Tolby"]
_PEOPLE = ["Mia", "Tom", "Ana", "Leo", "Sara", "Omar", "Ines", "Ben", "Yuki", "Nora", "Ravi", "Eva"]
_THINGS = ["river path", "railway line", "canal", "coast road", "border fence", "ski trail", "tunnel",
           "pipeline", "cycle route", "city wall", "beach", "forest track", "bridge", "runway", "ridge walk"]
_WHEN = ["on Sunday", "last week", "in the race", "before lunch", "on her holiday", "yesterday"]


def _sentence(rng: random.Random, n: int, unit: str) -> tuple[str, str]:
    """(context, question) for one distance ``n`` in one of five phrasings."""
    kind = rng.randrange(5)
    if kind == 0:
        thing = rng.choice(_THINGS)
        return f"The {thing} is {n} {unit} long.", f"How long is the {thing}?"
    if kind == 1:
        a, b = rng.sample(_PLACES, 2)
        return f"The drive from {a} to {b} is {n} {unit}.", f"How far is it from {a} to {b}?"
    if kind == 2:
        who, when = rng.choice(_PEOPLE), rng.choice(_WHEN)
        verb = rng.choice(["cycled", "walked", "ran", "rowed", "skated"])
        return f"{who} {verb} {n} {unit} {when}.", f"How far did {who} go {when}?"
    if kind == 3:
        place = rng.choice(_PLACES)
        return f"{place} lies {n} {unit} north of the coast.", f"How far is {place} from the coast?"
    thing = rng.choice(["lake", "bay", "valley", "crater", "plain"])
    return f"The {thing} measures {n} {unit} across.", f"How wide is the {thing}?"


def answer_pattern(n: int) -> str:
    """The judge's regex: ``n`` (not part of a longer number) directly followed by ``km``."""
    return rf"(?<![\d.,]){n} ?km\b"


def generate_tasks(seed: int = DEFAULT_SEED, count: int = DEFAULT_COUNT) -> list[dict[str, Any]]:
    """``count`` task records (the JSONL layout of ``jsonl_tasks``), distinct numbers."""
    rng = random.Random(seed)
    numbers = rng.sample(range(2, 400), count)
    records = []
    for i, n in enumerate(numbers, 1):
        context, question = _sentence(rng, n, rng.choice(["kilometres", "kilometers"]))
        records.append({
            "id": f"unitqa-{i:03d}",
            "context": context,
            "prompt": question,
            "reference": f"{n} km",
            "judge": {"type": "regex", "pattern": answer_pattern(n)},
        })
    return records


def write_tasks(path: Path = TASKS_PATH, seed: int = DEFAULT_SEED, count: int = DEFAULT_COUNT) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(r, ensure_ascii=False) for r in generate_tasks(seed, count)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


if __name__ == "__main__":
    print(write_tasks())
