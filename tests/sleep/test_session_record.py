"""The Session record's per-turn actions and how the index stores entrypoint and scripted."""

from __future__ import annotations

from pathlib import Path

from sleep.index import Index
from sleep.sessions import MAX_TURN_ACTIONS, Session


def test_actions_attach_to_the_current_turn_once_each() -> None:
    s = Session("claude-code", "s1")
    s.add_shell("pytest -q")  # before any prompt: nowhere to attach
    s.add_prompt("run the tests", None)
    s.add_shell("pytest -q")
    s.add_shell("pytest -q")
    s.add_file("src/app.py")
    s.add_prompt("now lint", None)
    s.add_shell("ruff check")
    assert [(p.shell, p.files) for p in s.prompts] == [(["pytest -q"], ["src/app.py"]), (["ruff check"], [])]


def test_actions_per_turn_are_capped() -> None:
    s = Session("codex", "s2")
    s.add_prompt("do many things", None)
    for i in range(MAX_TURN_ACTIONS + 10):
        s.add_file(f"f{i}.py")
    assert len(s.prompts[0].files) == MAX_TURN_ACTIONS


def test_round_trip_keeps_actions_and_entrypoint() -> None:
    s = Session("codex", "s3", entrypoint="codex_exec", scripted=True)
    s.add_prompt("fix it", "2026-01-01T00:00:00.000Z")
    s.add_shell("cargo test")
    back = Session.from_dict(s.to_dict())
    assert back.prompts[0].shell == ["cargo test"] and back.entrypoint == "codex_exec" and back.scripted


def test_index_stores_entrypoint_and_scripted_columns(tmp_path: Path) -> None:
    with Index.open(tmp_path / "i.sqlite3") as index:
        assert index.schema_version >= 2
        index.put_session(Session("claude-code", "a", entrypoint="sdk-cli", scripted=True))
        index.put_session(Session("claude-code", "b", entrypoint="cli"))
        rows = index.conn.execute("SELECT session_id, entrypoint, scripted FROM sessions ORDER BY session_id").fetchall()
    assert rows == [("a", "sdk-cli", 1), ("b", "cli", 0)]
