"""Mining runs against the index: incremental and stable, one transaction, bad input."""

from __future__ import annotations


import pytest
from mine_testutil import PROJECT, run, session, store, turn

from sleep.index import Index
from sleep.mine import store as mine_store
from sleep.mine.select import pending_sessions

TESTS = ("run the unit tests and list the failures", ["pytest -q"])
LINT = ("run the linter and list the failures", ["ruff check"])


def _tests_session(sid: str, day: int, text: str = TESTS[0], **kw):
    return session(sid, turn(text, TESTS[1], final="2 tests fail."), day=day, **kw)


def _tasks():
    with Index.open() as index:
        return mine_store.load_tasks(index.conn, None)


def test_a_prompt_seen_in_two_sessions_becomes_a_task(homes) -> None:
    store(_tests_session("a", 1), _tests_session("b", 2))
    report = run()
    assert (report.tasks_new, report.tasks_total) == (1, 1)
    assert _tasks()[0].support == 2


def test_a_prompt_seen_in_one_session_only_is_no_task(homes) -> None:
    store(session("a", turn(*TESTS), turn("now write a changelog entry for it", [], final="Added.")))
    assert run().tasks_total == 0


def test_a_task_keeps_its_id_when_new_sessions_join(homes) -> None:
    store(_tests_session("a", 1), _tests_session("b", 2))
    run()
    first = _tasks()[0]
    store(_tests_session("c", 3, "pls run unit tests, list whats failing"))
    report = run()
    again = _tasks()
    assert [t.id for t in again] == [first.id] and again[0].support == 3 and report.members_added == 1


def test_prompts_typed_once_become_a_task_when_typed_again_later(homes) -> None:
    store(_tests_session("a", 1))
    run()
    store(_tests_session("b", 9))
    assert run().tasks_new == 1


def test_remining_with_nothing_new_reads_nothing(homes) -> None:
    # How quick that is, bench/mine.py measures (a no-change re-mine reads no session).
    store(_tests_session("a", 1), _tests_session("b", 2))
    run()
    report = run()
    assert report.nothing_new and report.sessions_read == 0 and report.tasks_total == 1


def test_a_disabled_task_stays_disabled_when_members_join(homes) -> None:
    store(_tests_session("a", 1), _tests_session("b", 2))
    run()
    tid = _tasks()[0].id
    with Index.open() as index, index.transaction():
        mine_store.set_enabled(index.conn, tid, False)
    store(_tests_session("c", 3))
    run()
    assert _tasks()[0].enabled is False and _tasks()[0].support == 3


def test_a_failed_run_writes_nothing(homes, monkeypatch) -> None:
    store(_tests_session("a", 1), _tests_session("b", 2), session("c", turn(*LINT)), session("d", turn(*LINT)))
    calls = []

    def fail_on_second(conn, t, now):
        calls.append(t.id)
        if len(calls) == 2:
            raise RuntimeError("disk full")
        original(conn, t, now)

    original = mine_store.save_task
    monkeypatch.setattr(mine_store, "save_task", fail_on_second)
    with pytest.raises(RuntimeError):
        run()
    with Index.open() as index:
        counts = [index.conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
                  for t in ("tasks", "task_members", "mine_prompts", "mine_sessions", "mine_runs")]
    assert counts == [0, 0, 0, 0, 0]
    monkeypatch.setattr(mine_store, "save_task", original)
    assert run().tasks_total == 2


def test_subagent_and_scripted_sessions_are_left_out_and_counted(homes) -> None:
    store(_tests_session("a", 1), _tests_session("b", 2, is_subagent=True),
          _tests_session("c", 3, entrypoint="sdk-cli", scripted=True))
    report = run()
    assert report.tasks_total == 0 and report.sessions_excluded == {"subagent": 1, "scripted": 1}


def test_scripted_sessions_are_mined_when_asked(homes) -> None:
    store(_tests_session("a", 1), _tests_session("c", 3, entrypoint="codex_exec", scripted=True, host="codex"))
    assert run(include_scripted=True).tasks_total == 1


def test_dropped_prompts_are_counted_by_reason(homes) -> None:
    store(session("a", turn(*TESTS), turn("ok"), turn("/compact"), turn("no, use pytest -x instead")))
    assert run().dropped == {"acknowledgement": 1, "feedback": 1, "slash_command": 1}


def test_the_pending_query_uses_the_mining_index(homes) -> None:
    store(_tests_session("a", 1))
    seen: list[str] = []
    with Index.open() as index:
        index.conn.set_trace_callback(seen.append)
        list(pending_sessions(index.conn, PROJECT, False))
        index.conn.set_trace_callback(None)
        query = next(q for q in seen if q.lstrip().startswith("SELECT"))
        plan = index.conn.execute("EXPLAIN QUERY PLAN " + query).fetchall()
    assert any("USING INDEX sessions_for_mining" in row[-1] for row in plan), plan
    assert not any(row[-1].startswith("SCAN s") and "INDEX" not in row[-1] for row in plan)


def test_the_scope_keeps_other_projects_out(homes) -> None:
    store(_tests_session("a", 1), _tests_session("b", 2),
          _tests_session("x", 1, project=PROJECT + "-old"), _tests_session("y", 2, project=PROJECT + "-old"))
    report = run(project=PROJECT)
    assert report.sessions_read == 2 and {t.project for t in _tasks()} == {PROJECT}


def test_an_empty_index_mines_nothing(homes) -> None:
    report = run()
    assert report.nothing_new and report.tasks_total == 0


def test_sessions_without_prompts_are_counted_not_fatal(homes) -> None:
    store(session("empty"), _tests_session("a", 1), _tests_session("b", 2))
    report = run()
    assert report.dropped.get("session_without_prompts") == 1 and report.tasks_total == 1


def test_huge_and_binary_prompts_do_not_stop_a_run(homes) -> None:
    store(session("big", turn("please review this text " * 45_000)),
          session("bin", turn("\x00\x01\x02junk\x07" * 200)), _tests_session("a", 1), _tests_session("b", 2))
    report = run()
    assert report.dropped == {"binary": 1, "too_long": 1} and report.tasks_total == 1


def test_corrections_in_member_sessions_become_rules(homes) -> None:
    store(session("a", turn("run the unit tests and list what fails", ["npm test", "npm install"]),
                  turn("no, use pnpm not npm", ["pnpm test"], final="Switched to pnpm: 2 specs fail.")),
          session("b", turn("run the unit tests and list what fails", ["pnpm test"], final="All green.")))
    run()
    judge = _tasks()[0].judge
    assert judge[0]["type"] == "rubric" and "Use pnpm rather than npm." in judge[0]["rubric"]
    assert judge[1:] == [{"type": "ran", "command": "pnpm"}, {"type": "not_ran", "command": "npm"}]


def test_the_representative_prompt_is_the_medoid(homes) -> None:
    store(session("a", turn("pls run unit tests, list whats failing", TESTS[1])),
          session("b", turn(TESTS[0], TESTS[1])), session("c", turn(TESTS[0] + " please", TESTS[1])),
          session("d", turn("run the unit tests and list all the failures", TESTS[1])))
    run()
    assert _tasks()[0].prompt in (TESTS[0], TESTS[0] + " please")
