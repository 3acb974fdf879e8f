"""A Goose ``sessions.db`` written in the shape Goose creates it (block/goose
``crates/goose/src/session/session_manager.rs`` at dbec165, ``create_schema``, schema
version 9; message items as ``crates/goose/src/conversation/message.rs`` at 6416fe7
serialises them). Every value is made up."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

SCHEMA = """
CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP);
CREATE TABLE sessions (
    id TEXT PRIMARY KEY, name TEXT NOT NULL DEFAULT '', description TEXT NOT NULL DEFAULT '',
    user_set_name BOOLEAN DEFAULT FALSE, session_type TEXT NOT NULL DEFAULT 'user', working_dir TEXT NOT NULL,
    created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
    extension_data TEXT DEFAULT '{}', total_tokens INTEGER, input_tokens INTEGER, output_tokens INTEGER,
    accumulated_total_tokens INTEGER, accumulated_input_tokens INTEGER, accumulated_output_tokens INTEGER,
    schedule_id TEXT, recipe_json TEXT, user_recipe_values_json TEXT, provider_name TEXT, model_config_json TEXT,
    tenant_id TEXT, user_id TEXT);
CREATE TABLE messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT, message_id TEXT, session_id TEXT NOT NULL REFERENCES sessions(id),
    role TEXT NOT NULL, content_json TEXT NOT NULL, created_timestamp INTEGER NOT NULL,
    timestamp TIMESTAMP DEFAULT CURRENT_TIMESTAMP, tokens INTEGER, metadata_json TEXT);
CREATE INDEX idx_messages_session ON messages(session_id);
INSERT INTO schema_version (version) VALUES (9);
"""

VISIBLE = {"userVisible": True, "agentVisible": True}


def text(t: str) -> dict:
    return {"type": "text", "text": t}


def tool_request(cid: str, name: str, arguments: dict) -> dict:
    return {"type": "toolRequest", "id": cid, "toolCall": {"status": "success", "value": {"name": name,
                                                                                        "arguments": arguments}}}


def tool_response(cid: str, out: str) -> dict:
    return {"type": "toolResponse", "id": cid, "toolResult": {"status": "success", "value": {
        "content": [{"type": "text", "text": out}], "isError": False}}}


def wal_db(path: Path, schema: str) -> sqlite3.Connection:
    """A new SQLite store at ``path`` in WAL mode (as Goose and Hermes keep theirs), made by ``schema``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.executescript(schema)
    return conn


def make_db(data_dir: Path) -> sqlite3.Connection:
    return wal_db(data_dir / "sessions" / "sessions.db", SCHEMA)


def add_session(conn: sqlite3.Connection, sid: str, cwd: str, messages: list[tuple[str, list, int, dict]],
                kind: str = "user", created: str = "2026-05-01 10:00:00") -> None:
    conn.execute("INSERT INTO sessions (id, name, session_type, working_dir, created_at, updated_at, provider_name,"
                 " model_config_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                 (sid, "pots", kind, cwd, created, created, "anthropic",
                  json.dumps({"model_name": "claude-sonnet-4-5", "context_limit": 200000})))
    for i, (role, items, at, meta) in enumerate(messages):
        conn.execute("INSERT INTO messages (message_id, session_id, role, content_json, created_timestamp,"
                     " metadata_json) VALUES (?, ?, ?, ?, ?, ?)",
                     (f"msg_{sid}_{i}", sid, role, json.dumps(items), at, json.dumps(meta)))
    conn.commit()
