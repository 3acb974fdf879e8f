"""A run directory written before the typed run records (issue 32) opens in the dashboard: the
list, the run page, a step page and the live event stream read it through the engine's reader."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from ui_testutil import client, run_links

FIXTURE = Path(__file__).parents[2] / "fixtures" / "run_before_record"


def test_a_run_written_before_the_typed_records_opens_in_the_dashboard(tmp_path: Path) -> None:
    root = tmp_path / "root"
    shutil.copytree(FIXTURE, root, ignore=shutil.ignore_patterns("make.py"))
    c = client([root / "out"])
    html = c.get("/runs").text
    row = html.split('class="run-row"', 1)[1].split("</tr>", 1)[0]
    assert ">completed<" in row and "3 / 3" in row and "0.500" in row
    [link] = run_links(html)
    page = c.get(link)
    assert page.status_code == 200
    history = json.loads((root / "out/jsonl_tasks/old/history.json").read_text())
    assert all(h["gate_reason"][:30] in page.text for h in history)
    step = c.get(f"{link}/steps/1")
    assert step.status_code == 200 and "Always say banana." in step.text
    assert not re.search(r"not a number|not an object|is not valid JSON", page.text + step.text)
    events = c.get(f"{link}/events?from=0")
    assert events.status_code == 200 and "run_end" in events.text
