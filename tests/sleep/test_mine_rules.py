"""Judges from the person's own feedback (sleep.mine.rules)."""

from __future__ import annotations

import re

from sleep.mine.rules import FILE_LINE_PATTERN, Evidence, build_judge, keep_rule, summary, word_absent_pattern


def _rules(text: str, shell: list[str] | None = None, **ev) -> list[dict]:
    evidence = Evidence(corrections=[{"text": text, "shell": shell or [], "answer": None}], **ev)
    spec, _ = build_judge("run the unit tests", "run the unit tests and list what fails", evidence)
    assert spec[0]["type"] == "rubric"
    return spec[1:]


def test_use_x_not_y_forbids_the_commands_the_corrected_turn_ran() -> None:
    assert _rules("no, use yarn not npm", ["npm test", "npm install"]) == [
        {"type": "contains", "value": "yarn"}, {"type": "not_contains", "values": ["npm test", "npm install"]}]


def test_a_forbidden_command_inside_the_required_one_is_forbidden_as_a_word() -> None:
    # not_contains "npm install" would also fail "pnpm install"
    assert _rules("no, use pnpm not npm", ["npm test", "npm install"]) == [
        {"type": "contains", "value": "pnpm"}, {"type": "regex", "pattern": word_absent_pattern(["npm test", "npm install"])}]


def test_the_word_rule_passes_pnpm_and_fails_npm() -> None:
    pattern = word_absent_pattern(["npm install"])
    assert re.search(pattern, "ran pnpm install, all good") and not re.search(pattern, "ran npm install")


def test_use_x_instead_of_y_forbids_y_when_it_cannot_clash() -> None:
    assert _rules("use uv instead of pip") == [{"type": "contains", "value": "uv"},
                                               {"type": "not_contains", "value": "pip"}]


def test_never_run_a_command_becomes_not_contains() -> None:
    assert _rules("never run terraform apply, only plan") == [{"type": "not_contains", "value": "terraform apply"}]


def test_file_line_first_becomes_a_regex() -> None:
    assert _rules("no, give file:line first for each finding") == [{"type": "regex", "pattern": FILE_LINE_PATTERN}]


def test_reply_in_json_becomes_json_valid() -> None:
    assert _rules("no, reply in JSON only") == [{"type": "json_valid"}]


def test_a_length_limit_becomes_max_chars() -> None:
    assert _rules("too long, keep it under 400 characters") == [{"type": "max_chars", "limit": 400}]


def test_a_constraint_on_files_becomes_a_rubric_line() -> None:
    evidence = Evidence(corrections=[{"text": "don't touch the lockfile by hand", "shell": [], "answer": None}])
    spec, lines = build_judge("upgrade zod", "upgrade zod and fix the build", evidence)
    assert len(spec) == 1 and "don't touch the lockfile by hand" in spec[0]["rubric"] and lines


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


def test_summary_names_the_rules_in_one_line() -> None:
    spec = [{"type": "rubric", "rubric": "x"}, {"type": "contains", "value": "pnpm"},
            {"type": "not_contains", "value": "npm install"}]
    assert summary(spec) == 'rubric + 2 rules: contains "pnpm", not_contains "npm install"'
