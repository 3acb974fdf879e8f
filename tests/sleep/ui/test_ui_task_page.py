"""A mined task's page (prompt, judge, the prompts it was mined from) and the empty states of the
nights and tasks pages, against the index tables as the miner (migration 3) writes them."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from test_ui_data import _add_tasks, _index
from ui_testutil import client


def test_task_detail_page_shows_prompt_judge_and_member_prompts(homes, tmp_path: Path) -> None:
    path = _index(homes)
    _add_tasks(path)
    with sqlite3.connect(path) as db:
        db.execute("UPDATE tasks SET judge = ? WHERE id = 't-lint'",
                   (b'{"rubric": "lists every failure", "rules": [{"type": "contains", "value": "ruff"}]}',))
        db.executemany("INSERT INTO task_members (task_id, host, session_id, prompt_index) VALUES (?,?,?,?)",
                       [("t-lint", "claude-code", "s-1", 0), ("t-lint", "codex", "s-2", 3)])
        db.executemany("INSERT INTO mine_prompts (host, session_id, prompt_index, project, at, text, data) "
                       "VALUES (?,?,?,?,?,?,?)",
                       [("claude-code", "s-1", 0, "/p/app", "2026-11-01T09:00:00Z", "lint the api folder", b"{}"),
                        ("codex", "s-2", 3, "/p/app", "2026-11-28T10:00:00Z", "run ruff and list failures", b"{}")])
    c = client([tmp_path])
    assert 'href="/tasks/t-lint"' in c.get("/tasks").text
    html = c.get("/tasks/t-lint").text
    assert '<pre class="box" id="task-prompt">please lint</pre>' in html
    assert "&#34;rubric&#34;: &#34;lists every failure&#34;" in html and "&#34;value&#34;: &#34;ruff&#34;" in html
    members = html.split('id="task-members"', 1)[1].split("</table>", 1)[0]
    assert members.index("run ruff and list failures") < members.index("lint the api folder")  # newest first
    assert "<code>s-2</code>" in members and ">3</td>" in members
    assert "Mined from 2 prompts" in html
    assert c.get("/tasks/nope").status_code == 404


def test_empty_states_say_the_whole_way_to_a_night(homes, tmp_path: Path) -> None:
    html = client([tmp_path]).get("/nights").text  # no index at all
    for step in ("skillopt-sleep harvest", "skillopt-sleep mine", "skillopt-sleep run"):
        assert step in html
    _index(homes)
    for page in ("/nights", "/tasks"):
        assert "skillopt-sleep harvest" in client([tmp_path]).get(page).text
