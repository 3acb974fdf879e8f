"""The measurements behind the miner's method: each ingredient switched on in turn.

On the tests' hand-labelled corpus (tests/sleep/mine_corpus.py) and on a synthetic
set (bench/mine_synth.py), it scores with bench/mine.py's ``score``:

A. baseline: scikit-learn TF-IDF (word 1-2 grams + character 3-5 grams) of the raw
   prompt and agglomerative clustering, average linkage on cosine (the plain
   approach the issue warns about), at several thresholds;
B. our text features (placeholders for names, synonyms, typo mapping, stems) with
   our average linkage, words only;
C. B plus what the turns did (action cosine blended in, disjoint programs veto);
D. C plus the contrast check (different actions *and* different words);
E. D plus stated arguments (sleep.mine.guard: opposites, typed directories, flags) = the miner.

Usage: ``python bench/mine_methods.py [--synth 10000]``. Prints one table.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO / "tests" / "sleep"))

import mine_corpus  # noqa: E402
import mine_synth  # noqa: E402
from mine import score  # noqa: E402

from sleep.mine import cluster as cl  # noqa: E402
from sleep.mine import group  # noqa: E402
from sleep.mine.select import PoolItem, extract  # noqa: E402


def _pools(sessions) -> list[list[PoolItem]]:
    by: dict[str, list[PoolItem]] = defaultdict(list)
    for s in sessions:
        by[s.project_dir or ""] += extract(s)[0]
    return list(by.values())


def _tasks(pools, labels_of) -> list[list[tuple]]:
    tasks = []
    for items in pools:
        labels, cohesion = labels_of(items)
        groups: dict[int, list[PoolItem]] = defaultdict(list)
        for it, lab in zip(items, labels):
            groups[int(lab)].append(it)
        for lab, g in groups.items():
            support = len({(i.host, i.session_id) for i in g})
            if support >= 2 and (support > 2 or cohesion.get(lab, 1.0) >= cl.ClusterParams().pair_threshold):
                tasks.append([it.key for it in g])
    return tasks


def baseline(similarity: float):
    from sklearn.cluster import AgglomerativeClustering
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.pipeline import make_union
    from sklearn.preprocessing import normalize

    def labels_of(items):
        if len(items) < 2:
            return np.zeros(len(items)), {}
        vec = make_union(TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True),
                         TfidfVectorizer(analyzer="char_wb", ngram_range=(3, 5), sublinear_tf=True))
        x = normalize(vec.fit_transform([it.text.lower() for it in items]))
        distance = np.clip(1.0 - (x @ x.T).toarray(), 0.0, None)
        model = AgglomerativeClustering(n_clusters=None, metric="precomputed", linkage="average",
                                        distance_threshold=1 - similarity)
        return model.fit_predict(distance), {}
    return labels_of


def ours(params: cl.ClusterParams, contrast: bool):
    def labels_of(items):
        original = group.Contrast
        if not contrast:
            group.Contrast = lambda f, p: None  # type: ignore[assignment,misc]
        try:
            groups, _ = group.cluster_pool(items, params)
        finally:
            group.Contrast = original
        out = np.zeros(len(items), dtype=np.int64)
        for n, g in enumerate(groups):
            out[g.rows] = n
        return out, {n: g.cohesion for n, g in enumerate(groups)}
    return labels_of


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--synth", type=int, default=10000, help="prompts in the synthetic set (default 10000)")
    args = ap.parse_args()
    corpus = mine_corpus.build()
    synth = mine_synth.generate(args.synth)
    sets = [("corpus", _pools(corpus.sessions), corpus.labels, corpus.near_miss_pairs),
            (f"synth {args.synth // 1000}k", _pools(synth.sessions), synth.labels, synth.near_miss_pairs)]
    unguarded = cl.ClusterParams(guard=False)
    words_only = cl.ClusterParams(action_weight=0.0, veto=False, guard=False)
    methods = [(f"A. baseline TF-IDF+agglomerative, sim {s}", baseline(s)) for s in (0.3, 0.4, 0.5)]
    methods += [("B. our words, our linkage", ours(words_only, False)),
                ("C. B + actions (blend, veto)", ours(unguarded, False)),
                ("D. C + contrast", ours(unguarded, True)),
                ("E. D + stated arguments (the miner)", ours(cl.ClusterParams(), True))]
    head = f"{'method':<44}" + "".join(f" | {name:^30}" for name, *_ in sets)
    print(head)
    print(f"{'':<44}" + " | recall prec.  near-miss  secs" * len(sets))
    print("-" * len(head))
    for name, fn in methods:
        cells = []
        for _, pools, labels, pairs in sets:
            t = time.perf_counter()
            r = score(_tasks(pools, fn), labels, pairs)
            cells.append(f" | {r['recall']:>6.3f} {r['precision']:>5.3f} {r['near_miss_merges']:>4}/{r['near_miss_pairs']:<4}"
                         f" {time.perf_counter() - t:>5.1f}")
        print(f"{name:<44}" + "".join(cells), flush=True)


if __name__ == "__main__":
    main()
