"""Judges from the person's own feedback (sleep.mine.rules)."""

from __future__ import annotations

import re

from sleep.mine.rules import (
    FILE_LINE_PATTERN, LOCK_FILES, Evidence, build_judge, keep_rule, summary, word_absent_pattern,
)


def _rules(text: str, shell: list[str] | None = None, **ev) -> list[dict]:
    evidence = Evidence(corrections=[{"text": text, "shell": shell or [], "answer": None}], **ev)
    spec, _ = build_judge("run the unit tests", "run the unit tests and list what fails", evidence)
    assert spec[0]["type"] == "rubric"
    return spec[1:]


def test_use_x_not_y_about_programs_is_judged_by_the_commands_run() -> None:
    assert _rules("no, use yarn not npm", ["npm test", "npm install"]) == [
        {"type": "ran", "command": "yarn"}, {"type": "not_ran", "command": "npm"}]


def test_pnpm_not_npm_needs_no_word_tricks_as_command_patterns() -> None:
    assert _rules("no, use pnpm not npm", ["npm test", "npm install"]) == [
        {"type": "ran", "command": "pnpm"}, {"type": "not_ran", "command": "npm"}]


def test_the_word_rule_passes_pnpm_and_fails_npm() -> None:
    pattern = word_absent_pattern(["npm install"])
    assert re.search(pattern, "ran pnpm install, all good") and not re.search(pattern, "ran npm install")


def test_use_x_instead_of_y_for_a_known_program() -> None:
    assert _rules("use uv instead of pip") == [{"type": "ran", "command": "uv"}, {"type": "not_ran", "command": "pip"}]


def test_a_quoted_command_and_a_qualifier_make_no_rule_about_the_qualifier() -> None:
    rules = _rules("use `uv run pytest`, not bare pytest")
    assert rules == [{"type": "ran", "command": "uv run pytest"}, {"type": "check", "command": "uv run pytest"},
                     {"type": "not_ran", "command": "pytest"}]
    assert not any("bare" in str(r) for r in rules)


def test_use_x_not_y_about_words_stays_a_text_rule() -> None:
    assert _rules("use British spelling not American") == [{"type": "contains", "value": "British"},
                                                           {"type": "not_contains", "value": "American"}]


def test_never_run_a_command_becomes_not_ran() -> None:
    assert _rules("never run terraform apply, only plan") == [{"type": "not_ran", "command": "terraform apply"}]


def test_dont_touch_the_lockfile_becomes_not_touched_lock_files() -> None:
    rules = _rules("don't touch the lockfile by hand")
    assert rules == [{"type": "not_touched", "paths": LOCK_FILES}]
    assert {"package-lock.json", "pnpm-lock.yaml", "uv.lock"} <= set(LOCK_FILES)


def test_dont_edit_a_path_becomes_not_touched_that_path() -> None:
    assert _rules("don't edit src/generated/schema.ts") == [{"type": "not_touched", "path": "src/generated/schema.ts"}]


def test_file_line_first_becomes_a_regex() -> None:
    assert _rules("no, give file:line first for each finding") == [{"type": "regex", "pattern": FILE_LINE_PATTERN}]


def test_reply_in_json_becomes_json_valid() -> None:
    assert _rules("no, reply in JSON only") == [{"type": "json_valid"}]


def test_a_length_limit_becomes_max_chars() -> None:
    assert _rules("too long, keep it under 400 characters") == [{"type": "max_chars", "limit": 400}]


def test_a_constraint_without_a_rule_becomes_a_rubric_line() -> None:
    evidence = Evidence(corrections=[{"text": "keep the changelog entries short", "shell": [], "answer": None}])
    spec, lines = build_judge("upgrade zod", "upgrade zod and fix the build", evidence)
    assert len(spec) == 1 and "- Keep the changelog entries short." in spec[0]["rubric"] and lines


def test_a_rule_every_accepted_answer_fails_is_dropped() -> None:
    assert _rules("use uv", accepted=["Upgraded the dependency with poetry; tests pass."]) == []


def test_a_format_rule_the_corrected_answer_already_met_is_dropped() -> None:
    assert _rules("give file:line first", rejected=["app/tax.py:41 rounds too early"]) == []


def test_contradicting_rules_are_not_both_kept() -> None:
    kept = [{"type": "contains", "value": "pnpm"}]
    assert keep_rule({"type": "not_contains", "value": "npm test"}, kept, Evidence()) == "contradicts another rule"


def test_an_invalid_rule_is_refused() -> None:
    assert keep_rule({"type": "regex", "pattern": "(unclosed"}, [], Evidence()).startswith("invalid")


def test_accepted_answers_reach_the_rubric() -> None:
    evidence = Evidence(approvals=["perfect, thanks"], accepted=["3 tests fail: test_tax, test_refund, test_jpy."])
    spec, _ = build_judge("run the unit tests", "run the unit tests", evidence)
    assert "3 tests fail: test_tax" in spec[0]["rubric"]


def test_a_forbidden_command_that_a_required_one_starts_with_is_a_contradiction() -> None:
    kept = [{"type": "ran", "command": "terraform apply"}]
    assert keep_rule({"type": "not_ran", "command": "terraform"}, kept, Evidence()) == "contradicts another rule"
    assert keep_rule({"type": "not_ran", "command": "npm"}, [{"type": "ran", "command": "pnpm"}], Evidence()) is None


def test_summary_names_the_rules_in_one_line() -> None:
    spec = [{"type": "rubric", "rubric": "x"}, {"type": "contains", "value": "pnpm"},
            {"type": "not_contains", "value": "npm install"}]
    assert summary(spec) == 'rubric + 2 rules: contains "pnpm", not_contains "npm install"'


def test_a_negated_use_is_what_to_avoid() -> None:
    assert _rules("never use yarn, use pnpm") == [{"type": "ran", "command": "pnpm"}, {"type": "not_ran", "command": "yarn"}]
    assert _rules("don't use npm here") == [{"type": "not_ran", "command": "npm"}]


def test_prose_after_a_forbidden_command_is_not_part_of_it() -> None:
    assert _rules("don't run npm install here please") == [{"type": "not_ran", "command": "npm install"}]


def test_a_verification_the_person_asked_for_becomes_a_check() -> None:
    assert _rules("run `pnpm test` before you say it's done") == [{"type": "check", "command": "pnpm test"}]
    assert _rules("run `rm -rf build` before you say it's done") == []  # not a verification runner
