"""A night's spend: its preflight estimate (console, `run --json`, the night record)
and a dollar cap (budget.max_usd) that stops the replay cleanly (issue 34, item 5)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from cycle_testutil import rules

from sleep.cli import main
from sleep.nightstore import nights
from sleep.index import Index


def night_json(project: Path, tmp_path: Path, capsys, *extra: str) -> tuple[int, dict, str]:
    path = tmp_path / "rules.yaml"
    path.write_text(yaml.safe_dump({**rules(), "cost_per_call": 0.01}))
    code = main(["run", "--project", str(project), "--backend", "scripted", "--skill",
                 str(project / ".claude/skills/ledger-dev/SKILL.md"), "--set", f"model.scripted={path}",
                 *extra, "--json", "--dry-run"])
    out = capsys.readouterr()
    return code, json.loads(out.out), out.err


def test_the_preflight_estimate_is_printed_and_in_the_night_record(project: Path, tmp_path: Path, capsys) -> None:
    code, record, console = night_json(project, tmp_path, capsys)
    assert code == 0 and record["outcome"] == "would_stage"
    pre = record["preflight"]
    assert pre["calls"] > 0 and pre["usd"] == pytest.approx(pre["calls"] * 0.01, abs=0.011)
    assert pre["warnings"] == [] and pre["one_step"]["calls"] > 0
    assert "preflight estimate: ≈" in console
    assert console.index("preflight estimate") < console.index("val baseline")
    with Index.open() as index:
        assert nights(index, str(project))[0].preflight == pre  # what history, MCP and the dashboard read


def test_a_dollar_cap_stops_the_night_cleanly_and_warns_before(project: Path, tmp_path: Path, capsys) -> None:
    code, record, console = night_json(project, tmp_path, capsys, "--set", "budget.max_usd=0.05")
    assert code == 0
    assert record["scores"]["status"] == "budget_exhausted"
    assert 0.05 - 1e-9 <= record["usage"]["cost_usd"] <= 0.05 + 0.01 * 4 + 1e-9  # + the calls in flight (workers)
    # The cap less what the model judge probe spent before the replay (its first pair: 2 calls, $0.02).
    assert record["judge_probe"]["spent"]["cost_usd"] == pytest.approx(0.02)
    assert any("budget.max_usd leaves $0.0300" in w for w in record["preflight"]["warnings"])
    assert "before its first gate" in console


def test_the_nights_closing_summary_says_the_estimate_and_its_warnings() -> None:
    from sleep.cycle.cli import summary_text
    from sleep.nightstore import NightRecord

    night = NightRecord("n1", "/p", "2026-12-06T00:00:00Z", outcome="no_improvement", reason="the budget ran out",
                        preflight={"calls": 70, "usd": 0.7, "unpriced_roles": ["target"],
                                   "warnings": ["budget.max_usd leaves $0.0500, less than ..."]})
    text = summary_text(night)
    assert "preflight estimate: ≈ 70 model calls, ≈ $0.70 + unpriced target" in text
    assert "warning: budget.max_usd leaves $0.0500" in text
