"""Amp threads and Hermes Agent's session store (issue 31 §3).

Amp: ``~/.local/share/amp/threads/T-<uuid>.json``, written in the shape independent readers of
people's thread files describe and test (docs/genuine-files.md: a ``v``/``id``/``created`` header,
``env.initial.trees[].uri``, ``user``/``assistant``/``info`` messages with Anthropic-style items,
``meta.sentAt``, ``state.type``). Hermes: ``~/.hermes/state.db`` created with the schema of
NousResearch/hermes-agent ``hermes_state.py`` at 544ac55 (schema version 2). Every value is made up.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import sleep_builders as b
from goose_testutil import wal_db
from sleep_testutil import Homes, run

from skillopt_core.replay import REPLAY_MARKER
from sleep.index import Index

CWD = "/work/meadow"
TID = "T-019c3c6b-8e41-7448-8a86-60a4edd6eed2"


def _sessions(host: str):
    with Index.open() as idx:
        return idx.sessions(host=host)


def amp_thread(tid: str = TID, cwd: str = CWD) -> dict:
    return {
        "v": 212, "id": tid, "created": b.ms(0), "title": "Mow the meadow", "agentMode": "smart", "nextMessageId": 7,
        "env": {"initial": {"trees": [{"displayName": "meadow", "uri": "file://" + cwd.replace(" ", "%20"),
                                       "repository": {"type": "git", "url": "https://example.com/m.git"}}],
                            "platform": {"os": "linux", "client": "CLI", "clientVersion": "0.0.1770540000"}}},
        "messages": [
            {"role": "info", "messageId": 0, "content": [{"type": "text", "text": "Contents of AGENTS.md: ..."}]},
            {"role": "user", "messageId": 1, "content": [{"type": "text", "text": "mow the north meadow"}],
             "agentMode": "smart", "meta": {"sentAt": b.ms(1)}},
            {"role": "assistant", "messageId": 2, "content": [
                {"type": "thinking", "thinking": "check first"},
                {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"cmd": "make mow"}},
                {"type": "tool_use", "id": "toolu_2", "name": "edit_file", "input": {"path": f"{cwd}/north.txt"}}],
             "state": {"type": "complete", "stopReason": "tool_use"},
             "usage": {"model": "claude-opus-4-5", "inputTokens": 10, "outputTokens": 5}},
            {"role": "user", "messageId": 3, "content": [
                {"type": "tool_result", "toolUseID": "toolu_1", "run": {"status": "done", "result": {"exitCode": 0}}}]},
            {"role": "assistant", "messageId": 4, "content": [{"type": "text", "text": "Mowed."}],
             "state": {"type": "complete", "stopReason": "end_turn"}},
            {"role": "user", "messageId": 5, "content": [{"type": "text", "text": "no, leave the wildflowers"}],
             "meta": {"sentAt": b.ms(9)}},
            {"role": "assistant", "messageId": 6, "content": [{"type": "text", "text": "Stopp"}],
             "state": {"type": "cancelled"}},
        ]}


def write_amp(home: Path, doc: dict) -> Path:
    path = home / ".local" / "share" / "amp" / "threads" / f"{doc['id']}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc))
    return path


def test_an_amp_thread_is_read_whole(homes: Homes) -> None:
    path = write_amp(homes.home, amp_thread())
    report = run(source="amp")
    assert not report.skipped
    [s] = _sessions("amp")
    assert s.session_id == TID and s.project_dir == CWD
    assert [p.text for p in s.prompts] == ["mow the north meadow", "no, leave the wildflowers"]
    assert s.finals == ["Mowed.", "Stopp"]
    assert s.prompts[0].shell == ["make mow"] and s.prompts[0].files == ["north.txt"]
    assert s.model == "claude-opus-4-5"
    assert [f.kind for f in s.feedback] == ["correction", "interruption"]
    # Amp re-writes the whole document: a longer thread replaces the session, prompts once.
    doc = amp_thread()
    doc["messages"].append({"role": "user", "messageId": 7, "content": [{"type": "text", "text": "and the east"}]})
    path.write_text(json.dumps(doc))
    run(source="amp")
    [s] = _sessions("amp")
    assert [p.text for p in s.prompts] == ["mow the north meadow", "no, leave the wildflowers", "and the east"]


def test_an_amp_thread_file_that_is_not_a_thread_is_counted(homes: Homes) -> None:
    write_amp(homes.home, {"id": "T-broken", "title": "no messages"})
    report = run(source="amp")
    assert report.skipped == {"unknown_thread_format": 1} and _sessions("amp") == []


HERMES_SCHEMA = """
CREATE TABLE schema_version (version INTEGER NOT NULL);
CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT NOT NULL, user_id TEXT, model TEXT, model_config TEXT,
    system_prompt TEXT, parent_session_id TEXT, started_at REAL NOT NULL, ended_at REAL, end_reason TEXT,
    message_count INTEGER DEFAULT 0, tool_call_count INTEGER DEFAULT 0, input_tokens INTEGER DEFAULT 0,
    output_tokens INTEGER DEFAULT 0, FOREIGN KEY (parent_session_id) REFERENCES sessions(id));
CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL REFERENCES sessions(id),
    role TEXT NOT NULL, content TEXT, tool_call_id TEXT, tool_calls TEXT, tool_name TEXT, timestamp REAL NOT NULL,
    token_count INTEGER, finish_reason TEXT);
INSERT INTO schema_version VALUES (2);
"""
T0 = 1777629600.25


def hermes_db(home: Path) -> sqlite3.Connection:
    return wal_db(home / ".hermes" / "state.db", HERMES_SCHEMA)


def hermes_session(conn: sqlite3.Connection, sid: str, source: str, rows: list[tuple], parent: str | None = None,
                   t0: float = T0) -> None:
    conn.execute("INSERT INTO sessions (id, source, model, system_prompt, parent_session_id, started_at)"
                 " VALUES (?, ?, ?, ?, ?, ?)", (sid, source, "hermes-4-405b", "You are Hermes.", parent, t0))
    for i, (role, content, calls) in enumerate(rows):
        conn.execute("INSERT INTO messages (session_id, role, content, tool_calls, timestamp) VALUES (?, ?, ?, ?, ?)",
                     (sid, role, content, json.dumps(calls) if calls else None, t0 + i))
    conn.commit()


def _hermes_rows() -> list[tuple]:
    call = [{"id": "call_1", "type": "function",
             "function": {"name": "terminal", "arguments": json.dumps({"command": "df -h /srv"})}}]
    return [("user", "check the disk on the media server", None), ("assistant", "", call),
            ("tool", "Filesystem 82% used", None), ("assistant", "It is 82% full.", None),
            ("user", "no, check /srv/media only", None), ("assistant", "/srv/media is 64% full.", None)]


def test_hermes_sessions_are_read_from_its_state_db(homes: Homes) -> None:
    conn = hermes_db(homes.home)
    hermes_session(conn, "20260501_100000_ab12", "cli", _hermes_rows())
    hermes_session(conn, "20260501_110000_cd34", "telegram", [("user", "remind me to water the plants", None)],
                   t0=T0 + 100)
    hermes_session(conn, "20260501_120000_ef56", "cli", [("user", REPLAY_MARKER + "\ntask", None)], t0=T0 + 200)
    report = run(source="hermes")
    assert not report.skipped and report.replay_sessions_skipped == 1
    by_id = {s.session_id: s for s in _sessions("hermes")}
    assert set(by_id) == {"20260501_100000_ab12", "20260501_110000_cd34"}
    s = by_id["20260501_100000_ab12"]
    assert s.project_dir is None and s.entrypoint == "cli" and s.model == "hermes-4-405b"
    assert [p.text for p in s.prompts] == ["check the disk on the media server", "no, check /srv/media only"]
    assert s.finals == ["It is 82% full.", "/srv/media is 64% full."]
    assert s.prompts[0].shell == ["df -h"] and s.tools == {"terminal": 1}
    assert [f.kind for f in s.feedback] == ["correction"]
    assert by_id["20260501_110000_cd34"].entrypoint == "telegram"
    again = run(source="hermes")
    assert again.sessions_new == 0 and again.sessions_updated == 0
    conn.close()
