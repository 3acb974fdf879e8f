"""Which typed prompts are task candidates (sleep.mine.noise)."""

from __future__ import annotations

import pytest

from sleep.mine.noise import MAX_TASK_CHARS, clean_prompt

TRACE = ("Traceback (most recent call last):\n  File \"app/tax.py\", line 41, in total\n"
         "    return sum(items)\nTypeError: 'NoneType' object is not iterable\n")
DIFF = "diff --git a/x.ts b/x.ts\n--- a/x.ts\n+++ b/x.ts\n@@ -1,2 +1,2 @@\n-let a = 1\n+const a = 1\n"


@pytest.mark.parametrize("text", ["ok", "continue", "yes", "go ahead", "thanks!", "k", "👍"])
def test_acknowledgements_are_dropped(text: str) -> None:
    assert clean_prompt(text) == (None, "acknowledgement")


def test_one_word_turns_are_dropped() -> None:
    assert clean_prompt("tests") == (None, "one_word")


@pytest.mark.parametrize("text", ["/compact", "/review-pr 142", "/clear"])
def test_slash_commands_are_dropped(text: str) -> None:
    assert clean_prompt(text) == (None, "slash_command")


def test_a_path_is_not_a_slash_command() -> None:
    assert clean_prompt("/home/dev/app.py fails to import, fix it")[1] is None


@pytest.mark.parametrize("paste", [TRACE, DIFF, "```\nnpm ERR! code ELIFECYCLE\nnpm ERR! errno 1\n```\n"])
def test_a_bare_paste_is_dropped(paste: str) -> None:
    assert clean_prompt(paste) == (None, "pasted_output")


def test_the_sentence_around_a_paste_is_kept() -> None:
    assert clean_prompt("the tax tests fail with this, can you fix it?\n" + TRACE) == \
        ("the tax tests fail with this, can you fix it?", None)


def test_injected_context_is_dropped() -> None:
    assert clean_prompt("<environment_context>\n<cwd>/x</cwd>\n</environment_context>") == (None, "injected")


def test_binary_junk_is_dropped() -> None:
    assert clean_prompt("\x00\x01\x02\x03garbage\x07\x08" * 50) == (None, "binary")


def test_stray_control_characters_are_removed_from_a_task() -> None:
    assert clean_prompt("run the unit\x00 tests and list failures") == ("run the unit tests and list failures", None)


def test_a_one_megabyte_prompt_is_dropped_as_too_long() -> None:
    assert clean_prompt("please review this text " * 45_000) == (None, "too_long")


def test_a_one_megabyte_log_keeps_the_request_written_before_it() -> None:
    text = "summarise the errors in this log\n" + "2025-01-01 10:00:00 ERROR worker died\n" * 30_000
    assert clean_prompt(text) == ("summarise the errors in this log", None)
    assert len(text) > 1_000_000 > MAX_TASK_CHARS


@pytest.mark.parametrize("text", [None, "", "   \n "])
def test_empty_prompts_are_dropped(text: str | None) -> None:
    assert clean_prompt(text) == (None, "empty")
