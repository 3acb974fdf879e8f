"""The dashboard's pure parts and the run catalog: diffs, the curve, run status, the live stream."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import anyio
from ui_testutil import sse_messages

from sleep.ui.live import follow
from sleep.ui.rundata import StepRow
from sleep.ui.runrow import STALL_SECONDS
from sleep.ui.runs import RunCatalog, plain_name
from sleep.ui.svgplot import curve_svg
from sleep.ui.textdiff import parse_unified, side_by_side


def test_side_by_side_pairs_changed_lines_and_marks_the_changed_words() -> None:
    d = side_by_side("a\nkeep it short\nc\n", "a\nkeep it very short\nc\nnew\n")
    kinds = [r.kind for r in d.rows]
    assert kinds == ["equal", "replace", "equal", "insert"]
    replace = d.rows[1]
    assert ("very ", True) in replace.right.segments and all(not c for _, c in replace.left.segments)
    assert (d.added, d.removed) == (2, 1)


def test_side_by_side_hides_long_unchanged_runs_but_never_a_single_line() -> None:
    before = "".join(f"line {i}\n" for i in range(20))
    after = before.replace("line 10\n", "line ten\n")
    rows = side_by_side(before, after, context=2).rows
    assert [r.kind for r in rows] == ["skip", "equal", "equal", "replace", "equal", "equal", "skip"]
    assert rows[0].skipped == 8 and rows[-1].skipped == 7
    assert len(side_by_side(before, after, context=None).rows) == 20
    one_gap = side_by_side("a\nb\nc\nd\ne\n", "A\nb\nc\nd\nE\n", context=1).rows
    assert "skip" not in [r.kind for r in one_gap]


def test_unified_diff_lines_are_classified() -> None:
    lines = parse_unified("diff --git a/x b/x\nindex 1..2\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old\n+new\n ctx\n")
    assert [line.kind for line in lines] == ["meta", "meta", "meta", "meta", "hunk", "del", "add", "ctx"]


def _step(step: int, action: str, cur: float, cand: float | None, after: float, evaluated: int = 4) -> StepRow:
    return StepRow.from_record({"step": step, "action": action, "val_current": cur, "val_candidate": cand,
                                "val_after": after, "best_val": after, "gate_items": 4, "gate_evaluated": evaluated,
                                "gate_reason": "<because>"})


def test_curve_marks_each_candidate_and_escapes_text() -> None:
    steps = [_step(1, "accept", 0.2, 0.5, 0.5), _step(2, "reject", 0.5, 0.25, 0.5, evaluated=2),
             _step(3, "no_change", 0.5, None, 0.5)]
    svg = curve_svg(0.2, steps, 4, [(3, "E1: slow update <reject>")], "/runs/x/e/r/steps")
    assert svg.count('data-step="') == 3
    assert 'class="mark accept" data-step="1"' in svg
    assert 'class="mark reject partial" data-step="2"' in svg and "on 2 of 4 val items" in svg
    assert 'class="mark same" data-step="3"' in svg
    assert '<a href="/runs/x/e/r/steps/2">' in svg
    assert "<reject>" not in svg and "&lt;reject&gt;" in svg


def test_curve_without_any_score_says_so() -> None:
    assert "No val score yet" in curve_svg(None, [], 10)


def test_curve_of_500_steps_has_500_marks() -> None:
    steps = [_step(i, "reject" if i % 3 else "accept", 0.5, 0.4 + (i % 7) / 100, 0.5) for i in range(1, 501)]
    assert curve_svg(0.5, steps, 500).count('data-step="') == 500


def test_plain_names_cannot_climb_or_hide() -> None:
    for bad in ("..", ".", ".git", "a/b", "", "~", "a\\b", "x" * 201):
        assert not plain_name(bad), bad
    for good in ("run", "20261130-172609", "jsonl_tasks", "night-1.2"):
        assert plain_name(good)


def _events(path: Path, *events: dict) -> None:
    with path.open("a") as fh:
        for e in events:
            fh.write(json.dumps(e) + "\n")


def _run_dir(root: Path, at: str) -> Path:
    run = root / "env" / "r1"
    run.mkdir(parents=True)
    (run / "config.yaml").write_text("env: {}\n")
    _events(run / "events.jsonl",
            {"event": "run_started", "at": at, "env": "env", "total_steps": 5, "run_id": "r1"},
            {"event": "rollout_done", "at": at, "label": "val baseline", "score": 0.25, "step": 0})
    return run


def _iso(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + ".000Z"


def test_a_run_without_run_end_is_running_and_gains_steps_as_events_arrive(tmp_path: Path) -> None:
    run = _run_dir(tmp_path, _iso(time.time()))
    catalog = RunCatalog([tmp_path], None, rescan_seconds=0)
    row = catalog.rows()[0]
    assert (row.status, row.steps_done, row.total_steps, row.best_val) == ("running", 0, 5, 0.25)
    _events(run / "events.jsonl", {"event": "gate_decided", "at": _iso(time.time()), "step": 1, "action": "accept"},
            {"event": "best_changed", "at": _iso(time.time()), "step": 1, "val": 0.5})
    row = catalog.rows()[0]
    assert (row.status, row.steps_done, row.best_val) == ("running", 1, 0.5)
    _events(run / "events.jsonl", {"event": "run_end", "at": _iso(time.time()), "status": "cancelled"})
    assert catalog.rows()[0].status == "cancelled"


def test_a_run_silent_for_an_hour_without_run_end_is_interrupted(tmp_path: Path) -> None:
    _run_dir(tmp_path, _iso(time.time() - STALL_SECONDS - 60))
    assert RunCatalog([tmp_path], None).rows()[0].status == "interrupted"


def test_the_live_stream_sends_lines_appended_while_it_follows(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    _events(path, {"event": "run_started"})
    start = path.stat().st_size

    def append() -> None:
        time.sleep(0.3)
        with path.open("a") as fh:
            fh.write('{"event": "gate_decided", "step": 1}\n{"event": "run_e')  # the second line is half-written
            fh.flush()
            time.sleep(0.3)
            fh.write('nd", "status": "completed"}\n')

    async def collect() -> str:
        return "".join([m async for m in follow(tmp_path, start, poll=0.05, max_seconds=10)])

    writer = threading.Thread(target=append)
    writer.start()
    text = anyio.run(collect)
    writer.join()
    messages = sse_messages(text)
    assert [json.loads(m["data"]).get("event") for m in messages] == ["gate_decided", "run_end", None]
    assert messages[-1]["event"] == "end" and int(messages[0]["id"]) > start
