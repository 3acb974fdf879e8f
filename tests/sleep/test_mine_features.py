"""What the miner compares: words with placeholders, and what the turn did."""

from __future__ import annotations

import pytest
from mine_testutil import session, turn

from sleep.mine.features import action_tokens, ident_names, path_names, program, tokens, typo_map, words
from sleep.mine.select import extract


@pytest.mark.parametrize("signature,expected", [
    ("pytest -q", ("pytest", None)),
    ("python -m pytest tests/unit", ("pytest", None)),
    ("uv run ruff check", ("ruff", "check")),
    ("npx playwright test", ("playwright", "test")),
    ("pnpm exec vitest run", ("vitest", "run")),
    ("FOO=1 sudo cargo test", ("cargo", "test")),
    ("npm run lint", ("npm", "lint")),
    ("./node_modules/.bin/jest --ci", ("jest", None)),
])
def test_shell_signatures_are_unwrapped_to_program_and_subcommand(signature: str, expected) -> None:
    assert program(signature) == expected


def test_package_manager_scripts_are_one_program() -> None:
    _, npm = action_tokens(["npm test"], [], [], [])
    _, pnpm = action_tokens(["pnpm test"], [], [], [])
    assert npm == pnpm == frozenset({"pm"})


def test_looking_around_is_never_distinctive() -> None:
    _, progs = action_tokens(["ls -la", "git status", "cat README.md", "rg TODO"], [], [], [])
    assert progs == frozenset()


def test_changing_names_become_placeholders() -> None:
    assert words("fix mypy errors in billing/tax.py for #212 on v1.4.0") == \
        words("fix mypy errors in app/payments/service.py for #198 on v2.0.1")


def test_a_typo_maps_to_the_word_the_project_uses() -> None:
    vocab = {"failures": 4, "failurs": 1, "tests": 5}
    assert typo_map(vocab) == {"failurs": "failures"}


def test_interchangeable_request_words_share_a_stem() -> None:
    assert tokens(words("list the failing tests"), {}, bigrams=False) == \
        tokens(words("show the failing tests"), {}, bigrams=False)


def test_actions_of_follow_up_turns_belong_to_the_task() -> None:
    s = session("a", turn("run the unit tests and list what fails", ["npm test"]),
                turn("no, use pnpm not npm", ["pnpm test"], final="pnpm: 2 fail."),
                turn("now write a changelog entry for the fix", [], ["CHANGELOG.md"]))
    items, dropped = extract(s)
    assert [(it.prompt_index, it.shell, it.files) for it in items] == [
        (0, ["npm test", "pnpm test"], []), (2, [], ["CHANGELOG.md"])]
    assert dropped == {"feedback": 1}


def test_a_correction_is_evidence_of_the_task_it_follows() -> None:
    s = session("a", turn("run the unit tests", ["npm test"], final="All good."),
                turn("no, use pnpm not npm", ["pnpm test"], final="pnpm: 2 fail."))
    evidence = extract(s)[0][0].evidence
    assert evidence["corrections"] == [{"text": "no, use pnpm not npm", "shell": ["npm test"], "answer": "All good."}]
    assert evidence["rejected"] == ["All good."] and evidence["accepted"] == ["pnpm: 2 fail."]


def test_a_repeat_in_the_same_session_is_dropped() -> None:
    s = session("a", turn("run the unit tests"), turn("Run the unit tests"))
    assert extract(s)[1] == {"repeat_in_session": 1}


@pytest.mark.parametrize("text,expected", [
    ("fill in locales/de.json for the missing keys", ("de",)),
    ("update CHANGELOG.md with the commits since the last tag", ("changelog",)),
    ("fix the typing errors mypy reports in ledgerline/", ("ledgerline",)),
    ("tests/walk.rs::follows_symlinks is flaky", ("walk",)),
    ("bump to v1.4.3, see e.g. the notes", ()),
])
def test_the_name_of_a_typed_path_is_kept_beside_its_placeholder(text: str, expected) -> None:
    assert path_names(text) == expected


@pytest.mark.parametrize("text,expected", [
    ("airflow backfill of orders_daily, 7 days", ("orders", "daily")),
    ("the AppLocalizations getters are missing", ("app", "localizations")),
    ("build the iOS release for GitHub", ()),  # short mixed-case words are words
    ("fix src/foo_bar.py", ()),  # a path's name is path_names'
    ("run the unit tests", ()),
])
def test_the_words_of_a_typed_identifier_are_kept_beside_its_placeholder(text: str, expected) -> None:
    assert ident_names(text) == expected


def test_an_acronym_spelling_a_stop_word_is_a_word_when_typed_in_capitals() -> None:
    """"the US inventory" / "the EU inventory": "US" is no pronoun there; "let us", and a prompt
    shouted in capitals, keep their stop words."""
    assert "usacr" in words("füge die neuen US-Server ins Inventar ein")
    assert "itacr" in words("ask IT for a new laptop")
    assert words("let us run it") == ("let", "us", "run", "it")
    assert words("RUN IT NOW") == ("run", "it", "now")
