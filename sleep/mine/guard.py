"""Arguments that make two requests two tasks, whatever else they share (issue 31 §4).

Sentence vectors (sleep.mine.embed) put "migrate up" and "migrate down", or "build the
iOS release" and "... Android release", as close as two wordings of one request, and the
one-argument rule (sleep.mine.alternatives) sees only single-word swaps in otherwise equal
prompts. A *claim* is an argument a prompt states, in one of three kinds:

- an opposite: a word of one side of :data:`OPPOSITES` ("enable" / "disable", "up" /
  "down", "apply" / "roll back", "dev" / "staging" / "production", "iOS" / "Android"),
  read from the prompt's words and the names of the paths it types
  (``config/staging.env`` -> "staging");
- a typed directory: ``seeds/dev/`` claims "dev" for the parent ``seeds/`` (a directory
  typed as such is the argument; a file's name is what changes between occurrences);
- typed command-line flags: ``go test -race`` claims ``{race}``, and so does "the race
  detector" where the project types ``-race`` (flag values are compared as words, through
  the opposites); flags typed beside the same words as many others ("document the new
  ``--verbose`` / ``--since`` / ``--limit`` flag") are a slot, not an argument.

Two prompts *conflict* when, for one kind and group, each claims a value the other does
not (``content/en/ -> content/de/`` and ``content/de/`` do not conflict: one holds the
other; ``content/de/`` and ``content/es/`` do). A conflicting pair scores 0
(sleep.mine.cluster.score_pairs) and a node never moves into a cluster holding a prompt
it conflicts with (sleep.mine.linkage.reassign).

The matrices: ``claims`` (rows x values, binary; a value is a group with the set of its
sides a row claims) and ``against`` = ``claims @ incomparable`` (the values that conflict
with each row's): a pair (i, j) conflicts when ``against[i] . claims[j] > 0``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from itertools import pairwise

import numpy as np
import scipy.sparse as sp
import snowballstemmer

from sleep.mine.features import STOPWORDS, name_words, path_names, words

# Each group: its sides, each a set of English Snowball stems (a two-word side: "roll back").
# Written from general usage before measuring; deliberately pairs whose two sides are two
# different requests in any project.
OPPOSITES: tuple[tuple[frozenset[str], ...], ...] = tuple(
    tuple(frozenset(side.split(",")) for side in group.split("|")) for group in (
        "enabl,activ|disabl,deactiv",
        # More / less, of anything: one group, so "scale up" and "reduce" are opposites too
        # (with the common verbs of the languages people mix in: French, German, Spanish).
        "up,upgrad,increas,increment,augment,aumenta,aumentar,erhöh,erhöhen,grow|"
        "down,downgrad,decreas,decrement,reduc,rédui,réduir,réduit,reduzier,reduzieren,reducir,disminuy,"
        "verringer,lower,shrink",
        "appli,redo|revert,rollback,roll back,undo",
        "instal|uninstal",
        "add,insert|remov,delet",
        "start|stop,shutdown",
        "upload|download",
        "import|export",
        "encrypt|decrypt",
        "lock|unlock",
        "show|hide",
        "includ|exclud",
        "allow,allowlist,whitelist|deni,blocklist,blacklist",
        "open|close",
        "expand|collaps",
        "light|dark",
        "min,minimum|max,maximum",
        "dev,develop|stage|prod,product,live",
        "preview|live,prod,product",
        "io|android|web|maco|window|linux",
        # Round 4 (a tune-half merge: "übernimm" / "verwirf die neuen Snapshots"): accept / reject,
        # with the German, French and Spanish verbs.
        "accept,acepta,akzeptier,approv,übernimm,übernehm,übernehmen|"
        "reject,rejett,rechaza,verwirf,verwerf,verwerfen,ablehn,ablehnen,declin,discard",
    ))
_STEMMER = snowballstemmer.stemmer("english")
MAX_FLAG_PARTNERS = 2  # flags typed beside the same word, beyond which they are a slot
_FLAG = re.compile(r"(?<![\w/.-])--?[a-zA-Z][\w-]*")
_DIR = re.compile(r"(?<![\w@/.-])((?:\./)?(?:[\w@.+-]+/)+)(?=[\s,;:)'\"]|$)")


@lru_cache(maxsize=200_000)
def _stem(word: str) -> str:
    return _STEMMER.stemWord(word)


def _stems(text: str, identifiers: bool = True) -> set[str]:
    ws = [_stem(w) for w in (*words(text), *(name_words(text) if identifiers else path_names(text)))]
    return set(ws) | {f"{a} {b}" for a, b in pairwise(ws)}


def flags_of(text: str) -> set[str]:
    """The command-line flags typed in ``text``, without dashes, lower-cased."""
    return {f.lstrip("-").lower() for f in _FLAG.findall(text)} if "-" in text else set()


def claims_of(text: str, flag_words: frozenset[str] = frozenset(),
              kept_flags: frozenset[str] | None = None, identifiers: bool = True) -> dict[str, frozenset[str]]:
    """The claims of one prompt: group -> the sides (or directory names, flags) it states.
    ``flag_words``: stems of flags typed elsewhere in the project; the prompt's words that are
    one of them (or begin with one: "coverage" for ``-cover``) claim that flag too.
    ``kept_flags``: the typed flags that are arguments (None: all; see :func:`argument_flags`)."""
    out: dict[str, set[str]] = {}
    stems = _stems(text, identifiers)
    for g, sides in enumerate(OPPOSITES):
        for s, side in enumerate(sides):
            if side & stems:
                out.setdefault(f"o{g}", set()).add(str(s))
    if "/" in text:
        for m in _DIR.finditer(text.replace("`", " ")):
            parts = [p for p in m.group(1).removeprefix("./").split("/") if p]
            if parts:
                out.setdefault("d:" + "/".join(parts[:-1]).lower(), set()).add(parts[-1].lower())
    flags = flags_of(text)
    if kept_flags is not None:
        flags &= kept_flags
    if flag_words:
        flags |= {w[:k] for w in stems if " " not in w for k in (len(w), *range(4, len(w)))
                  if w[:k] in flag_words}
    if flags:
        out["f"] = flags
    return {g: frozenset(v) for g, v in out.items()}


def argument_flags(texts: list[str]) -> frozenset[str]:
    """The typed flags that tell tasks apart: those typed beside words that few other flags are
    typed beside. A flag among many in the same words ("document the new --verbose flag",
    "... --since", "... --limit") is a slot one task fills anew each time, not an argument
    (as for sleep.mine.alternatives' words with several partners)."""
    beside: dict[str, set[str]] = {}
    typed: list[set[str]] = []
    for t in texts:
        fs = flags_of(t)
        if fs:
            typed.append(fs)
            own = {_stem(f) for f in fs}
            for w in {_stem(w) for w in words(t) if w not in STOPWORDS} - own:
                beside.setdefault(w, set()).update(fs)
    partners: dict[str, int] = {}
    for fs in beside.values():
        for f in fs:
            partners[f] = max(partners.get(f, 0), len(fs) - 1)
    return frozenset(f for fs in typed for f in fs if partners.get(f, 0) <= MAX_FLAG_PARTNERS)


# The particles of English phrasal verbs: "turn on" / "turn off", "log in" / "log out", "roll out" /
# "roll back" state opposite requests in one particle, which the text cosine drops as a stop word.
# Other function words ("from" / "in") and politeness ("thanks" / "ty") swap between wordings of one
# request (measured on bench/mine.py's synthetic homes: swaps of any stop word lost recall 1.00 -> 0.74).
PARTICLES = frozenset("on off up down in out over back away".split())


def function_word_swaps(texts: list[str], min_df: int = 2, max_words: int = 16) -> dict[str, str]:
    """Particles that two requests of the project differ in, and nothing else ("turn
    ``new_checkout`` on" / "... off"): word -> the swap it is a side of (``"off|on"``). The text
    cosine drops them (sleep.mine.features.STOPWORDS), so the one-argument rule
    (sleep.mine.alternatives) never sees such a swap; the same conditions hold here: both words
    are :data:`PARTICLES`, recur (``min_df`` prompts), are never typed in one prompt together, and
    each is the other's only such partner (a particle swapped with several others is wording)."""
    rest_of: dict[tuple[str, ...], set[str]] = {}
    df: dict[str, int] = {}
    seen_with: dict[str, set[str]] = {}
    for t in texts:
        ws = tuple(sorted(set(words(t)) | set(name_words(t))))
        fw = [w for w in ws if w in PARTICLES]
        if not fw:
            continue
        for w in fw:
            df[w] = df.get(w, 0) + 1
            seen_with.setdefault(w, set()).update(fw)
        if 2 <= len(ws) <= max_words:
            for k, w in enumerate(ws):
                if w in PARTICLES:
                    rest_of.setdefault(ws[:k] + ws[k + 1:], set()).add(w)
    partners: dict[str, set[str]] = {}
    for left_out in rest_of.values():
        if len(left_out) > 1:
            for a in left_out:
                for b in left_out:
                    if a != b and b not in seen_with[a]:
                        partners.setdefault(a, set()).add(b)
    out: dict[str, str] = {}
    for a, bs in partners.items():
        if len(bs) == 1:
            b = next(iter(bs))
            if len(partners.get(b, ())) == 1 and min(df[a], df[b]) >= min_df:
                out[a] = "|".join(sorted((a, b)))
    return out


@dataclass
class Guard:
    """Row-aligned: ``claims`` (rows x values) and ``against`` (rows x values); see the module."""

    claims: sp.csr_matrix
    against: sp.csr_matrix

    def rows(self, idx: np.ndarray) -> Guard:
        return Guard(self.claims[idx], self.against[idx])

    @property
    def stacked(self) -> sp.csr_matrix:
        """``against`` over ``claims``, built once (every pair score looks it up)."""
        if not hasattr(self, "_stacked"):
            self._stacked = sp.vstack([self.against, self.claims]).tocsr()
        return self._stacked

    def conflict(self, i: np.ndarray, j: np.ndarray) -> np.ndarray:
        """A bool per pair (i[k], j[k]): the two prompts state different arguments."""
        from sleep.mine.cluster import rowwise_dot
        if self.against.nnz == 0 or i.size == 0:
            return np.zeros(i.size, dtype=bool)
        return rowwise_dot(self.stacked, i, j + self.claims.shape[0]) > 0


def touched_claims(files: list[str], typed: dict[str, set[str]]) -> dict[str, frozenset[str]]:
    """Typed-directory claims of the files a turn touched: ``config/locales/fr/app.yml`` claims
    "fr" for ``config/locales`` when the project's prompts type ``config/locales/<name>/`` as an
    argument and "fr" is one of the names typed there (``typed``: group -> names). A turn states
    its argument in what it edits as much as in what the person typed ("sync the French
    translations" edits ``config/locales/fr/``); a directory nobody types stays no argument."""
    out: dict[str, set[str]] = {}
    for path in files:
        parts = [p for p in path.replace("\\", "/").removeprefix("./").split("/") if p][:-1]
        for k in range(1, len(parts)):
            group = "d:" + "/".join(parts[:k]).lower()
            if parts[k].lower() in typed.get(group, ()):
                out.setdefault(group, set()).add(parts[k].lower())
    return {g: frozenset(v) for g, v in out.items()}


def build(texts: list[str], files: list[list[str]] | None = None, swaps: bool = True,
          identifiers: bool = True) -> Guard:
    """The guard of one project's prompts. ``files``: the files each prompt's turn touched (their
    typed-directory claims, :func:`touched_claims`; None: the words alone); ``swaps``: function
    words two requests differ in are claims (:func:`function_word_swaps`); ``identifiers``: the
    words of typed identifiers are read beside those of paths (sleep.mine.features.ident_names)."""
    values: dict[tuple[str, frozenset[str]], int] = {}
    rows, cols = [], []
    kept = argument_flags(texts)
    # A flag typed in the project names an argument wherever its word is used ("-race" / "the
    # race detector"); flags of three letters or more, without a dash inside, count as words.
    flag_words = frozenset(_stem(f) for f in kept if len(f) >= 3 and f.isalpha())
    swapped = function_word_swaps(texts) if swaps else {}
    claimed_of = [claims_of(t, flag_words, kept, identifiers) for t in texts]
    typed: dict[str, set[str]] = {}
    if files is not None:
        for of_text in claimed_of:
            for g, v in of_text.items():
                if g.startswith("d:"):
                    typed.setdefault(g, set()).update(v)
    for r, t in enumerate(texts):
        claimed = claimed_of[r]
        if typed and files is not None and files[r]:
            for g, v in touched_claims(files[r], typed).items():
                claimed[g] = claimed.get(g, frozenset()) | v
        if swapped:
            for w in set(words(t)) | set(name_words(t)):
                if w in swapped:
                    claimed["s:" + swapped[w]] = claimed.get("s:" + swapped[w], frozenset()) | {w}
        for g, v in claimed.items():
            rows.append(r)
            cols.append(values.setdefault((g, v), len(values)))
    n, m = len(texts), max(1, len(values))
    claims = sp.csr_matrix((np.ones(len(rows), dtype=np.float32), (rows, cols)), shape=(n, m))
    inc_r, inc_c = [], []
    by_group: dict[str, list[tuple[frozenset[str], int]]] = {}
    for (g, v), c in values.items():
        by_group.setdefault(g, []).append((v, c))
    for members in by_group.values():
        for va, ca in members:
            for vb, cb in members:
                if not (va <= vb or vb <= va):
                    inc_r.append(ca)
                    inc_c.append(cb)
    inc = sp.csr_matrix((np.ones(len(inc_r), dtype=np.float32), (inc_r, inc_c)), shape=(m, m))
    return Guard(claims, (claims @ inc).tocsr())
