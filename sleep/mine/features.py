"""What the miner compares: the words of a prompt and what the agent did for it.

Text: lower-cased words, with the parts that change from one occurrence of a
task to the next (file paths, identifiers, numbers, versions, issue numbers,
hashes, URLs) replaced by typed placeholders, politeness and function words
dropped, typos mapped to a word the project uses elsewhere (rapidfuzz, optimal
string alignment distance), English Snowball stems, plus adjacent-word pairs.
Weighted by scikit-learn TF-IDF per project; a word typed only once in the
project carries no similarity and is left out, so it does not dilute the rest.

The names of typed paths (``locales/de.json`` -> ``de``) are words the prompt uses
(for telling arguments apart), though not part of the weighted text.

Actions: the shell programs the agent ran (``pytest``, ``ruff check``;
``python -m``, ``uv run``, ``npx`` and the like unwrapped), the directories
and kinds of files it touched, the tools it used and the skills it invoked,
also TF-IDF weighted, so a command that every turn runs says little.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
import scipy.sparse as sp
import snowballstemmer
from rapidfuzz import process
from rapidfuzz.distance import OSA
from sklearn.feature_extraction.text import TfidfVectorizer

from sleep.mine.alternatives import alternative_matrix, alternative_pairs, pair_matrix
from sleep.mine.embed import unit_rows

# Looking around (reading, listing, searching, status) says little about the task.
EXPLORE = frozenset("""
ls cat cd pwd echo grep rg ag find fd head tail sed awk wc which where type tree less more stat file true
sleep env export printf set test [ xargs sort uniq cut tr jq open code vim nano
""".split())
EXPLORE_GIT = frozenset({"status", "diff", "log", "show", "branch", "rev-parse", "remote", "fetch", "blame"})
PACKAGE_MANAGERS = frozenset({"npm", "pnpm", "yarn", "bun"})
_WRAPPERS = frozenset({("uv", "run"), ("poetry", "run"), ("pipenv", "run"), ("pdm", "run"), ("hatch", "run"),
                       ("rye", "run"), ("bundle", "exec"), ("pnpm", "exec"), ("pnpm", "dlx"), ("npm", "exec"),
                       ("yarn", "dlx")})
_RUNNERS = frozenset({"npx", "bunx", "pnpx"})
_SUB = re.compile(r"^[a-z][a-z0-9:_-]*$")

STOPWORDS = frozenset("""
a an the and or but if then than so to of in on at by for from with without into onto over about as is are
was were be been being am do does did done doing have has had having i me my mine we us our you your yours it
its this that these those there here what which who whom whose when where how can could would should will
shall may might must just also again now please pls plz kindly hey hi hello thanks thank thx ty cheers ok
okay quick quickly some any all every each both few more most other such only own same too very really
actually basically maybe perhaps still yet let lets let's want need needs wanna gonna like one bit little
i'm i'd i'll you're it's that's what's don't can't won't isn't aren't didn't doesn't up out off via
""".split())
# Words a person uses interchangeably when asking a coding agent for something (stems).
# Deliberately few: a synonym that joins two different tasks costs more than one missed.
SYNONYM_GROUPS = {
    "show": ("list", "show", "tell", "give", "display"),
    "run": ("run", "execut", "launch"),
    "fix": ("fix", "repair", "resolv", "correct"),
    "remov": ("remov", "delet", "drop", "uninstal", "kill"),
    "upgrad": ("upgrad", "updat", "bump"),
    "add": ("add", "creat", "scaffold"),
    "fail": ("fail", "failur", "broke", "broken", "red"),
    "error": ("error", "problem", "violat"),
    "check": ("check", "verifi", "valid", "ensur", "confirm"),
    "summar": ("summar", "recap"),
    "test": ("test", "spec"),
    "benchmark": ("benchmark", "bench"),
    "doc": ("doc", "document"),
}
# Same word, other spelling or stem: kept to what any English text needs.
_LEMMA = {"failur": "fail", "prod": "product",
          "summari": "summar", "tf": "terraform", "msg": "messag", "repo": "repositori", "deps": "depend",
          "dep": "depend", "regen": "regener", "cfg": "config", "conf": "config", "prs": "pr",
          "specs": "spec", "e2e": "e2e", "summariz": "summar"}

_URL = re.compile(r"\b(?:https?|ssh|git)://\S+")
_END_TO_END = re.compile(r"\bend[\s-]to[\s-]end\b", re.I)
_EXT = r"(?:py|pyi|ts|tsx|js|jsx|mjs|rs|go|rb|java|kt|swift|c|h|cc|cpp|hpp|cs|md|rst|txt|json|ya?ml|toml|" \
       r"tf|tfvars|hcl|sql|sh|css|scss|html|vue|svelte|lock|cfg|ini|xml|proto|graphql|ipynb|csv|env)"
_PATH = re.compile(r"(?<![\w@])(?:[~.]{0,2}/)?(?:[\w@.+-]+/)+[\w@.+-]*|\b[\w.-]+\." + _EXT + r"\b", re.I)
_VERSION = re.compile(r"\bv?\d+(?:\.\d+){1,3}(?:[-+][\w.]+)?\b", re.I)
_REF = re.compile(r"(?:#\d+\b|\b[A-Z]{2,10}-\d+\b)")
_SHA = re.compile(r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b")
_NUMBER = re.compile(r"\b\d+(?:[.,]\d+)?\w*\b")
_IDENT = re.compile(r"\b(?:[A-Za-z]+_[\w]+|[a-z]+[A-Z]\w*|[A-Z][a-z0-9]+[A-Z]\w*)\b")
_WORDS = re.compile(r"[^\W\d_]+", re.UNICODE)
# Stop words in lower case that typed in capitals between lower-case words are names: "the US
# inventory", "ask IT", "the AS number", "an OR query" (typed alone; a prompt in capitals is shouting).
_ACRONYM = re.compile(r"(?<![\w-])(?:US|IT|AS|OR)(?!\w)")
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")
_BRITISH = re.compile(r"(?<=\w\w\w)is(e|ed|es|ing|ation|ations)$")

_STEMMER = snowballstemmer.stemmer("english")
_PLACEHOLDER_STEMS = frozenset({"xurl", "xref", "xver", "xsha", "xident", "xnum", "xpath"} |
                               {"xpath" + e for e in ("py", "ts", "tsx", "js", "rs", "go", "md", "json", "yaml",
                                                      "yml", "toml", "tf", "sql", "sh", "txt", "lock", "proto")})


_CANONICAL = {stem: head for head, stems in SYNONYM_GROUPS.items() for stem in stems}


@lru_cache(maxsize=200_000)
def _stem(word: str) -> str:
    word = _BRITISH.sub(r"iz\1", word)
    stem = _STEMMER.stemWord(word)
    stem = _LEMMA.get(stem, stem)
    return _CANONICAL.get(stem, stem)


def _path_token(match: re.Match[str]) -> str:
    path = match.group(0).rstrip("/.")
    ext = os.path.splitext(path)[1].lower().lstrip(".")
    return f" xpath{ext if ext.isalnum() and len(ext) <= 6 else ''} "


def _ident_token(match: re.Match[str]) -> str:
    """An identifier is a name that changes between occurrences; a short mixed-case word
    without ``_`` or digits ("iOS", "macOS", "iPad", "GitHub") is a word."""
    word = match.group(0)
    return word if len(word) <= 6 and word.isalpha() else " xident "


_RE_PREFIX = re.compile(r"\bre-(?=[a-z])", re.I)
_PULL_REQUEST = re.compile(r"\bpull requests?\b", re.I)


@lru_cache(maxsize=100_000)
def words(text: str) -> tuple[str, ...]:
    """The lower-cased words of ``text`` with changing parts replaced by placeholders
    (before stop words, typos and stems: see :func:`tokens`). Each pattern runs only
    when the text holds a character it needs: most prompts skip most of them."""
    digits = any(c.isdigit() for c in text)
    if "://" in text:
        text = _URL.sub(" xurl ", text)
    if "end" in text or "End" in text:
        text = _END_TO_END.sub(" e2e ", text)
    text = text.replace("`", " ")
    if "/" in text or "." in text:
        text = _PATH.sub(_path_token, text)
    if digits:
        text = _REF.sub(" xref ", text)
        text = _VERSION.sub(" xver ", text)
        text = _SHA.sub(" xsha ", text)
    if not text.islower():
        if sum(c.isupper() for c in text) * 3 < sum(c.islower() for c in text):
            text = _ACRONYM.sub(lambda mt: f" {mt.group(0).lower()}acr ", text)
        text = _IDENT.sub(_ident_token, text)
    elif "_" in text:
        text = _IDENT.sub(_ident_token, text)
    if digits:
        text = _NUMBER.sub(" xnum ", text)
    if "-" in text:
        text = _RE_PREFIX.sub("re", text)
    if "ull" in text:
        text = _PULL_REQUEST.sub(" pr ", text)
    return tuple(w for w in _WORDS.findall(text.casefold()) if len(w) > 1 or w == "e2e")


@lru_cache(maxsize=100_000)
def path_names(text: str) -> tuple[str, ...]:
    """The name words of the paths typed in ``text`` (``locales/de.json`` -> ``de``,
    ``CHANGELOG.md`` -> ``changelog``, ``src/`` -> ``src``): the path itself becomes a
    placeholder in :func:`words`, but its name can be the argument that tells two tasks
    apart ("fill in locales/de.json" / "fill in locales/fr.json")."""
    if "/" not in text and "." not in text:
        return ()
    out: list[str] = []
    for match in _PATH.finditer(text.replace("`", " ")):
        path = match.group(0).rstrip("/.")
        name = path.rsplit("/", 1)[-1].split("::", 1)[0]
        stem = os.path.splitext(name)[0] if "." in name else name
        out += [w for w in _WORDS.findall(_CAMEL.sub(" ", stem).casefold().replace("_", " ")) if len(w) > 1]
    return tuple(out)


@lru_cache(maxsize=100_000)
def ident_names(text: str) -> tuple[str, ...]:
    """The words of the identifiers typed in ``text`` (``orders_daily`` -> ``orders``, ``daily``;
    ``newCheckout`` -> ``new``, ``checkout``): an identifier becomes a placeholder in
    :func:`words`, but its words can be the argument ("backfill ``orders_daily``" /
    "backfill ``events_daily``"), as a path's name can (:func:`path_names`)."""
    if "_" not in text and text.islower():
        return ()
    if "/" in text or "." in text:
        text = _PATH.sub(" ", text.replace("`", " "))
    out: list[str] = []
    for match in _IDENT.finditer(text):
        word = match.group(0)
        if len(word) <= 6 and word.isalpha():
            continue  # a word, as in :func:`_ident_token`
        out += [w for w in _WORDS.findall(_CAMEL.sub(" ", word).casefold().replace("_", " ")) if len(w) > 1]
    return tuple(out)


def name_words(text: str) -> tuple[str, ...]:
    """The words of the names typed in ``text``: of its paths and of its identifiers."""
    return path_names(text) + ident_names(text)


def typo_map(vocab: Counter[str], min_len: int = 5) -> dict[str, str]:
    """Map words used once to a word used more often within one edit (two for long words)."""
    frequent = [w for w, c in vocab.items() if c >= 2 and len(w) >= min_len - 1 and w not in STOPWORDS]
    if not frequent:
        return {}
    out: dict[str, str] = {}
    for w, c in vocab.items():
        if c != 1 or len(w) < min_len or w in STOPWORDS or w.startswith("x"):
            continue
        limit = 1 if len(w) < 8 else 2
        hit = process.extractOne(w, frequent, scorer=OSA.distance, score_cutoff=limit)
        if hit is not None and hit[0] != w:
            out[w] = hit[0]
    return out


def tokens(ws: tuple[str, ...] | list[str], typos: dict[str, str], bigrams: bool = True) -> list[str]:
    """Content-word stems of ``ws`` (from :func:`words`) and, if asked, adjacent pairs."""
    stems = [_stem(typos.get(w, w)) for w in ws if w not in STOPWORDS]
    if bigrams and len(stems) > 1:
        return stems + [f"{a}_{b}" for a, b in zip(stems, stems[1:])]
    return stems


def program(signature: str) -> tuple[str, str | None] | None:
    """``(program, subcommand)`` of a shell signature, wrappers unwrapped; None if empty."""
    parts = [p for p in signature.strip().split() if p]
    while parts and (("=" in parts[0] and not parts[0].startswith("-")) or parts[0] in ("sudo", "time", "nohup", "env", "exec")):
        parts = parts[1:]
    for _ in range(3):
        if len(parts) >= 3 and os.path.basename(parts[0]).startswith("python") and parts[1] == "-m":
            parts = parts[2:]
        elif len(parts) >= 2 and os.path.basename(parts[0]) in _RUNNERS:
            parts = parts[1:]
        elif len(parts) >= 3 and (os.path.basename(parts[0]), parts[1]) in _WRAPPERS:
            parts = parts[2:]
        else:
            break
    if not parts:
        return None
    prog = os.path.basename(parts[0]).lower().removesuffix(".exe")
    if not prog:
        return None
    sub = parts[1].lower() if len(parts) > 1 and _SUB.match(parts[1].lower()) else None
    if prog in PACKAGE_MANAGERS and sub == "run" and len(parts) > 2 and _SUB.match(parts[2].lower()):
        sub = parts[2].lower()
    return prog, sub


def action_tokens(shell: list[str], files: list[str], tools: dict[str, int] | list[str],
                  skills: dict[str, int] | list[str]) -> tuple[list[str], frozenset[str]]:
    """Action tokens of one task turn, and its distinctive programs (for telling tasks apart).

    A package manager's scripts count as one program (``npm test`` and ``pnpm test`` are
    the same work); looking-around commands are tokens but never distinctive.
    """
    out: list[str] = []
    distinctive: set[str] = set()
    for sig in shell:
        parsed = program(sig)
        if parsed is None:
            continue
        prog, sub = parsed
        explore = prog in EXPLORE or (prog == "git" and (sub in EXPLORE_GIT or sub is None))
        if prog in PACKAGE_MANAGERS:
            out += ["pm", f"pm:{sub}" if sub else "pm"]
            if not explore:
                distinctive.add("pm")
            continue
        prefix = "look:" if explore else "sh:"
        out.append(prefix + prog)
        if sub:
            out.append(f"{prefix}{prog} {sub}")
        if not explore:
            distinctive.add(f"{prog} {sub}" if prog == "git" else prog)
    for path in files:
        norm = path.replace("\\", "/").strip("/")
        head, _, name = norm.rpartition("/")
        ext = os.path.splitext(name)[1].lower().lstrip(".")
        if ext:
            out.append(f"ext:{ext}")
        if head:
            out.append(f"top:{head.split('/')[0]}")
            out.append(f"dir:{head}")
        stem_name = os.path.splitext(name)[0]
        out += [f"fw:{_stem(w)}" for w in _WORDS.findall(_CAMEL.sub(" ", stem_name).casefold().replace("_", " "))
                if len(w) > 2 and w not in STOPWORDS]
    out += [f"tool:{t}" for t in tools]
    out += [f"skill:{s}" for s in skills]
    return out, frozenset(distinctive)


@dataclass(frozen=True)
class FeatureParams:
    bigrams: bool = True
    min_df_text: int = 1
    min_df_actions: int = 2
    agent_nouns: bool = True  # "linter" -> "lint" when the project also says "lint"
    placeholders: bool = False  # keep "a path / a name was here" tokens in the text vector
    alternatives: bool = True  # find words that stand for one another as an argument
    once_fillers: bool = True  # a word typed once in the place of an argument word is another value of it
    path_names: bool = True  # the names of typed paths count as words a prompt uses (not in the text vector)
    ident_names: bool = True  # ... and the words of typed identifiers (``orders_daily``), also for the guard
    char_weight: float = 0.0  # share of character 3-5-gram TF-IDF in the text cosine (0: words only)
    embed_weight: float = 0.0  # share of the sentence-embedding cosine, when vectors are given (sleep.mine.embed)


@dataclass
class Features:
    """Row-aligned matrices: ``text`` and ``actions`` are L2-normalised TF-IDF rows."""

    text: sp.csr_matrix
    actions: sp.csr_matrix  # everything the turn did, one vector (for centroids)
    has_actions: np.ndarray  # bool per row
    programs: list[frozenset[str]]
    terms: sp.csr_matrix  # binary: which content words (unigram stems) a row uses
    marks: sp.csr_matrix  # binary: telling actions (programs with subcommand, directories, file-name words)
    acting: np.ndarray  # bool: the turn ran a shell command or touched a file
    mark_is_file: np.ndarray  # bool per marks column: it comes from a file (else from a command)
    has_shell: np.ndarray  # bool per row
    has_files: np.ndarray  # bool per row
    shell_side: sp.csr_matrix  # commands and skills only (compared when both turns have them)
    file_side: sp.csr_matrix  # files only
    alts: sp.csr_matrix | None = None  # binary: alternatives of the row's words (sleep.mine.alternatives)
    alt: sp.csr_matrix | None = None  # binary, words x words: which words are alternatives of which
    guard: Any = None  # sleep.mine.guard.Guard: the arguments each row states (set by sleep.mine.group)
    words: sp.csr_matrix | None = None  # the words' rows alone, when ``text`` blends in other parts
    # Everything the turn did, also what one turn alone did (a file touched once), which ``actions``
    # leaves out: two turns that read different files of one folder did not do the same.
    actions_all: sp.csr_matrix | None = None

    @property
    def shell_recorded(self) -> np.ndarray:
        if not hasattr(self, "_shell_recorded"):
            self._shell_recorded = np.asarray(self.shell_side.getnnz(axis=1) > 0)
        return self._shell_recorded

    @property
    def files_recorded(self) -> np.ndarray:
        if not hasattr(self, "_files_recorded"):
            self._files_recorded = np.asarray(self.file_side.getnnz(axis=1) > 0)
        return self._files_recorded

    @property
    def alts_over_terms(self) -> sp.csr_matrix:
        """``alts`` stacked over ``terms`` (built once: pairs are scored one argument apart
        for every linkage check, and each stacking would index the matrix anew)."""
        if not hasattr(self, "_alts_over_terms"):
            assert self.alts is not None
            self._alts_over_terms = sp.vstack([self.alts, self.terms]).tocsr()
        return self._alts_over_terms

    def rows(self, idx: np.ndarray) -> Features:
        return Features(self.text[idx], self.actions[idx], self.has_actions[idx],
                        [self.programs[i] for i in idx], self.terms[idx], self.marks[idx], self.acting[idx],
                        self.mark_is_file, self.has_shell[idx], self.has_files[idx], self.shell_side[idx],
                        self.file_side[idx], None if self.alts is None else self.alts[idx], self.alt,
                        None if self.guard is None else self.guard.rows(idx),
                        None if self.words is None else self.words[idx],
                        None if self.actions_all is None else self.actions_all[idx])


def _identity(doc: list[str]) -> list[str]:
    return doc


def agent_noun_map(stems: set[str]) -> dict[str, str]:
    """``linter`` -> ``lint``, ``checker`` -> ``check`` when the shorter stem is also used."""
    return {s: s[:-2] for s in stems if s.endswith("er") and len(s) >= 6 and s[:-2] in stems}


def featurize(texts: list[str], actions: list[tuple[list[str], list[str], Any, Any]],
              params: FeatureParams = FeatureParams(), vectors: np.ndarray | None = None) -> Features:
    """Build the features of one project's prompts (``actions``: shell, files, tools, skills;
    ``vectors``: one sentence embedding per prompt (sleep.mine.embed centres them), blended into the text cosine by
    ``params.embed_weight``)."""
    all_words = [words(t) for t in texts]
    vocab: Counter[str] = Counter()
    for ws in all_words:
        vocab.update(set(ws))
    typos = typo_map(vocab)
    docs = [tokens(ws, typos, bigrams=False) for ws in all_words]
    if not params.placeholders:
        docs = [[t for t in d if not t.startswith("x") or t not in _PLACEHOLDER_STEMS] for d in docs]
    if params.agent_nouns:
        nouns = agent_noun_map({t for d in docs for t in d})
        if nouns:
            docs = [[nouns.get(t, t) for t in d] for d in docs]
    term_docs, plain = docs, None
    if params.path_names:
        # "fill in locales/de.json" / "... fr.json": the argument is only in the path's name. The
        # names join the words compared for alternatives and contrast, not the weighted text,
        # where a file that changes between occurrences of one task would dilute the rest.
        term_docs, plain = [], []
        for d, t in zip(docs, texts):
            found = name_words(t) if params.ident_names else path_names(t)
            named = [w for w in (_stem(x) for x in found if x not in STOPWORDS) if w not in d]
            term_docs.append(d + named if named else d)
            if named:
                plain.append(d)  # one word apart without the names too ("... en.json to German")
    term_vocab: dict[str, int] = {}
    terms = _binary(term_docs, term_vocab)
    pairs: set[tuple[int, int]] = set()
    if params.alternatives:
        pairs = alternative_pairs(term_docs, term_vocab, terms, also=plain, once=params.once_fillers)
    alt = pair_matrix(terms.shape[1], pairs)
    alts = alternative_matrix(terms, alt)
    if params.bigrams:
        docs = [d + [f"{a}_{b}" for a, b in zip(d, d[1:])] for d in docs]
    text = words_only = _tfidf(docs, min_df=params.min_df_text)
    parts = [(text, 1.0 - params.char_weight - (params.embed_weight if vectors is not None else 0.0))]
    if params.char_weight > 0:
        parts.append((_char_tfidf(all_words), params.char_weight))
    if vectors is not None and params.embed_weight > 0:
        parts.append((sp.csr_matrix(unit_rows(vectors)), params.embed_weight))
    if len(parts) > 1:
        text = blend(parts)
    else:
        words_only = None
    acts = [action_tokens(*a) for a in actions]
    action_docs = [a[0] for a in acts]
    amat = _tfidf(action_docs, min_df=params.min_df_actions)
    has = np.asarray(amat.getnnz(axis=1) > 0)
    names: dict[str, int] = {}
    marks = _binary([[t for t in d if t.startswith(_TELLING)] for d in action_docs], names)
    is_file = np.zeros(marks.shape[1], dtype=bool)
    for name, col in names.items():
        is_file[col] = name.startswith(("dir:", "fw:"))
    has_shell = np.array([bool(a[0]) for a in actions], dtype=bool)
    has_files = np.array([bool(a[1]) for a in actions], dtype=bool)
    shell_side = _tfidf([[t for t in d if not t.startswith(_FILE_SIDE + ("tool:",))] for d in action_docs],
                        min_df=params.min_df_actions)
    file_side = _tfidf([[t for t in d if t.startswith(_FILE_SIDE)] for d in action_docs],
                       min_df=params.min_df_actions)
    return Features(text, amat, has, [a[1] for a in acts], terms, marks, has_shell | has_files, is_file,
                    has_shell, has_files, shell_side, file_side, alts, alt, words=words_only,
                    actions_all=_tfidf(action_docs, min_df=1))


def blend(parts: list[tuple[sp.csr_matrix, float]]) -> sp.csr_matrix:
    """Unit rows whose cosine is the weighted sum of the parts' cosines (each part has unit
    rows): the parts side by side, each scaled by the root of its weight, rows re-normalised
    (a row empty in one part is compared by the others alone)."""
    if any(w < 0 for _, w in parts):
        raise ValueError(f"blend weights must be >= 0, got {[w for _, w in parts]}")
    x = sp.hstack([m * np.float32(np.sqrt(w)) for m, w in parts if w > 0], format="csr", dtype=np.float32)
    norms = np.sqrt(np.asarray(x.multiply(x).sum(axis=1)).ravel())
    norms[norms == 0] = 1.0
    return sp.csr_matrix(sp.diags((1.0 / norms).astype(np.float32)) @ x, dtype=np.float32)


def _char_tfidf(all_words: list[tuple[str, ...]]) -> sp.csr_matrix:
    """Character 3-5-grams (within words) of the placeholder-substituted words."""
    docs = [" ".join(ws) for ws in all_words]
    if not any(docs):
        return sp.csr_matrix((len(docs), 1), dtype=np.float32)
    vec = TfidfVectorizer(analyzer="char_wb", ngram_range=(3, 5), sublinear_tf=True, min_df=min(2, len(docs)),
                          dtype=np.float32)
    try:
        return vec.fit_transform(docs).tocsr()
    except ValueError:
        return sp.csr_matrix((len(docs), 1), dtype=np.float32)


_TELLING = ("sh:", "pm:", "dir:", "fw:")
_FILE_SIDE = ("ext:", "top:", "dir:", "fw:")


def _binary(docs: list[list[str]], vocab: dict[str, int] | None = None) -> sp.csr_matrix:
    vocab = {} if vocab is None else vocab
    rows, cols = [], []
    for r, d in enumerate(docs):
        for t in set(d):
            rows.append(r)
            cols.append(vocab.setdefault(t, len(vocab)))
    return sp.csr_matrix((np.ones(len(rows), dtype=np.float32), (rows, cols)),
                         shape=(len(docs), max(1, len(vocab))))


def _tfidf(docs: list[list[str]], min_df: int) -> sp.csr_matrix:
    n = len(docs)
    if n == 0 or not any(docs):
        return sp.csr_matrix((n, 1), dtype=np.float32)
    vec = TfidfVectorizer(analyzer=_identity, min_df=min(min_df, n), sublinear_tf=True, norm="l2",
                          dtype=np.float32)
    try:
        return vec.fit_transform(docs).tocsr()
    except ValueError:  # nothing left after min_df
        return sp.csr_matrix((n, 1), dtype=np.float32)
