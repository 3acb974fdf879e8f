"""A new skill per cluster of recurring tasks that no skill serves (issue 33 §4).

Tasks whose sessions invoked no skill, and that no project skill's description
fits, go to the managed skill ``skillopt-learned`` (:mod:`sleep.cycle.skills`).
When those tasks are of several kinds of work, one skill for all of them is a
poor skill: its description cannot say when to load it, and a lesson for one
kind rides along on every other. So they are clustered first
(:func:`clusters`): two tasks are linked when their intents and prompts share
enough content words (the stems :mod:`sleep.cycle.skillfit` compares; words in
most of the tasks say nothing about their kind and are left out), and a cluster
is a connected group. When at least two clusters have ``sleep.min_tasks``
tasks or more, each becomes its own new skill (:func:`split`): named and
described from its words and intents (``skillopt-<word>-<word>``, in the
host's project skill folder), trained as its own part of the night. The
tasks of smaller clusters stay with the managed skill, as before; one cluster
alone is the managed skill's.

Each new skill is a ``create`` like the managed one: its part pairs the trained
skill with no skill on every instance of its tasks (:mod:`sleep.cycle.lifecycle`)
and stages it only when it measurably helps; the proposal branch adds one
``SKILL.md``; ``adopt`` writes it and ``undo`` removes it.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

from sleep.cycle.skillfit import content_words
from sleep.cycle.skills import SkillChoice
from sleep.hosts import skills_of

MIN_JACCARD = 0.2  # two tasks of one kind of work share at least this share of their content words
COMMON_SHARE = 0.5  # a word in more than this share of the tasks (of three or more) names no kind of work
PREFIX = "skillopt"
_RAW = re.compile(r"[^\W\d_]+", re.UNICODE)


def _text(record: Any) -> str:
    return f"{record.intent}\n{record.prompt}"


def clusters(records: list[Any]) -> list[list[Any]]:
    """The records grouped by kind of work (see the module docstring), biggest first."""
    bags = [set(content_words(_text(r))) for r in records]
    df = Counter(w for bag in bags for w in bag)
    common = {w for w, n in df.items() if len(records) >= 3 and n > COMMON_SHARE * len(records)}
    bags = [bag - common for bag in bags]
    parent = list(range(len(records)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i in range(len(records)):
        for j in range(i + 1, len(records)):
            union = bags[i] | bags[j]
            if union and len(bags[i] & bags[j]) / len(union) >= MIN_JACCARD:
                parent[root(i)] = root(j)
    groups: dict[int, list[Any]] = {}
    for i, record in enumerate(records):
        groups.setdefault(root(i), []).append(record)
    return sorted(groups.values(), key=lambda g: (-len(g), min(r.id for r in g)))


def _words_of(cluster: list[Any], others: list[list[Any]]) -> list[str]:
    """The cluster's most telling words, readable: in most of its tasks, in few of the others'."""
    readable: dict[str, str] = {}
    for r in cluster:
        for raw in _RAW.findall(_text(r)):
            for stem in content_words(raw):
                readable.setdefault(stem, raw.lower())
    inside = Counter(w for r in cluster for w in set(content_words(_text(r))))
    outside = Counter(w for g in others for r in g for w in set(content_words(_text(r))))
    ranked = sorted(inside, key=lambda w: (-inside[w] / len(cluster) + outside[w] / max(1, sum(map(len, others))),
                                           -len(w), w))
    return [readable.get(w, w) for w in ranked if w in readable]


def _slug(words: list[str]) -> str:
    return "-".join(re.sub(r"[^a-z0-9]+", "-", w.lower()).strip("-") for w in words if w)[:40].strip("-")


def choice_for(cluster: list[Any], others: list[list[Any]], host: str, project: Path, taken: set[Path]) -> SkillChoice:
    """The new skill for ``cluster``: its name and description from its words and intents, at a path
    of ``host``'s project skill folder that holds no file and no other new skill."""
    words = _words_of(cluster, others)
    places = skills_of(host) or skills_of("claude-code")
    assert places is not None
    base = f"{PREFIX}-{_slug(words[:2]) or 'tasks'}"
    name, k = base, 2
    while (project / places.project[0] / name / "SKILL.md").exists() or project / places.project[0] / name / \
            "SKILL.md" in taken:
        name, k = f"{base}-{k}", k + 1
    intents = "; ".join(dict.fromkeys(" ".join(str(r.intent or r.prompt).split())[:120] for r in cluster))
    description = (f"What SkillOpt-Sleep learned from your recurring {', '.join(words[:3]) or 'tasks'} tasks in "
                   f"this project. Use it for tasks such as {intents}")
    description = re.sub(r"[<>]|:(?=\s)", "", description)[:1000]  # no XML, nothing YAML must quote
    return SkillChoice(project / places.project[0] / name / "SKILL.md", name, host, True, 0,
                       f"a new skill for {len(cluster)} recurring tasks no skill serves "
                       f"({', '.join(words[:3]) or 'one kind of work'})", description)


def split(project: Path, rest: list[Any], default: SkillChoice, min_tasks: int) -> tuple[list[tuple[SkillChoice, list]],
                                                                                         list[Any]]:
    """(new skills with their tasks, the tasks left to ``default``): see the module docstring. Nothing
    is split unless ``default`` is the managed skill the night would create."""
    if not default.managed or min_tasks < 1 or len(rest) < 2 * min_tasks:
        return [], rest
    found = clusters(rest)
    big = [c for c in found if len(c) >= min_tasks]
    if len(big) < 2:
        return [], rest
    taken: set[Path] = set()
    out = []
    for cluster in big:
        choice = choice_for(cluster, [c for c in found if c is not cluster], default.host, project, taken)
        taken.add(choice.path)
        out.append((choice, cluster))
    return out, [r for c in found if len(c) < min_tasks for r in c]
