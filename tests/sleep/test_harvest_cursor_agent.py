"""Cursor's ``cursor-agent`` CLI chats (issue 22 §2, harvest only).

Fixtures are built in the shape public reverse-engineering notes describe
(yashas-salankimatt/sidecar docs/plans/cursor-cli-adapter.md, "Cursor-CLI Data
Format"): ``~/.cursor/chats/<md5 of the project path>/<chat id>/store.db`` with
``meta(key TEXT PRIMARY KEY, value TEXT)`` holding hex-encoded JSON under key
``0`` and ``blobs(id TEXT PRIMARY KEY, data BLOB)``, content-addressed by SHA-256,
whose message blobs are JSON ``{role, content}`` (user text inside
``<user_query>``, assistant ``text`` / ``reasoning`` / ``tool-call`` blocks) and
whose tree blobs are binary.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from pathlib import Path

from sleep_testutil import Homes, run

from sleep.index import Index
from sleep.harvest.sources.cursor_agent import workspace_hash

CWD = "/work/ledger"
CREATED_MS = 1767396459642


def _blob(conn: sqlite3.Connection, data: bytes) -> None:
    conn.execute("INSERT OR IGNORE INTO blobs VALUES (?, ?)", (hashlib.sha256(data).hexdigest(), data))


def _chat(homes: Homes, project: str = CWD, chat_id: str = "93d7b323-695c-4b84-8b69-d48bb88ae780") -> Path:
    store = homes.home / ".cursor" / "chats" / workspace_hash(project) / chat_id / "store.db"
    store.parent.mkdir(parents=True)
    conn = sqlite3.connect(store)
    conn.execute("CREATE TABLE blobs (id TEXT PRIMARY KEY, data BLOB)")
    conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
    meta = {"agentId": chat_id, "latestRootBlobId": "56" * 32, "name": "New Agent", "mode": "auto-run",
            "createdAt": CREATED_MS, "lastUsedModel": "claude-4.5-opus-high-thinking"}
    conn.execute("INSERT INTO meta VALUES ('0', ?)", (json.dumps(meta).encode().hex(),))
    messages = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": [{"type": "text", "text": "<user_info>\nOS Version: linux 6.8\n</user_info>"}]},
        {"role": "user", "content": [{"type": "text", "text": "<user_query>\nfix the failing date parser test\n"
                                                              "</user_query>"}],
         "providerOptions": {"cursor": {"requestId": "182d4d53-458c-47a5-8ed9-677469aaa5b5"}}},
        {"id": "1", "role": "assistant", "content": [
            {"type": "reasoning", "text": "Let me run the test first.",
             "providerOptions": {"cursor": {"modelName": "gpt-5"}}},
            {"type": "tool-call", "toolCallId": "toolu_1", "toolName": "Shell",
             "args": {"command": "pytest tests/test_dates.py -q", "description": "run the test"}},
            {"type": "tool-call", "toolCallId": "toolu_2", "toolName": "Edit",
             "args": {"path": f"{CWD}/src/dates.py"}}]},
        {"role": "tool", "id": "toolu_1", "content": [{"type": "tool-result", "toolName": "Shell",
                                                      "toolCallId": "toolu_1", "result": "Exit code: 0"}]},
        {"id": "2", "role": "assistant", "content": [{"type": "text", "text": "The parser now accepts ISO weeks."}]},
        {"role": "user", "content": [{"type": "text", "text": "<user_query>\nno, keep the old format and add a "
                                                              "test for it\n</user_query>"}]},
    ]
    _blob(conn, b"\x0a\x20" + bytes(range(32)) + b"\x12\x04root")  # a tree blob (binary)
    for m in messages:
        _blob(conn, json.dumps(m).encode())
    conn.commit()
    conn.close()
    return store


def test_cursor_agent_chat_from_its_store(homes: Homes) -> None:
    store = _chat(homes)
    before = (hashlib.sha256(store.read_bytes()).hexdigest(), os.stat(store).st_mtime_ns)
    report = run(source="cursor")
    with Index.open() as idx:
        [s] = idx.sessions(host="cursor-agent")
    assert report.sources["cursor-agent"].sessions_new == 1
    assert [p.text for p in s.prompts] == ["fix the failing date parser test",
                                           "no, keep the old format and add a test for it"]
    assert s.finals[0] == "The parser now accepts ISO weeks."
    assert s.tools == {"Shell": 1, "Edit": 1}
    assert s.prompts[0].shell == ["pytest -q"]
    assert s.models == ["claude-4.5-opus-high-thinking", "gpt-5"]
    assert s.feedback and s.feedback[0].kind == "correction"
    assert s.started_at is not None and s.started_at.startswith("2026-01-02")
    # Never written: same bytes, same mtime, no journal left beside it.
    assert (hashlib.sha256(store.read_bytes()).hexdigest(), os.stat(store).st_mtime_ns) == before
    assert sorted(p.name for p in store.parent.iterdir()) == ["store.db"]


def test_cursor_agent_project_is_the_folder_whose_md5_it_is(homes: Homes) -> None:
    _chat(homes)
    assert run(source="cursor", project="/work/elsewhere").sessions_new == 0
    assert run(source="cursor", project=CWD).sessions_new == 1
    with Index.open() as idx:
        [s] = idx.sessions(host="cursor-agent")
    assert s.project_dir == CWD


def test_a_chat_is_read_while_the_agent_holds_a_write_lock(homes: Homes) -> None:
    store = _chat(homes)
    writer = sqlite3.connect(store, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")  # the agent is mid-write (RESERVED lock)
    try:
        assert run(source="cursor").sessions_new == 1
        writer.execute("INSERT INTO meta VALUES ('1', 'x')")  # and its write still goes through
    finally:
        writer.execute("COMMIT")
        writer.close()


def test_a_store_that_is_not_sqlite_is_skipped_and_counted(homes: Homes) -> None:
    bad = homes.home / ".cursor" / "chats" / workspace_hash(CWD) / "c2" / "store.db"
    bad.parent.mkdir(parents=True)
    bad.write_bytes(b"not a database at all" * 100)
    report = run(source="cursor")
    assert report.sessions_new == 0 and report.skipped.get("unreadable_sqlite") == 1
