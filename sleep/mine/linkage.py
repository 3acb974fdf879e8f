"""Average linkage over the candidate graph (see sleep.mine.cluster for the pieces).

Clusters that are each other's best neighbour merge in rounds when the mean score
over all their member pairs reaches the threshold; existing tasks never merge
with each other; a contrast check (sleep.mine.contrast) can refuse a merge; big
clusters are proposed to each other through their centroids; finally a node
that sits clearly better in a neighbouring cluster moves there.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp
from sklearn.preprocessing import normalize as sk_normalize

from sleep.mine.alternatives import split_by_alternatives
from sleep.mine.cluster import ClusterParams, Graph, candidates, rowwise_dot_pairs
from sleep.mine.features import Features

if TYPE_CHECKING:
    from sleep.mine.contrast import Contrast
    from sleep.mine.guard import Guard


class _Members:
    """Nodes of each cluster label, for exact (or evenly sampled) linkage checks."""

    def __init__(self, labels: np.ndarray, sample: int) -> None:
        order = np.argsort(labels, kind="stable")
        self.order = order
        sorted_labels = labels[order]
        self.start = np.searchsorted(sorted_labels, np.arange(labels.size), side="left")
        self.stop = np.searchsorted(sorted_labels, np.arange(labels.size), side="right")
        self.sample = sample

    def of(self, label: int) -> np.ndarray:
        nodes = self.order[self.start[label]:self.stop[label]]
        if nodes.size > self.sample:
            nodes = nodes[np.linspace(0, nodes.size - 1, self.sample).astype(np.int64)]
        return nodes


def _exact_means(a: np.ndarray, b: np.ndarray, labels: np.ndarray, weight: np.ndarray,
                 score: Callable[[np.ndarray, np.ndarray], np.ndarray], sample: int) -> np.ndarray:
    """Mean pair score between clusters a[k] and b[k] over all (or sampled) member pairs."""
    members = _Members(labels, sample)
    pi, pj, owner = [], [], []
    for k, (x, y) in enumerate(zip(a.tolist(), b.tolist())):
        ma, mb = members.of(x), members.of(y)
        pi.append(np.repeat(ma, mb.size))
        pj.append(np.tile(mb, ma.size))
        owner.append(np.full(ma.size * mb.size, k, dtype=np.int64))
    i, j, o = np.concatenate(pi), np.concatenate(pj), np.concatenate(owner)
    s = score(i, j)
    w = weight[i] * weight[j]
    return np.bincount(o, weights=s * w, minlength=a.size) / np.bincount(o, weights=w, minlength=a.size)


class _Linkage:
    """The state of one average-linkage run (see :func:`link`)."""

    def __init__(self, weight: np.ndarray, g: Graph, fixed: np.ndarray, p: ClusterParams,
                 score: Callable[[np.ndarray, np.ndarray], np.ndarray], contrast: Contrast | None,
                 guard: Guard | None = None) -> None:
        n = weight.size
        self.guard = guard if guard is not None and guard.against.nnz else None
        self.n, self.p, self.score, self.weight = n, p, score, weight.astype(np.float64)
        self.contrast = contrast
        self.labels = np.arange(n, dtype=np.int64)
        for t in np.unique(fixed[fixed >= 0]):
            members = np.flatnonzero(fixed == t)
            self.labels[members] = members[0]
        self.task = np.full(n, -1, dtype=np.int64)
        self.task[self.labels[fixed >= 0]] = fixed[fixed >= 0]
        self.size = np.bincount(self.labels, weights=self.weight, minlength=n)
        pair_w = self.weight[g.i] * self.weight[g.j]
        self.a, self.b = self.labels[g.i], self.labels[g.j]
        self.ssum, self.cnt = g.score.astype(np.float64) * pair_w, pair_w
        self.blocked: set[int] = set()

    def _contract(self) -> None:
        keep = self.a != self.b
        a, b = self.a[keep], self.b[keep]
        lo, hi = np.minimum(a, b), np.maximum(a, b)
        uk, inv = np.unique(lo * self.n + hi, return_inverse=True)
        self.a, self.b = uk // self.n, uk % self.n
        self.ssum = np.bincount(inv, weights=self.ssum[keep], minlength=uk.size)
        self.cnt = np.bincount(inv, weights=self.cnt[keep], minlength=uk.size)

    def rounds(self) -> int:
        """Merge mutual best neighbours until none passes; returns the number of merges."""
        n, p, merges = self.n, self.p, 0
        while True:
            self._contract()
            if self.a.size == 0:
                return merges
            a, b = self.a, self.b
            keys = a * n + b
            mean = self.ssum / self.cnt
            ok = (mean >= p.threshold) & ~((self.task[a] >= 0) & (self.task[b] >= 0))
            if self.blocked:
                ok &= ~np.isin(keys, np.fromiter(self.blocked, dtype=np.int64))
            if not ok.any():
                return merges
            ca, cb, cm, ck, cc = a[ok], b[ok], mean[ok], keys[ok], self.cnt[ok]
            best = np.full(n, -1, dtype=np.int64)
            ends, others = np.concatenate([ca, cb]), np.concatenate([cb, ca])
            order = np.lexsort((others, -np.concatenate([cm, cm]), ends))
            ends, others = ends[order], others[order]
            first = np.r_[True, ends[1:] != ends[:-1]]
            best[ends[first]] = others[first]
            mutual = (best[ca] == cb) & (best[cb] == ca)
            ma, mb, mk = ca[mutual], cb[mutual], ck[mutual]
            cross = cm[mutual].copy()
            # A pair whose every member pair was scored needs no second look.
            check = cc[mutual] < self.size[ma] * self.size[mb] - 1e-9
            if check.any():
                cross[check] = _exact_means(ma[check], mb[check], self.labels, self.weight, self.score,
                                            p.medoid_sample)
            passed = cross >= p.threshold
            if self.contrast is not None:
                big = np.flatnonzero(passed & (self.size[ma] >= p.contrast_min) & (self.size[mb] >= p.contrast_min))
                if big.size:
                    passed[big] &= ~self.contrast.differ(ma[big], mb[big], self.labels, self.weight)
                some = np.flatnonzero(passed) if p.alt_block else np.zeros(0, dtype=np.int64)
                if some.size:
                    passed[some] &= ~self.contrast.one_argument_apart(ma[some], mb[some], self.labels, self.weight)
            if self.guard is not None and passed.any():
                some = np.flatnonzero(passed)
                passed[some] &= ~self._conflicting(ma[some], mb[some])
            self.blocked.update(mk[~passed].tolist())
            ma, mb = ma[passed], mb[passed]
            if ma.size == 0:
                continue
            parent = np.arange(n, dtype=np.int64)
            parent[mb] = ma
            self.task[ma] = np.where(self.task[ma] >= 0, self.task[ma], self.task[mb])
            self.size[ma] += self.size[mb]
            self.labels = parent[self.labels]
            self.a, self.b = parent[self.a], parent[self.b]
            merges += ma.size
            if self.blocked:
                changed = set(ma.tolist()) | set(mb.tolist())
                self.blocked = {k for k in self.blocked if k // n not in changed and k % n not in changed}

    def _conflicting(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """A bool per pair of cluster labels: some member of one states an argument that a
        member of the other states differently (sleep.mine.guard): two tasks at any size."""
        assert self.guard is not None
        clusters = np.unique(np.concatenate([a, b]))
        col = np.full(self.n, -1, dtype=np.int64)
        col[clusters] = np.arange(clusters.size)
        rows = np.flatnonzero(col[self.labels] >= 0)
        member = sp.csr_matrix((np.ones(rows.size, dtype=np.float32), (col[self.labels[rows]], rows)),
                               shape=(clusters.size, self.n))
        against, claims = (member @ self.guard.against).tocsr(), (member @ self.guard.claims).tocsr()
        return rowwise_dot_pairs(against, claims, col[a], col[b]) > 0

    def add_centroid_edges(self, text: sp.csr_matrix) -> int:
        """Propose pairs of multi-node clusters whose centroids are close but that no
        node-level edge joins (a cluster bigger than ``k`` can hide its other half from
        each node's neighbour list). Returns how many pairs were added."""
        labels, n, p = self.labels, self.n, self.p
        counts = np.bincount(labels, minlength=n)
        multi = np.flatnonzero(counts >= 2)
        if multi.size < 2:
            return 0
        col = np.full(n, -1, dtype=np.int64)
        col[multi] = np.arange(multi.size)
        rows = np.flatnonzero(col[labels] >= 0)
        member = sp.csr_matrix((self.weight[rows], (col[labels[rows]], rows)), shape=(multi.size, n))
        cent = sk_normalize(member @ text)
        ci, cj, _ = candidates(sp.csr_matrix(cent), p.centroid_k, p.min_text, p.product_budget)
        if ci.size == 0:
            return 0
        a, b = multi[ci], multi[cj]
        known = set((np.minimum(self.a, self.b) * n + np.maximum(self.a, self.b)).tolist())
        new = np.array([k not in known for k in (a * n + b).tolist()], dtype=bool)
        a, b = a[new], b[new]
        if a.size == 0:
            return 0
        est = _exact_means(a, b, labels, self.weight, self.score, p.centroid_sample)
        full = self.size[a] * self.size[b]
        self.a, self.b = np.concatenate([self.a, a]), np.concatenate([self.b, b])
        # Counted as not fully seen, so a proposed merge is checked on a larger sample.
        self.ssum = np.concatenate([self.ssum, est * full * 0.999])
        self.cnt = np.concatenate([self.cnt, full * 0.999])
        return int(a.size)


def link(weight: np.ndarray, g: Graph, fixed: np.ndarray, p: ClusterParams,
         score: Callable[[np.ndarray, np.ndarray], np.ndarray], features: Features,
         contrast: Contrast | None = None) -> np.ndarray:
    """Average linkage over the candidate graph; returns a cluster label per node.

    ``weight``: how many prompts each node stands for. ``fixed``: an existing task
    number per node (-1 for none); nodes of one task start as one cluster, and two
    clusters holding different tasks never merge. Candidate edges propose merges
    (each cluster's best neighbour by the mean of its scored edges); a merge happens
    when the two clusters are each other's best and the mean score over *all* their
    member pairs (``score(i, j)``, evenly sampled for big clusters) reaches the
    threshold, as in classic average linkage, and ``contrast`` (if given) finds no
    consistent difference between them. After the rounds settle, clusters
    whose text centroids are close are proposed to each other too, and rounds run
    again (at most ``p.refreshes`` times).
    """
    state = _Linkage(weight, g, fixed, p, score, contrast, features.guard if p.guard else None)
    state.rounds()
    for _ in range(p.refreshes):
        if not state.add_centroid_edges(features.text) or not state.rounds():
            break
    labels = state.labels
    if contrast is not None:
        labels = contrast.split(labels, features, weight, fixed)
    if p.alternatives and p.alt_split and features.alt is not None:
        labels = split_by_alternatives(labels, features.terms, features.text, features.alt, weight, fixed,
                                       p.alt_min_side)
    return reassign(labels, g, weight, fixed, features, p)


def reassign(labels: np.ndarray, g: Graph, weight: np.ndarray, fixed: np.ndarray, f: Features,
             p: ClusterParams) -> np.ndarray:
    """Move a node to a neighbouring cluster it scores clearly better with than with its
    own, so that merges made before a node's true cluster had formed are undone. The
    mean score to a cluster is taken against the cluster's mean text and action vectors
    (the own cluster without the node itself). Members of existing tasks never move."""
    labels = labels.copy()
    w = weight.astype(np.float64)
    n = labels.size
    aw = p.action_weight
    for _ in range(2):
        a, b = labels[g.i], labels[g.j]
        cross = (a != b)
        node = np.concatenate([g.i[cross], g.j[cross]])
        other = np.concatenate([b[cross], a[cross]])
        keep = fixed[node] < 0
        node, other = node[keep], other[keep]
        if node.size == 0:
            break
        key = np.unique(node * n + other)
        node, other = key // n, key % n
        own = labels[node]
        clusters = np.unique(np.concatenate([other, own]))
        col = np.full(n, -1, dtype=np.int64)
        col[clusters] = np.arange(clusters.size)
        rows = np.flatnonzero(col[labels] >= 0)
        member = sp.csr_matrix((w[rows], (col[labels[rows]], rows)), shape=(clusters.size, n))
        size = np.asarray(member.sum(axis=1)).ravel()
        text_sum, act_sum = (member @ f.text).tocsr(), (member @ f.actions).tocsr()

        def mean_to(c: np.ndarray, exclude_self: bool) -> np.ndarray:
            cc = col[c]
            t = rowwise_dot_pairs(f.text, text_sum, node, cc)
            act = rowwise_dot_pairs(f.actions, act_sum, node, cc)
            s = size[cc].copy()
            if exclude_self:
                t = t - w[node] * np.asarray(f.text[node].multiply(f.text[node]).sum(axis=1)).ravel()
                act = act - w[node] * np.asarray(f.actions[node].multiply(f.actions[node]).sum(axis=1)).ravel()
                s = s - w[node]
            with np.errstate(divide="ignore", invalid="ignore"):
                t, act = np.where(s > 0, t / s, 0.0), np.where(s > 0, act / s, 0.0)
            return np.where(f.has_actions[node], (1 - aw) * t + aw * act, t)

        to_other, to_own = mean_to(other, False), mean_to(own, True)
        better = (to_other >= p.threshold) & (to_other > to_own + p.reassign_margin)
        if p.alternatives and p.alt_reassign and f.alts is not None and f.alts.nnz and better.any():
            # Never into a cluster where someone typed an alternative of this node's argument.
            terms_sum = (member @ f.terms).tocsr()
            better &= rowwise_dot_pairs(f.alts, terms_sum, node, col[other]) <= 0
        if p.guard and f.guard is not None and f.guard.against.nnz and better.any():
            # Never into a cluster holding a prompt that states another argument (sleep.mine.guard).
            better &= rowwise_dot_pairs(f.guard.against, (member @ f.guard.claims).tocsr(), node, col[other]) <= 0
        if not better.any():
            break
        order = np.lexsort((-to_other[better], node[better]))
        cand_node, cand_other = node[better][order], other[better][order]
        first = np.r_[True, cand_node[1:] != cand_node[:-1]]
        labels[cand_node[first]] = cand_other[first]
    return labels
