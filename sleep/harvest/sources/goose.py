"""Goose (Block's agent, CLI and desktop): the SQLite ``sessions/sessions.db`` in its data
folder (``$GOOSE_PATH_ROOT/data`` when set; else Linux ``~/.local/share/goose``, macOS
``~/Library/Application Support/Block/goose``, Windows ``%APPDATA%\\Block\\goose\\data``),
opened read-only (WAL mode: :mod:`sleep.harvest.sources.sqlite_ro` reads its ``-wal`` too).

The schema, from block/goose ``crates/goose/src/session/session_manager.rs`` (schema
version 9, ``create_schema``) and ``crates/goose/src/conversation/message.rs``
(docs/genuine-files.md):

- ``sessions(id, name, description, user_set_name, session_type, working_dir, created_at,
  updated_at, ..., provider_name, model_config_json, ...)``; ``session_type`` is ``user``,
  ``scheduled`` (a recipe run on a schedule: no person typed it), ``specialist`` and
  ``hidden`` (delegated agents), or ``terminal``;
- ``messages(id, message_id, session_id, role, content_json, created_timestamp, timestamp,
  tokens, metadata_json)``: ``role`` ``user``/``assistant``, ``created_timestamp`` in
  seconds, ``content_json`` a list of ``{"type": ...}`` items: ``text`` ``{text}``,
  ``image``, ``toolRequest`` ``{id, toolCall: {status, value: {name, arguments}}}``,
  ``toolResponse``, ``thinking``, ``systemNotification``, ``actionRequired``...;
  ``metadata_json`` ``{userVisible, agentVisible}``: a user message the person never saw
  (``userVisible`` false: context the agent injected) is no prompt, and a user message whose
  items are only tool responses is none either.

Each session is a row file ``<db>#<session id>`` whose version is the number of its
messages and its latest ``updated_at``/message time, so an unchanged session is not re-read.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from skillopt_core.replay import is_replay_path
from sleep.harvest.reader import ParseContext, ParseStats
from sleep.harvest.sources import HomeSource, ParseResult, SourceFile, block_text
from sleep.harvest.sources.actions import Message, TurnActions, session_of
from sleep.harvest.sources.session_db import list_sessions, read_session
from sleep.harvest.sources.sqlite_ro import as_bytes, columns, row_path
from sleep.sessions import Session, iso_utc

HOST = "goose"
KIND = "db-session"
MAX_DATA_BYTES = 16 << 20
_SUBAGENT_TYPES = frozenset({"specialist", "hidden"})


def database(home: Path) -> Path:
    return home / "sessions" / "sessions.db"


def _epoch(value: Any) -> float:
    """Seconds since the epoch of a ``TIMESTAMP`` column (text, or a number) or 0."""
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str) and value:
        try:
            dt = datetime.fromisoformat(value.replace("Z", "+00:00").replace(" ", "T"))
        except ValueError:
            return 0.0
        return (dt if dt.tzinfo else dt.replace(tzinfo=timezone.utc)).timestamp()
    return 0.0


class GooseSource(HomeSource):
    name = HOST

    def discover(self, stats: ParseStats) -> Iterator[SourceFile]:
        db = database(self.home)
        rows = list_sessions(db, "SELECT s.id, s.working_dir, s.updated_at, "
                                 "(SELECT max(m.created_timestamp) FROM messages m WHERE m.session_id = s.id), "
                                 "(SELECT count(*) FROM messages m WHERE m.session_id = s.id) "
                                 "FROM sessions s ORDER BY s.id", stats)
        for sid, cwd, updated, last, count in rows:
            if not isinstance(sid, str) or not sid:
                continue
            seconds = max(_epoch(updated), _epoch(last))
            yield SourceFile(row_path(str(db), sid), HOST, KIND, incremental=False, session_id=sid,
                             project_dir=cwd if isinstance(cwd, str) and cwd else None, container=str(db),
                             version=(1 + int(count or 0), int(seconds * 10**9)))

    def project_of(self, file: SourceFile, ctx: ParseContext) -> str | None:
        return file.project_dir

    def parse(self, file: SourceFile, f: BinaryIO | None, start: int, prior: Session | None,
              ctx: ParseContext) -> ParseResult:
        def messages(conn: sqlite3.Connection) -> str:
            meta = "metadata_json" if "metadata_json" in columns(conn, "messages") else "NULL"
            return (f"SELECT id, role, content_json, created_timestamp, {meta} FROM messages "
                    "WHERE session_id = ? ORDER BY created_timestamp, id")

        got = read_session(file, ("working_dir", "session_type", "created_at", "provider_name", "model_config_json"),
                           messages, ctx.stats)
        if isinstance(got, str):
            return ParseResult(None, file_skip_reason=got)
        info, rows = got
        sid = file.session_id or ""
        s = Session(host=HOST, session_id=sid, source_path=file.path)
        cwd = info.get("working_dir")
        s.project_dir = cwd if isinstance(cwd, str) and cwd else None
        if is_replay_path(s.project_dir):
            return ParseResult(None, replay=True)
        kind = info.get("session_type")
        s.is_subagent = kind in _SUBAGENT_TYPES
        s.scripted = kind == "scheduled"
        created = _epoch(info.get("created_at"))
        s.note_time(iso_utc(created) if created else None)
        model = _json(info.get("model_config_json"), None, ctx)
        if isinstance(model, dict) and isinstance(model.get("model_name"), str):
            s.note_model(model["model_name"])
        ctx.stats.kept()  # the session row
        return session_of(s, _messages(rows, file.path, s, ctx), _tool, ctx)


def _messages(rows: list[tuple[Any, ...]], path: str, s: Session, ctx: ParseContext) -> Iterator[Message]:
    """The messages the person and the agent saw (a user message the agent injected is none), with
    the calls of an assistant message's ``toolRequest`` items."""
    for mid, role, content, at_s, metadata in rows:
        where = f"{path}/messages/{mid}"
        items = _json(content, where, ctx)
        if not isinstance(items, list):
            if items is not None:
                ctx.stats.skip_line("unknown_message_format", where)
            continue
        ctx.stats.kept()
        at = iso_utc(at_s) if isinstance(at_s, (int, float)) else None
        s.note_time(at)
        if role == "user":
            meta_doc = _json(metadata, None, ctx) if metadata is not None else None
            if isinstance(meta_doc, dict) and meta_doc.get("userVisible") is False:
                continue  # context the agent added, never shown as the person's
        calls = [item.get("toolCall") for item in items if isinstance(item, dict) and item.get("type") == "toolRequest"]
        yield role, block_text(items).strip(), at, calls


def _json(value: Any, where: str | None, ctx: ParseContext) -> Any:
    data = as_bytes(value)
    if data is None:
        return None
    ctx.stats.bytes_read += len(data)
    if len(data) > MAX_DATA_BYTES:
        if where:
            ctx.stats.skip_line("value_too_large", where)
        return None
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        if where:
            ctx.stats.skip_line("invalid_json", where)
        return None


def _tool(s: Session, actions: TurnActions, call: Any) -> None:
    """A ``toolRequest``'s call ``{status, value: {name, arguments}}``: the tool, and the
    shell command or file of Goose's developer extension (``developer__shell``
    ``{command}``, ``developer__text_editor`` ``{command, path}``)."""
    value = call.get("value") if isinstance(call, dict) else None
    if not isinstance(value, dict) or not isinstance(value.get("name"), str):
        return
    name = value["name"]
    s.add_tool(name)
    args = value.get("arguments")
    if not isinstance(args, dict):
        return
    short = name.rpartition("__")[2]
    if short == "shell":
        actions.shell(args.get("command"))
    elif short == "text_editor":
        actions.file(args.get("path"))
