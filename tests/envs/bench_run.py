"""One short offline training run of a benchmark's packaged ``local`` config,
with the scripted backend standing in for every role (control flow only: the
scripted backend is never evidence that training improves a skill)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from skillopt_core.cli.main import main

EDIT = "- Check your final answer against the task before replying."
# A correct solution.py for the SpreadsheetBench sample task 9001 (column D = B + C).
SUM_SOLUTION = """```python
import sys
from openpyxl import load_workbook
wb = load_workbook(sys.argv[1]); ws = wb.active
for r in range(2, ws.max_row + 1):
    ws.cell(r, 4).value = ws.cell(r, 2).value + ws.cell(r, 3).value
wb.save(sys.argv[2])
```"""


def script(rollout_rules: list[dict[str, Any]]) -> dict[str, Any]:
    """Rules for the scripted backend: the optimizer's stages, then the target's."""
    return {"rules": [
        {"stage": "reflect", "response": json.dumps({"edits": [{"op": "add", "content": EDIT}]})},
        {"stage": "slow_update", "response": json.dumps({"guidance": "- Keep the final line exact."})},
        {"stage": "meta_skill", "response": json.dumps({"notes": "- Exact final lines score."})},
        *rollout_rules,
    ]}


def train_offline(config: str, tmp_path: Path, capsys: Any, rollout_rules: list[dict[str, Any]],
                  *extra: str) -> tuple[dict[str, Any], Path]:
    """``skillopt train --config <config> --json`` on the scripted backend; the
    printed summary and the run directory."""
    args = ["train", "--config", config, "--json",
            "--set", "model.backend=scripted", "--set", f"model.scripted={json.dumps(script(rollout_rules))}",
            "--set", f"output.root={tmp_path / 'outputs'}", "--set", "output.run_id=r1", "--set", "output.plot=false"]
    for item in extra:
        args += ["--set", item]
    code = main(args)
    summary = json.loads(capsys.readouterr().out)
    assert code == 0, summary
    return summary, Path(summary["run_dir"])
