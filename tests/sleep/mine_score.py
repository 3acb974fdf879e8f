"""Scoring a mining run against a hand-labelled set (tests/sleep/mine_hard.py).

The same definitions as bench/mine.py, so the figures compare:

- *recall*: share of labelled recurring tasks found: one mined task holds at least
  half of that task's prompts and at least 80 % of its own members are from it;
- *precision*: share of mined tasks that are such a pure labelled task;
- *near-miss merges*: labelled near-miss pairs that share a mined task where each
  side has at least 10 % of its members.

Each figure is also given per split ("tune", "held"): recall over that split's tasks,
precision over the mined tasks whose majority label is in that split (mined tasks of
no labelled task count against both), merges of that split's pairs.

:func:`mine_home` stores the sessions in the index under the current ``SKILLOPT_HOME``
and runs the real miner (``sleep.mine.mine``, default options) over every project.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from sleep.index import Index
from sleep.mine.miner import MineOptions, mine

Key = tuple[str, str, int]


def mine_home(sessions: list, opts: MineOptions | None = None) -> list[list[Key]]:
    """Store ``sessions``, mine them, and return the members of every task found."""
    with Index.open() as index:
        with index.transaction():
            for s in sessions:
                index.put_session(s)
    mine(opts or MineOptions())
    out: dict[str, list[Key]] = defaultdict(list)
    with Index.open() as index:
        for tid, host, sid, idx in index.conn.execute(
                "SELECT task_id, host, session_id, prompt_index FROM task_members"):
            out[tid].append((host, sid, int(idx)))
    return [sorted(v) for _, v in sorted(out.items())]


def score(tasks: list[list[Key]], labels: dict[Key, str], near_pairs: set[frozenset[str]],
          split: dict[str, str]) -> dict[str, Any]:
    planted: dict[str, set[Key]] = defaultdict(set)
    for key, label in labels.items():
        if not label.startswith(("noise:", "oneoff:")):
            planted[label].add(key)
    found: set[str] = set()
    merges: set[frozenset[str]] = set()
    pure: Counter[str] = Counter()
    mined: Counter[str] = Counter()
    for members in tasks:
        counts = Counter(labels.get(k, "?") for k in members)
        label, top = counts.most_common(1)[0]
        side = split.get(label)
        for s in ([side] if side else ["tune", "held"]):
            mined[s] += 1
        if label in planted and top / len(members) >= 0.8:
            pure[side] += 1
            if top / len(planted[label]) >= 0.5:
                found.add(label)
        for pair in near_pairs:
            a, b = tuple(pair)
            if counts[a] and counts[b] and min(counts[a], counts[b]) / len(members) >= 0.1:
                merges.add(pair)

    def figures(sides: set[str]) -> dict[str, Any]:
        wanted = {lab for lab in planted if split[lab] in sides}
        n_mined = len(tasks) if sides == {"tune", "held"} else sum(mined[s] for s in sides)
        return {"recall": round(len(found & wanted) / max(1, len(wanted)), 3),
                "precision": round(sum(pure[s] for s in sides) / max(1, n_mined), 3),
                "near_miss_merges": sum(1 for p in merges if split[next(iter(p))] in sides),
                "near_miss_pairs": sum(1 for p in near_pairs if split[next(iter(p))] in sides),
                "labelled": len(wanted), "mined": n_mined,
                "missed": sorted(wanted - found),
                "merged": sorted("+".join(sorted(p)) for p in merges if split[next(iter(p))] in sides)}

    return {"all": figures({"tune", "held"}), "tune": figures({"tune"}), "held": figures({"held"})}
