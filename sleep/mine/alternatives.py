"""Words that stand for one another as an argument: "patch" / "minor", "staging" / "prod".

Two requests that differ in one argument ("bump the patch version", "bump the minor
version") share all their other words and usually run the same programs, so
neither the text cosine nor the actions tell them apart. What does: somewhere in
the project two prompts differ in just that word (their other words are the same),
both words recur (typed in at
least ``min_df`` prompts: a table or file name that changes between occurrences of
one task is typed once), the two are never typed in one prompt together, and
each is the other's only such partner (a word standing for several others, like
the module a test is added to or the flag a command is run with, is a slot one
task fills anew each time; measured on bench/mine.py's synthetic homes, allowing
two or three partners split their tasks).

Such words keep rows apart everywhere: a pair of rows one argument apart scores 0
(sleep.mine.cluster), two clusters where most of one uses a word and most of the
other its alternative never merge (sleep.mine.contrast, sleep.mine.linkage), a
node never moves into a cluster holding its alternative, and a cluster that holds
both words in at least two prompts each can be split (:func:`split_by_alternatives`,
off by default: ``ClusterParams.alt_split``; it added nothing on the labelled set
and merged a near-miss pair on the synthetic one).

:func:`alternative_matrix` returns, per row, the words that are an alternative of
a word the row uses (``rows x vocabulary``, binary, the columns of ``terms``): a
pair of rows is one argument apart when one row's alternatives meet the other's
words.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import scipy.sparse as sp
from rapidfuzz.distance import OSA

MAX_WORDS = 16  # longer prompts are not compared word by word (they rarely differ in one word)
MAX_PARTNERS = 1  # more alternatives than this: a slot that varies within one task (not patch / minor)


def alternative_pairs(docs: list[list[str]], vocab: dict[str, int], terms: sp.csr_matrix, min_df: int = 2,
                      max_partners: int = MAX_PARTNERS, max_words: int = MAX_WORDS,
                      also: list[list[str]] | None = None, once: bool = False) -> set[tuple[int, int]]:
    """Column pairs (a < b) of words that make two requests differ in one word, recur, never
    share a prompt, and have at most ``max_partners`` such partners each (a word that
    stands for many others is a slot a task fills anew each time: a module, a table)
    (``terms``: the binary rows x vocabulary matrix of ``docs``). ``also``: more word lists
    of the same prompts (the same words without the names of typed paths) in which one
    word apart counts too.

    ``once``: a word typed once where an argument word of such a pair stands ("translate
    the new strings to Japanese" beside "... to German", where German / French is a pair)
    is another value of that argument, so it is paired with that word as well. A word
    typed once beside words that are no argument stays what changes between occurrences."""
    rest_of: dict[tuple[str, ...], set[str]] = defaultdict(set)  # the other words -> the word left out
    for d in (docs, also or []):
        for ws in d:
            full = tuple(sorted(set(ws)))
            if 2 <= len(full) <= max_words:
                for k, w in enumerate(full):
                    rest_of[full[:k] + full[k + 1:]].add(w)
    found: set[tuple[str, str]] = set()
    for left_out in rest_of.values():
        if len(left_out) > 1:
            found.update((a, b) for a in left_out for b in left_out if a < b)
    by_col = terms.T.tocsr()
    by_col.sort_indices()
    df = np.diff(by_col.indptr)
    kept: list[tuple[int, int]] = []
    typed_once: list[tuple[int, int]] = []  # (recurring word, word typed once in its place)
    for a, b in found:
        if a not in vocab or b not in vocab:
            continue
        ia, ib = vocab[a], vocab[b]
        if min(df[ia], df[ib]) < min_df:
            if once and max(df[ia], df[ib]) >= min_df and not _typo_of(a, b):
                typed_once.append((ia, ib) if df[ia] >= min_df else (ib, ia))
            continue  # a word typed once is what changes between occurrences (a table, a file)
        if _typo_of(a, b):
            continue
        rows_a = by_col.indices[by_col.indptr[ia]:by_col.indptr[ia + 1]]
        rows_b = by_col.indices[by_col.indptr[ib]:by_col.indptr[ib + 1]]
        if np.intersect1d(rows_a, rows_b, assume_unique=True).size == 0:
            kept.append((min(ia, ib), max(ia, ib)))
    partners: dict[int, int] = defaultdict(int)
    for ia, ib in kept:
        partners[ia] += 1
        partners[ib] += 1
    out = {(ia, ib) for ia, ib in kept if max(partners[ia], partners[ib]) <= max_partners}
    if once and out:
        arguments = {i for pair in out for i in pair}
        for ia, ic in typed_once:
            if ia in arguments:
                out.add((min(ia, ic), max(ia, ic)))
    return out


def _typo_of(a: str, b: str) -> bool:
    """One word mistyped as the other ("leat" / "least", "cahe" / "cach"), not "amd" / "arm"."""
    d = OSA.distance(a, b, score_cutoff=2)
    return d <= 1 or (d <= 2 and min(len(a), len(b)) >= 4)


def pair_matrix(n: int, pairs: set[tuple[int, int]]) -> sp.csr_matrix:
    """The symmetric ``n x n`` binary matrix of ``pairs``."""
    a = np.array([p[0] for p in pairs] + [p[1] for p in pairs], dtype=np.int64)
    b = np.array([p[1] for p in pairs] + [p[0] for p in pairs], dtype=np.int64)
    return sp.csr_matrix((np.ones(a.size, dtype=np.float32), (a, b)), shape=(n, n))


def alternative_matrix(terms: sp.csr_matrix, alt: sp.csr_matrix) -> sp.csr_matrix:
    """``terms @ alt`` (``alt``: from :func:`pair_matrix`), as a binary matrix."""
    if alt.nnz == 0:
        return sp.csr_matrix(terms.shape, dtype=np.float32)
    out = (terms @ alt).tocsr()
    out.data[:] = 1.0
    return out


def clusters_differ(share_x: np.ndarray, share_y: np.ndarray, alt: sp.csr_matrix, hi: float, lo: float
                    ) -> np.ndarray:
    """Per pair of clusters (rows of the word shares ``share_x``, ``share_y``): most of
    one side uses a word, most of the other an alternative of it, and neither side
    the other's word."""
    if alt.nnz == 0 or share_x.shape[0] == 0:
        return np.zeros(share_x.shape[0], dtype=bool)
    mx, my = sp.csr_matrix((share_x >= hi) & (share_y <= lo)), sp.csr_matrix((share_y >= hi) & (share_x <= lo))
    return np.asarray((mx @ alt).multiply(my).sum(axis=1)).ravel() > 0


def split_by_alternatives(labels: np.ndarray, terms: sp.csr_matrix, text: sp.csr_matrix, alt: sp.csr_matrix,
                          weight: np.ndarray, fixed: np.ndarray, min_side: float = 2.0) -> np.ndarray:
    """Split a cluster in which at least ``min_side`` prompts use a word and as many use an
    alternative of it (pieces that merged while each side was too small to tell): the
    prompts with either word go to its side, the others to the side whose words they
    are closer to. Clusters holding an existing task are left alone."""
    if alt.nnz == 0:
        return labels
    labels = labels.copy()
    w = weight.astype(np.float64)
    holds_task = np.zeros(labels.size, dtype=bool)
    holds_task[labels[fixed >= 0]] = True
    queue = [c for c in np.unique(labels).tolist() if not holds_task[c]]
    while queue:
        c = queue.pop()
        nodes = np.flatnonzero(labels == c)
        if w[nodes].sum() < 2 * min_side:
            continue
        t = terms[nodes]
        count = np.asarray(t.T @ w[nodes]).ravel()
        often = sp.diags((count >= min_side).astype(np.float32))
        cand = (often @ alt @ often).tocoo()
        if cand.nnz == 0:
            continue
        best = int(np.argmax(np.minimum(count[cand.row], count[cand.col])))
        a, b = int(cand.row[best]), int(cand.col[best])
        col_a = np.asarray(t[:, a].todense()).ravel() > 0
        col_b = np.asarray(t[:, b].todense()).ravel() > 0
        side_a, side_b, rest = nodes[col_a], nodes[col_b & ~col_a], nodes[~col_a & ~col_b]
        if rest.size:
            ca = np.asarray(text[side_a].T @ w[side_a]).ravel() / max(w[side_a].sum(), 1e-9)
            cb = np.asarray(text[side_b].T @ w[side_b]).ravel() / max(w[side_b].sum(), 1e-9)
            to_a, to_b = text[rest] @ ca, text[rest] @ cb
            side_a = np.concatenate([side_a, rest[to_a > to_b]])
            side_b = np.concatenate([side_b, rest[to_a <= to_b]])
        labels[side_a] = int(side_a[0])
        labels[side_b] = int(side_b[0])
        queue += [int(side_a[0]), int(side_b[0])]
    return labels
