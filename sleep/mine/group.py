"""One project's pool of task candidates -> groups, with existing tasks kept whole.

The glue between the pool (sleep.mine.select.PoolItem) and the method
(sleep.mine.features, sleep.mine.cluster): build features, collapse identical
prompts, find candidates, link, and report each group with its medoid and how
far its loosest member sits from the medoid (used to pick groups worth a
second opinion from the optimizer).
"""

from __future__ import annotations

import logging
from collections import defaultdict
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from sleep.mine import cluster as cl
from sleep.mine import guard
from sleep.mine.contrast import Contrast
from sleep.mine.features import FeatureParams, Features, featurize
from sleep.mine.linkage import link
from sleep.mine.select import PoolItem

if TYPE_CHECKING:
    from sleep.mine.embed import Embedder

log = logging.getLogger("sleep.mine")


@dataclass
class Group:
    rows: list[int]  # indices into the pool
    medoid: int  # a pool index
    loosest: float  # the lowest score of a member to the medoid (1.0 for one member)
    cohesion: float  # the mean score of the other members to the medoid (1.0 for one member)


def cluster_pool(pool: list[PoolItem], params: cl.ClusterParams = cl.ClusterParams(),
                 fparams: FeatureParams = FeatureParams(),
                 embedder: Embedder | None = None) -> tuple[list[Group], Features]:
    """Group the pool; items with a ``task_id`` stay with their task (one group per task).
    With an ``embedder`` (sleep.mine.embed), its sentence vectors join the text cosine."""
    if not pool:
        return [], featurize([], [])
    texts = [it.text for it in pool]
    vectors = None
    if embedder is not None and len(pool) > embedder.max_pool:
        log.warning("mine: a pool of %d prompts is compared by words only (the %s embedder takes pools of "
                    "up to %d)", len(pool), embedder.name, embedder.max_pool)
        embedder = None
    if embedder is not None:
        vectors = embedder.centred(texts)
        fparams = replace(fparams, embed_weight=embedder.weight)
        if embedder.threshold is not None:
            params = replace(params, threshold=embedder.threshold)
        if embedder.action_candidates is not None:
            params = replace(params, action_candidates=embedder.action_candidates)
    f = featurize(texts, [(it.shell, it.files, it.tools, it.skills) for it in pool], fparams, vectors)
    if params.guard:
        f.guard = guard.build(texts, [it.files for it in pool] if params.guard_files else None,
                              swaps=params.guard_swaps, identifiers=fparams.ident_names)
    tasks = sorted({it.task_id for it in pool if it.task_id})
    task_no = {t: k for k, t in enumerate(tasks)}
    fixed_rows = np.array([task_no.get(it.task_id, -1) if it.task_id else -1 for it in pool], dtype=np.int64)
    node_of, firsts = cl.collapse(f, extra=[it.task_id or "" for it in pool])
    weight = np.bincount(node_of).astype(np.float64)
    nf = f.rows(firsts)
    fixed = fixed_rows[firsts]
    pm = cl.program_matrix(nf.programs)
    i, j, sim = cl.candidates(nf.text, params.k, params.min_text, params.product_budget)
    if params.words_floor and nf.words is not None:  # the words' own neighbours (the floor needs them)
        wi, wj, _ = cl.candidates(nf.words, params.k, params.min_text, params.product_budget)
        i, j, sim = cl.union_pairs(nf.text, (i, j, sim), (wi, wj))
    if params.action_candidates > 0:
        ai, aj, _ = cl.candidates(nf.actions, params.k, params.action_candidates, params.product_budget)
        if params.action_unambiguous:
            ai, aj = cl.action_only_pairs(nf, (i, j, sim), (ai, aj), params)
        if params.action_words_against >= 0 and ai.size:  # ... unless the words speak against the link
            keep = ~cl.words_against(nf, ai, aj, params, cl.established_words(f, texts, params))
            ai, aj = ai[keep], aj[keep]
        if params.action_all_tokens and nf.actions_all is not None and ai.size:
            # ... and only turns that did the same counting what one of them alone did (another file)
            keep = cl.rowwise_dot(nf.actions_all, ai, aj) >= params.action_candidates
            ai, aj = ai[keep], aj[keep]
        i, j, sim = cl.union_pairs(nf.text, (i, j, sim), (ai, aj))
    g = cl.Graph(i, j, cl.score_pairs(nf, i, j, params, sim, pm))

    def score(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return cl.score_pairs(nf, a, b, params, None, pm)

    labels = link(weight, g, fixed, params, score, nf, Contrast(nf, params))
    by_label: dict[int, list[int]] = defaultdict(list)
    for row, node in enumerate(node_of.tolist()):
        by_label[int(labels[node])].append(row)
    groups = []
    for rows in by_label.values():
        nodes = np.unique(node_of[rows])
        med_node = cl.medoid(nodes, weight[nodes], params, score)
        med_row = int(firsts[med_node])
        loosest = cohesion = 1.0
        if nodes.size > 1:
            others = nodes[nodes != med_node]
            to_medoid = score(np.full(others.size, med_node), others)
            loosest = float(to_medoid.min())
            w_self = weight[med_node] - 1
            cohesion = float((to_medoid @ weight[others] + w_self) / (weight[others].sum() + w_self))
        groups.append(Group(sorted(rows), med_row, loosest, cohesion))
    groups.sort(key=lambda gr: gr.rows[0])
    return groups, f
