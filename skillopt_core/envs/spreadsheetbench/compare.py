"""Cell-by-cell comparison of a produced workbook with the answer workbook,
the way SpreadsheetBench's ``evaluation/evaluation.py`` compares them (both
opened with openpyxl, ``data_only=True``):

- numbers (and strings that parse as numbers) are rounded to 2 decimals;
  a ``datetime`` becomes its Excel serial day (rounded to a whole day), a
  ``time`` its ``HH:MM`` text;
- ``""`` and an empty cell are equal;
- otherwise the types must be equal (``"5"`` is the number 5.0 after the
  rules above, but ``True`` is not ``"TRUE"``) and then the values.

``answer_position`` is a comma-separated list of ranges, each ``A1``,
``A1:C9``, ``Sheet2!A1:C9`` or ``'My sheet'!A1:C9``; a range without a sheet
refers to the answer workbook's first sheet. Pure functions of the two files.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openpyxl.utils.cell import column_index_from_string, get_column_letter, range_boundaries

_EXCEL_EPOCH = dt.datetime(1899, 12, 30)


def transform_value(value: Any) -> Any:
    if isinstance(value, (int, float)):
        return round(float(value), 2)
    if isinstance(value, dt.datetime):  # before dt.time: a datetime is not a time, but check the specific first
        delta = value - _EXCEL_EPOCH
        return round(delta.days + delta.seconds / 86400.0, 0)
    if isinstance(value, dt.time):
        return str(value)[:-3]
    if isinstance(value, str):
        try:
            return round(float(value), 2)
        except ValueError:
            return value
    return value


def cells_equal(expected: Any, produced: Any) -> bool:
    a, b = transform_value(expected), transform_value(produced)
    if a in ("", None) and b in ("", None):
        return True
    if type(a) is not type(b):
        return False
    return a == b


@dataclass(frozen=True)
class Mismatch:
    cell: str  # "Sheet1!D3"
    expected: Any
    produced: Any

    def describe(self) -> str:
        def show(v: Any) -> str:
            return "empty" if v in (None, "") else repr(v)
        return f"{self.cell} (got {show(self.produced)}, expected {show(self.expected)})"


def parse_position(position: str, default_sheet: str) -> list[tuple[str, str]]:
    """``[(sheet, "A1:C9"), ...]`` for an answer position."""
    out = []
    for part in (p.strip() for p in position.split(",")):
        if not part:
            continue
        if "!" in part:
            sheet, cells = part.rsplit("!", 1)
            sheet = sheet.strip().strip("'")
        else:
            sheet, cells = default_sheet, part
        out.append((sheet, cells.strip().strip("'").replace("$", "")))
    if not out:
        raise ValueError(f"empty answer position {position!r}")
    return out


def cell_names(cells: str) -> list[str]:
    """Every cell of ``A1`` or ``A1:C3``, column by column (as the official script walks them)."""
    if ":" not in cells:
        column_index_from_string("".join(ch for ch in cells if ch.isalpha()))  # raises for nonsense
        return [cells.upper()]
    min_col, min_row, max_col, max_row = range_boundaries(cells.upper())
    return [f"{get_column_letter(c)}{r}" for c in range(min_col, max_col + 1) for r in range(min_row, max_row + 1)]


def compare_workbooks(answer: Path, produced: Path, position: str) -> tuple[bool, list[Mismatch], str]:
    """(all equal, the mismatching cells, a problem such as a missing sheet or
    an unreadable file; "" when none)."""
    from openpyxl import load_workbook

    if not produced.is_file():
        return False, [], "the solution wrote no output workbook"
    try:
        gold = load_workbook(answer, data_only=True)
    except Exception as exc:  # a broken answer file is the dataset's problem: say so
        return False, [], f"the answer workbook cannot be read ({type(exc).__name__})"
    try:
        out = load_workbook(produced, data_only=True)
    except Exception as exc:
        return False, [], f"the output workbook cannot be read ({type(exc).__name__}: {exc})"
    mismatches: list[Mismatch] = []
    try:
        for sheet, cells in parse_position(position, gold.sheetnames[0]):
            if sheet not in out.sheetnames:
                return False, mismatches, f"the output has no sheet {sheet!r}"
            if sheet not in gold.sheetnames:
                return False, mismatches, f"the answer workbook has no sheet {sheet!r} (answer_position {position!r})"
            ws_gold, ws_out = gold[sheet], out[sheet]
            for name in cell_names(cells):
                expected, got = ws_gold[name].value, ws_out[name].value
                if not cells_equal(expected, got):
                    mismatches.append(Mismatch(f"{sheet}!{name}", expected, got))
    except ValueError as exc:
        return False, mismatches, f"bad answer_position {position!r}: {exc}"
    finally:
        gold.close()
        out.close()
    return not mismatches, mismatches, ""
