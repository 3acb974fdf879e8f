"""Cursor's ``cursor-agent`` CLI chats: ``~/.cursor/chats/<workspace>/<chat id>/store.db``.

Each chat is one SQLite file (docs/sleep-harvest.md, "What is read"; the layout as
described in public reverse-engineering notes, e.g. yashas-salankimatt/sidecar
docs/plans/cursor-cli-adapter.md): ``<workspace>`` is the MD5 of the project's
absolute path; table ``meta(key, value)`` holds under key ``0`` the hex-encoded JSON
``{agentId, latestRootBlobId, name, mode, createdAt (ms), lastUsedModel}``;
table ``blobs(id, data)`` is content-addressed (SHA-256 ids): tree blobs are
binary, message blobs are JSON ``{role, content, providerOptions?}`` with
``role`` ``user`` (text blocks, the typed prompt inside ``<user_query>``),
``assistant`` (``text``, ``reasoning`` and ``tool-call`` blocks
``{toolName, args}``), ``tool`` or ``system``. Messages are taken in insertion
(rowid) order; identical messages are one blob, so a prompt typed twice word
for word counts once.

The agent transcripts Cursor writes beside its databases,
``~/.cursor/projects/<slug>/agent-transcripts/`` (:mod:`sleep.harvest.sources.cursor_transcripts`),
are read by this source too, each session once: a transcript whose id is a chat read from a
``store.db`` here, or a chat of the IDE's ``state.vscdb`` (its ``composerData:<id>`` with its
``bubbleId:<id>:*`` messages, read by the ``cursor-ide`` source with timestamps), is that chat's
copy and is skipped, counted ``transcript_of_a_stored_chat``.

The database is opened through a read-only URI (``mode=ro``), with
``query_only`` set and short statements, so a running agent is never blocked
and the file is never written. A chat whose journal (``store.db-wal``) is still
open is read as far as SQLite lets a reader see it; the next harvest after the
agent checkpoints (on exit) reads the rest.
"""

from __future__ import annotations

import hashlib
import os
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from skillopt_core.replay import is_replay_path
from sleep import paths
from sleep.harvest.reader import ParseContext, ParseStats
from sleep.harvest.sources import HomeSource, ParseResult, SourceFile, as_dict, is_dir, scan_dir
from sleep.harvest.sources import cursor_transcripts as transcripts
from sleep.harvest.sources.actions import TurnActions
from sleep.harvest.sources.sqlite_ro import connect_read_only, tables
from sleep.sessions import Session, iso_utc

HOST = "cursor-agent"
STORE = "store.db"
_QUERY_RX = re.compile(r"<user_query>\s*(.*?)\s*</user_query>", re.S)
_ONLY_TAGS_RX = re.compile(r"^\s*<([a-z_]+)>.*</\1>\s*$", re.S)  # injected context such as <user_info>
# Context Cursor puts before what was typed (<attached_files>, <user_info>): snake_case tags,
# which no HTML the person types uses.
_NOTICE_RX = re.compile(r"<system_notification>.*?</system_notification>(?:\s*<user_query>.*?</user_query>)?", re.S)
_STAMP_RX = re.compile(r"<timestamp>.*?</timestamp>", re.S)  # when it was sent (newer transcripts)
_LEADING_TAG_RX = re.compile(r"^\s*<([a-z]+_[a-z_]+)>.*?</\1>", re.S)
_SHELL_TOOLS = frozenset({"Shell", "run_terminal_cmd", "shell"})
_PATH_KEYS = ("path", "file_path", "target_file", "targetFile", "filePath")


def workspace_hash(project: str) -> str:
    """The folder name cursor-agent gives a project: MD5 of its absolute path."""
    return hashlib.md5(project.encode("utf-8")).hexdigest()


class CursorAgentSource(HomeSource):
    name = HOST

    def __init__(self, home: Path | None = None, ide_user_dirs: list[Path] | None = None) -> None:
        super().__init__(home)
        self._ide_user_dirs = ide_user_dirs

    def discover(self, stats: ParseStats) -> Iterator[SourceFile]:
        listed = list(transcripts.listing(str(self.home / "projects"), stats))
        slug_of = {sid: slug for slug, sid, _, _ in listed}
        chats: set[str] = set()
        for file in self._discover_chats(stats):
            chats.add(file.session_id or "")
            if file.session_id in slug_of and file.project_slug:
                # The chat's transcript twin names the folder lossily; the store's folder is the
                # MD5 of the exact path: a decoding whose MD5 matches is the project, never a guess.
                file.project_dir = transcripts.decode_with_hash(slug_of[file.session_id], file.project_slug,
                                                                workspace_hash)
            yield file
        stored = chats | self._ide_chat_ids({sid for _, sid, _, _ in listed if sid not in chats})
        folder: dict[str, str | None] = {}  # slug -> its folder (sessions of one project share it)
        for slug, sid, path, parent in listed:
            if sid in stored:
                stats.skip_file("transcript_of_a_stored_chat", path)
                continue
            if slug not in folder:
                folder[slug] = transcripts.resolve_slug(slug)
            yield SourceFile(path, HOST, transcripts.KIND, incremental=False, session_id=sid, project_slug=slug,
                             project_dir=folder[slug], parent_session_id=parent)

    def _ide_chat_ids(self, wanted: set[str]) -> set[str]:
        """Those of ``wanted`` that are IDE chats whose messages the ``cursor-ide`` source reads: a
        ``composerData:<id>`` row with at least one ``bubbleId:<id>:*`` row in a global
        ``state.vscdb`` (a newer chat kept only in ``agentKv`` blobs has none: its transcript is read)."""
        ids: set[str] = set()
        users = self._ide_user_dirs if self._ide_user_dirs is not None else paths.cursor_user_dirs()
        for user in users:
            db = Path(user) / "globalStorage" / "state.vscdb"
            if not db.is_file():
                continue
            try:
                conn = connect_read_only(str(db))
                try:
                    if "cursorDiskKV" not in tables(conn):
                        continue
                    for sid in wanted - ids:
                        chat = conn.execute("SELECT 1 FROM cursorDiskKV WHERE key = ?", (f"composerData:{sid}",))
                        if chat.fetchone() and conn.execute(
                                "SELECT 1 FROM cursorDiskKV WHERE key >= ? AND key < ? LIMIT 1",
                                (f"bubbleId:{sid}:", f"bubbleId:{sid};")).fetchone():
                            ids.add(sid)
                finally:
                    conn.close()
            except sqlite3.Error:
                continue  # the cursor-ide source counts an unreadable database
        return ids

    def _discover_chats(self, stats: ParseStats) -> Iterator[SourceFile]:
        for workspace in sorted(scan_dir(self.home / "chats", stats), key=lambda e: e.name):
            if not is_dir(workspace):
                continue
            for chat in sorted(scan_dir(workspace.path, stats), key=lambda e: e.name):
                store = os.path.join(chat.path, STORE)
                if os.path.isfile(store):
                    yield SourceFile(store, HOST, "chat", incremental=False, session_id=chat.name,
                                     project_slug=workspace.name)

    def scope_hint(self, file: SourceFile, project: str) -> bool | None:
        if file.kind == transcripts.KIND:
            root = os.path.abspath(project)
            if file.project_dir is not None:
                return None  # resolved: the harvest compares it (a subfolder is in scope)
            if file.project_slug and transcripts.slug_matches(file.project_slug, root):
                file.project_dir = root  # the project asked for encodes to this folder's name
                return None
            return False
        if file.project_dir is None and file.project_slug:
            root = os.path.abspath(project)
            if file.project_slug != workspace_hash(root):
                return False
            file.project_dir = root  # only this project's hash names the folder
        return None

    def project_of(self, file: SourceFile, ctx: ParseContext) -> str | None:
        return file.project_dir

    def parse(self, file: SourceFile, f: BinaryIO, start: int, prior: Session | None,
              ctx: ParseContext) -> ParseResult:
        if file.kind == transcripts.KIND:
            return self._parse_transcript(file, f, ctx)
        try:
            ctx.stats.bytes_read += os.path.getsize(file.path)
            conn = connect_read_only(file.path)
            try:
                meta = _meta(conn)
                blobs = conn.execute("SELECT data FROM blobs ORDER BY rowid").fetchall()
            finally:
                conn.close()
        except (sqlite3.Error, OSError):
            ctx.stats.skip_file("unreadable_sqlite", file.path)
            return ParseResult(None, file_skip_reason="unreadable_sqlite")
        sid = meta.get("agentId") if isinstance(meta.get("agentId"), str) else file.session_id
        s = Session(host=HOST, session_id=sid or Path(file.path).parent.name, project_dir=file.project_dir,
                    source_path=file.path)
        s.note_time(iso_utc(meta.get("createdAt")))
        if isinstance(meta.get("lastUsedModel"), str):
            s.note_model(meta["lastUsedModel"])
        if is_replay_path(file.project_dir):
            return ParseResult(None, replay=True)
        messages = []
        for (data,) in blobs:
            if isinstance(data, str):
                data = data.encode("utf-8", "surrogatepass")
            if not isinstance(data, bytes) or not data.lstrip().startswith(b"{"):
                continue  # a tree blob (binary)
            msg = ctx.loads(data, f"{file.path}#blob")
            if msg is not None and isinstance(msg.get("role"), str):
                messages.append(msg)
                ctx.stats.kept()
            elif msg is not None:
                ctx.stats.ignored()
        return _read_messages(s, messages, ctx)


    def _parse_transcript(self, file: SourceFile, f: BinaryIO, ctx: ParseContext) -> ParseResult:
        """One agent transcript (no timestamps: the session's time is the file's mtime)."""
        if is_replay_path(file.project_dir):
            return ParseResult(None, replay=True)
        try:
            data = f.read()
            mtime = os.path.getmtime(file.path)
        except OSError:
            ctx.stats.skip_file("unreadable", file.path)
            return ParseResult(None, file_skip_reason="unreadable")
        ctx.stats.bytes_read += len(data)
        result = self._transcript_session(file, data, file.path, mtime, ctx)
        for twin in transcripts.twins(file.path) if result.session is None and not result.replay else []:
            try:  # the twin this one was preferred to, when this one holds no prompt (a shape not known)
                with open(twin, "rb") as g:
                    data = g.read()
            except OSError:
                continue
            ctx.stats.bytes_read += len(data)
            ctx.stats.actions["cursor_transcript_read_from_twin"] += 1
            result = self._transcript_session(file, data, twin, mtime, ctx)
            if result.session is not None:
                break
        return result

    def _transcript_session(self, file: SourceFile, data: bytes, path: str, mtime: float,
                            ctx: ParseContext) -> ParseResult:
        s = Session(host=HOST, session_id=file.session_id or Path(file.path).stem, project_dir=file.project_dir,
                    source_path=file.path)
        s.note_time(iso_utc(mtime))
        if file.parent_session_id:
            s.is_subagent, s.parent_session_id = True, file.parent_session_id
        msgs = []
        for m in transcripts.messages(data, path, ctx):
            content: list[dict[str, Any]] = [{"type": "text", "text": t} for t in m["texts"]]
            if m["role"] == "assistant":
                content = [{"type": "text", "text": transcripts.without_thinking(t)} for t in m["texts"]]
                content += [{"type": "tool-call", "toolName": n, "args": a} for n, a in m["tools"]]
            msgs.append({"role": m["role"], "content": content,
                         "at": transcripts.stamped(m["texts"]) if m["role"] == "user" else None})
        result = _read_messages(s, msgs, ctx)
        if result.session is not None and not result.session.prompts:
            return ParseResult(None)
        return result


def _meta(conn: sqlite3.Connection) -> dict[str, Any]:
    row = conn.execute("SELECT value FROM meta WHERE key = '0'").fetchone()
    if not row or row[0] is None:
        return {}
    value = row[0]
    try:
        raw = bytes.fromhex(value) if isinstance(value, str) else bytes(value)
        doc = orjson.loads(raw)
    except (ValueError, orjson.JSONDecodeError):
        return {}
    return doc if isinstance(doc, dict) else {}


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _typed(text: str) -> str | None:
    """What the person typed: inside ``<user_query>``; None for injected context only. A
    ``<system_notification>`` (a subagent finished) and the ``<user_query>`` Cursor writes right
    after it ("The above subagent result is already visible to the user...") are not typed."""
    text = _STAMP_RX.sub("", _NOTICE_RX.sub("", text))
    found = _QUERY_RX.findall(text)
    if found:
        return "\n\n".join(q for q in found if q).strip() or None
    if _ONLY_TAGS_RX.match(text):
        return None
    while (m := _LEADING_TAG_RX.match(text)) is not None:
        text = text[m.end():]
    return text.strip() or None


def _read_messages(s: Session, messages: list[dict[str, Any]], ctx: ParseContext) -> ParseResult:
    actions = TurnActions(s, ctx)
    for msg in messages:
        role = msg["role"]
        blocks = _blocks(msg.get("content"))
        if role == "user":
            texts = [t for t in (_typed(b["text"]) for b in blocks
                                 if b.get("type") == "text" and isinstance(b.get("text"), str)) if t]
            if not texts:
                continue
            text = "\n\n".join(texts)
            at = msg.get("at") if isinstance(msg.get("at"), str) else None
            if not actions.prompt(text, at):
                return ParseResult(None, replay=True)
            s.note_time(at)
        elif role == "assistant":
            said = []
            for b in blocks:
                model = ((b.get("providerOptions") or {}).get("cursor") or {}).get("modelName") \
                    if isinstance(b.get("providerOptions"), dict) else None
                if isinstance(model, str):
                    s.note_model(model)
                if b.get("type") == "tool-call":
                    _tool(s, actions, b)
                    actions.answered = True
                elif b.get("type") == "text" and isinstance(b.get("text"), str) and b["text"].strip():
                    said.append(b["text"])
            actions.answer("\n\n".join(said))
    return ParseResult(s)


def _tool(s: Session, actions: TurnActions, call: dict[str, Any]) -> None:
    name = call.get("toolName") if isinstance(call.get("toolName"), str) else None
    s.add_tool(name)
    args = as_dict(call.get("args"))
    if name in _SHELL_TOOLS:
        actions.shell(args.get("command"))
        return
    for key in _PATH_KEYS:
        if isinstance(args.get(key), str):
            actions.file(args[key])
            break
