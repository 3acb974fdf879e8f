"""Grouping the hand-labelled corpus (tests/sleep/mine_corpus.py): recurring tasks are
found, paraphrases join, near-misses and one-offs stay apart."""

from __future__ import annotations

from collections import Counter, defaultdict

import mine_corpus as mc
import pytest

from sleep.mine.group import cluster_pool
from sleep.mine.select import PoolItem, extract

MIN_SUPPORT = 2


@pytest.fixture(scope="module")
def mined() -> tuple[mc.Corpus, dict[tuple[str, str, int], int], dict[int, list[PoolItem]]]:
    """(corpus, task number of every prompt in a task, members of every task)."""
    corpus = mc.build()
    by_project: dict[str, list[PoolItem]] = defaultdict(list)
    for s in corpus.sessions:
        by_project[s.project_dir or ""] += extract(s)[0]
    task_of: dict[tuple[str, str, int], int] = {}
    members: dict[int, list[PoolItem]] = {}
    for items in by_project.values():
        for g in cluster_pool(items)[0]:
            group = [items[r] for r in g.rows]
            if len({(it.host, it.session_id) for it in group}) >= MIN_SUPPORT:
                n = len(members)
                members[n] = group
                for it in group:
                    task_of[it.key] = n
    return corpus, task_of, members


def _majority(corpus: mc.Corpus, group: list[PoolItem]) -> tuple[str, float]:
    label, count = Counter(corpus.labels[it.key] for it in group).most_common(1)[0]
    return label, count / len(group)


def test_most_recurring_tasks_are_found_as_one_task(mined) -> None:
    corpus, task_of, members = mined
    found = 0
    for keys in corpus.clusters().values():
        tasks = Counter(task_of.get(k) for k in keys if task_of.get(k) is not None)
        if tasks and tasks.most_common(1)[0][1] / len(keys) >= 0.5:
            found += 1
    assert found / len(corpus.clusters()) >= 0.85


def test_found_tasks_are_pure(mined) -> None:
    corpus, _, members = mined
    pure = [g for g in members.values() if _majority(corpus, g)[1] >= 0.8]
    assert len(pure) / len(members) >= 0.95


@pytest.mark.parametrize("pair", sorted(tuple(sorted(p)) for p in mc.build().near_miss_pairs))
def test_near_miss_tasks_are_kept_apart(mined, pair: tuple[str, str]) -> None:
    corpus, _, members = mined
    for group in members.values():
        labels = {corpus.labels[it.key] for it in group}
        assert not set(pair) <= labels, f"one task holds both {pair}"


def test_a_prompt_typed_once_is_no_task(mined) -> None:
    corpus, _, members = mined
    assert all(not _majority(corpus, g)[0].startswith("oneoff") for g in members.values())


@pytest.mark.parametrize("variant", [
    "run the unti tests and summarize the failures",  # typo
    "unit tests -> list failures",  # terse
    "can you run the unit test suite and tell me which tests fail?",  # polite, other words
    "Run pytest on the unit tests and give me the list of failing tests, no fixes yet",  # other order
])
def test_paraphrases_join_their_task(mined, variant: str) -> None:
    corpus, task_of, members = mined
    anchor = next(k for k, lab in corpus.labels.items() if lab == "billing/unit-tests" and k[1].endswith("-0"))
    variant_key = next(it.key for g in members.values() for it in g if it.text == variant)
    assert task_of[variant_key] == task_of[anchor]


def test_changing_file_names_do_not_split_a_task(mined) -> None:
    corpus, task_of, _ = mined
    keys = [k for k, lab in corpus.labels.items() if lab == "billing/migration-add-column"]
    assert len({task_of.get(k) for k in keys}) == 1 and task_of.get(keys[0]) is not None


def test_the_same_words_in_two_projects_are_two_tasks(mined) -> None:
    corpus, task_of, _ = mined
    billing = next(k for k, lab in corpus.labels.items() if lab == "billing/unit-tests")
    webshop = next(k for k, lab in corpus.labels.items() if lab == "webshop/unit-tests")
    assert task_of[billing] != task_of[webshop]


def test_turns_doing_the_same_link_unless_the_command_serves_several_tasks() -> None:
    """Paraphrases sharing no word but the command ("cut a patch release" / "saca una versión de
    parche", both ``cargo release``) are one task; a request sharing only ``flutter build`` with
    both the iOS and the Android builds (their prompts state different arguments) joins neither."""
    from dataclasses import replace

    from sleep.mine.cluster import ClusterParams

    rows = [("build the iOS release", "flutter build"), ("flutter build ios --release", "flutter build"),
            ("erstelle den iOS-Release-Build", "flutter build"), ("build the Android release", "flutter build"),
            ("flutter build appbundle --release", "flutter build"), ("make an aab for the Play Store", "flutter build"),
            ("cut a patch release", "cargo release"), ("bump the version, tag it and publish", "cargo release"),
            ("saca una versión de parche", "cargo release")]
    pool = [PoolItem(project="/p", host="claude-code", session_id=f"s{n}", prompt_index=0, at=None, text=t,
                     shell=[sh], files=["Cargo.toml"] if sh == "cargo release" else [])
            for n, (t, sh) in enumerate(rows)]
    acts = replace(ClusterParams(), action_candidates=0.9)  # as with e5 (sleep.mine.embed.ACTION_CANDIDATES)
    groups = [g.rows for g in cluster_pool(pool, acts)[0]]
    assert [6, 7, 8] in groups
    assert not any(5 in g and (0 in g or 3 in g) for g in groups), groups
    loose = [g.rows for g in cluster_pool(pool, replace(acts, action_unambiguous=False))[0]]
    assert any(5 in g and (0 in g or 3 in g) for g in loose), loose
    # The words-only default takes candidates from the actions too (round 5); before, it did not.
    assert [6, 7, 8] in [g.rows for g in cluster_pool(pool)[0]]
    assert [6, 7, 8] not in [g.rows for g in cluster_pool(pool, replace(acts, action_candidates=0.0))[0]]
    # A command run by more prompts than ``action_max_peers`` says nothing (``pytest -q`` after anything).
    assert [6, 7, 8] not in [g.rows for g in cluster_pool(pool, replace(acts, action_max_peers=1))[0]]


def test_the_same_command_does_not_join_requests_whose_words_differ() -> None:
    """Four one-offs that each ran ``make`` and share no word, each stating six words the project
    uses elsewhere (every word is typed in four prompts), are four requests: the command they
    share does not join them (ClusterParams.action_words_against). Three short paraphrases sharing
    only ``cargo release`` in the same pool still join."""
    from dataclasses import replace

    from sleep.mine.cluster import ClusterParams

    words = ["websocket reconnect pagination cursor timezone budget".split(),
             "importer renderer callback limiter thumbnail worker".split(),
             "webhook signature locale fallback scheduler uploader".split(),
             "sitemap barcode scanner heatmap tooltip carousel".split()]
    rows = [(f"rework the {' '.join(ws[:3])} and the {' '.join(ws[3:])}", ["make"], []) for ws in words]
    # Each word typed three times more, beside words of other requests (no actions there).
    rows += [(f"{words[m][x]}, {words[(m + 1) % 4][x]}, {words[(m + 2) % 4][(x + 1) % 6]}?", [], [])
             for m in range(4) for x in range(6)]
    rows += [("cut a patch release", ["cargo release"], ["Cargo.toml"]),
             ("bump the version, tag it and publish", ["cargo release"], ["Cargo.toml"]),
             ("saca una versión de parche", ["cargo release"], ["Cargo.toml"])]
    pool = [PoolItem(project="/p", host="claude-code", session_id=f"s{n}", prompt_index=0, at=None, text=t,
                     shell=sh, files=fs) for n, (t, sh, fs) in enumerate(rows)]
    release = [len(rows) - 3, len(rows) - 2, len(rows) - 1]
    groups = [g.rows for g in cluster_pool(pool)[0]]
    assert not any(len(set(g) & {0, 1, 2, 3}) > 1 for g in groups), groups
    assert release in groups
    before = [g.rows for g in cluster_pool(pool, replace(ClusterParams(), action_words_against=-1))[0]]
    assert any(len(set(g) & {0, 1, 2, 3}) > 1 for g in before), before


def test_reading_different_files_of_one_folder_is_not_doing_the_same() -> None:
    """Two questions that each read another file of ``billing/`` share the folder, the kind of file
    and no word: their actions differ in the file each alone touched (left out of the action
    vectors, as a token seen once), so they are no candidates from the actions
    (ClusterParams.action_all_tokens); the same file read twice still is."""
    from dataclasses import replace

    from sleep.mine.cluster import ClusterParams

    rows = [("explain how the retry decorator decides the backoff", ["billing/retry.py"]),
            ("what does the settle job do when the bank times out?", ["billing/tasks.py"]),
            ("increment the build number", ["pubspec.yaml"]),
            ("erhöhe die Build-Nummer", ["pubspec.yaml"])]
    pool = [PoolItem(project="/p", host="claude-code", session_id=f"s{n}", prompt_index=0, at=None, text=t,
                     shell=[], files=fs) for n, (t, fs) in enumerate(rows)]
    groups = [g.rows for g in cluster_pool(pool)[0]]
    assert [0] in groups and [1] in groups, groups
    assert [2, 3] in groups, groups
    before = [g.rows for g in cluster_pool(pool, replace(ClusterParams(), action_all_tokens=False))[0]]
    assert [0, 1] in before, before


def test_a_small_projects_repeated_words_are_counted_over_its_prompts() -> None:
    """A new user's first nights: twelve prompts, paraphrases of four requests, each of which ran
    ``vitest run`` or ``eslint`` (the changelog entries too, as in tests/sleep/test_cycle_newskills.py).
    The paraphrases collapse into a few nodes, over which hardly a word is repeated; counted over the typed prompts, "add a changelog entry for the csv export" states
    five repeated words "run the unit tests" lacks, so the command they share does not join them
    (sleep.mine.cluster.established_words). Each request keeps its paraphrases."""
    kinds = [["run the unit tests and list the failing ones", "can you run the unit tests and list failing ones",
              "please run the unit tests, list the failing ones"],
             ["run the linter and list the problems", "run the linter, list the problems please",
              "can you run the linter and list the problems"],
             ["add a changelog entry for the csv export", "add a changelog entry for the new csv export",
              "please add a changelog entry for csv export"],
             ["add a changelog entry for the pdf import", "add a changelog entry about the pdf import",
              "can you add a changelog entry for pdf import"]]
    texts = [t for kind in kinds for t in kind]
    pool = [PoolItem(project="/p", host="claude-code", session_id=f"s{n}", prompt_index=0, at=None, text=t,
                     shell=["eslint" if "linter" in t or "pdf" in t else "vitest run"], files=[])
            for n, t in enumerate(texts)]
    groups = [g.rows for g in cluster_pool(pool)[0]]
    kind_of = {row: k for k, kind in enumerate(kinds) for row in range(3 * k, 3 * k + 3)}
    assert all(len({kind_of[r] for r in g}) == 1 for g in groups), groups
    assert all(any(set(range(3 * k, 3 * k + 3)) <= set(g) for g in groups) for k in range(4)), groups
