"""Grouping one project's prompts into tasks: candidate pairs, scores, linkage.

1. Identical prompts (same words and same actions) collapse into one weighted node.
2. Candidates: each node's ``k`` nearest nodes by text cosine (a chunked sparse
   product whose chunks are sized so memory stays bounded).
3. Pair score: text cosine, blended with the action cosine when both turns show
   actions. A pair whose turns both ran distinctive programs and share none
   (``pytest`` vs ``ruff``) is a *cannot-link*, unless the words are nearly the same.
4. Average linkage on the candidate graph, in rounds: clusters that are each
   other's best neighbour merge when their mean pair score reaches the threshold
   and no cannot-link joins them. Existing tasks start as clusters and never merge
   with each other, so a task keeps its id and members as new prompts join it.

Everything is vectorised with numpy/scipy; nothing is quadratic in the number of
prompts except the (bounded) medoid search inside one cluster.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import scipy.sparse as sp
from sklearn.preprocessing import normalize as sk_normalize

from sleep.mine.features import Features


@dataclass(frozen=True)
class ClusterParams:
    """Knobs of the method (defaults chosen from the measurements in docs/sleep-mine.md)."""

    k: int = 25  # neighbours per node kept as candidates
    min_text: float = 0.12  # text cosine below this is no candidate
    action_weight: float = 0.4  # share of the action cosine when both turns show actions
    action_gate: float = 0.0  # below this text cosine, the action share counts proportionally less
    threshold: float = 0.40  # mean pair score two clusters need to merge
    pair_threshold: float = 0.5  # a new task seen in only two sessions needs this mean score to its medoid
    veto: bool = True  # disjoint distinctive programs forbid a link
    veto_unless_text: float = 0.9  # ... unless the words are this close
    product_budget: int = 2_000_000  # non-zeros per chunk of the candidate product
    medoid_sample: int = 400  # members compared per side when checking a merge or a medoid
    refreshes: int = 3  # rounds of centroid proposals between large clusters
    centroid_k: int = 10
    centroid_sample: int = 24
    reassign_margin: float = 0.05
    contrast_min: int = 3  # prompts each side needs before consistent differences count
    contrast_hi: float = 0.8  # "most acting members" of a side ...
    contrast_words: float = 0.6  # "most members" of a side, for words ...
    contrast_lo: float = 0.1  # ... and "almost none" of the other


@dataclass
class Graph:
    """Candidate pairs between nodes (i < j) with their scores."""

    i: np.ndarray
    j: np.ndarray
    score: np.ndarray


def collapse(f: Features, extra: list[str] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Rows with identical features (and equal ``extra`` strings) share a node:
    (node of each row, first row of each node)."""
    keys: dict[bytes, int] = {}
    node_of = np.empty(f.text.shape[0], dtype=np.int64)
    firsts: list[int] = []
    t, a = f.text, f.actions
    for r in range(t.shape[0]):
        key = b"|".join((t.indices[t.indptr[r]:t.indptr[r + 1]].tobytes(),
                         t.data[t.indptr[r]:t.indptr[r + 1]].tobytes(),
                         a.indices[a.indptr[r]:a.indptr[r + 1]].tobytes(),
                         a.data[a.indptr[r]:a.indptr[r + 1]].tobytes(),
                         "\x1f".join(sorted(f.programs[r])).encode(),
                         (extra[r] if extra else "").encode()))
        node = keys.get(key)
        if node is None:
            node = keys[key] = len(firsts)
            firsts.append(r)
        node_of[r] = node
    return node_of, np.asarray(firsts, dtype=np.int64)


def _chunks(x: sp.csr_matrix, budget: int) -> list[tuple[int, int]]:
    """Row ranges whose product with ``x.T`` holds at most about ``budget`` non-zeros."""
    df = np.asarray((x != 0).sum(axis=0)).ravel()
    cost = np.asarray((x != 0) @ df).ravel() if x.nnz else np.zeros(x.shape[0])
    out, start, acc = [], 0, 0.0
    for r, c in enumerate(cost):
        if r > start and acc + c > budget:
            out.append((start, r))
            start, acc = r, 0.0
        acc += c
    out.append((start, x.shape[0]))
    return out


def candidates(x: sp.csr_matrix, k: int, min_sim: float, budget: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each row's ``k`` most similar other rows (cosine >= ``min_sim``), as unique pairs i < j."""
    n = x.shape[0]
    if n < 2 or x.nnz == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, np.zeros(0, dtype=np.float32)
    xt = x.T.tocsr()
    parts_i, parts_j, parts_v = [], [], []
    for lo, hi in _chunks(x, budget):
        prod = (x[lo:hi] @ xt).tocoo()
        rows = prod.row.astype(np.int64) + lo
        cols = prod.col.astype(np.int64)
        vals = prod.data
        keep = (rows != cols) & (vals >= min_sim)
        rows, cols, vals = rows[keep], cols[keep], vals[keep]
        order = np.lexsort((cols, -vals, rows))
        rows, cols, vals = rows[order], cols[order], vals[order]
        if rows.size:
            starts = np.r_[0, np.flatnonzero(np.diff(rows)) + 1]
            counts = np.diff(np.r_[starts, rows.size])
            rank = np.arange(rows.size) - np.repeat(starts, counts)
            top = rank < k
            parts_i.append(rows[top])
            parts_j.append(cols[top])
            parts_v.append(vals[top])
    if not parts_i:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, np.zeros(0, dtype=np.float32)
    i, j, v = np.concatenate(parts_i), np.concatenate(parts_j), np.concatenate(parts_v)
    lo, hi = np.minimum(i, j), np.maximum(i, j)
    key = lo * n + hi
    _, first = np.unique(key, return_index=True)
    return lo[first], hi[first], v[first].astype(np.float32)


def rowwise_dot(m: sp.csr_matrix, i: np.ndarray, j: np.ndarray, block: int = 200_000) -> np.ndarray:
    out = np.zeros(i.size, dtype=np.float32)
    for s in range(0, i.size, block):
        a, b = m[i[s:s + block]], m[j[s:s + block]]
        out[s:s + block] = np.asarray(a.multiply(b).sum(axis=1)).ravel()
    return out


def program_matrix(programs: list[frozenset[str]]) -> sp.csr_matrix:
    names: dict[str, int] = {}
    rows, cols = [], []
    for r, progs in enumerate(programs):
        for p in progs:
            rows.append(r)
            cols.append(names.setdefault(p, len(names)))
    data = np.ones(len(rows), dtype=np.float32)
    return sp.csr_matrix((data, (rows, cols)), shape=(len(programs), max(1, len(names))))


def score_pairs(f: Features, i: np.ndarray, j: np.ndarray, p: ClusterParams,
                text_sim: np.ndarray | None = None, pm: sp.csr_matrix | None = None) -> np.ndarray:
    """The score of each pair (i[k], j[k]): the text cosine, blended with the action
    cosine when both turns show actions; 0 when both ran distinctive programs and
    share none (different work), unless their words are nearly the same."""
    if text_sim is None:
        text_sim = rowwise_dot(f.text, i, j)
    both = f.has_actions[i] & f.has_actions[j]
    act = rowwise_dot(f.actions, i, j) if both.any() else np.zeros(i.size, dtype=np.float32)
    w = p.action_weight
    if p.action_gate > 0:
        act = act * np.minimum(1.0, text_sim / p.action_gate)
    score = np.where(both, (1 - w) * text_sim + w * act, text_sim).astype(np.float32)
    if p.veto:
        pm = program_matrix(f.programs) if pm is None else pm
        has_prog = pm.getnnz(axis=1) > 0
        shared = rowwise_dot(pm, i, j) > 0
        score[has_prog[i] & has_prog[j] & ~shared & (text_sim < p.veto_unless_text)] = 0.0
    return score


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


class Contrast:
    """Consistent differences that make two clusters two tasks: what their turns *did*
    differs (a program with its subcommand, a directory or a file-name word that most
    acting members of one side show and almost none of the other's do) *and* what the
    person *said* differs (a content word most members of one side use and almost
    none of the other side does). Either alone is ordinary variation between
    occurrences of one task; together, as for "summarise the review comments" (no
    commands) vs "address the review comments" (edits and tests), they are not."""

    def __init__(self, f: Features, p: ClusterParams) -> None:
        self.terms = f.terms.tocsr()
        self.marks = f.marks.tocsr()
        self.acting = f.acting.astype(np.float64)
        self.p = p

    def _shares(self, m: sp.csr_matrix, labels: np.ndarray, weight: np.ndarray, clusters: np.ndarray
                ) -> tuple[sp.csr_matrix, np.ndarray]:
        """Per cluster in ``clusters``: the weighted share of members using each column, and the weight."""
        col = np.full(labels.size, -1, dtype=np.int64)
        col[clusters] = np.arange(clusters.size)
        rows = np.flatnonzero(col[labels] >= 0)
        member = sp.csr_matrix((weight[rows], (col[labels[rows]], rows)), shape=(clusters.size, labels.size))
        total = np.asarray(member.sum(axis=1)).ravel()
        with np.errstate(divide="ignore", invalid="ignore"):
            scale = sp.diags(np.where(total > 0, 1.0 / total, 0.0))
        return (scale @ (member @ m)).tocsr(), total

    @staticmethod
    def _one_sided(share: sp.csr_matrix, x: np.ndarray, y: np.ndarray, hi: float, lo: float) -> np.ndarray:
        """For each k: some column at least ``hi`` of cluster x[k] uses and at most ``lo`` of y[k]."""
        high = (share >= hi).astype(np.float32).tocsr()
        some = (share > lo).astype(np.float32).tocsr()
        n_high = np.asarray(high.sum(axis=1)).ravel()
        return n_high[x] > rowwise_dot_pairs(high, some, x, y) + 0.5

    def differ(self, a: np.ndarray, b: np.ndarray, labels: np.ndarray, weight: np.ndarray) -> np.ndarray:
        """A bool per pair of cluster labels (a[k], b[k])."""
        p = self.p
        clusters = np.unique(np.concatenate([a, b]))
        x, y = np.searchsorted(clusters, a), np.searchsorted(clusters, b)
        terms, total = self._shares(self.terms, labels, weight, clusters)
        marks, acting = self._shares(self.marks, labels, weight * self.acting[:labels.size] if
                                     self.acting.size == labels.size else weight, clusters)
        enough = (np.minimum(total[x], total[y]) >= p.contrast_min) & \
                 (np.minimum(acting[x], acting[y]) >= p.contrast_min)
        did = self._one_sided(marks, x, y, p.contrast_hi, p.contrast_lo) | \
            self._one_sided(marks, y, x, p.contrast_hi, p.contrast_lo)
        said = self._one_sided(terms, x, y, p.contrast_words, p.contrast_lo) | \
            self._one_sided(terms, y, x, p.contrast_words, p.contrast_lo)
        return enough & did & said


def rowwise_dot_pairs(x: sp.csr_matrix, y: sp.csr_matrix, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """x[i[k]] . y[j[k]] for every k."""
    if i.size == 0:
        return np.zeros(0)
    return np.asarray(x[i].multiply(y[j]).sum(axis=1)).ravel()


class _Linkage:
    """The state of one average-linkage run (see :func:`link`)."""

    def __init__(self, weight: np.ndarray, g: Graph, fixed: np.ndarray, p: ClusterParams,
                 score: Callable[[np.ndarray, np.ndarray], np.ndarray], contrast: Contrast | None) -> None:
        n = weight.size
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
    state = _Linkage(weight, g, fixed, p, score, contrast)
    state.rounds()
    for _ in range(p.refreshes):
        if not state.add_centroid_edges(features.text) or not state.rounds():
            break
    labels = state.labels
    if contrast is not None:
        labels = split_contrasting(labels, features, weight, fixed, contrast, p)
    return reassign(labels, g, weight, fixed, features, p)


def split_contrasting(labels: np.ndarray, f: Features, weight: np.ndarray, fixed: np.ndarray,
                      contrast: Contrast, p: ClusterParams) -> np.ndarray:
    """Split a cluster in two when one telling action cuts it into sides that ``contrast``
    calls different tasks (small pieces can merge before either side is big enough to
    be compared; this undoes such a merge). Members that show no action go to the side
    whose words they are closer to. Clusters holding an existing task are left alone."""
    labels = labels.copy()
    w = weight.astype(np.float64)
    queue = [c for c in np.unique(labels).tolist()
             if w[labels == c].sum() >= 2 * p.contrast_min and not (fixed[labels == c] >= 0).any()]
    while queue:
        c = queue.pop()
        nodes = np.flatnonzero(labels == c)
        acting = nodes[f.acting[nodes]]
        if w[acting].sum() < 2 * p.contrast_min:
            continue
        share = np.asarray(f.marks[acting].T @ w[acting]).ravel() / w[acting].sum()
        cols = np.flatnonzero((share >= 0.2) & (share <= 0.8))
        for col in cols[np.argsort(np.abs(share[cols] - 0.5))][:5].tolist():
            has = np.asarray(f.marks[nodes][:, col].todense()).ravel() > 0
            side_a, side_b = nodes[has & f.acting[nodes]], nodes[~has & f.acting[nodes]]
            quiet = nodes[~f.acting[nodes]]
            if quiet.size:
                ca = np.asarray(f.text[side_a].T @ w[side_a]).ravel()
                cb = np.asarray(f.text[side_b].T @ w[side_b]).ravel()
                to_a = f.text[quiet] @ (ca / max(w[side_a].sum(), 1e-9))
                to_b = f.text[quiet] @ (cb / max(w[side_b].sum(), 1e-9))
                side_a = np.concatenate([side_a, quiet[to_a > to_b]])
                side_b = np.concatenate([side_b, quiet[to_a <= to_b]])
            trial = labels.copy()
            new = int(side_a[0])
            trial[side_a] = new
            trial[side_b] = int(side_b[0])
            if contrast.differ(np.array([new]), np.array([int(side_b[0])]), trial, w)[0]:
                labels = trial
                queue += [new, int(side_b[0])]
                break
    return labels


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
        if not better.any():
            break
        order = np.lexsort((-to_other[better], node[better]))
        cand_node, cand_other = node[better][order], other[better][order]
        first = np.r_[True, cand_node[1:] != cand_node[:-1]]
        labels[cand_node[first]] = cand_other[first]
    return labels


def medoid(f: Features, rows: np.ndarray, weight: np.ndarray, p: ClusterParams) -> int:
    """The row of ``rows`` with the highest weighted total score to the others
    (``weight[k]``: prompts that ``rows[k]`` stands for; large clusters are compared
    with an even sample of their members)."""
    if rows.size == 1:
        return int(rows[0])
    pos = np.arange(rows.size)
    if rows.size > p.medoid_sample:
        pos = np.linspace(0, rows.size - 1, p.medoid_sample).astype(np.int64)
    ref = rows[pos]
    t = (f.text[rows] @ f.text[ref].T).toarray()
    a = (f.actions[rows] @ f.actions[ref].T).toarray()
    both = np.outer(f.has_actions[rows], f.has_actions[ref])
    s = np.where(both, (1 - p.action_weight) * t + p.action_weight * a, t)
    return int(rows[int(np.argmax(s @ weight[pos]))])
