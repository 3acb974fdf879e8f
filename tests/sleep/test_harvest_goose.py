"""Goose sessions in its SQLite ``sessions.db`` (issue 31 §3); the database is written in the
shape Goose creates it (tests/sleep/goose_testutil.py names the sources)."""

from __future__ import annotations

from pathlib import Path

import pytest
from goose_testutil import (
    VISIBLE,
    add_session,
    make_db,
    text,
    tool_request,
    tool_response,
)
from sleep_testutil import Homes, run

from sleep.index import Index

CWD = "/work/orchard"
T0 = 1777629600  # seconds, as Goose's created_timestamp


@pytest.fixture
def goose(homes: Homes) -> Path:
    return homes.home / ".local" / "share" / "goose"


def _sessions():
    with Index.open() as idx:
        return idx.sessions(host="goose")


def _messages() -> list:
    return [
        ("user", [text("prune the apple trees module")], T0, VISIBLE),
        ("assistant", [{"type": "thinking", "thinking": "look first", "signature": "x"},
                       tool_request("t1", "developer__shell", {"command": "cargo test -q"})], T0 + 1, VISIBLE),
        ("user", [tool_response("t1", "ok")], T0 + 2, VISIBLE),
        ("assistant", [tool_request("t2", "developer__text_editor",
                                    {"command": "write", "path": f"{CWD}/src/prune.rs", "file_text": "x"})],
         T0 + 3, VISIBLE),
        ("user", [tool_response("t2", "written")], T0 + 4, VISIBLE),
        ("assistant", [text("Pruned.")], T0 + 5, VISIBLE),
        ("user", [text("Summary of the conversation so far")], T0 + 6, {"userVisible": False, "agentVisible": True}),
        ("user", [text("no, keep the old branches")], T0 + 7, VISIBLE),
        ("assistant", [text("Kept them.")], T0 + 8, VISIBLE),
    ]


def test_a_goose_session_is_read_as_goose_stores_it(goose: Path) -> None:
    conn = make_db(goose)
    add_session(conn, "20260501_1", CWD, _messages())
    add_session(conn, "20260501_2", CWD, [("user", [text("water everything at dawn")], T0 + 20, VISIBLE)],
                kind="scheduled")
    add_session(conn, "20260501_3", CWD, [("user", [text("list the branches")], T0 + 30, VISIBLE)],
                kind="specialist")
    report = run(source="goose")  # the database is open: its WAL holds the rows
    assert not report.skipped
    by_id = {s.session_id: s for s in _sessions()}
    s = by_id["20260501_1"]
    assert s.project_dir == CWD and not s.is_subagent and not s.scripted
    assert [p.text for p in s.prompts] == ["prune the apple trees module", "no, keep the old branches"]
    assert s.finals == ["Pruned.", "Kept them."]
    assert s.prompts[0].shell == ["cargo test"] and s.prompts[0].files == ["src/prune.rs"]
    assert s.tools == {"developer__shell": 1, "developer__text_editor": 1}
    assert s.model == "claude-sonnet-4-5"
    assert [f.kind for f in s.feedback] == ["correction"]
    assert by_id["20260501_2"].scripted and by_id["20260501_3"].is_subagent
    conn.close()


def test_an_unchanged_session_is_not_read_again_and_a_new_message_is(goose: Path) -> None:
    conn = make_db(goose)
    add_session(conn, "20260501_1", CWD, _messages()[:6])
    run(source="goose")
    again = run(source="goose")
    assert again.sessions_new == 0 and again.sessions_updated == 0
    conn.execute("INSERT INTO messages (message_id, session_id, role, content_json, created_timestamp, metadata_json)"
                 " VALUES ('m9', '20260501_1', 'user', '[{\"type\": \"text\", \"text\": \"and the pears\"}]', ?, ?)",
                 (T0 + 50, '{"userVisible": true, "agentVisible": true}'))
    conn.commit()
    run(source="goose")
    [s] = _sessions()
    assert [p.text for p in s.prompts] == ["prune the apple trees module", "and the pears"]
    conn.close()


def test_goose_path_root_moves_the_data_folder(homes: Homes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOOSE_PATH_ROOT", str(tmp_path / "goose-root"))
    conn = make_db(tmp_path / "goose-root" / "data")
    add_session(conn, "s", CWD, _messages()[:1])
    conn.close()
    run(source="goose")
    assert [p.text for s in _sessions() for p in s.prompts] == ["prune the apple trees module"]
