"""The miner on the hand-labelled sets, beside the baseline (issue 23 §4).

Sets: tests/sleep/mine_paraphrase.py (issue 31 §4: ``para``, 51 tasks worded differently, in
five languages, path-only arguments, 13 near-miss pairs, tune/held split; ``para1``, its first
round alone: 35 tasks, 9 pairs, the figures of the round before; ``para3``, the third round,
written after the miner's round-3 changes and before any run on it: 12 tasks, 4 pairs, two new
projects; ``para4``, the fourth round, written before round 4's changes and any run on it: 16
tasks, 4 pairs, three new projects), tests/sleep/mine_hard.py
(32 tasks in paraphrase, 12 one-argument near-miss pairs, tune/held split) and
tests/sleep/mine_corpus.py (the earlier, easier set).
Methods: ``mine`` (default options); ``previous`` (the first round of issue 23: the
alternatives rule, but merge threshold 0.40, the names of typed paths dropped and no
word typed once paired with an argument); and ``baseline`` (``previous`` without the
alternatives veto of sleep.mine.alternatives, i.e. the method before issue 23); ``e5``
(issue 31 §4: ``mine`` with the ``embed`` extra's sentence vectors, sleep.mine.embed; listed
as not installed without it); ``lex-r30`` and ``e5-r30``: the two as they were before the
argument guard (sleep.mine.guard); ``lex-r31`` and ``e5-r31``: the two before the third round
(function-word swaps, the typed directories of edited files and identifier words as arguments),
i.e. the figures before round 3; ``lex-r32`` and ``e5-r32``: the two before round 4 (no
words floor, no candidates from the actions; e5 at threshold 0.32), which reproduce on the held
halves the figures round 4 started from; ``lex-act``: round 4's words with e5's candidates from the
actions, without round 5's checks (on the synthetic homes it joins one-offs that ran the same
command); ``lex-r33`` and ``e5-r33``: the two defaults before round 5 (words without candidates
from the actions; e5 without the words-against and all-tokens checks).
Round 3's ``e5-act`` (threshold 0.34, action candidates 0.9) is e5's default since round 4; since
round 5 the words take candidates from the actions too (docs/sleep-mine.md). bench/mine_embed.py
compares more methods and weights.
Definitions of recall, precision and near-miss merges: tests/sleep/mine_score.py.
Targets: recall >= 0.85, precision >= 0.85, at most 2 near-miss merges (hard set, issue 23);
recall >= 0.90, precision >= 0.90, at most 2 near-miss merges on the held-out half of the
paraphrase set (issue 31).

Usage: ``python bench/mine_labelled.py [SET ...] [METHOD ...]`` (default: every set and method).

Figures (recall / precision / near-miss merges, held halves; round 5's start (``lex-r33``, ``e5-r33``)
-> now (``mine``, ``e5``)):
paraphrase 24: words 0.292 / 0.615 / 1 -> 0.625 / 0.750 / 1, e5 0.750 / 0.826 / 2 (unchanged);
round 3's 6: words 0.000 / 0.400 / 1 -> 0.333 / 0.400 / 1, e5 0.500 / 0.500 / 2 (unchanged);
round 4's 8: words 0.125 / 0.500 / 0 -> 0.625 / 0.833 / 0, e5 0.750 / 0.857 / 0 (unchanged);
hard 18: words 0.944 / 1.000 / 1 -> 1.000 / 1.000 / 1, e5 1.000 / 1.000 / 1 (unchanged). Targets not met.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tests" / "sleep")]


# The miner before issue 31 §4's third round (no function-word swaps, no edited files' directories,
# no identifier words): "today's" figures beside the new ones.
_R31 = ({"guard_swaps": False, "guard_files": False, "action_candidates": 0.0}, {"ident_names": False})
# The miner before issue 31 §4's fourth round: "before" beside the new figures.
_R32 = {"words_floor": False, "action_candidates": 0.0}
METHODS = {  # name -> (ClusterParams overrides, FeatureParams overrides, embedder)
    "baseline": ({"alternatives": False, "threshold": 0.40, "action_candidates": 0.0},
                 {"alternatives": False, "path_names": False, "once_fillers": False}, None),
    "previous": ({"threshold": 0.40, "action_candidates": 0.0}, {"path_names": False, "once_fillers": False}, None),
    "lex-r30": ({"guard": False, "action_candidates": 0.0}, {}, None),
    "lex-r31": (_R31[0], _R31[1], None),
    "mine": ({}, {}, None),
    "e5-r30": ({"guard": False}, {}, "e5"),
    "e5-r31": (_R31[0], _R31[1], "e5"),
    "e5": ({}, {}, "e5"),
    "lex-r32": (_R32, {}, None),
    # Round 4's variant: the words with e5's action candidates, without round 5's two checks.
    "lex-act": ({"action_candidates": 0.9, "action_words_against": -1, "action_all_tokens": False}, {}, None),
    "lex-r33": ({"action_candidates": 0.0}, {}, None),  # the words-only default before round 5
    "e5-r33": ({"action_words_against": -1, "action_all_tokens": False}, {}, "e5"),  # e5 before round 5
    "e5-r32": (_R32, {}, "e5"),  # also its threshold 0.32 and no action candidates (round 3's e5)
}
_EMBEDDERS: dict = {}


def run(corpus, split, method: str) -> dict | None:
    import mine_score
    from sleep.mine import embed
    from sleep.mine.cluster import ClusterParams
    from sleep.mine.features import FeatureParams
    from sleep.mine.miner import MineOptions

    cluster, features, backend = METHODS[method]
    emb = None
    if backend:
        if not embed.available(backend):
            return None
        emb = _EMBEDDERS.setdefault(backend, embed.load(backend))
        # Before round 4 the embedder merged at 0.32 with candidates from the words alone.
        before = method.endswith(("-r30", "-r31", "-r32"))
        emb.threshold = 0.32 if before else embed.THRESHOLD[backend]
        emb.action_candidates = 0.0 if before else embed.ACTION_CANDIDATES[backend]
    opts = MineOptions(params=ClusterParams(**cluster), features=FeatureParams(**features), embedder=emb)
    with tempfile.TemporaryDirectory() as home:
        os.environ["SKILLOPT_HOME"] = home
        tasks = mine_score.mine_home(corpus.sessions, opts)
    return mine_score.score(tasks, corpus.labels, corpus.near_miss_pairs, split)


def main(only: set[str] = frozenset()) -> None:
    import mine_corpus
    import mine_hard
    import mine_paraphrase

    para, para_split = mine_paraphrase.build()
    para1, para1_split = mine_paraphrase.build(extended=False)
    para3, para3_split = mine_paraphrase.build_round3()
    para4, para4_split = mine_paraphrase.build_round4()
    hard, split = mine_hard.build()
    easy = mine_corpus.build()
    easy_split = {label: "held" for label in easy.clusters()}
    print(f"{'set':<6} {'part':<5} {'method':<9} {'recall':>7} {'prec.':>6} {'merges':>7} {'tasks':>6} {'labelled':>9}")
    for name, corpus, sp in (("para", para, para_split), ("para1", para1, para1_split),
                             ("para3", para3, para3_split), ("para4", para4, para4_split),
                             ("hard", hard, split),
                             ("easy", easy, easy_split)):
        if only & {"para", "para1", "para3", "para4", "hard", "easy"} and name not in only:
            continue
        rows = {method: run(corpus, sp, method) for method in METHODS if not only & set(METHODS) or method in only}
        for part in (("all", "tune", "held") if name != "easy" else ("all",)):
            for method, r in rows.items():
                if r is None:
                    print(f"{name:<6} {part:<5} {method:<9} not installed (pip install 'skillopt[embed]')")
                    continue
                f = r[part]
                print(f"{name:<6} {part:<5} {method:<9} {f['recall']:>7.3f} {f['precision']:>6.3f} "
                      f"{f['near_miss_merges']:>3}/{f['near_miss_pairs']:<3} {f['mined']:>6} {f['labelled']:>9}")
    print("targets: recall >= 0.85, precision >= 0.85, near-miss merges <= 2 (hard set, all); "
          "recall >= 0.90, precision >= 0.90, near-miss merges <= 2 (para set, held)")


if __name__ == "__main__":
    only = set(sys.argv[1:])  # optional: the sets and methods to run (e.g. para4 mine e5)
    main(only)
