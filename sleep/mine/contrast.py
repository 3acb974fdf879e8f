"""Telling look-alike tasks apart: consistent differences in what was done and said.

Used by the linkage (sleep.mine.linkage) to refuse a merge, and after it to split
a cluster that small pieces merged into before either side was big enough to
compare.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from sleep.mine.alternatives import clusters_differ
from sleep.mine.cluster import ClusterParams
from sleep.mine.features import Features


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
        keep_files = sp.diags(f.mark_is_file.astype(np.float32))
        keep_shell = sp.diags((~f.mark_is_file).astype(np.float32))
        # Each kind of action is counted among the members that recorded that kind.
        self.sides = [((f.marks @ keep_files).tocsr(), f.has_files.astype(np.float64)),
                      ((f.marks @ keep_shell).tocsr(), f.has_shell.astype(np.float64))]
        self.p = p
        self.alt = f.alt if p.alternatives else None

    def _shares(self, m: sp.csr_matrix, labels: np.ndarray, weight: np.ndarray, clusters: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray]:
        """Per cluster in ``clusters``: the weighted share of members using each column, and the weight."""
        col = np.full(labels.size, -1, dtype=np.int64)
        col[clusters] = np.arange(clusters.size)
        rows = np.flatnonzero(col[labels] >= 0)
        member = sp.csr_matrix((weight[rows], (col[labels[rows]], rows)), shape=(clusters.size, labels.size))
        total = np.asarray(member.sum(axis=1)).ravel()
        counts = (member @ m).toarray()  # few clusters at a time: dense is fine
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(total[:, None] > 0, counts / total[:, None], 0.0), total

    @staticmethod
    def _one_sided(share: np.ndarray, x: np.ndarray, y: np.ndarray, hi: float, lo: float) -> np.ndarray:
        """For each k: some column at least ``hi`` of cluster x[k] uses and at most ``lo`` of y[k]."""
        return ((share[x] >= hi) & (share[y] <= lo)).any(axis=1)

    def differ(self, a: np.ndarray, b: np.ndarray, labels: np.ndarray, weight: np.ndarray) -> np.ndarray:
        """A bool per pair of cluster labels (a[k], b[k]). A command is counted among the
        members that recorded commands, a file among those that recorded files."""
        p = self.p
        clusters = np.unique(np.concatenate([a, b]))
        x, y = np.searchsorted(clusters, a), np.searchsorted(clusters, b)
        terms, total = self._shares(self.terms, labels, weight, clusters)
        did = np.zeros(a.size, dtype=bool)
        for marks_m, recorded in self.sides:
            marks, n = self._shares(marks_m, labels, weight * recorded, clusters)
            enough_here = np.minimum(n[x], n[y]) >= p.contrast_min
            did |= enough_here & (self._one_sided(marks, x, y, p.contrast_hi, p.contrast_lo) |
                                  self._one_sided(marks, y, x, p.contrast_hi, p.contrast_lo))
        enough = np.minimum(total[x], total[y]) >= p.contrast_min
        said = self._one_sided(terms, x, y, p.contrast_words, p.contrast_lo) | \
            self._one_sided(terms, y, x, p.contrast_words, p.contrast_lo)
        return enough & did & said

    def one_argument_apart(self, a: np.ndarray, b: np.ndarray, labels: np.ndarray, weight: np.ndarray
                           ) -> np.ndarray:
        """A bool per pair of cluster labels: most of one uses a word, most of the other an
        alternative of it (sleep.mine.alternatives); different tasks at any size."""
        if self.alt is None or self.alt.nnz == 0 or a.size == 0:
            return np.zeros(a.size, dtype=bool)
        clusters = np.unique(np.concatenate([a, b]))
        x, y = np.searchsorted(clusters, a), np.searchsorted(clusters, b)
        terms, _ = self._shares(self.terms, labels, weight, clusters)
        return clusters_differ(terms[x], terms[y], self.alt, self.p.alt_hi, self.p.contrast_lo)

    def split(self, labels: np.ndarray, f: Features, weight: np.ndarray, fixed: np.ndarray) -> np.ndarray:
        return split_contrasting(labels, f, weight, fixed, self, self.p)


def _promising(f: Features, nodes: np.ndarray, acting: np.ndarray, w: np.ndarray, p: ClusterParams) -> list[int]:
    """Telling-action columns whose presence among acting members goes with a word that
    most of one side uses and almost none of the other does, best separated first."""
    marks = f.marks[acting].toarray() > 0
    total = w[acting].sum()
    share = (w[acting] @ marks) / total
    cols = np.flatnonzero((share >= 0.1) & (share <= 0.9))
    if cols.size == 0:
        return []
    terms = f.terms[acting].toarray() > 0
    wt = w[acting][:, None]
    inside = (marks[:, cols].T.astype(np.float64) @ (terms * wt))  # columns x words, weight with both
    n_in = (w[acting] @ marks[:, cols])[:, None]
    n_out = total - n_in
    word_total = (terms * wt).sum(axis=0)[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        s_in, s_out = inside / n_in, (word_total - inside) / n_out
    sep = np.maximum(np.where((s_in >= p.contrast_words) & (s_out <= p.contrast_lo), s_in - s_out, 0),
                     np.where((s_out >= p.contrast_words) & (s_in <= p.contrast_lo), s_out - s_in, 0)).max(axis=1)
    ok = (sep > 0) & (n_in.ravel() >= p.contrast_min) & (n_out.ravel() >= p.contrast_min)
    return cols[ok][np.argsort(-sep[ok])][:8].tolist()


def split_contrasting(labels: np.ndarray, f: Features, weight: np.ndarray, fixed: np.ndarray,
                      contrast: Contrast, p: ClusterParams) -> np.ndarray:
    """Split a cluster in two when one telling action cuts it into sides that ``contrast``
    calls different tasks (small pieces can merge before either side is big enough to
    be compared; this undoes such a merge). Members that show no action go to the side
    whose words they are closer to. Clusters holding an existing task are left alone."""
    labels = labels.copy()
    w = weight.astype(np.float64)
    sizes = np.bincount(labels, weights=w, minlength=labels.size)
    holds_task = np.zeros(labels.size, dtype=bool)
    holds_task[labels[fixed >= 0]] = True
    queue = np.flatnonzero((sizes >= 2 * p.contrast_min) & ~holds_task).tolist()
    while queue:
        c = queue.pop()
        nodes = np.flatnonzero(labels == c)
        acting = nodes[f.acting[nodes]]
        if w[acting].sum() < 2 * p.contrast_min:
            continue
        for col in _promising(f, nodes, acting, w, p):
            has = np.asarray(f.marks[nodes][:, col].todense()).ravel() > 0
            # A turn that recorded no files says nothing about a file column (nor one
            # without commands about a command column): it goes by its words.
            known = f.has_files[nodes] if f.mark_is_file[col] else f.has_shell[nodes]
            side_a, side_b = nodes[has & known], nodes[~has & known]
            quiet = nodes[~known]
            if w[side_a].sum() < p.contrast_min or w[side_b].sum() < p.contrast_min:
                continue
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
