"""Hermes Agent (Nous Research): the SQLite session store ``$HERMES_HOME/state.db`` (default
``~/.hermes``), opened read-only with its WAL.

The schema, from NousResearch/hermes-agent ``hermes_state.py`` (schema version 2,
docs/genuine-files.md):

- ``sessions(id, source, user_id, model, model_config, system_prompt, parent_session_id,
  started_at, ended_at, end_reason, message_count, tool_call_count, ...)``; ``source`` is
  where the conversation happened: ``cli`` (the terminal) or a messaging platform of its
  gateway (``telegram``, ``discord``, ``whatsapp``, ``slack``...); a session split when its
  context was compressed names the one it continues in ``parent_session_id``;
- ``messages(id, session_id, role, content, tool_call_id, tool_calls, tool_name, timestamp,
  token_count, finish_reason)`` in the OpenAI chat shape: ``user`` / ``assistant`` /
  ``tool`` / ``system`` roles, ``tool_calls`` a JSON list of ``{id, type, function: {name,
  arguments}}``; times are epoch seconds.

No working directory is recorded (Hermes is a personal agent as often reached from a chat app
as from a terminal): its sessions have no project. Each session is a row file
``<db>#<session id>`` versioned by its message count and latest message time.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, BinaryIO

import orjson

from sleep.harvest.reader import ParseContext, ParseStats
from sleep.harvest.sources import HomeSource, ParseResult, SourceFile
from sleep.harvest.sources.actions import Message, TurnActions, session_of
from sleep.harvest.sources.session_db import list_sessions, read_session
from sleep.harvest.sources.sqlite_ro import row_path
from sleep.sessions import Session, iso_utc

HOST = "hermes"
KIND = "db-session"
_SHELL_TOOLS = frozenset({"terminal"})  # its terminal tool ({command}); other tools are counted by name


class HermesSource(HomeSource):
    name = HOST

    def discover(self, stats: ParseStats) -> Iterator[SourceFile]:
        db = self.home / "state.db"
        rows = list_sessions(db, "SELECT s.id, s.started_at, (SELECT max(m.timestamp) FROM messages m "
                                 "WHERE m.session_id = s.id), (SELECT count(*) FROM messages m "
                                 "WHERE m.session_id = s.id) FROM sessions s ORDER BY s.id", stats)
        for sid, started, last, count in rows:
            if isinstance(sid, str) and sid:
                seconds = max(float(started or 0), float(last or 0))
                yield SourceFile(row_path(str(db), sid), HOST, KIND, incremental=False, session_id=sid,
                                 container=str(db), version=(1 + int(count or 0), int(seconds * 10**9)))

    def scope_hint(self, file: SourceFile, project: str) -> bool | None:
        return False  # no session records a project

    def project_of(self, file: SourceFile, ctx: ParseContext) -> str | None:
        return None

    def parse(self, file: SourceFile, f: BinaryIO | None, start: int, prior: Session | None,
              ctx: ParseContext) -> ParseResult:
        got = read_session(file, ("source", "model", "parent_session_id", "started_at", "ended_at"),
                           lambda _: "SELECT id, role, content, tool_calls, timestamp FROM messages "
                                     "WHERE session_id = ? ORDER BY timestamp, id", ctx.stats)
        if isinstance(got, str):
            return ParseResult(None, file_skip_reason=got)
        info, rows = got
        sid = file.session_id or ""
        s = Session(host=HOST, session_id=sid, source_path=file.path)
        s.entrypoint = info.get("source") if isinstance(info.get("source"), str) else None
        parent = info.get("parent_session_id")
        s.parent_session_id = parent if isinstance(parent, str) and parent else None
        s.note_time(iso_utc(info.get("started_at")))
        s.note_time(iso_utc(info.get("ended_at")))
        s.note_model(info.get("model") if isinstance(info.get("model"), str) else None)
        ctx.stats.kept()
        return session_of(s, _messages(rows, file.path, s, ctx), _tool, ctx)


def _messages(rows: list[tuple[Any, ...]], path: str, s: Session, ctx: ParseContext) -> Iterator[Message]:
    for mid, role, content, tool_calls, at_s in rows:
        at = iso_utc(at_s)
        s.note_time(at)
        text = content.strip() if isinstance(content, str) else ""
        ctx.stats.bytes_read += len(text)
        ctx.stats.kept()
        yield role, text, at, _calls(tool_calls, f"{path}/messages/{mid}", ctx) if role == "assistant" else []


def _calls(value: Any, where: str, ctx: ParseContext) -> list[Any]:
    if not value:
        return []
    try:
        calls = orjson.loads(value)
    except (orjson.JSONDecodeError, TypeError):
        ctx.stats.skip_line("invalid_json", where)
        return []
    return calls if isinstance(calls, list) else []


def _tool(s: Session, actions: TurnActions, call: Any) -> None:
    fn = call.get("function") if isinstance(call, dict) else None
    if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
        return
    name = fn["name"]
    s.add_tool(name)
    args = fn.get("arguments")
    if isinstance(args, str):
        try:
            args = orjson.loads(args)
        except orjson.JSONDecodeError:
            return
    if not isinstance(args, dict):
        return
    if name in _SHELL_TOOLS:
        actions.shell(args.get("command"))
