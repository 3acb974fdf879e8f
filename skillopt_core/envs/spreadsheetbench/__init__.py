"""SpreadsheetBench: spreadsheet manipulation tasks solved by a generated
``solution.py``, checked on every test case's input/answer workbook pair.

Importing this package registers the ``spreadsheetbench`` env. With no
``env.data_path`` it reads the bundled sample (``data/``: tasks and workbooks
written by the team in the published verified-400 layout)."""

from skillopt_core.envs.spreadsheetbench.compare import cells_equal, compare_workbooks, transform_value
from skillopt_core.envs.spreadsheetbench.env import SAMPLE_DIR, SpreadsheetBenchEnv, extract_code
from skillopt_core.envs.spreadsheetbench.execute import BwrapSandbox, NoSandbox, check_solution, run_case
from skillopt_core.envs.spreadsheetbench.loader import find_cases, read_tasks

__all__ = ["SAMPLE_DIR", "BwrapSandbox", "NoSandbox", "SpreadsheetBenchEnv", "cells_equal", "check_solution",
           "compare_workbooks", "extract_code", "find_cases", "read_tasks", "run_case", "transform_value"]
