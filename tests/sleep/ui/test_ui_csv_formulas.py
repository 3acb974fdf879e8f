"""Issue 35 §7: the runs CSV export never hands a spreadsheet a formula, however the cell starts."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from ui_testutil import client, make_runs

from sleep.ui.labels import Labels, write_labels
from sleep.ui.runtable import csv_cell

# What the audit passed through the first-character guard (5 of 5), and more of the same.
_FORMULAS = ["\t=1+1", "\r=1+1", " =HYPERLINK(\"http://x\")", "\u00a0=cmd|' /C calc'!A0", "\n@SUM(A1:A2)",
             "\r\n+1+1", " \t -2+3", "\u2003=1", "\ufeff=1", "\u200b=1", "=1", "@x", "+x", "-x", "\uff1d1+1",
             "\t1", "\r5"]
_PLAIN = ["-0.5", "+3", "-1e-3", "r001", "mean · hard", "", "a=b", "x - y", "/runs/r001", "1.5"]


@pytest.mark.parametrize("text", _FORMULAS, ids=[repr(t) for t in _FORMULAS])
def test_a_cell_whose_first_non_blank_character_is_a_trigger_is_quoted(text: str) -> None:
    assert csv_cell(text) == "'" + text


@pytest.mark.parametrize("text", _PLAIN, ids=[repr(t) for t in _PLAIN])
def test_numbers_and_plain_text_are_left_alone(text: str) -> None:
    assert csv_cell(text) == text


def test_the_export_quotes_a_run_name_that_starts_with_blanks_and_a_formula(toy_run: Path, tmp_path: Path) -> None:
    make_runs(toy_run, tmp_path / "outputs", 2)
    run = next((tmp_path / "outputs").rglob("r000"))
    write_labels(run, Labels(name="\u00a0=HYPERLINK(1)", tags=("\t@x",)))
    rows = {r["run"]: r for r in csv.DictReader(io.StringIO(client([tmp_path / "outputs"]).get("/runs.csv").text))}
    assert rows["r000"]["name"] == "'\u00a0=HYPERLINK(1)" and rows["r000"]["tags"] == "'\t@x"
