"""Words that stand for one another as an argument: "patch" / "minor", "staging" / "prod".

Two requests that differ in one argument ("bump the patch version", "bump the minor
version") share all their other words and usually run the same programs, so
neither the text cosine nor the actions tell them apart. What does is how the
project uses the two words: they fill the same slot (the same neighbouring word,
on the same side, in several prompts each) and are never typed in one prompt
together. Synonyms a person swaps between occurrences of one task fill slots too,
but they are few in a project's own words once the synonym groups and typo map of
sleep.mine.features have run, and a slot must be shared at least ``min_evidence``
times.

:func:`alternative_matrix` returns, per row, the words that are an alternative of
a word the row uses (``rows x vocabulary``, binary, the columns of ``terms``): a
pair of rows is one argument apart when one row's alternatives meet the other's
words.
"""

from __future__ import annotations

from collections import Counter, defaultdict

import numpy as np
import scipy.sparse as sp

MAX_SLOT = 40  # words compared per slot (the most frequent), so a common neighbour stays cheap


def alternative_pairs(docs: list[list[str]], vocab: dict[str, int], terms: sp.csr_matrix, min_df: int = 3,
                      min_evidence: int = 2) -> set[tuple[int, int]]:
    """Column pairs (a < b) of words that fill the same slots and never share a prompt
    (``terms``: the binary rows x vocabulary matrix of ``docs``)."""
    df: Counter[str] = Counter()
    slots: dict[tuple[str, int], Counter[str]] = defaultdict(Counter)
    for d in docs:
        df.update(set(d))
        seen: set[tuple[str, str, int]] = set()
        for a, b in zip(d, d[1:]):
            if a != b:
                seen.add((a, b, +1))  # a's right neighbour is b
                seen.add((b, a, -1))  # b's left neighbour is a
        for w, x, side in seen:
            slots[(x, side)][w] += 1
    evidence: Counter[tuple[str, str]] = Counter()
    for (x, _), fill in slots.items():
        words = [w for w, c in fill.most_common(MAX_SLOT) if df[w] >= min_df and w != x]
        for k, a in enumerate(words):
            for b in words[k + 1:]:
                pair = (a, b) if a < b else (b, a)
                evidence[pair] += min(fill[a], fill[b])
    by_col = terms.T.tocsr()
    by_col.sort_indices()
    out: set[tuple[int, int]] = set()
    for (a, b), ev in evidence.items():
        if ev < min_evidence:
            continue
        ia, ib = vocab[a], vocab[b]
        rows_a = by_col.indices[by_col.indptr[ia]:by_col.indptr[ia + 1]]
        rows_b = by_col.indices[by_col.indptr[ib]:by_col.indptr[ib + 1]]
        if np.intersect1d(rows_a, rows_b, assume_unique=True).size == 0:
            out.add((min(ia, ib), max(ia, ib)))
    return out


def alternative_matrix(terms: sp.csr_matrix, pairs: set[tuple[int, int]]) -> sp.csr_matrix:
    """``terms @ A`` for the symmetric alternatives matrix A, as a binary matrix."""
    n = terms.shape[1]
    if not pairs:
        return sp.csr_matrix(terms.shape, dtype=np.float32)
    a = np.array([p[0] for p in pairs] + [p[1] for p in pairs])
    b = np.array([p[1] for p in pairs] + [p[0] for p in pairs])
    alt = sp.csr_matrix((np.ones(a.size, dtype=np.float32), (a, b)), shape=(n, n))
    out = (terms @ alt).tocsr()
    out.data[:] = 1.0
    return out
