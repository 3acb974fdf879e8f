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
