"""Write the bundled SpreadsheetBench sample (skillopt_core/envs/spreadsheetbench/data/)
in the published verified-400 layout: dataset.json plus, per task,
spreadsheet/<id>/<n>_<id>_init.xlsx and <n>_<id>_golden.xlsx for each test case.

The tasks and numbers are the team's own. Run from the repository root:
    python scripts/samples/spreadsheetbench.py
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from openpyxl import Workbook

OUT = Path(__file__).resolve().parents[2] / "skillopt_core" / "envs" / "spreadsheetbench" / "data"


def sheet(rows, title="Sheet1", wb=None):
    wb = wb or Workbook()
    ws = wb.active if wb.active.title == "Sheet" and not wb.active.max_row > 1 else wb.create_sheet()
    ws.title = title
    for row in rows:
        ws.append(row)
    return wb


def t_sum(case):
    data = [[f"Item {i}", 3 * i + case, 10 - i + case] for i in range(1, 6)]
    init = sheet([["Item", "Q1", "Q2", "Total"], *data])
    gold = sheet([["Item", "Q1", "Q2", "Total"], *[r + [r[1] + r[2]] for r in data]])
    return init, gold


def t_passfail(case):
    scores = [[f"Student {i}", s] for i, s in enumerate([48, 77, 50, 12, 95, 63][case:] + [40, 88][:case], 1)]
    init = sheet([["Name", "Score", "Result"], *scores])
    gold = sheet([["Name", "Score", "Result"], *[r + ["Pass" if r[1] >= 50 else "Fail"] for r in scores]])
    return init, gold


def t_upper(case):
    names = [["anna smith"], ["bo li"], ["carla diaz"], ["dev patel"], ["emil berg"]][case:] + [["finn o'neil"]] * case
    init = sheet([["Name", "Upper"], *names])
    gold = sheet([["Name", "Upper"], *[[n[0], n[0].upper()] for n in names]])
    return init, gold


def t_total(case):
    values = [[f"Day {i}", 12.5 * i + case] for i in range(1, 8)]
    init = sheet([["Day", "Sales"], *values, ["Total", None]])
    gold = sheet([["Day", "Sales"], *values, ["Total", sum(v[1] for v in values)]])
    return init, gold


def t_region_count(case):
    regions = ["North", "South", "North", "East", "South", "North", "East", "North", "South"]
    regions = regions[case:] + regions[:case]
    init = sheet([["Region"], *[[r] for r in regions]], title="Orders")
    sheet([["Region", "Orders"], ["North"], ["South"], ["East"]], title="Summary", wb=init)
    gold = sheet([["Region"], *[[r] for r in regions]], title="Orders")
    sheet([["Region", "Orders"], *[[r, regions.count(r)] for r in ("North", "South", "East")]],
          title="Summary", wb=gold)
    return init, gold


def t_round(case):
    prices = [[f"P{i}", round(1.234 * i * (case + 1) + 0.05, 3)] for i in range(1, 6)]
    init = sheet([["Product", "Price", "Rounded"], *prices])
    gold = sheet([["Product", "Price", "Rounded"], *[p + [round(p[1], 1)] for p in prices]])
    return init, gold


def t_length(case):
    words = [["spreadsheet"], ["cell"], ["formula"], ["pivot table"], ["row"]][case:] + [["column"]] * case
    init = sheet([["Text", "Length"], *words])
    gold = sheet([["Text", "Length"], *[[w[0], len(w[0])] for w in words]])
    return init, gold


def t_product(case):
    rows = [[f"Line {i}", i + case, 2.5 * i] for i in range(1, 5)]
    init = sheet([["Line", "Qty", "Unit price", "Amount"], *rows])
    gold = sheet([["Line", "Qty", "Unit price", "Amount"], *[r + [r[1] * r[2]] for r in rows]])
    return init, gold


TASKS = [
    ("9001", "In column D, write the sum of columns B and C for every item row.", "D2:D6", "Cell-Level Manipulation", t_sum),
    ("9002", "In column C, write Pass when the score in column B is at least 50, otherwise Fail.", "C2:C7", "Cell-Level Manipulation", t_passfail),
    ("9003", "Put each name of column A in upper case into column B.", "B2:B6", "Cell-Level Manipulation", t_upper),
    ("9004", "Write the total of the sales in B2:B8 into cell B9.", "B9", "Cell-Level Manipulation", t_total),
    ("9005", "On the Summary sheet, count how many orders on the Orders sheet have each region and write the counts next to the regions.", "'Summary'!B2:B4", "Sheet-Level Manipulation", t_region_count),
    ("9006", "Round each price in column B to one decimal place and write it in column C.", "C2:C6", "Cell-Level Manipulation", t_round),
    ("9007", "Write the number of characters of each text in column A into column B.", "B2:B6", "Cell-Level Manipulation", t_length),
    ("9008", "Fill column D with the amount of each line: quantity times unit price.", "D2:D5", "Cell-Level Manipulation", t_product),
]


def main() -> None:
    if (OUT / "spreadsheet").exists():
        shutil.rmtree(OUT / "spreadsheet")
    records = []
    for task_id, instruction, position, kind, make in TASKS:
        folder = OUT / "spreadsheet" / task_id
        folder.mkdir(parents=True)
        for case in (1, 2):
            init, gold = make(case - 1)
            init.save(folder / f"{case}_{task_id}_init.xlsx")
            gold.save(folder / f"{case}_{task_id}_golden.xlsx")
        records.append({"id": task_id, "instruction": instruction, "spreadsheet_path": f"spreadsheet/{task_id}",
                        "instruction_type": kind, "answer_position": position})
    (OUT / "dataset.json").write_text(json.dumps(records, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {len(records)} tasks to {OUT}")


if __name__ == "__main__":
    main()
