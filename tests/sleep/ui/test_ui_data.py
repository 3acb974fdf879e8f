"""Nights and mined tasks: the read interface (sleep/ui/data.py) and its pages, against the
tables as the miner (migration 3) and the nightly cycle are expected to write them."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from ui_testutil import client

from sleep.index import Index
from sleep.ui.data import list_nights, list_tasks



def _index(homes) -> Path:
    with Index.open():
        pass
    return homes.index


def _add_tasks(path: Path) -> None:
    with sqlite3.connect(path) as db:
        rows = [("t-lint", "/p/app", "run the linter and list the failures", "please lint", "{}",
                 'rubric + 1 rule: contains "ruff"', 4, '["claude-code", "codex"]', "2026-11-01T09:00:00Z",
                 "2026-11-28T10:00:00Z", 1),
                ("t-tests", "/p/app", "run the unit tests", "run tests", "{}", "rubric", 7, '["codex"]', None, None, 0)]
        db.executemany("INSERT INTO tasks (id, project, intent, prompt, judge, judge_summary, support, hosts,"
                       " first_seen, last_seen, enabled, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,'x','x')",
                       rows)


def test_no_index_gives_empty_listings_that_say_what_to_run(homes) -> None:
    for listing in (list_nights(), list_tasks()):
        assert listing.rows == [] and not listing.available and "skillopt-sleep harvest" in listing.note
    assert not homes.index.exists()  # reading never creates the index


def test_an_index_with_no_mined_task_lists_none(homes) -> None:
    _index(homes)
    tasks = list_tasks()
    assert tasks.available and tasks.rows == []


def test_mined_tasks_are_read_most_supported_first(homes) -> None:
    _add_tasks(_index(homes))
    listing = list_tasks()
    assert [t.id for t in listing.rows] == ["t-tests", "t-lint"]
    lint = listing.rows[1]
    assert (lint.support, lint.hosts, lint.enabled) == (4, ("claude-code", "codex"), True)
    assert listing.rows[0].enabled is False
    assert [t.id for t in list_tasks(project="/elsewhere").rows] == []


def test_tasks_page_shows_support_hosts_judge_and_disabled_tasks(homes, tmp_path: Path) -> None:
    _add_tasks(_index(homes))
    html = client([tmp_path]).get("/tasks").text
    assert "run the linter and list the failures" in html and "claude-code, codex" in html
    assert "rubric + 1 rule: contains &#34;ruff&#34;" in html and '<tr class="disabled">' in html


def test_nights_are_read_newest_first_with_usage_and_links_to_run_and_proposal(homes, toy_run: Path,
                                                                               tmp_path: Path) -> None:
    from sleep.nightstore import NightRecord, save

    _index(homes)
    staged = NightRecord("c-1", "/p/app", "2026-11-29T02:00:00Z", stage="stage", outcome="staged",
                         finished_at="2026-11-29T02:20:00Z", tasks={"train": list("abcdef"), "val": list("ghi")},
                         scores={"baseline": 0.5, "candidate": 0.75}, run_dir=str(toy_run),
                         usage={"model_calls": 40, "input_tokens": 9000, "output_tokens": 1000, "tokens": 10000,
                                "cost_usd": 0.12}, proposal={"id": "abcd1234", "branch": "skillopt/x/2026-11-29"})
    few = NightRecord("c-2", "/p/app", "2026-11-30T02:00:00Z", stage="tasks", outcome="too_few_tasks",
                      reason="2 tasks < min_tasks 4")
    with Index.open() as index:
        save(index, staged)
        save(index, few)
    nights = list_nights().rows
    assert [n.id for n in nights] == ["c-2", "c-1"]
    assert (nights[1].n_tasks, nights[1].calls, nights[1].tokens, nights[1].cost_usd) == (9, 40, 10000, 0.12)
    html = client([toy_run.parents[1]]).get("/nights").text
    assert "2 tasks &lt; min_tasks 4" in html and 'href="/proposals/abcd1234"' in html
    assert ">run</a>" in html and "$0.12" in html



def test_a_nights_preflight_estimate_and_budget_warning_are_shown(homes, tmp_path: Path) -> None:
    from sleep.nightstore import NightRecord, save

    _index(homes)
    warning = "budget.max_usd leaves $0.0500, less than the val baseline and one full step need (≈ $0.3900)"
    with Index.open() as index:
        save(index, NightRecord("c-4", "/p/app", "2026-12-02T02:00:00Z", outcome="no_improvement",
                                usage={"model_calls": 6, "cost_usd": 0.06},
                                preflight={"calls": 70, "usd": 0.7, "warnings": [warning]}))
    night = list_nights().rows[0]
    assert (night.est_calls, night.est_usd, night.budget_warnings) == (70, 0.7, (warning,))
    html = client([tmp_path]).get("/nights").text
    assert "est. ≈ 70" in html and "est. ≈ $0.70" in html and "budget.max_usd leaves $0.0500" in html


def test_a_night_of_several_skills_lists_each_skill_side_by_side(homes, tmp_path: Path) -> None:
    from sleep.nightstore import NightRecord, save

    _index(homes)
    parts = [{"name": "run-tests", "host": "claude-code", "path": "/p/app/.claude/skills/run-tests/SKILL.md",
              "outcome": "staged", "reason": "staged as branch b1", "scores": {"baseline": 0.0, "candidate": 1.0},
              "usage": {"model_calls": 27}, "proposal": {"id": "aaaa1111"}},
             {"name": "run-tests", "host": "codex", "path": "/p/app/.agents/skills/run-tests/SKILL.md",
              "outcome": "no_improvement", "reason": "the candidate was no better", "scores": {},
              "usage": {"model_calls": 12}, "proposal": None,
              "lesson_from": "/p/app/.claude/skills/run-tests/SKILL.md"}]
    with Index.open() as index:
        save(index, NightRecord("c-3", "/p/app", "2026-12-01T02:00:00Z", outcome="staged", skills=parts,
                                usage={"model_calls": 39}))
    night = list_nights().rows[0]
    assert [(s.name, s.host, s.calls, s.proposal_id) for s in night.skills] == [
        ("run-tests", "claude-code", 27, "aaaa1111"), ("run-tests", "codex", 12, None)]
    assert night.skills[1].lesson_from.endswith(".claude/skills/run-tests/SKILL.md")
    html = client([tmp_path]).get("/nights").text
    assert html.count('class="night-skill"') == 2 and "skill run-tests (codex)" in html
    assert 'href="/proposals/aaaa1111"' in html and "a lesson from /p/app/.claude/skills/run-tests/SKILL.md" in html


def test_nights_page_explains_the_empty_state(homes, tmp_path: Path) -> None:
    _index(homes)
    html = client([tmp_path]).get("/nights").text
    assert 'id="nights-note"' in html and "skillopt-sleep run" in html


def test_a_night_whose_process_is_gone_shows_as_interrupted_at_once(homes, tmp_path: Path) -> None:
    """Issue 19 §2: a night recorded running whose lock is free (its process died) is shown as
    interrupted, as `status` and `history` say, not as running until the next night. The
    dashboard only reads: the record itself is settled by the next command that writes."""
    from sleep.nightstore import NightRecord, night_lock_path, save
    from sleep.lock import FileLock

    _index(homes)
    with Index.open() as index:
        save(index, NightRecord("dead", "/p/gone", "2026-11-29T02:00:00Z", stage="replay", outcome="running"))
        save(index, NightRecord("live", "/p/live", "2026-11-30T02:00:00Z", stage="replay", outcome="running"))
    night_lock_path("/p/live").parent.mkdir(parents=True, exist_ok=True)
    with FileLock(night_lock_path("/p/live")):
        rows = {n.id: n for n in list_nights().rows}
        html = client([tmp_path]).get("/nights").text
    assert rows["dead"].outcome == "interrupted" and "replay stage" in rows["dead"].reason
    assert "`skillopt-sleep run` starts it over" in rows["dead"].reason  # the next step, as `history` says it
    assert rows["live"].outcome == "running"
    assert "interrupted" in html
    with Index.open() as index:  # reading changed nothing
        assert index.conn.execute("SELECT outcome FROM cycles WHERE id = 'dead'").fetchone()[0] == "running"


def test_the_overviews_last_night_line_keeps_a_space_before_each_dot(homes, toy_run: Path) -> None:
    """The last night's facts on the overview are separated by " · " (the template's conditional parts
    once ran into the score: "0.750· its run")."""
    import re

    from sleep.nightstore import NightRecord, save

    _index(homes)
    staged = NightRecord("c-1", "/p/app", "2026-11-29T02:00:00Z", stage="stage", outcome="staged",
                         finished_at="2026-11-29T02:20:00Z", scores={"baseline": 0.5, "candidate": 0.75},
                         run_dir=str(toy_run), proposal={"id": "abcd1234", "branch": "skillopt/x/2026-11-29"})
    with Index.open() as index:
        save(index, staged)
    html = client([toy_run.parents[1]]).get("/").text
    section = html.split("<h2>Last night</h2>", 1)[1].split("</section>", 1)[0]
    text = " ".join(re.sub(r"<[^>]+>", "", section).split())
    assert "/p/app · staged · val 0.500 → 0.750 · its run · proposal abcd1234 · all nights" in text, text
