"""Answer normalisation, F1 and final-answer extraction."""

from __future__ import annotations

import pytest

from skillopt_core.tasks.text_metrics import extract_final_answer, normalize_answer, token_f1


@pytest.mark.parametrize(
    "raw,expected",
    [
        ("The  Eiffel Tower!", "eiffel tower"),
        ("an apple, a pear", "apple pear"),
        ("Gabriel García Márquez", "gabriel garcia marquez"),
        ("1,000", "1000"),
        ("Saint-Rémy", "saint remy"),
        ("“Quoted”", "quoted"),
    ],
)
def test_normalize_answer(raw, expected):
    assert normalize_answer(raw) == expected


def test_normalize_answer_case_sensitive_keeps_case():
    assert normalize_answer("The NaCl", case_sensitive=True) == "NaCl"


def test_token_f1_partial_overlap():
    assert token_f1("new york city", "New York") == pytest.approx(0.8)


def test_token_f1_empty_prediction_scores_zero():
    assert token_f1("", "Paris") == 0.0


def test_extract_takes_last_answer_marker():
    extracted = extract_final_answer("Answer: A\nreconsidering...\nFinal answer: B.")
    assert (extracted.text, extracted.found) == ("B", True)


def test_extract_tolerates_markdown_emphasis():
    assert extract_final_answer("**Answer:** Paris").text == "Paris"
    assert extract_final_answer("**Answer**: Paris").text == "Paris"


def test_extract_reads_next_line_when_marker_line_is_empty():
    assert extract_final_answer("Answer:\n\n  Paris\n").text == "Paris"


def test_extract_falls_back_to_first_nonempty_line():
    extracted = extract_final_answer("\n  Paris is the capital.\nMore text")
    assert (extracted.text, extracted.found) == ("Paris is the capital", False)
