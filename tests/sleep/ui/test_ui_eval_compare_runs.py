"""Runs of `skillopt eval` and `skillopt compare` show as finished on the dashboard (they write no
run_end event: their summary, written last, says they ended), never as "running now"."""

from __future__ import annotations

import asyncio
from pathlib import Path

from toy_world import backends, make_backend, settings_for
from ui_testutil import client

from skillopt_core.run.api import evaluate
from skillopt_core.run.compare import compare_skills


def test_eval_and_compare_runs_are_shown_finished(tmp_path: Path) -> None:
    settings = settings_for(tmp_path, "output.run_id=")
    asyncio.run(evaluate(settings, split="val", backends=backends(make_backend())))
    asyncio.run(compare_skills(settings, None, None, aa=True, split="val", backends=backends(make_backend())))
    outputs = tmp_path / "outputs"
    kinds = sorted(p.name.split("-")[0] for p in (outputs / "jsonl_tasks").iterdir())
    assert kinds == ["compare", "eval"]
    c = client([outputs])
    home = c.get("/").text
    assert "running now" not in home
    rows = c.get("/runs").text.split('class="run-row"')[1:]
    assert len(rows) == 2 and all(">completed<" in row.split("</tr>", 1)[0] for row in rows)
