"""Gemini CLI sessions: ``$GEMINI_CLI_HOME/.gemini/tmp/<project>/chats/session-*.json[l]``
and ``tmp/<project>/logs.json`` (default ``~/.gemini``; docs/sleep-harvest.md, "Gemini CLI").

Gemini CLI records every conversation automatically, one file per session, under a
folder per project: named by the SHA-256 of the project root (older versions) or by a
short label that ``~/.gemini/projects.json`` (``{"projects": {"<abs path>": "<label>"}}``)
maps back to the path. Shapes read (google-gemini/gemini-cli
``packages/core/src/services/chatRecordingService.ts``; the npm 0.61.0 bundle):

* single JSON (~0.29): ``{sessionId, projectHash, startTime, lastUpdated, kind?, messages}``
  rewritten in place. A user message's ``content`` is what the model got (``@file``
  references expanded); ``displayContent``, when present, is what the person typed and is
  what is stored. No ``kind``: a delegated agent's chat is a second file with the parent's
  ``sessionId`` (see :func:`_is_delegated`).
* JSONL (~0.39+): a metadata line ``{sessionId, projectHash, startTime, lastUpdated, kind}``,
  then appended records, read as the CLI's own loader reads them: a message
  (``{id, ...}``) re-written under the same id replaces the earlier line (the last line
  carries the finished tool calls); ``{"$set": {...}}`` patches the metadata, and a
  ``$set`` of ``messages`` sets the whole array (merged by id here, so a prompt that
  compression or ``{"$rewindTo": id}`` later dropped, which the person did type, is
  kept). Newer builds write a delegated agent's chat to ``chats/<parent id>/<id>.jsonl``
  with ``"kind": "subagent"``.
* injected user messages (``<session_context>``, ``<hook_context>``: the environment the
  CLI prepends) are no prompts.
* ``logs.json``: ``[{sessionId, messageId, type: "user", message, timestamp}]``, every
  line the person entered (prompts, ``/commands``, ``!shell`` inputs). Only sessions
  with no chat file are read from it (a chat file is named ``session-<time>-<first 8
  characters of the session id>``), one row file per session.

A message is ``{id, timestamp, type, content, displayContent?, model?, toolCalls?}`` with
``type`` ``user``, ``gemini`` (its ``toolCalls`` are ``{id, name, args, result, status}``),
``info`` or ``error``. A skill counts as used when its ``activate_skill`` call did not fail.
A hash folder nothing maps is resolved from the chat itself: the workspace directories its
``<session_context>`` lists and the absolute paths its tools touched, and their parents,
are hashed until one is the folder's name.

What a turn did: ``run_shell_command`` gives a shell signature, the file tools
(``read_file``, ``write_file``, ``replace``, ``read_many_files``, ...) their
paths, ``activate_skill`` the skill used.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from skillopt_core.replay import is_replay_path
from sleep.harvest.reader import ParseContext, ParseStats, loads_lenient
from sleep.harvest.side_files import SideFileError, read_side_file
from sleep.harvest.sources import HomeSource, ParseResult, SourceFile, as_dict, as_list, is_dir, scan_dir, text_of
from sleep.harvest.sources.actions import TurnActions
from sleep.harvest.sources.sqlite_ro import row_path
from sleep.sessions import Session, iso_utc

HOST = "gemini-cli"
KIND_CHAT = "chat"
KIND_LOGS = "logs"  # one session of a project's logs.json that has no chat file
LOGS = "logs.json"
MAX_FILE_BYTES = 256 << 20
_SHELL_TOOLS = frozenset({"run_shell_command", "shell"})
_PATH_KEYS = ("file_path", "absolute_path", "path", "dir_path")
_FILE_TOOLS = frozenset({"read_file", "write_file", "replace", "edit", "read_many_files", "list_directory",
                         "glob", "search_file_content", "grep"})
_SKILL_TOOLS = frozenset({"activate_skill", "skill"})
_FAILED = frozenset({"error", "cancelled"})  # a tool call's status when it did not run
# User messages the CLI writes itself (its isIgnoredUserContent): the environment it prepends.
_INJECTED = ("<session_context>", "<hook_context>")
# How a delegated agent's first message opens when its definition has no query template
# (DEFAULT_QUERY_STRING) or the built-in agents' templates ("Your task is ...").
_DELEGATED_OPENINGS = ("Get Started!", "Your task is")
_WORKSPACE_DIR_RX = re.compile(r"^\s*-\s+(/[^\n]+?)\s*$", re.M)
# Built-in tools that never start an agent: their arguments (paths, commands) can appear in any prompt.
_NOT_DELEGATING = _SHELL_TOOLS | _FILE_TOOLS | _SKILL_TOOLS | {
    "web_fetch", "google_web_search", "save_memory", "write_todos", "read_many_files", "ask_user",
    "enter_plan_mode", "exit_plan_mode", "complete_task"}
# Built-in slash commands (session management): counted as commands, not prompts.
_BUILTIN_COMMANDS = frozenset({"clear", "chat", "quit", "exit", "memory", "stats", "help", "resume", "compress",
                               "about", "auth", "bug", "copy", "docs", "editor", "extensions", "ide", "init",
                               "mcp", "model", "privacy", "restore", "settings", "theme", "tools", "vim",
                               "directory", "dir", "corgi", "permissions", "skills", "agents", "hooks",
                               "rewind"})


def project_hash(path: str) -> str:
    """The folder name older Gemini CLI versions give a project: SHA-256 of its path."""
    return hashlib.sha256(path.encode("utf-8")).hexdigest()


class GeminiCliSource(HomeSource):
    name = HOST

    def _projects(self) -> dict[str, str]:
        """Folder label or hash -> project path, from ``projects.json`` and ``.project_root`` files."""
        out: dict[str, str] = {}
        try:
            doc = orjson.loads(read_side_file(self.home / "projects.json"))
        except (OSError, orjson.JSONDecodeError):
            doc = None
        projects = doc.get("projects") if isinstance(doc, dict) else None
        if isinstance(projects, dict):
            for path, label in projects.items():
                if isinstance(path, str) and isinstance(label, str):
                    out[label] = path
                    out[project_hash(path)] = path
        # Roots newer builds recorded elsewhere (tmp/<label>/.project_root, history/<label>/.project_root)
        # also name the hash folders older builds made for the same projects.
        for top in ("tmp", "history"):
            try:
                folders = sorted(os.scandir(self.home / top), key=lambda e: e.name)
            except OSError:
                continue
            for folder in folders:
                if len(folder.name) != 64 and is_dir(folder):
                    root = _project_root(Path(folder.path))
                    if root:
                        out.setdefault(project_hash(root), root)
        return out

    def discover(self, stats: ParseStats) -> Iterator[SourceFile]:
        known = self._projects()
        for folder in sorted(scan_dir(self.home / "tmp", stats), key=lambda e: e.name):
            if not is_dir(folder):
                continue
            project = known.get(folder.name) or _project_root(Path(folder.path))
            chats = Path(folder.path) / "chats"
            names: list[str] = []
            entries = sorted(scan_dir(chats, stats), key=lambda e: e.name)
            listed = {e.name for e in entries}
            for entry in entries:
                if entry.name.startswith("session-") and entry.name.endswith((".json", ".jsonl")):
                    names.append(entry.name)
                    if entry.name + "l" in listed:
                        continue  # resumed by a newer build: its .jsonl re-wrote every message, then went on
                    yield SourceFile(entry.path, HOST, KIND_CHAT, incremental=False, project_dir=project,
                                     project_slug=folder.name, replay_hint=is_replay_path(project))
                elif is_dir(entry):
                    # chats/<parent session id>/<session id>.jsonl: a delegated agent's chat (newer builds)
                    for sub in sorted(scan_dir(Path(entry.path), stats), key=lambda e: e.name):
                        if sub.name.endswith((".json", ".jsonl")):
                            yield SourceFile(sub.path, HOST, KIND_CHAT, incremental=False,
                                             parent_session_id=entry.name, project_dir=project,
                                             project_slug=folder.name, replay_hint=is_replay_path(project))
            yield from self._logged(Path(folder.path) / LOGS, names, project, folder.name, stats)

    def _logged(self, logs: Path, chat_names: list[str], project: str | None, slug: str,
                stats: ParseStats) -> Iterator[SourceFile]:
        """One row file per session of ``logs.json`` that no chat file records."""
        entries = _log_entries(logs, stats)
        if not entries:
            return
        stems = {n.rsplit(".", 1)[0] for n in chat_names}
        short = {stem[-8:] for stem in stems}
        sessions: dict[str, list[dict[str, Any]]] = {}
        for e in entries:
            sessions.setdefault(e["sessionId"], []).append(e)
        for sid, rows in sorted(sessions.items()):
            if sid[:8] in short:
                continue  # its chat file is read instead (the log holds the same prompts)
            size = sum(len(r["message"]) + 1 for r in rows)
            last = max((_ns(r["timestamp"]) for r in rows), default=0)
            yield SourceFile(row_path(str(logs), sid), HOST, KIND_LOGS, incremental=False, session_id=sid,
                             project_dir=project, project_slug=slug, replay_hint=is_replay_path(project),
                             container=str(logs), version=(max(1, size), last or 1))

    def scope_hint(self, file: SourceFile, project: str) -> bool | None:
        if file.project_dir is None and file.project_slug and len(file.project_slug) == 64:
            # An unmapped hash folder: only this project's own hash can be it, and then
            # the folder names the project (its path is known from here on).
            root = os.path.abspath(project)
            if file.project_slug != project_hash(root):
                return False
            file.project_dir = root
        return None

    def project_of(self, file: SourceFile, ctx: ParseContext) -> str | None:
        return file.project_dir

    def parse(self, file: SourceFile, f: BinaryIO | None, start: int, prior: Session | None,
              ctx: ParseContext) -> ParseResult:
        if file.kind == KIND_LOGS:
            return _parse_logged(file, ctx)
        assert f is not None
        data = f.read(MAX_FILE_BYTES + 1)
        ctx.stats.bytes_read += len(data)
        if len(data) > MAX_FILE_BYTES:
            ctx.stats.skip_file("file_too_large", file.path)
            return ParseResult(None, file_skip_reason="file_too_large")
        if not data.strip():
            ctx.stats.skip_file("empty_file", file.path)
            return ParseResult(None, file_skip_reason="empty_file")
        header, messages = _records(data, file.path, ctx)
        if header is None and not messages:
            return ParseResult(None, file_skip_reason="unusable")
        header = header or {}
        sid = header.get("sessionId") if isinstance(header.get("sessionId"), str) else None
        sid = sid or Path(file.path).stem
        parent = file.parent_session_id
        subagent = header.get("kind") == "subagent" or parent is not None
        if not subagent and header.get("kind") is None and _is_delegated(file.path, sid, messages):
            # An older build's delegated agent: its own file under the parent's sessionId. Kept
            # apart from the parent (a session id of its own) and never read as the person's.
            parent, subagent = sid, True
            sid = f"{sid}:subagent:{Path(file.path).stem}"
        project = file.project_dir
        if project is None and file.project_slug and len(file.project_slug) == 64:
            project = _resolve_root(file.project_slug, header, messages)
            if project is not None:
                file.project_dir = project
        s = Session(host=HOST, session_id=sid, project_dir=project, source_path=file.path,
                    is_subagent=subagent, parent_session_id=parent)
        s.note_time(iso_utc(header.get("startTime")))
        s.note_time(iso_utc(header.get("lastUpdated")))
        return _read_messages(s, messages, ctx)


def _ns(stamp: str) -> int:
    try:
        return int(datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp() * 1e9)
    except ValueError:
        return 0


def _project_root(folder: Path) -> str | None:
    """``.project_root`` beside ``chats/`` (some versions write the path there)."""
    try:
        text = read_side_file(folder / ".project_root").decode("utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return text or None


_LOG_CACHE: dict[str, tuple[tuple[int, int], list[dict[str, Any]]]] = {}


def _log_entries(logs: Path, stats: ParseStats) -> list[dict[str, Any]]:
    """The well-formed entries of a ``logs.json`` (the CLI's own filter), or [] when absent.
    The last file read is kept (each of its sessions is parsed from it in turn)."""
    try:
        st = os.stat(logs)
        key = (st.st_size, st.st_mtime_ns)
        cached = _LOG_CACHE.get(str(logs))
        if cached is not None and cached[0] == key:
            return cached[1]
        data = read_side_file(logs, max_bytes=MAX_FILE_BYTES)
    except FileNotFoundError:
        return []
    except (OSError, SideFileError) as exc:
        stats.skip_file("unreadable_logs", f"{logs}: {getattr(exc, 'strerror', None) or exc}")
        return []
    stats.bytes_read += len(data)
    try:
        doc = loads_lenient(data)
    except orjson.JSONDecodeError:
        stats.skip_file("invalid_json", str(logs))
        return []
    if not isinstance(doc, list):
        stats.skip_file("not_a_list", str(logs))
        return []
    entries = [e for e in doc if isinstance(e, dict) and isinstance(e.get("sessionId"), str)
               and isinstance(e.get("messageId"), int) and isinstance(e.get("timestamp"), str)
               and isinstance(e.get("type"), str) and isinstance(e.get("message"), str)]
    _LOG_CACHE.clear()
    _LOG_CACHE[str(logs)] = (key, entries)
    return entries


def _parse_logged(file: SourceFile, ctx: ParseContext) -> ParseResult:
    """A session only ``logs.json`` holds: the lines the person entered, in order."""
    assert file.container is not None and file.session_id is not None
    rows = [e for e in _log_entries(Path(file.container), ctx.stats) if e["sessionId"] == file.session_id]
    rows.sort(key=lambda e: (e["messageId"], e["timestamp"]))
    s = Session(host=HOST, session_id=file.session_id, project_dir=file.project_dir, source_path=file.path)
    actions = TurnActions(s, ctx)
    for e in rows:
        at = iso_utc(e["timestamp"])
        s.note_time(at)
        text = e["message"].strip()
        if e["type"] != "user" or not text:
            ctx.stats.ignored()
            continue
        if text.startswith("!"):  # shell mode: the person ran it, the model never saw it
            if s.prompts:
                actions.shell(text[1:].strip())
                ctx.stats.kept()
            else:
                ctx.stats.ignored()  # no turn yet to hold it
            continue
        ctx.stats.kept()
        _note_command(s, text)
        if (not text.startswith("/") or _is_custom_command(text)) and not actions.prompt(text, at):
            return ParseResult(None, replay=True)
    return ParseResult(s)


def _is_custom_command(text: str) -> bool:
    command = text[1:].split(maxsplit=1)[0] if len(text) > 1 else ""
    return bool(command) and command not in _BUILTIN_COMMANDS


def _note_command(s: Session, text: str) -> None:
    if text.startswith("/"):
        command = text[1:].split(maxsplit=1)[0] if len(text) > 1 else ""
        s.add_command(command or None)


def _records(data: bytes, path: str, ctx: ParseContext) -> tuple[dict[str, Any] | None, list[Any]]:
    """(session metadata, messages) of a ``.json`` or ``.jsonl`` chat file."""
    stripped = data.lstrip()
    if stripped.startswith(b"\xef\xbb\xbf"):
        stripped = stripped[3:]
    try:
        doc = loads_lenient(stripped)
    except orjson.JSONDecodeError:
        doc = None
    if isinstance(doc, dict) and "$set" not in doc and not ("id" in doc and "sessionId" not in doc):
        ctx.stats.kept()
        messages = doc.get("messages")
        return doc, messages if isinstance(messages, list) else []
    return _jsonl(data, path, ctx)


def _jsonl(data: bytes, path: str, ctx: ParseContext) -> tuple[dict[str, Any] | None, list[Any]]:
    """Replay a JSONL chat log the way the CLI loads it: a re-written id replaces its earlier
    line in place, ``$set`` patches the metadata (``messages``: the whole array, merged by
    id), ``$rewindTo`` is noted but drops nothing (the rewound prompts were typed)."""
    header: dict[str, Any] | None = None
    order: list[str] = []
    by_id: dict[str, dict[str, Any]] = {}
    offset = 0
    for n, line in enumerate(data.split(b"\n")):
        where = f"{path}@{offset}"
        offset += len(line) + 1
        if not line.strip():
            continue
        rec = ctx.loads(line, where)
        if rec is None:
            continue
        patch = rec.get("$set")
        if isinstance(rec.get("id"), str):
            _put(order, by_id, rec)
        elif isinstance(patch, dict):
            header = {**(header or {}), **{k: v for k, v in patch.items() if k != "messages"}}
            if isinstance(patch.get("messages"), list):
                _merge(order, by_id, patch["messages"])
        elif isinstance(rec.get("$rewindTo"), str):
            pass
        elif "sessionId" in rec or "messages" in rec:
            header = {**(header or {}), **{k: v for k, v in rec.items() if k != "messages"}}
            if isinstance(rec.get("messages"), list):
                _merge(order, by_id, rec["messages"])
        elif isinstance(rec.get("type"), str):  # a message with no id: a key of its own
            _put(order, by_id, {**rec, "id": f"\0line{n}"})
        else:
            ctx.stats.ignored()
            continue
        ctx.stats.kept()
    return header, [by_id[i] for i in order]


def _put(order: list[str], by_id: dict[str, dict[str, Any]], msg: dict[str, Any]) -> None:
    if msg["id"] not in by_id:
        order.append(msg["id"])
    by_id[msg["id"]] = msg  # the last line of an id wins (its tool calls have finished)


def _merge(order: list[str], by_id: dict[str, dict[str, Any]], messages: list[Any]) -> None:
    """A whole message array: known ids are replaced in place, new ones placed after the id
    the array puts before them (one pass: a long session writes many such patches)."""
    after: dict[str | None, list[str]] = {}  # last known id before them -> new ids, in order
    added: set[str] = set()
    anchor: str | None = None
    for msg in messages:
        if not isinstance(msg, dict) or not isinstance(msg.get("id"), str):
            continue
        mid = msg["id"]
        if mid not in by_id:
            after.setdefault(anchor, []).append(mid)
            added.add(mid)
        elif mid not in added:
            anchor = mid
        by_id[mid] = msg
    if after:
        merged = list(after.get(None, ()))
        for mid in order:
            merged.append(mid)
            merged.extend(after.get(mid, ()))
        order[:] = merged


def _first_user_text(messages: list[Any]) -> str:
    for msg in messages:
        if isinstance(msg, dict) and msg.get("type") == "user":
            text = _typed(msg)
            if text and not text.startswith(_INJECTED):
                return text
    return ""


_NAMES_CACHE: dict[str, tuple[int, dict[str, list[str]]]] = {}


def _chat_names(folder: Path) -> dict[str, list[str]]:
    """The chat files of ``folder`` by the last 8 characters of their stem (a session id's
    first 8), listed once per change of the folder (a folder can hold thousands)."""
    try:
        mtime = os.stat(folder).st_mtime_ns
    except OSError:
        return {}
    cached = _NAMES_CACHE.get(str(folder))
    if cached is not None and cached[0] == mtime:
        return cached[1]
    out: dict[str, list[str]] = {}
    try:
        names = os.listdir(folder)
    except OSError:
        return {}
    for name in names:
        if name.startswith("session-") and name.endswith((".json", ".jsonl")):
            out.setdefault(name.rsplit(".", 1)[0][-8:], []).append(name)
    _NAMES_CACHE.clear()
    _NAMES_CACHE[str(folder)] = (mtime, out)
    return out


def _is_delegated(path: str, sid: str, messages: list[Any]) -> bool:
    """An older build's delegated-agent chat (``kind`` absent): another chat file in the same
    folder carries the same ``sessionId`` (the file names end in its first 8 characters),
    and this file's first user message is the delegated task: it opens as the CLI's agents
    open (``Get Started!``, ``Your task is``) or holds an argument of a tool call the other
    file made. The other file, whose first message is the person's, is the parent."""
    first = _first_user_text(messages)
    if not first:
        return False
    me = Path(path)
    stem = me.name.rsplit(".", 1)[0]  # X.json and its resumed X.jsonl are one chat, not two
    siblings = [me.parent / name for name in _chat_names(me.parent).get(sid[:8], ())
                if name.rsplit(".", 1)[0] != stem]
    if not siblings:
        return False
    if first.startswith(_DELEGATED_OPENINGS):
        return True
    for other in siblings:
        try:
            doc = loads_lenient(read_side_file(other, max_bytes=MAX_FILE_BYTES))
        except (OSError, SideFileError, orjson.JSONDecodeError):
            continue
        if not isinstance(doc, dict) or doc.get("sessionId") != sid:
            continue
        messages_there = as_list(doc.get("messages"))
        if _first_user_text(messages_there) == first:
            continue  # a copy of this chat, not its parent
        for msg in messages_there:
            for call in (msg.get("toolCalls") or []) if isinstance(msg, dict) else []:
                if not isinstance(call, dict) or call.get("name") in _NOT_DELEGATING:
                    continue  # only a call that hands a task to an agent starts one
                args = call.get("args")
                if isinstance(args, dict) and any(isinstance(v, str) and len(v) >= 12 and v.strip() in first
                                                  for v in args.values()):
                    return True
    return False


def _resolve_root(digest: str, header: dict[str, Any], messages: list[Any]) -> str | None:
    """The project root whose SHA-256 is ``digest``, from paths the chat itself names."""
    candidates: list[str] = [d for d in header.get("directories") or [] if isinstance(d, str)]
    for msg in messages:
        if not isinstance(msg, dict):
            continue
        if msg.get("type") == "user":
            text = text_of(msg.get("content"))
            if text.lstrip().startswith("<session_context>"):
                candidates.extend(_WORKSPACE_DIR_RX.findall(text))
        for call in msg.get("toolCalls") or []:
            args = call.get("args") if isinstance(call, dict) else None
            if isinstance(args, dict):
                candidates.extend(v for k, v in args.items()
                                  if isinstance(v, str) and k in (*_PATH_KEYS, "directory"))
    seen: set[str] = set()
    for value in candidates:
        if not value.startswith("/"):
            continue
        path = value.rstrip("/") or "/"
        while path not in seen:
            seen.add(path)
            if project_hash(path) == digest:
                return path
            parent = os.path.dirname(path)
            if parent == path:
                break
            path = parent
    return None


def _typed(msg: dict[str, Any]) -> str:
    """What the person typed: ``displayContent`` when the CLI kept it (``content`` then holds
    the ``@file`` expansion the model got), else ``content``."""
    shown = text_of(msg.get("displayContent")).strip()
    return shown or text_of(msg.get("content")).strip()


def _read_messages(s: Session, messages: list[Any], ctx: ParseContext) -> ParseResult:
    actions = TurnActions(s, ctx)
    for msg in messages:
        if not isinstance(msg, dict):
            continue
        at = iso_utc(msg.get("timestamp"))
        s.note_time(at)
        kind = msg.get("type")
        if kind == "user":
            text = _typed(msg)
            if not text or text.startswith(_INJECTED):
                continue
            _note_command(s, text)
            if text.startswith("/") and not _is_custom_command(text):
                continue  # session management, not work
            if not actions.prompt(text, at):
                return ParseResult(None, replay=True)
        elif kind in ("gemini", "model", "assistant"):
            if isinstance(msg.get("model"), str):
                s.note_model(msg["model"])
            for call in msg.get("toolCalls") or []:
                if isinstance(call, dict):
                    _tool(s, actions, call)
                    actions.answered = True
            text = text_of(msg.get("content")).strip()
            actions.answer(text)
    return ParseResult(s)


def _tool(s: Session, actions: TurnActions, call: dict[str, Any]) -> None:
    name = call.get("name") if isinstance(call.get("name"), str) else None
    s.add_tool(name)
    args = as_dict(call.get("args"))
    if name in _SKILL_TOOLS and call.get("status") not in _FAILED:
        skill = args.get("name") or args.get("skill") or args.get("skill_name")
        s.add_skill(skill if isinstance(skill, str) else None)
    if name in _SHELL_TOOLS:
        actions.shell(args.get("command"))
    elif name in _FILE_TOOLS:
        for key in _PATH_KEYS:
            value = args.get(key)
            if isinstance(value, str):
                actions.file(value)
                break
        many = args.get("paths")
        if isinstance(many, list):
            for value in many[:50]:
                actions.path(value)
