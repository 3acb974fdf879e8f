"""SpreadsheetBench: the published layout (dataset.json + spreadsheet/<id>/
<n>_<id>_init.xlsx / _golden.xlsx in the verified 400, _input / _answer in the
original release; RUCKBReasoning/SpreadsheetBench), solution.py run on every
test case in a sandbox, and the official cell comparison (evaluation/evaluation.py:
values rounded to 2 decimals, "" equals empty, types strict; hard = all cases,
soft = fraction)."""

from __future__ import annotations

import datetime as dt
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from openpyxl import Workbook

from skillopt_core.envs import create_env
from skillopt_core.envs.spreadsheetbench import (
    SAMPLE_DIR, NoSandbox, cells_equal, compare_workbooks, extract_code, find_cases, read_tasks, run_case,
)

from bench_run import SUM_SOLUTION as SUM_D, train_offline

def workbook(path, rows, title="Sheet1"):
    wb = Workbook()
    ws = wb.active
    ws.title = title
    for row in rows:
        ws.append(row)
    wb.save(path)
    return path


@pytest.mark.parametrize("expected, produced, equal", [
    (3.14159, 3.14, True), (3.14159, "3.14", True), (5, 5.0, True), (1.005, 1.0, True),
    ("", None, True), (None, "", True), (None, None, True),
    ("abc", "abc", True), ("abc", "ABC", False), (True, "TRUE", False), (5, "five", False),
    (dt.datetime(2024, 1, 2, 13, 0), dt.datetime(2024, 1, 2, 9, 0), False),
    (dt.datetime(2024, 1, 2, 6, 0), dt.datetime(2024, 1, 2, 9, 0), True),
    (dt.time(10, 30, 15), dt.time(10, 30, 59), True), (3.0, None, False),
])
def test_cell_comparison_follows_the_official_rules(expected, produced, equal) -> None:
    assert cells_equal(expected, produced) is equal


def test_compare_names_wrong_cells_on_the_named_sheet(tmp_path) -> None:
    gold = workbook(tmp_path / "g.xlsx", [["a", 1], ["b", 2]], title="Data")
    out = workbook(tmp_path / "o.xlsx", [["a", 1], ["b", 3]], title="Data")
    ok, mismatches, problem = compare_workbooks(gold, out, "'Data'!B1:B2")
    assert (ok, problem) == (False, "") and [m.cell for m in mismatches] == ["Data!B2"]
    assert mismatches[0].describe() == "Data!B2 (got 3, expected 2)"


def test_compare_reports_a_missing_sheet_and_a_missing_output(tmp_path) -> None:
    gold = workbook(tmp_path / "g.xlsx", [[1]], title="Summary")
    other = workbook(tmp_path / "o.xlsx", [[1]], title="Sheet1")
    assert compare_workbooks(gold, other, "Summary!A1")[2] == "the output has no sheet 'Summary'"
    assert compare_workbooks(gold, tmp_path / "none.xlsx", "A1")[2] == "the solution wrote no output workbook"


def test_both_published_file_namings_are_found(tmp_path) -> None:
    for name in ("1_7_input.xlsx", "1_7_answer.xlsx", "2_7_init.xlsx", "2_7_golden.xlsx", "3_7_input.xlsx"):
        workbook(tmp_path / name, [[1]])
    cases = [(i.rsplit("/", 1)[1], a.rsplit("/", 1)[1]) for i, a in find_cases(tmp_path)]
    assert cases == [("1_7_input.xlsx", "1_7_answer.xlsx"), ("2_7_init.xlsx", "2_7_golden.xlsx")]


def test_dataset_json_loads_with_answer_sheet_and_skips_incomplete_tasks(tmp_path) -> None:
    shutil.copytree(SAMPLE_DIR / "spreadsheet" / "9001", tmp_path / "spreadsheet" / "9001")
    (tmp_path / "dataset.json").write_text(json.dumps([
        {"id": "9001", "instruction": "Sum.", "instruction_type": "Cell-Level Manipulation",
         "answer_position": "D2:D6", "answer_sheet": "Sheet1", "spreadsheet_path": "spreadsheet/9001"},
        {"id": "9002", "instruction": "No files.", "answer_position": "A1"},
        {"id": "9003", "instruction": "", "answer_position": "A1"},
    ]), encoding="utf-8")
    tasks, problems = read_tasks(tmp_path)
    assert [t.id for t in tasks] == ["9001"] and tasks[0].metadata["answer_position"] == "'Sheet1'!D2:D6"
    assert len(problems) == 2 and "no (input, answer) workbook pairs" in problems[0]


def test_bundled_sample_loads_eight_tasks_with_two_cases_each() -> None:
    env = create_env("spreadsheetbench", {})
    tasks = env.load_tasks()
    assert len(tasks) == 8 and env.load_problems == []
    assert all(len(t.metadata["cases"]) == 2 for t in tasks)


def test_extract_code_takes_the_last_python_block() -> None:
    assert extract_code("```python\nx = 1\n```\nthen\n```python\ny = 2\n```") == "y = 2\n"
    assert extract_code("no code here") is None


async def test_a_correct_solution_passes_every_case() -> None:
    env = create_env("spreadsheetbench", {})
    task = next(t for t in env.load_tasks() if t.id == "9001")
    score = await env.score(task, SUM_D)
    assert (score.hard, score.soft) == (1.0, 1.0)


async def test_a_solution_right_on_one_case_scores_half_and_names_the_cells() -> None:
    env = create_env("spreadsheetbench", {})
    task = next(t for t in env.load_tasks() if t.id == "9001")
    # Right only when B2 is 3 (test case 1): adds 0 to the sum in the other case... by writing a constant.
    code = SUM_D.replace("ws.cell(r, 2).value + ws.cell(r, 3).value",
                         "ws.cell(r, 2).value + ws.cell(r, 3).value if ws['B2'].value == 3 else 0")
    score = await env.score(task, code)
    assert (score.hard, score.soft) == (0.0, 0.5)
    assert "1 of 2 test cases match; test case 2: wrong cells Sheet1!D2 (got 0, expected 14)" in score.feedback


async def test_no_code_block_scores_zero_and_says_why() -> None:
    env = create_env("spreadsheetbench", {})
    score = await env.score(env.load_tasks()[0], "I would sum the columns.")
    assert score.hard == 0.0 and "no ```python block" in score.feedback


def test_a_solution_over_the_time_limit_is_stopped(tmp_path) -> None:
    inp = workbook(tmp_path / "1_x_init.xlsx", [[1]])
    result = run_case("import time\ntime.sleep(30)\n", inp, inp, "A1", 1.0, NoSandbox())
    assert not result.passed and result.problem == "solution.py did not finish within 1 s"


def test_a_crashing_solution_reports_its_last_error_line(tmp_path) -> None:
    inp = workbook(tmp_path / "1_x_init.xlsx", [[1]])
    result = run_case("raise KeyError('no such column')\n", inp, inp, "A1", 10, NoSandbox())
    assert result.problem.startswith("solution.py exited with 1: KeyError")


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed")
def test_the_bwrap_sandbox_has_no_network_and_no_keys(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-must-not-leak-0123456789")
    inp = workbook(tmp_path / "1_x_init.xlsx", [[1]])
    env = create_env("spreadsheetbench", {"options": {"sandbox": "bwrap"}})
    code = ("import os, socket, sys\nfrom openpyxl import Workbook\n"
            "try:\n    socket.create_connection(('1.1.1.1', 53), timeout=2); net = 'open'\n"
            "except OSError:\n    net = 'closed'\n"
            "wb = Workbook(); wb.active.title = 'Sheet1'; wb.active['A1'] = net + ':' + os.environ.get('OPENAI_API_KEY', 'nokey'); wb.save(sys.argv[2])\n")
    gold = workbook(tmp_path / "1_x_golden.xlsx", [["closed:nokey"]])
    assert run_case(code, inp, gold, "A1", 20, env.launcher).passed


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed")
@pytest.mark.skipif(sys.prefix == sys.base_prefix, reason="needs a virtualenv to copy")
def test_the_bwrap_sandbox_runs_an_interpreter_that_lives_under_tmp(tmp_path) -> None:
    """CI's virtualenv is under /tmp, which the sandbox mounts as a fresh tmpfs:
    the interpreter's own folders are bound back (a venv under /tmp built of links
    to this one, as python -m venv lays it out)."""
    venv = Path(tempfile.mkdtemp(prefix="skillopt-venv-", dir="/tmp"))
    try:
        shutil.copyfile(Path(sys.prefix) / "pyvenv.cfg", venv / "pyvenv.cfg")
        (venv / "bin").mkdir()
        (venv / "bin" / "python").symlink_to(Path(sys.executable).resolve())
        lib = f"lib/python{sys.version_info[0]}.{sys.version_info[1]}"
        (venv / lib).mkdir(parents=True)
        (venv / lib / "site-packages").symlink_to(Path(sys.prefix) / lib / "site-packages")
        inp, gold = tmp_path / "1_x_init.xlsx", tmp_path / "1_x_golden.xlsx"
        workbook(inp, [[1]])
        workbook(gold, [["ran"]])
        code = ("import sys\nfrom openpyxl import Workbook\n"
                "wb = Workbook(); wb.active.title = 'Sheet1'; wb.active['A1'] = 'ran'; wb.save(sys.argv[2])\n")
        probe = ("import sys, shutil\n"
                 "from pathlib import Path\n"
                 "from skillopt_core.envs.spreadsheetbench.execute import BwrapSandbox, run_case\n"
                 f"r = run_case({code!r}, Path({str(inp)!r}), Path({str(gold)!r}), 'A1', 20, BwrapSandbox(shutil.which('bwrap')))\n"
                 "print(sys.prefix, r.passed, r.problem)\n")
        out = subprocess.run([str(venv / "bin" / "python"), "-c", probe], capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        assert out.stdout.split()[:2] == [str(venv), "True"], out.stdout
    finally:
        shutil.rmtree(venv)


def test_local_config_trains_offline(tmp_path, capsys) -> None:
    summary, run_dir = train_offline("spreadsheetbench/local", tmp_path, capsys,
                                     [{"stage": "rollout", "response": SUM_D}],
                                     "evaluation.eval_test=false", "optimizer.use_slow_update=false")
    assert summary["status"] == "completed" and summary["steps_done"] == 2
    rollouts = json.loads((run_dir / "steps" / "step_0001" / "rollouts.json").read_text(encoding="utf-8"))
    assert any(r["soft"] == 1.0 for r in rollouts) or any("test case" in r["feedback"] for r in rollouts)
