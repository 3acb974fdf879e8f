"""Read SpreadsheetBench tasks and their test-case workbooks.

Published layout (``spreadsheetbench_verified_400`` on Hugging Face,
KAKA22/SpreadsheetBench; the original 912-task release has the same shape)::

    dataset.json                       JSON array of tasks
    spreadsheet/<id>/1_<id>_init.xlsx    input of test case 1 (verified 400)
    spreadsheet/<id>/1_<id>_golden.xlsx  its answer
    spreadsheet/<id>/1_<id>_input.xlsx   (original release: _input / _answer)

Task fields read: ``id``, ``instruction``, ``instruction_type``
(``Cell-Level Manipulation`` / ``Sheet-Level Manipulation``), ``answer_position``
(``A1:C9``, ``Sheet2!A1:C9``, comma-separated), ``answer_sheet`` (prefixed to a
position that names no sheet) and ``spreadsheet_path`` (default
``spreadsheet/<id>``). ``env.data_path`` is the folder holding ``dataset.json``
or the file itself. A task without an instruction, an answer position or any
complete (input, answer) pair is skipped with one problem line.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from skillopt_core.tasks.collect import TaskCollector
from skillopt_core.tasks.task import Task

_CASE = re.compile(r"^(\d+)_(.+)_(input|answer|init|golden)\.xlsx$")
_PAIRS = {"input": "answer", "init": "golden"}
PREVIEW_ROWS = 8
PREVIEW_COLS = 8


def find_cases(folder: Path) -> list[tuple[str, str]]:
    """``[(input, answer), ...]`` in case-number order; unpaired files are ignored."""
    found: dict[tuple[int, str], dict[str, Path]] = {}
    for path in folder.glob("*.xlsx") if folder.is_dir() else ():
        match = _CASE.match(path.name)
        if match:
            number, _, kind = match.groups()
            family = kind if kind in _PAIRS else next(k for k, v in _PAIRS.items() if v == kind)
            found.setdefault((int(number), family), {})[kind] = path
    cases = []
    for (_, family), files in sorted(found.items()):
        if family in files and _PAIRS[family] in files:
            cases.append((str(files[family]), str(files[_PAIRS[family]])))
    return cases


def preview(path: Path) -> str:
    """Sheet names, sizes and the top-left cells of a workbook, for the prompt."""
    from openpyxl import load_workbook

    wb = load_workbook(path, data_only=True, read_only=True)
    try:
        lines = []
        for ws in wb.worksheets:
            lines.append(f"Sheet {ws.title!r} ({ws.max_row} rows x {ws.max_column} columns):")
            for row in ws.iter_rows(min_row=1, max_row=min(ws.max_row or 0, PREVIEW_ROWS),
                                    max_col=min(ws.max_column or 0, PREVIEW_COLS)):
                cells = [f"{c.coordinate}={c.value!r}" for c in row if c.value is not None]
                if cells:
                    lines.append("  " + ", ".join(cells))
        return "\n".join(lines)
    finally:
        wb.close()


def record_to_task(record: Any, root: Path) -> Task:
    if not isinstance(record, dict):
        raise ValueError(f"expected a JSON object, got {type(record).__name__}")
    task_id = str(record.get("id") or "").strip()
    instruction = str(record.get("instruction") or "").strip()
    position = str(record.get("answer_position") or "").strip()
    if not task_id or not instruction or not position:
        raise ValueError("needs 'id', 'instruction' and 'answer_position'")
    sheet = str(record.get("answer_sheet") or "").strip()
    if sheet and "!" not in position:
        position = ",".join(f"'{sheet}'!{part.strip()}" for part in position.split(","))
    folder = root / str(record.get("spreadsheet_path") or f"spreadsheet/{task_id}")
    cases = find_cases(folder)
    if not cases:
        raise ValueError(f"no (input, answer) workbook pairs in {folder}")
    kind = str(record.get("instruction_type") or "").strip()
    try:
        shown = preview(Path(cases[0][0]))
    except Exception as exc:  # an unreadable input workbook makes the task unusable
        raise ValueError(f"input workbook {Path(cases[0][0]).name} cannot be read ({type(exc).__name__})") from None
    return Task(
        id=task_id,
        prompt=instruction,
        context=f"Answer position: {position}\nInstruction type: {kind or 'unknown'}\n"
                f"The input workbook of test case 1:\n{shown}",
        judge=None,
        tags=tuple(t for t in ("spreadsheetbench", kind) if t),
        metadata={"answer_position": position, "cases": cases, "instruction_type": kind},
    )


def read_tasks(path: Path) -> tuple[list[Task], list[str]]:
    dataset = path / "dataset.json" if path.is_dir() else path
    if not dataset.is_file():
        raise FileNotFoundError(f"SpreadsheetBench dataset.json not found at {dataset}. Check env.data_path.")
    try:
        records = json.loads(dataset.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{dataset}: not valid JSON ({exc.msg} at line {exc.lineno}).") from None
    if not isinstance(records, list):
        raise ValueError(f"{dataset}: expected a JSON array of tasks.")
    found = TaskCollector()
    for number, record in enumerate(records, start=1):
        found.add(f"dataset.json task {number}", record_to_task, record, dataset.parent)
    return found.result()
