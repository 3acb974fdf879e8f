"""Gemini CLI sessions: ``$GEMINI_CLI_HOME/.gemini/tmp/<project>/chats/session-*.json``
(default ``~/.gemini``; docs/sleep-harvest.md, "What is read").

Gemini CLI records every conversation automatically, one file per session,
under a folder per project: named by the SHA-256 of the project's absolute path
(older versions) or by a short label that ``~/.gemini/projects.json``
(``{"projects": {"<abs path>": "<label>"}}``) maps back to the path. A file is
one JSON object ``{sessionId, projectHash, startTime, lastUpdated, kind,
messages}``; newer versions write ``.jsonl``: a header line with the same
fields, then one message per line. A message is ``{id, timestamp, type,
content, model?, toolCalls?}`` with ``type`` ``user`` (content: text or
``[{"text"}]``), ``gemini`` (the answer; its ``toolCalls`` are
``{id, name, args, result, status, timestamp, resultDisplay}``), ``info`` or ``error``.
``kind`` is ``main``, or ``subagent`` for a chat a delegated agent recorded (kept as a
subagent session). A skill counts as used when its ``activate_skill`` call did not fail.

Files are re-read whole when they change (the CLI rewrites the JSON form in place).
What a turn did: ``run_shell_command`` gives a shell signature, the file tools
(``read_file``, ``write_file``, ``replace``, ``read_many_files``, ...) their
paths, ``activate_skill`` the skill used.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any, BinaryIO, Iterator

import orjson

from skillopt_core.replay import is_replay_path, is_replay_prompt
from sleep import paths
from sleep.harvest.reader import ParseContext, ParseStats, loads_lenient
from sleep.harvest.side_files import read_side_file
from sleep.sessions import Session, iso_utc
from sleep.harvest.sources import ParseResult, SourceFile, scan_dir, text_of
from sleep.harvest.sources.actions import TurnActions
from sleep.harvest.sources.turns import open_turn

HOST = "gemini-cli"
MAX_FILE_BYTES = 256 << 20
_SHELL_TOOLS = frozenset({"run_shell_command", "shell"})
_PATH_KEYS = ("file_path", "absolute_path", "path", "dir_path")
_FILE_TOOLS = frozenset({"read_file", "write_file", "replace", "edit", "read_many_files", "list_directory",
                         "glob", "search_file_content", "grep"})
_SKILL_TOOLS = frozenset({"activate_skill", "skill"})
_FAILED = frozenset({"error", "cancelled"})  # a tool call's status when it did not run
# Built-in slash commands (session management): counted as commands, not prompts.
_BUILTIN_COMMANDS = frozenset({"clear", "chat", "quit", "exit", "memory", "stats", "help", "resume", "compress",
                               "about", "auth", "bug", "copy", "docs", "editor", "extensions", "ide", "init",
                               "mcp", "model", "privacy", "restore", "settings", "theme", "tools", "vim",
                               "directory", "dir", "corgi", "permissions", "skills", "agents", "hooks"})


def project_hash(path: str) -> str:
    """The folder name older Gemini CLI versions give a project: SHA-256 of its path."""
    return hashlib.sha256(path.encode("utf-8")).hexdigest()


class GeminiCliSource:
    name = HOST

    def __init__(self, home: Path | None = None) -> None:
        self._home = home

    @property
    def home(self) -> Path:
        return self._home or paths.gemini_home()

    def _projects(self) -> dict[str, str]:
        """Folder label -> project path, from ``projects.json`` and ``.project_root`` files."""
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
        return out

    def discover(self, stats: ParseStats) -> Iterator[SourceFile]:
        known = self._projects()
        for folder in sorted(scan_dir(self.home / "tmp", stats), key=lambda e: e.name):
            try:
                if not folder.is_dir():
                    continue
            except OSError:
                continue
            project = known.get(folder.name) or _project_root(Path(folder.path))
            for entry in sorted(scan_dir(Path(folder.path) / "chats", stats), key=lambda e: e.name):
                if entry.name.startswith("session-") and entry.name.endswith((".json", ".jsonl")):
                    yield SourceFile(entry.path, HOST, "chat", incremental=False, project_dir=project,
                                     project_slug=folder.name, replay_hint=is_replay_path(project))

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

    def parse(self, file: SourceFile, f: BinaryIO, start: int, prior: Session | None,
              ctx: ParseContext) -> ParseResult:
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
        s = Session(host=HOST, session_id=sid or Path(file.path).stem, project_dir=file.project_dir,
                    source_path=file.path, is_subagent=header.get("kind") == "subagent")
        s.note_time(iso_utc(header.get("startTime")))
        s.note_time(iso_utc(header.get("lastUpdated")))
        return _read_messages(s, messages, ctx)


def _project_root(folder: Path) -> str | None:
    """``.project_root`` beside ``chats/`` (some versions write the path there)."""
    try:
        text = read_side_file(folder / ".project_root").decode("utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return text or None


def _records(data: bytes, path: str, ctx: ParseContext) -> tuple[dict[str, Any] | None, list[Any]]:
    """(session header, messages) of a ``.json`` or ``.jsonl`` chat file."""
    stripped = data.lstrip()
    if stripped.startswith(b"\xef\xbb\xbf"):
        stripped = stripped[3:]
    try:
        doc = loads_lenient(stripped)
    except orjson.JSONDecodeError:
        doc = None
    if isinstance(doc, dict):
        ctx.stats.kept()
        messages = doc.get("messages")
        return doc, messages if isinstance(messages, list) else []
    header: dict[str, Any] | None = None
    messages: list[Any] = []
    offset = 0
    for line in data.split(b"\n"):
        where = f"{path}@{offset}"
        offset += len(line) + 1
        if not line.strip():
            continue
        rec = ctx.loads(line, where)
        if rec is None:
            continue
        if "messages" in rec or ("sessionId" in rec and "type" not in rec):
            header = {**(header or {}), **rec}
            messages.extend(rec.get("messages") or [])
            ctx.stats.kept()
        elif isinstance(rec.get("type"), str):
            messages.append(rec)
            ctx.stats.kept()
        else:
            ctx.stats.ignored()
    return header, messages


def _read_messages(s: Session, messages: list[Any], ctx: ParseContext) -> ParseResult:
    actions = TurnActions(s, ctx)
    answered = False
    seen: set[str] = set()
    for msg in messages:
        if not isinstance(msg, dict):
            continue
        mid = msg.get("id")
        if isinstance(mid, str):
            if mid in seen:
                continue  # a message rewritten later in a .jsonl log
            seen.add(mid)
        at = iso_utc(msg.get("timestamp"))
        s.note_time(at)
        kind = msg.get("type")
        if kind == "user":
            text = text_of(msg.get("content")).strip()
            if not text:
                continue
            if text.startswith("/"):
                command = text[1:].split(maxsplit=1)[0] if len(text) > 1 else ""
                s.add_command(command or None)
                if not command or command in _BUILTIN_COMMANDS:
                    continue  # session management, not work
            if not s.prompts and is_replay_prompt(text):
                return ParseResult(None, replay=True)
            open_turn(s, text, at, ctx.redactor, follows_answer=bool(s.prompts) and answered)
            answered = False
        elif kind in ("gemini", "model", "assistant"):
            if isinstance(msg.get("model"), str):
                s.note_model(msg["model"])
            for call in msg.get("toolCalls") or []:
                if isinstance(call, dict):
                    _tool(s, actions, call)
                    answered = True
            text = text_of(msg.get("content")).strip()
            if text and s.prompts:
                s.finals[-1] = ctx.redactor.redact(text)
                answered = True
    return ParseResult(s)


def _tool(s: Session, actions: TurnActions, call: dict[str, Any]) -> None:
    name = call.get("name") if isinstance(call.get("name"), str) else None
    s.add_tool(name)
    args = call.get("args") if isinstance(call.get("args"), dict) else {}
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
