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
    from sleep.cycle.store import NightRecord, save

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



def test_nights_page_explains_the_empty_state(homes, tmp_path: Path) -> None:
    _index(homes)
    html = client([tmp_path]).get("/nights").text
    assert 'id="nights-note"' in html and "skillopt-sleep run" in html
