"""The paraphrase set (tests/sleep/mine_paraphrase.py, issue 31 §4) is what it claims to be."""

from __future__ import annotations

import re

import mine_paraphrase


def test_the_set_is_what_it_claims() -> None:
    first, _ = mine_paraphrase.build(extended=False)
    assert len(first.clusters()) == 35 and len(first.near_miss_pairs) == 9
    assert len({s.project_dir for s in first.sessions}) == 4
    corpus, split = mine_paraphrase.build()
    clusters = corpus.clusters()
    assert len(clusters) == 51 and len(corpus.near_miss_pairs) == 13
    assert len({s.project_dir for s in corpus.sessions}) == 6
    # The first round's sessions are unchanged by the second (its figures stay comparable).
    assert [s.session_id for s in first.sessions if "oneoff" not in s.session_id] == [
        s.session_id for s in corpus.sessions if "oneoff" not in s.session_id][:len(first.sessions) - 12]
    assert {s.host for s in corpus.sessions} == {"claude-code", "codex", "copilot-vscode", "copilot-cli"}
    for pair in corpus.near_miss_pairs:  # a pair is never split between tuning and held-out
        assert len({split[k] for k in pair}) == 1
    assert set(split) == set(clusters) and set(split.values()) == {"tune", "held"}


def test_the_split_is_deterministic_and_recorded() -> None:
    first = mine_paraphrase.split_of(extended=False)
    assert first == mine_paraphrase.split_of(extended=False)
    # The recorded halves (changing them means the held-out half was looked at: say so).
    assert sum(v == "held" for v in first.values()) == 16
    assert sorted(k for k, v in first.items() if v == "held")[:4] == [
        "docs/api-ref", "docs/proofread", "docs/publish-live", "docs/publish-preview"]
    both = mine_paraphrase.split_of()
    assert {k: v for k, v in both.items() if k in first} == first  # the second round leaves it alone
    assert sum(v == "held" for v in both.values()) == 24
    assert sorted(k for k, v in both.items() if v == "held" and k not in first) == [
        "infra/fmt", "infra/provider-pin", "shop/assets", "shop/flag-off", "shop/flag-on",
        "shop/locale-fr", "shop/locale-it", "shop/n-plus-one"]


def test_other_languages_are_in_both_halves() -> None:
    corpus, split = mine_paraphrase.build()
    texts = {}
    for s in corpus.sessions:
        for i, p in enumerate(s.prompts):
            label = corpus.labels.get((s.host, s.session_id, i), "")
            if label in split:
                texts.setdefault(split[label], []).append(p.text)
    for half in ("tune", "held"):
        assert any(re.search(r"[\u4e00-\u9fff]", t) for t in texts[half]), half  # Chinese
        assert any(re.search(r"[äöüßéèçñ¿]", t) for t in texts[half]), half  # German, French, Spanish


def test_the_third_round_is_its_own_set_split_the_same_way() -> None:
    corpus, split = mine_paraphrase.build_round3()
    tasks = {lab for lab in corpus.labels.values() if not lab.startswith(("noise:", "oneoff:"))}
    assert set(split) == tasks and len(tasks) == 12 and len(corpus.near_miss_pairs) == 4
    assert sorted(k for k, v in split.items() if v == "held") == [
        "api/client", "api/maint-off", "api/maint-on", "api/revision", "ops/scale-in", "ops/scale-out"]
    for pair in corpus.near_miss_pairs:
        assert len({split[k] for k in pair}) == 1
    # Its own projects: the first two rounds' sessions are unchanged by it.
    projects = {s.project_dir for s in corpus.sessions}
    assert projects == {mine_paraphrase.PROJECTS["api"], mine_paraphrase.PROJECTS["ops"]}
    assert not projects & {s.project_dir for s in mine_paraphrase.build()[0].sessions}


def test_the_fourth_round_is_its_own_set_split_the_same_way() -> None:
    corpus, split = mine_paraphrase.build_round4()
    tasks = {lab for lab in corpus.labels.values() if not lab.startswith(("noise:", "oneoff:"))}
    assert set(split) == tasks and len(tasks) == 16 and len(corpus.near_miss_pairs) == 4
    assert sorted(k for k, v in split.items() if v == "held") == [
        "crate/clippy", "ml/eval", "ml/tensorboard", "ml/train-large", "ml/train-small", "thesis/build",
        "thesis/tighten-intro", "thesis/tighten-method"]
    for pair in corpus.near_miss_pairs:
        assert len({split[k] for k in pair}) == 1
    projects = {s.project_dir for s in corpus.sessions}
    assert projects == {mine_paraphrase.PROJECTS[p] for p in ("crate", "ml", "thesis")}
    earlier = mine_paraphrase.build()[0].sessions + mine_paraphrase.build_round3()[0].sessions
    assert not projects & {s.project_dir for s in earlier}
    texts = [p.text for s in corpus.sessions for p in s.prompts]
    assert any(re.search(r"[\u3040-\u30ff]", t) for t in texts)  # Japanese
    assert any(re.search(r"[\u4e00-\u9fff]", t) for t in texts)  # Chinese
