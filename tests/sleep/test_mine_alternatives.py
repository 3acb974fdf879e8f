"""Words that stand for one another as an argument (sleep.mine.alternatives)."""

from __future__ import annotations

from sleep.mine.alternatives import alternative_pairs
from sleep.mine.features import FeatureParams, _binary
from sleep.mine.group import cluster_pool
from sleep.mine.select import PoolItem


def _alts(texts: list[str], once: bool = False) -> set[tuple[str, str]]:
    docs = [t.split() for t in texts]
    vocab: dict[str, int] = {}
    terms = _binary(docs, vocab)
    inv = {v: k for k, v in vocab.items()}
    return {tuple(sorted((inv[a], inv[b]))) for a, b in alternative_pairs(docs, vocab, terms, once=once)}


def test_two_recurring_words_that_make_requests_differ_in_one_word_are_alternatives() -> None:
    texts = ["bump patch version", "bump minor version", "new patch version changelog",
             "new minor version changelog", "increment patch commit", "minor release"]
    assert _alts(texts) == {("minor", "patch")}


def test_a_word_typed_once_is_no_argument() -> None:
    # The table changes from one occurrence of the task to the next.
    texts = ["add column users table", "add column invoices table", "add column customers table"]
    assert _alts(texts) == set()


def test_words_typed_together_are_no_alternatives() -> None:
    texts = ["deploy staging", "deploy production", "compare staging production", "deploy staging now",
             "deploy production now"]
    assert ("production", "staging") not in _alts(texts)
    assert ("production", "staging") in _alts(texts[:2] + texts[3:])


def test_a_word_typed_once_in_the_place_of_an_argument_is_another_value_of_it() -> None:
    texts = ["translate strings german", "translate strings french", "add missing german translations",
             "add missing french translations", "translate strings japanese"]
    assert _alts(texts) == {("french", "german")}
    assert _alts(texts, once=True) == {("french", "german"), ("german", "japanese"), ("french", "japanese")}


def test_a_word_typed_once_beside_no_argument_stays_a_changing_name() -> None:
    texts = ["add column users table", "add column invoices table", "add column customers table",
             "add column orders table"]
    assert _alts(texts, once=True) == set()


def test_a_slot_with_many_fillers_is_no_argument() -> None:
    modules = ["auth", "billing", "search", "orders", "catalog"]
    texts = [f"add tests {m} module" for m in modules] * 2
    assert _alts(texts) == set()


def test_a_typo_is_no_alternative_but_amd_and_arm_are() -> None:
    texts = ["clear cache now", "clear cahce now", "cache warm", "cahce warm",
             "build image amd", "build image arm", "amd nodes", "arm nodes"]
    assert _alts(texts) == {("amd", "arm")}


def _items(texts_files: list[tuple[str, str]]) -> list[PoolItem]:
    return [PoolItem(project="/p", host="codex", session_id=f"s{k}", prompt_index=0, at=None, text=text,
                     files=[path]) for k, (text, path) in enumerate(texts_files)]


def test_requests_that_differ_only_in_a_typed_path_name_are_two_tasks() -> None:
    # The locale is named only in the path: "fill in locales/de.json" / "fill in locales/fr.json".
    pool = _items([("fill in locales/de.json for the keys that are only in English", "locales/de.json"),
                   ("fill in locales/fr.json for the keys that are only in English", "locales/fr.json"),
                   ("please fill in locales/de.json for the keys only in English", "locales/de.json"),
                   ("please fill in locales/fr.json for the keys only in English", "locales/fr.json")])
    groups, _ = cluster_pool(pool)
    together = {frozenset(pool[r].files[0] for r in g.rows) for g in groups}
    assert together == {frozenset({"locales/de.json"}), frozenset({"locales/fr.json"})}


def test_without_path_names_the_same_requests_are_one_task() -> None:
    # What the test above guards against: the path is a placeholder, so the words are the same.
    pool = _items([("fill in locales/de.json for the keys that are only in English", "locales/de.json"),
                   ("fill in locales/fr.json for the keys that are only in English", "locales/fr.json"),
                   ("please fill in locales/de.json for the keys only in English", "locales/de.json"),
                   ("please fill in locales/fr.json for the keys only in English", "locales/fr.json")])
    groups, _ = cluster_pool(pool, fparams=FeatureParams(path_names=False))
    assert len(groups) == 1


def test_a_request_typed_once_with_another_value_of_an_argument_joins_no_task() -> None:
    pool = _items([("translate the new strings to German", "locales/de.json"),
                   ("add the missing German translations", "locales/de.json"),
                   ("translate the new strings to French", "locales/fr.json"),
                   ("add the missing French translations", "locales/fr.json"),
                   ("translate the new strings to Japanese", "locales/ja.json")])
    groups, _ = cluster_pool(pool)
    japanese = next(g for g in groups if 4 in g.rows)
    assert japanese.rows == [4]
    assert sorted(g.rows for g in groups if 4 not in g.rows) == [[0, 1], [2, 3]]
    off, _ = cluster_pool(pool, fparams=FeatureParams(once_fillers=False))
    assert next(g for g in off if 4 in g.rows).rows != [4]  # what the rule prevents
