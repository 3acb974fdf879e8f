"""Why the miner misses or merges labelled tasks: one line of diagnosis per miss (issue 31 §4).

For each project of a labelled set, the pool is grouped the way the miner does
(sleep.mine.group.cluster_pool) and, for every labelled task of the chosen half that is not
found, and every near-miss pair that shares a group, prints the groups its prompts fell in
and, for each pair of its prompts, the text cosine, the final pair score and what zeroed it
(the argument guard, the distinct-programs veto, the one-argument rule).

Usage: ``python bench/mine_misses.py [--set para|para3|para4|hard] [--part held|tune|all] [--method lexical|e5]``
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter, defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tests" / "sleep")]


def main() -> None:
    from dataclasses import replace

    import numpy as np

    import mine_hard
    import mine_paraphrase
    from sleep.mine import embed
    from sleep.mine import cluster as cl
    from sleep.mine.cluster import ClusterParams
    from sleep.mine.group import cluster_pool
    from sleep.mine.select import extract

    ap = argparse.ArgumentParser()
    ap.add_argument("--set", default="para", choices=("para", "para3", "para4", "hard"))
    ap.add_argument("--part", default="held", choices=("held", "tune", "all"))
    ap.add_argument("--method", default="lexical", choices=("lexical", "e5"))
    ap.add_argument("--set-param", action="append", default=[], metavar="NAME=VALUE",
                    help="a ClusterParams field (e.g. action_candidates=0.3)")
    args = ap.parse_args()
    corpus, split = {"para": mine_paraphrase.build, "para3": mine_paraphrase.build_round3,
                     "para4": mine_paraphrase.build_round4,
                     "hard": mine_hard.build}[args.set]()
    emb = embed.load("e5") if args.method == "e5" else None
    def value(k: str, v: str):
        kind = type(getattr(ClusterParams, k))
        return v.lower() in ("1", "true", "yes") if kind is bool else kind(v)
    params = ClusterParams(**{k: value(k, v) for k, v in (a.split("=", 1) for a in args.set_param)})
    pools: dict[str, list] = defaultdict(list)
    for s in corpus.sessions:
        items, _ = extract(s)
        pools[s.project_dir or ""].extend(items)
    want = {lab for lab, side in split.items() if args.part in ("all", side)}
    for project, pool in sorted(pools.items()):
        groups, f = cluster_pool(pool, params, embedder=emb)
        p = params if emb is None or emb.threshold is None else replace(params, threshold=emb.threshold)
        if emb is not None:  # the features cluster_pool used, for the pair scores below
            from sleep.mine import guard
            from sleep.mine.features import FeatureParams, featurize
            f = featurize([it.text for it in pool], [(it.shell, it.files, it.tools, it.skills) for it in pool],
                          replace(FeatureParams(), embed_weight=emb.weight), emb.centred([it.text for it in pool]))
            f.guard = guard.build([it.text for it in pool], [it.files for it in pool])
        lab = [corpus.labels.get(it.key, "?") for it in pool]
        group_of = {r: gi for gi, g in enumerate(groups) for r in g.rows}
        comp = {gi: Counter(lab[r] for r in g.rows) for gi, g in enumerate(groups)}
        tasks = sorted({x for x in lab if x in want})
        pm = cl.program_matrix(f.programs)

        def why(a: int, b: int) -> str:
            i, j = np.array([a]), np.array([b])
            t = float(cl.rowwise_dot(f.text, i, j)[0])
            s = float(cl.score_pairs(f, i, j, p, None, pm)[0])
            notes = []
            if f.guard is not None and f.guard.conflict(i, j)[0]:
                notes.append("guard")
            if f.alts is not None and f.alts.nnz and cl.rowwise_dot(f.alts_over_terms, i, j + f.alts.shape[0])[0] > 0:
                notes.append("alt")
            if f.programs[a] and f.programs[b] and not (f.programs[a] & f.programs[b]) and t < p.veto_unless_text:
                notes.append("veto")
            return f"text {t:.2f} score {s:.2f}{' [' + ','.join(notes) + ']' if notes else ''}"

        for task in tasks:
            rows = [r for r, x in enumerate(lab) if x == task]
            gs = Counter(group_of[r] for r in rows)
            gi, top = gs.most_common(1)[0]
            pure = comp[gi][task] / sum(comp[gi].values())
            found = top * 2 >= len(rows) and pure >= 0.8 and sum(comp[gi].values()) >= 2
            if found:
                continue
            print(f"\nMISSED {task} ({split[task]}): {len(rows)} prompts in groups "
                  + "; ".join(f"g{g}={dict(comp[g])}" for g in gs))
            for x in rows:
                print(f"   g{group_of[x]:<3} {pool[x].text[:70]!r} sh={pool[x].shell} files={pool[x].files}")
            for ai, a in enumerate(rows):
                for b in rows[ai + 1:]:
                    print(f"     {rows.index(a)}-{rows.index(b)}: {why(a, b)}")
        for pair in sorted(corpus.near_miss_pairs, key=sorted):
            x, y = sorted(pair)
            if x not in tasks:
                continue
            for gi, c in comp.items():
                if c[x] and c[y]:
                    tot = sum(c.values())
                    print(f"\nMERGED {x} + {y} ({split[x]}) in g{gi}: {dict(c)}"
                          f"{'' if min(c[x], c[y]) / tot >= 0.1 else ' (below the 10% rule)'}")
                    for r in groups[gi].rows:
                        print(f"   {lab[r]:<24} {pool[r].text[:70]!r}")
                    rx = [r for r in groups[gi].rows if lab[r] == x]
                    ry = [r for r in groups[gi].rows if lab[r] == y]
                    for a in rx:
                        for b in ry:
                            print(f"     {pool[a].text[:30]!r} ~ {pool[b].text[:30]!r}: {why(a, b)}")


if __name__ == "__main__":
    main()
