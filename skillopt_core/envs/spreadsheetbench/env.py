"""The SpreadsheetBench env: the agent writes ``solution.py``; it is run on
every test case and the output workbook compared cell by cell.

Request: the skill, then a fixed instruction: reply with one ```python block,
saved as ``solution.py`` and run as ``python solution.py INPUT.xlsx
OUTPUT.xlsx`` (write values, not formulas: nothing recalculates them). Score:
hard = 1 when every test case matches at the answer position, soft = the
fraction that match (SpreadsheetBench's hard and soft restrictions). The
feedback names the failing cases and the wrong cells with what was found and
expected; the optimizer reads feedback of train items only.

The check runs through :attr:`executor` (a thread here, or a Ray task under
``execution.executor: ray``) with :attr:`launcher` as its sandbox
(:mod:`.execute`).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from skillopt_core.envs import register_env
from skillopt_core.envs.base import PromptEnv
from skillopt_core.envs.spreadsheetbench.execute import (
    CaseResult,
    Launcher,
    check_solution,
    default_launcher,
    sandbox_note,
)
from skillopt_core.envs.spreadsheetbench.loader import read_tasks
from skillopt_core.evaluation.executor import Job
from skillopt_core.tasks.task import Score, Task

log = logging.getLogger(__name__)

PACKAGE_DIR = Path(__file__).resolve().parent
SAMPLE_DIR = PACKAGE_DIR / "data"
_CODE = re.compile(r"```(?:python|py)?[ \t]*\n(.*?)```", re.DOTALL | re.IGNORECASE)
MAX_CELLS_NAMED = 5

INSTRUCTION = """\
Reply with one Python program in a ```python code block. It is saved as solution.py and run once per
test case as `python solution.py INPUT.xlsx OUTPUT.xlsx` (no network, a time limit). It must open
INPUT.xlsx with openpyxl, carry out the instruction, and save the result to OUTPUT.xlsx. Write the
resulting values into the cells (formulas are not recalculated)."""


def extract_code(response: str) -> str | None:
    """The last fenced Python block of a reply (or the last fenced block of any kind)."""
    blocks = _CODE.findall(response)
    return blocks[-1].strip() + "\n" if blocks and blocks[-1].strip() else None


def describe_failures(results: list[CaseResult]) -> str:
    parts = []
    for number, result in enumerate(results, start=1):
        if result.passed:
            continue
        if result.problem:
            parts.append(f"test case {number}: {result.problem}")
            continue
        named = ", ".join(m.describe() for m in result.mismatches[:MAX_CELLS_NAMED])
        more = len(result.mismatches) - MAX_CELLS_NAMED
        parts.append(f"test case {number}: wrong cells {named}" + (f" and {more} more" if more > 0 else ""))
    return "; ".join(parts)


@register_env("spreadsheetbench")
class SpreadsheetBenchEnv(PromptEnv):
    name = "spreadsheetbench"
    seed_skill = (PACKAGE_DIR / "seed_skill.md").read_text(encoding="utf-8")
    instruction = INSTRUCTION
    OPTIONS: ClassVar[Mapping[str, str]] = {
        "timeout": "seconds one test case may run (default 30)",
        "sandbox": "auto (bwrap when on PATH), bwrap (required) or none (default auto)",
    }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        timeout = self.options.get("timeout", 30)
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
            raise ValueError(f"env.options.timeout must be a positive number of seconds, got {timeout!r}.")
        self.timeout = float(timeout)
        mode = self.options.get("sandbox", "auto")
        if mode not in ("auto", "bwrap", "none"):
            raise ValueError(f"env.options.sandbox must be auto, bwrap or none, got {mode!r}.")
        # A caller may replace this with its own (picklable) launcher before the run.
        self.launcher: Launcher = default_launcher(mode)

    def read_tasks(self) -> list[Task]:
        tasks, problems = read_tasks(self.inputs.data_path or SAMPLE_DIR)
        self.load_problems.extend(problems)
        note = sandbox_note(self.launcher)
        if note:
            log.warning(note)
        return tasks

    async def score(self, task: Task, response: str) -> Score:
        code = extract_code(response)
        if code is None:
            return Score(0.0, 0.0, "The reply held no ```python block, so no solution.py was run.")
        cases = [tuple(c) for c in task.metadata["cases"]]
        job = Job(check_solution, (code, cases, task.metadata["answer_position"], self.timeout, self.launcher),
                  label=f"the SpreadsheetBench check of {task.id}")
        results: list[CaseResult] = await self.executor.run(job)
        passed = sum(r.passed for r in results)
        soft = passed / len(results)
        if passed == len(results):
            return Score(1.0, 1.0, f"All {len(results)} test cases match at {task.metadata['answer_position']}.")
        return Score(0.0, soft, f"{passed} of {len(results)} test cases match; {describe_failures(results)}.")
