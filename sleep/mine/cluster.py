"""Grouping one project's prompts into tasks: nodes, candidate pairs and their scores.

1. Identical prompts (same words and same actions) collapse into one weighted node.
2. Candidates: each node's ``k`` nearest nodes by text cosine (a chunked sparse
   product whose chunks are sized so memory stays bounded).
3. Pair score: text cosine, blended with the action cosine when both turns show
   actions; 0 for a pair whose turns both ran distinctive programs and share none
   (``pytest`` vs ``ruff``), unless the words are nearly the same.
4. The medoid of a group: the member with the highest score to the others.

The linkage over this graph is in sleep.mine.linkage, the look-alike check in
sleep.mine.contrast. Everything is vectorised with numpy/scipy; nothing is
quadratic in the number of prompts.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from sleep.mine.features import Features


@dataclass(frozen=True)
class ClusterParams:
    """Knobs of the method (defaults chosen from the measurements in docs/sleep-mine.md)."""

    k: int = 25  # neighbours per node kept as candidates
    min_text: float = 0.12  # text cosine below this is no candidate
    action_weight: float = 0.4  # share of the action cosine when both turns show actions
    threshold: float = 0.37  # mean pair score two clusters need to merge (0.40 before the path names)
    pair_threshold: float = 0.5  # a new task seen in only two sessions needs this mean score to its medoid
    veto: bool = True  # disjoint distinctive programs forbid a link
    # Also each node's k nearest by action cosine at least this (0: text only): paraphrases sharing
    # no word but the same commands become candidates (docs/sleep-mine.md, rounds 4 and 5).
    action_candidates: float = 0.9
    action_unambiguous: bool = True  # ... only where no two turns doing the same state different arguments
    action_max_peers: int = 12  # ... and only between nodes with at most this many such neighbours
    # ... and only where the words do not speak against the link: a pair where each request states more
    # than this many of the project's repeated words (typed in at least ``established_df`` distinct
    # prompts) that the other does not is two requests that ran the same command (``make`` after two
    # unrelated one-offs). Without it the synthetic homes' precision fell 0.928 -> 0.672 (-1: off).
    action_words_against: int = 2
    established_df: int = 3
    # ... and only where the turns did the same counting what one of them alone did (a file touched
    # once, which the action vectors leave out): "explain billing/retry.py" / "what does billing/tasks.py
    # do" both touched a Python file of billing/, and did not do the same.
    action_all_tokens: bool = True
    # With other parts blended into the text cosine (an embedding), a pair where every content word
    # (at least 3) of one request is in the other scores at least its words' cosine: a request with a
    # long extra instruction keeps the words it shares.
    words_floor: bool = True
    guard: bool = True  # rows stating different arguments (sleep.mine.guard) never link
    guard_swaps: bool = True  # ... including a function word two requests differ in ("on" / "off")
    guard_files: bool = True  # ... and the typed directories of the files a turn edited
    alternatives: bool = True  # rows one argument apart (sleep.mine.alternatives) never link
    alt_pairs: bool = True  # ... as single pairs too (not only clusters)
    alt_block: bool = True  # two clusters one argument apart never merge
    alt_split: bool = False  # split a cluster holding both words of an alternative
    alt_reassign: bool = True  # never move a node into a cluster holding its alternative
    alt_hi: float = 0.5  # "most members" of a cluster, for an alternative word
    alt_min_side: float = 2.0  # prompts each side of an alternative split needs
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
    # The words compared too: "fill in locales/de.json" and "... fr.json" have the same text (the
    # name of a typed path is no text) but are one argument apart.
    # So are the arguments stated (sleep.mine.guard): "turn X on" / "turn X off" differ only there.
    t, a, w = f.text, f.actions, f.terms
    c = f.guard.claims if f.guard is not None else None
    for r in range(t.shape[0]):
        key = b"|".join((t.indices[t.indptr[r]:t.indptr[r + 1]].tobytes(),
                         t.data[t.indptr[r]:t.indptr[r + 1]].tobytes(),
                         w.indices[w.indptr[r]:w.indptr[r + 1]].tobytes(),
                         a.indices[a.indptr[r]:a.indptr[r + 1]].tobytes(),
                         a.data[a.indptr[r]:a.indptr[r + 1]].tobytes(),
                         "\x1f".join(sorted(f.programs[r])).encode(),
                         (extra[r] if extra else "").encode(),
                         c.indices[c.indptr[r]:c.indptr[r + 1]].tobytes() if c is not None else b""))
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


def union_pairs(x: sp.csr_matrix, base: tuple[np.ndarray, np.ndarray, np.ndarray],
                more: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``base`` (pairs i < j with their cosine in ``x``) with the pairs of ``more`` not in it added."""
    i, j, v = base
    n = np.int64(max(1, x.shape[0]))
    known = i.astype(np.int64) * n + j
    extra = more[0].astype(np.int64) * n + more[1]
    new = ~np.isin(extra, known)
    ai, aj = more[0][new], more[1][new]
    return (np.concatenate([i, ai]), np.concatenate([j, aj]),
            np.concatenate([v, rowwise_dot(x, ai, aj)]).astype(np.float32))


def rowwise_dot(m: sp.csr_matrix, i: np.ndarray, j: np.ndarray, block: int = 100_000) -> np.ndarray:
    """m[i[k]] . m[j[k]] for every k, without building sub-matrices: each non-zero of row
    i[k] is looked up in row j[k] by binary search over the matrix's sorted (row, column) keys."""
    out = np.zeros(i.size, dtype=np.float32)
    if i.size == 0 or m.nnz == 0:
        return out
    cached = getattr(m, "_mine_keys", None)
    if cached is None:
        if not m.has_sorted_indices:
            m.sort_indices()
        row_len = np.diff(m.indptr)
        rows_of = np.repeat(np.arange(m.shape[0], dtype=np.int64), row_len)
        cached = (rows_of * np.int64(m.shape[1]) + m.indices.astype(np.int64), row_len)
        m._mine_keys = cached  # the matrix is never modified after this point
    keys, row_len = cached
    ncols = np.int64(m.shape[1])
    for s in range(0, i.size, block):
        ii, jj = i[s:s + block].astype(np.int64), j[s:s + block].astype(np.int64)
        starts, lens = m.indptr[ii], row_len[ii]
        total = int(lens.sum())
        if total == 0:
            continue
        owner = np.repeat(np.arange(ii.size, dtype=np.int64), lens)
        offsets = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(lens) - lens, lens)
        pos = np.repeat(starts, lens) + offsets
        want = jj[owner] * ncols + m.indices[pos]
        hit = np.searchsorted(keys, want)
        hit = np.minimum(hit, keys.size - 1)
        found = keys[hit] == want
        prod = np.where(found, m.data[pos] * m.data[hit], 0.0)
        out[s:s + block] = np.bincount(owner, weights=prod, minlength=ii.size)
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
    share none (different work), unless their words are nearly the same.

    The command side (commands, tools, skills) and the file side are compared only
    where both turns recorded that side: a turn without files says nothing about
    files, so it is neither like nor unlike one with files there."""
    if text_sim is None:
        text_sim = rowwise_dot(f.text, i, j)
    if p.words_floor and f.words is not None and i.size:
        # Only where every content word of one request is in the other (an extra instruction).
        n_terms = np.asarray(f.terms.getnnz(axis=1))
        shared = rowwise_dot(f.terms, i, j)
        inside = (shared >= np.minimum(n_terms[i], n_terms[j])) & (shared >= 3)
        if inside.any():
            text_sim = np.where(inside, np.maximum(text_sim, rowwise_dot(f.words, i, j)), text_sim)
    sh, fl = f.shell_recorded, f.files_recorded
    both_sh, both_fl = sh[i] & sh[j], fl[i] & fl[j]
    both = both_sh | both_fl
    act = np.zeros(i.size, dtype=np.float32)
    if both.any():
        cs = np.where(both_sh, rowwise_dot(f.shell_side, i, j), 0.0)
        cf = np.where(both_fl, rowwise_dot(f.file_side, i, j), 0.0)
        with np.errstate(invalid="ignore", divide="ignore"):
            act = np.where(both, (cs + cf) / (both_sh.astype(np.float32) + both_fl), 0.0).astype(np.float32)
    # The actions weigh in fully when each side (commands, files) is present in both turns or
    # in neither; half when one turn recorded a side the other did not (less was compared).
    lopsided = (sh[i] != sh[j]) | (fl[i] != fl[j])
    w = p.action_weight * np.where(lopsided, 0.5, 1.0)
    score = np.where(both, (1 - w) * text_sim + w * act, text_sim).astype(np.float32)
    score[apart(f, i, j, p)] = 0.0
    if p.veto:
        pm = program_matrix(f.programs) if pm is None else pm
        has_prog = pm.getnnz(axis=1) > 0
        shared = rowwise_dot(pm, i, j) > 0
        score[has_prog[i] & has_prog[j] & ~shared & (text_sim < p.veto_unless_text)] = 0.0
    return score


def apart(f: Features, i: np.ndarray, j: np.ndarray, p: ClusterParams) -> np.ndarray:
    """A bool per pair: one argument apart ("patch" / "minor", sleep.mine.alternatives) or stating
    different arguments (sleep.mine.guard): different tasks, however alike the rest."""
    out = np.zeros(i.size, dtype=bool)
    if p.alternatives and p.alt_pairs and f.alts is not None and f.alts.nnz:
        out |= rowwise_dot(f.alts_over_terms, i, j + f.alts.shape[0]) > 0
    if p.guard and f.guard is not None:
        out |= f.guard.conflict(i, j)
    return out


def action_only_pairs(f: Features, base: tuple[np.ndarray, np.ndarray, np.ndarray],
                      more: tuple[np.ndarray, np.ndarray], p: ClusterParams) -> tuple[np.ndarray, np.ndarray]:
    """The pairs of ``more`` (nodes that did the same: action candidates) to add to ``base`` (the text
    candidates): those whose command says which task they are. Where turns doing the same state
    different arguments ("scale ... up" / "down", ``-race`` / ``-cover``, iOS / Android), the command
    is shared by several tasks of the project, so a node next to such a pair (it, or one of its
    action neighbours, has one) links through its words only; so does a node with more than
    ``action_max_peers`` action neighbours (a command run after every kind of request)."""
    ai, aj = more
    if ai.size == 0:
        return ai, aj
    n = f.text.shape[0]
    # A command many prompts of the project run (``pytest -q`` after every kind of request) says
    # nothing about which task a turn was: a node with more peers doing the same links by its words.
    peers = np.bincount(ai, minlength=n) + np.bincount(aj, minlength=n)
    common = peers > p.action_max_peers
    torn = np.zeros(n, dtype=bool)
    bad = apart(f, ai, aj, p)
    torn[ai[bad]] = torn[aj[bad]] = True
    near = torn.copy()  # torn, or an action neighbour of a torn node
    near[ai[torn[aj]]] = near[aj[torn[ai]]] = True
    keep = ~(near[ai] | near[aj] | common[ai] | common[aj])
    return ai[keep], aj[keep]


def established_words(f: Features, texts: list[str], p: ClusterParams) -> np.ndarray:
    """A bool per word column of ``f.terms``: the project uses the word repeatedly, in at least
    ``established_df`` distinct prompts (told apart by their text) of the whole pool.

    Counted over the typed prompts, not over the miner's nodes: a small project's paraphrases
    collapse into a node or two each ("add a changelog entry for the csv export" / "... the new
    csv export"), and over 5 nodes almost no word reaches 3, so the check below never spoke."""
    first: dict[str, int] = {}
    for row, text in enumerate(texts):
        first.setdefault(text, row)
    distinct = f.terms[np.fromiter(first.values(), dtype=np.int64, count=len(first))]
    return np.asarray(distinct.getnnz(axis=0)) >= p.established_df


def words_against(f: Features, i: np.ndarray, j: np.ndarray, p: ClusterParams,
                  established: np.ndarray) -> np.ndarray:
    """A bool per pair: each request states more than ``action_words_against`` words the project uses
    repeatedly (``established``, see :func:`established_words`) that the other does not state.

    Two paraphrases of one request differ in a word or two the project also uses (and in words
    typed once, which say nothing here); two one-offs that ran the same ``make`` each say several
    things the project says elsewhere, and share none of them: the command does not join those."""
    est = (f.terms @ sp.diags(established.astype(np.float32))).tocsr()
    est.eliminate_zeros()
    n = np.asarray(est.getnnz(axis=1))
    shared = rowwise_dot(est, i, j)
    return np.minimum(n[i], n[j]) - shared > p.action_words_against


def rowwise_dot_pairs(x: sp.csr_matrix, y: sp.csr_matrix, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """x[i[k]] . y[j[k]] for every k (two matrices with the same columns)."""
    if i.size == 0:
        return np.zeros(0)
    stacked = sp.vstack([x, y]).tocsr()
    return rowwise_dot(stacked, i, j + x.shape[0]).astype(np.float64)


def medoid(rows: np.ndarray, weight: np.ndarray, p: ClusterParams,
           score: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> int:
    """The row of ``rows`` with the highest weighted total score to the others
    (``weight[k]``: prompts that ``rows[k]`` stands for; large clusters are compared
    with an even sample of their members)."""
    if rows.size == 1:
        return int(rows[0])
    pos = np.arange(rows.size)
    if rows.size > p.medoid_sample:
        pos = np.linspace(0, rows.size - 1, p.medoid_sample).astype(np.int64)
    a = np.repeat(rows, pos.size)
    b = np.tile(rows[pos], rows.size)
    s = score(a, b).reshape(rows.size, pos.size)
    return int(rows[int(np.argmax(s @ weight[pos]))])
