"""Arguments that make two requests two tasks (sleep.mine.guard; issue 31 §4)."""

from __future__ import annotations

import numpy as np

from sleep.mine import guard
from sleep.mine.cluster import ClusterParams
from sleep.mine.group import cluster_pool
from sleep.mine.select import PoolItem


def test_claims_read_opposites_typed_directories_and_flags() -> None:
    assert set(guard.claims_of("disable the beta banner").values()) == {frozenset({"1"})}
    assert guard.claims_of("roll back the last deploy") == guard.claims_of("undo the last deploy")
    assert guard.claims_of("lower the api replicas") == guard.claims_of("scale the api down")  # one axis
    assert guard.claims_of("regenerate tests/snapshots/cli/") == {"d:tests/snapshots": frozenset({"cli"})}
    assert guard.claims_of("go test -race ./...")["f"] == frozenset({"race"})
    # A flag typed elsewhere in the project names an argument in words too.
    assert guard.claims_of("run the tests with the race detector", frozenset({"race"}))["f"] == {"race"}
    assert guard.claims_of("explain the retry loop") == {}


def test_two_prompts_conflict_only_when_each_states_what_the_other_does_not() -> None:
    g = guard.build(["copy content/en/ into content/de/", "update content/de/", "update content/es/",
                     "enable the cache", "disable the cache", "enable and disable the cache twice",
                     "explain the cache"])
    pairs = [(0, 1), (1, 2), (0, 2), (3, 4), (3, 5), (4, 5), (3, 6)]
    i, j = np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])
    assert g.conflict(i, j).tolist() == [False, True, True, True, False, False, False]
    assert g.conflict(j, i).tolist() == g.conflict(i, j).tolist()


def _pool(texts: list[str]) -> list[PoolItem]:
    return [PoolItem(project="/p", host="claude-code", session_id=f"s{n}", prompt_index=0, at=None, text=t,
                     shell=["kubectl scale"]) for n, t in enumerate(texts)]


def test_the_words_only_miner_keeps_opposite_requests_apart() -> None:
    """"up" and "down" are stop words to the text cosine: without the guard the two tasks merge."""
    up = ["scale the api deployment up to 6 replicas", "scale up the api pods for the launch",
          "the api needs more replicas, scale it up"]
    down = ["scale the api deployment down to 2 replicas", "scale down the api pods after the launch",
            "the api has too many replicas, scale it down"]
    pool = _pool(up + down)
    groups, _ = cluster_pool(pool)
    assert sorted(g.rows for g in groups) == [[0, 1, 2], [3, 4, 5]]
    merged, _ = cluster_pool(pool, ClusterParams(guard=False))
    assert [g.rows for g in merged] == [[0, 1, 2, 3, 4, 5]]


def test_flags_typed_beside_the_same_words_as_many_others_are_a_slot() -> None:
    """"Document the new --verbose flag" / "... --since" / "... --limit": one task whose flag changes
    each time; "go test -race" / "go test -cover": two tasks."""
    readme = [f"document the new --{f} flag in the README" for f in ("verbose", "since", "limit", "no-color")]
    go = ["go test -race ./...", "go test -cover ./..."]
    assert guard.argument_flags(readme + go) == {"race", "cover"}
    g = guard.build(readme + go)
    n = len(readme)
    assert not g.conflict(np.arange(n - 1), np.arange(1, n)).any()
    assert g.conflict(np.array([n]), np.array([n + 1])).tolist() == [True]


def test_a_function_word_two_requests_differ_in_is_an_argument() -> None:
    """"turn X on" / "turn X off": the text cosine drops "on" and "off" (stop words) and no list
    names them; two recurring requests one particle apart are two tasks. A particle swapped with
    several others ("on" / "in" / "over") is wording, and one typed once is no argument."""
    on = ["turn the beta checkout flag on", "turn the beta checkout flag on for everyone",
          "please turn the beta checkout flag on"]
    off = ["turn the beta checkout flag off", "turn the beta checkout flag off for everyone",
           "please turn the beta checkout flag off"]
    assert guard.function_word_swaps(on + off) == {"on": "off|on", "off": "off|on"}
    wording = ["run the tests on the api", "run the tests in the api", "run the tests over the api",
               "run the tests on staging", "run the tests in staging", "run the tests over staging"]
    assert guard.function_word_swaps(wording) == {}
    polite = ["run the tests thanks", "run the tests ty", "lint it thanks", "lint it ty",
              "fetch it from the cache", "fetch it in the cache", "read it from the db", "read it in the db"]
    assert guard.function_word_swaps(polite) == {}  # not particles: wordings of one request
    assert guard.function_word_swaps(["turn caching on", "turn caching off"]) == {}  # each typed once
    g = guard.build(on + off)
    assert g.conflict(np.array([0, 1, 0]), np.array([3, 4, 1])).tolist() == [True, True, False]
    pool = [PoolItem(project="/p", host="claude-code", session_id=f"s{n}", prompt_index=0, at=None, text=t,
                     files=["config/features.yml"]) for n, t in enumerate(on + off)]
    groups, _ = cluster_pool(pool)
    assert sorted(g.rows for g in groups) == [[0, 1, 2], [3, 4, 5]]
    merged, _ = cluster_pool(pool, ClusterParams(guard=False))
    assert [g.rows for g in merged] == [[0, 1, 2, 3, 4, 5]]


def test_an_identifier_s_words_are_an_argument_as_a_path_s_name_is() -> None:
    """"backfill orders_daily" / "backfill events_daily": the identifier is a placeholder in the
    text, but "orders" / "events" is the argument that another pair of prompts swaps."""
    texts = ["backfill the orders table for last week", "backfill the events table for last week",
             "airflow backfill of orders_daily, 7 days", "airflow backfill of events_daily, 7 days"]
    pool = [PoolItem(project="/p", host="claude-code", session_id=f"s{n}", prompt_index=0, at=None, text=t,
                     shell=["airflow dags backfill"]) for n, t in enumerate(texts)]
    groups, _ = cluster_pool(pool)
    orders, events = {0, 2}, {1, 3}
    assert all(not (set(g.rows) & orders and set(g.rows) & events) for g in groups)
    # Before, the two identifier prompts were one (their words the same, the identifier a placeholder).
    assert not any(set(g.rows) == {2, 3} for g in groups)


def test_a_turn_states_a_typed_directory_argument_in_the_files_it_edits() -> None:
    """"sync the French translations" types no directory but edits config/locales/fr/: where the
    project types config/locales/<name>/ as an argument, the edit claims "fr"; a directory nobody
    types (content/blog/) and a name never typed there (ja) claim nothing."""
    typed = {"d:config/locales": {"fr", "it"}}
    assert guard.touched_claims(["config/locales/fr/app.yml"], typed) == {"d:config/locales": frozenset({"fr"})}
    assert guard.touched_claims(["config/locales/ja/app.yml", "content/blog/post.md"], typed) == {}
    texts = ["fill in the missing keys in config/locales/fr/", "fill in the missing keys in config/locales/it/",
             "sync the French translations with the English ones",
             "sync the Italian translations with the English ones"]
    files = [["config/locales/fr/app.yml"], ["config/locales/it/app.yml"], ["config/locales/fr/app.yml"],
             ["config/locales/it/app.yml"]]
    with_files, words_only = guard.build(texts, files), guard.build(texts)
    i, j = np.array([2, 0, 1]), np.array([3, 3, 2])
    assert with_files.conflict(i, j).tolist() == [True, True, True]
    assert words_only.conflict(i, j).tolist() == [False, False, False]


def test_accepting_and_rejecting_are_opposite_requests_in_several_languages() -> None:
    texts = ["accept the pending snapshots", "übernimm die neuen Snapshots", "verwirf die neuen Snapshots",
             "reject the pending snapshots", "run the snapshot tests"]
    g = guard.build(texts)
    i, j = np.array([0, 1, 0, 2, 0]), np.array([1, 2, 3, 3, 4])
    assert g.conflict(i, j).tolist() == [False, True, True, False, False]
