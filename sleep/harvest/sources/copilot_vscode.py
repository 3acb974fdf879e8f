"""VS Code Copilot Chat sessions (FORMATS.md, "GitHub Copilot").

Per workspace: ``<User>/workspaceStorage/<hash>/chatSessions/<sessionId>.json``
(a whole-session object, ``version`` 3) or ``<sessionId>.jsonl`` (since VS
Code 1.109: an append log; line 1 ``{"kind": 0, "v": <session>}``, then
``kind 1`` set, ``kind 2`` append (``i``: truncate first), ``kind 3`` delete at
key path ``k``), which is replayed to the session state. ``<hash>/workspace.json``
maps the workspace to its folder. Windows without a folder keep sessions in
``globalStorage/emptyWindowChatSessions``. "Chat: Export Session..." files are
read only when given explicitly.

Both file kinds are re-read whole when they change: a ``.json`` file is
rewritten in place, and a log's later lines patch paths anywhere in the state.
A log line whose key path runs through a part of the state that is never used
(a request's ``result`` metadata, attached ``variableData``, references,
follow-ups; :data:`UNUSED_KEYS`) is skipped from its first bytes, undecoded.

What a turn did: terminal commands from a tool invocation's terminal data
(``toolSpecificData.commandLine``), files from file tools (their result URIs,
raw input or the ``file://`` links of their messages) and from edit groups.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO
from urllib.parse import unquote, urlparse

import orjson

from skillopt_core.replay import is_replay_path, is_replay_prompt
from sleep import paths
from sleep.harvest.reader import LineReader, ParseContext, ParseStats
from sleep.harvest.side_files import read_side_file
from sleep.harvest.sources import ParseResult, SourceFile, as_dict, as_list, scan_dir, skills_in, text_of
from sleep.harvest.sources.actions import TurnActions, file_uris
from sleep.harvest.sources.turns import open_turn
from sleep.jsonshape import as_str
from sleep.sessions import Feedback, Session, iso_utc

HOST = "copilot-vscode"
_MAX_DOC_BYTES = 256 << 20
# Parts of a session state that building a Session never reads.
UNUSED_KEYS = frozenset({b"result", b"variableData", b"contentReferences", b"codeCitations", b"followups",
                         b"editedFileEvents", b"inputState", b"usedContext", b"workingSet"})
_PATCH_HEAD_RX = re.compile(rb'^\{"kind":[123],"k":\[([^\]]{0,300})\]')
_KEY_RX = re.compile(rb'"([^"\\]*)"')
# File tools by id (lowercased, without the copilot_ prefix and underscores).
_FILE_TOOLS = frozenset({"readfile", "createfile", "replacestring", "multireplacestring", "inserteditintofile",
                         "insertedit", "applypatch", "editfile", "editfiles", "editnotebook", "readnotebookcelloutput",
                         "createnewjupyternotebook", "editnotebookfile"})
_TERMINAL_TOOLS = frozenset({"runinterminal", "runcommand"})
_URI_SCHEMES = (None, "file", "vscode-remote", "vscode-notebook-cell")


def skippable_patch(data: bytes) -> bool:
    """True for a log line that patches only state a Session never reads (judged from
    the key path at the start of the line: ``{"kind":1,"k":["requests",3,"result"],...``)."""
    m = _PATCH_HEAD_RX.match(data)
    return m is not None and any(key in UNUSED_KEYS for key in _KEY_RX.findall(m.group(1)))


class CopilotVSCodeSource:
    name = HOST

    def __init__(self, user_dirs: list[Path] | None = None, exports: list[str] | None = None) -> None:
        self._user_dirs = user_dirs
        self.exports = list(exports or [])

    def discover(self, stats: ParseStats) -> Iterator[SourceFile]:
        user_dirs = self._user_dirs if self._user_dirs is not None else paths.vscode_user_dirs()
        for user in user_dirs:
            storage = Path(user) / "workspaceStorage"
            for ws in sorted(scan_dir(storage, stats), key=lambda e: e.name):
                chat = Path(ws.path) / "chatSessions"
                entries = scan_dir(chat, stats)
                if not entries:
                    continue
                project = workspace_folder(Path(ws.path) / "workspace.json")
                yield from _session_files(entries, project)
            empty = Path(user) / "globalStorage" / "emptyWindowChatSessions"
            yield from _session_files(scan_dir(empty, stats), None)
        for export in self.exports:
            yield SourceFile(str(export), HOST, "export", incremental=False)

    def scope_hint(self, file: SourceFile, project: str) -> bool | None:
        return None

    def project_of(self, file: SourceFile, ctx: ParseContext) -> str | None:
        return file.project_dir

    def parse(self, file: SourceFile, f: BinaryIO | None, start: int, prior: Session | None,
              ctx: ParseContext) -> ParseResult:
        assert f is not None  # session files, never row files
        if file.kind == "jsonl":
            state = _replay_log(file, f, ctx)
        else:
            state = _read_document(file, f, ctx)
        if state is None:
            return ParseResult(None, file_skip_reason="unusable")
        session = build_session(state, file, ctx)
        if session is None:
            return ParseResult(None, replay=True)
        return ParseResult(session)


def _session_files(entries: list, project: str | None) -> Iterator[SourceFile]:
    for entry in sorted(entries, key=lambda e: e.name):
        name = entry.name
        if name.endswith(".jsonl"):
            yield SourceFile(entry.path, HOST, "jsonl", incremental=False, session_id=name[:-6],
                             project_dir=project)
        elif name.endswith(".json"):
            yield SourceFile(entry.path, HOST, "json", incremental=False, session_id=name[:-5],
                             project_dir=project)


def workspace_folder(path: Path) -> str | None:
    """The folder a workspace hash stands for (``folder`` URI, or the ``workspace`` file's dir)."""
    try:
        data = orjson.loads(read_side_file(path))
    except (OSError, orjson.JSONDecodeError):
        return None
    if not isinstance(data, dict):
        return None
    uri = data.get("folder") or data.get("workspace")
    if not isinstance(uri, str):
        return None
    parsed = urlparse(uri)
    local = unquote(parsed.path) if parsed.scheme else uri
    if len(local) >= 3 and local[0] == "/" and local[2] == ":":  # file:///c:/x on Windows
        local = local[1:]
    if "workspace" in data and "folder" not in data:
        local = str(Path(local).parent)
    return local or None


def _size_of(f: BinaryIO) -> int:
    try:
        return os.fstat(f.fileno()).st_size
    except (OSError, ValueError):  # in-memory streams (tests) have no descriptor
        return 0


def _read_document(file: SourceFile, f: BinaryIO, ctx: ParseContext) -> dict[str, Any] | None:
    where = f"{file.path}@0"
    if _size_of(f) > _MAX_DOC_BYTES:
        ctx.stats.skip_file("file_too_large", file.path)
        return None
    data = f.read()  # read(n) would allocate n bytes up front; the size is checked above
    ctx.stats.bytes_read += len(data)
    if not data.strip():
        ctx.stats.skip_file("empty_file", file.path)
        return None
    doc = ctx.loads(data, where)
    if doc is None:
        return None
    if not isinstance(doc.get("requests"), list):
        ctx.stats.skip_line("unknown_session_format", where)
        return None
    ctx.stats.kept()
    if file.kind == "export" and not doc.get("sessionId"):
        doc["sessionId"] = "export-" + hashlib.sha256(data).hexdigest()[:16]
    return doc


def _replay_log(file: SourceFile, f: BinaryIO, ctx: ParseContext) -> dict[str, Any] | None:
    """Rebuild the session from a ``.jsonl`` append log (see module docstring)."""
    state: dict[str, Any] | None = None
    reader = LineReader(f, 0, ctx, file.path)
    for line in reader:
        where = f"{file.path}@{line.start}"
        if line.start == 0 and line.data.strip() in (b"{", b"["):
            ctx.stats.ignored()
            ctx.stats.skip_file("pretty_printed_json", file.path)
            return None
        if state is not None and skippable_patch(line.data):
            ctx.stats.skipped_undecoded()
            continue
        rec = ctx.loads(line.data, where)
        if rec is None:
            continue
        kind = rec.get("kind")
        if state is None:
            if kind == 0 and isinstance(rec.get("v"), dict):
                state = rec["v"]
                ctx.stats.kept()
                continue
            ctx.stats.ignored()
            ctx.stats.skip_file("copilot_log_without_snapshot", file.path)
            return None
        if kind == 0 and isinstance(rec.get("v"), dict):
            state = rec["v"]  # a fresh snapshot replaces everything before it
            ctx.stats.kept()
        elif kind in (1, 2, 3):
            if apply_patch(state, rec):
                ctx.stats.kept()
            else:
                ctx.stats.skip_line("bad_patch", where)
        else:
            ctx.stats.skip_line("unknown_record_type", where)
    return state


def apply_patch(state: dict[str, Any], rec: dict[str, Any]) -> bool:
    """Apply one log record (kind 1 set / 2 append / 3 delete) in place; False if it does not fit."""
    keys = rec.get("k")
    if not isinstance(keys, list) or not keys:
        return False
    kind = rec.get("kind")
    parent: Any = state
    try:
        for key in keys[:-1]:
            parent = parent[key]
        last = keys[-1]
        if kind == 1:
            if isinstance(parent, list) and isinstance(last, int) and last == len(parent):
                parent.append(rec.get("v"))
            else:
                parent[last] = rec.get("v")
        elif kind == 2:
            if isinstance(parent, dict) and last not in parent:
                parent[last] = []
            target = parent[last]
            if not isinstance(target, list):
                return False
            i = rec.get("i")
            if isinstance(i, int) and 0 <= i <= len(target):
                del target[i:]
            value = rec.get("v")
            target.extend(value if isinstance(value, list) else [value])
        else:
            del parent[last]
    except (KeyError, IndexError, TypeError):
        return False
    return True


def _message_text(req: dict[str, Any]) -> str:
    msg = req.get("message")
    if isinstance(msg, str):
        return msg
    if isinstance(msg, dict):
        if isinstance(msg.get("text"), str):
            return msg["text"]
        return text_of(msg.get("parts"))
    return ""


def _markdown(part: dict[str, Any]) -> str | None:
    kind = part.get("kind")
    if kind in (None, "markdownContent", "markdownVuln"):
        value = part.get("value")
        if kind == "markdownContent":
            value = part.get("content")
        if isinstance(value, dict):
            value = value.get("value")
        return value if isinstance(value, str) else None
    return None


def build_session(state: dict[str, Any], file: SourceFile, ctx: ParseContext) -> Session | None:
    """A Session from a replayed or loaded session object; None if it is a replay."""
    if is_replay_path(file.project_dir):
        return None
    sid = state.get("sessionId") if isinstance(state.get("sessionId"), str) else None
    s = Session(host=HOST, session_id=sid or file.session_id or Path(file.path).stem,
                project_dir=file.project_dir, source_path=file.path)
    s.note_time(iso_utc(state.get("creationDate")))
    s.note_time(iso_utc(state.get("lastMessageDate")))
    requests = as_list(state.get("requests"))
    answered = False
    actions = TurnActions(s, ctx)
    for req in requests:
        if not isinstance(req, dict):
            continue
        at = iso_utc(req.get("timestamp"))
        s.note_time(at)
        text = _message_text(req).strip()
        if isinstance(req.get("modelId"), str):
            s.note_model(req["modelId"])
        if text and not req.get("isSystemInitiated"):
            if not s.prompts and is_replay_prompt(text):
                return None
            open_turn(s, text, at, ctx.redactor, follows_answer=bool(s.prompts) and answered)
            answered = False  # the new turn is unanswered until a response of its own
        # A system-initiated request ("Continue") belongs to the open turn: its answer counts.
        answered = _response(req, s, ctx, actions) or answered
        vote = req.get("vote")
        if vote in (0, 1) and s.prompts:
            reason = as_str(req.get("voteDownReason"))
            s.feedback.append(Feedback("approval" if vote == 1 else "correction",
                                       ctx.redactor.redact(reason), at, len(s.prompts) - 1))
    return s


def _response(req: dict[str, Any], s: Session, ctx: ParseContext, actions: TurnActions) -> bool:
    parts = req.get("response")
    if not isinstance(parts, list):
        return False
    texts: list[str] = []
    seen_calls: set[str] = set()
    for part in parts:
        if not isinstance(part, dict):
            continue
        md = _markdown(part)
        if md is not None:
            texts.append(md)
            continue
        kind = part.get("kind")
        if kind in ("textEditGroup", "notebookEditGroup") or (kind == "codeblockUri" and part.get("isEdit")):
            actions.path(_uri_path(part.get("uri")))
            continue
        if kind == "toolInvocationSerialized":
            call = part.get("toolCallId")
            if isinstance(call, str):
                if call in seen_calls:
                    continue
                seen_calls.add(call)
            tool = part.get("toolId")
            s.add_tool(tool if isinstance(tool, str) else None)
            _tool_actions(part, tool if isinstance(tool, str) else "", actions)
            found: set[str] = set()
            for key in ("invocationMessage", "pastTenseMessage"):
                msg = part.get(key)
                msg = msg.get("value") if isinstance(msg, dict) else msg
                if isinstance(msg, str):
                    found.update(skills_in(msg))
            for skill in sorted(found):
                s.add_skill(skill)
            texts = []  # the final answer is the text after the last tool call
    final = "".join(texts).strip()
    if final and s.prompts:
        s.finals[-1] = ctx.redactor.redact(final)
    return bool(final or seen_calls)


def _uri_path(uri: Any) -> str | None:
    """A local path from a serialized URI (``{"scheme","path","fsPath",...}``), a
    Location (``{"uri", "range"}``) or a ``file://`` string."""
    if isinstance(uri, str):
        return uri
    if not isinstance(uri, dict):
        return None
    if isinstance(uri.get("uri"), (dict, str)):
        return _uri_path(uri["uri"])
    if uri.get("scheme") not in _URI_SCHEMES:
        return None
    for key in ("fsPath", "path"):
        if isinstance(uri.get(key), str):
            return uri[key]
    return None


def _tool_actions(part: dict[str, Any], tool: str, actions: TurnActions) -> None:
    """The command a terminal tool ran, or the files a file tool read or changed."""
    data = as_dict(part.get("toolSpecificData"))
    name = tool.lower().removeprefix("copilot_").replace("_", "")
    if data.get("kind") == "terminal":
        line = data.get("commandLine")
        if isinstance(line, dict):
            actions.command(line.get("userEdited") or line.get("toolEdited") or line.get("original"))
        else:
            actions.command(data.get("command"))  # before VS Code 1.10x
        return
    details = part.get("resultDetails")
    raw = data.get("rawInput") if data.get("kind") == "input" else None
    if raw is None and isinstance(details, dict) and isinstance(details.get("input"), str):
        try:
            raw = orjson.loads(details["input"])
        except orjson.JSONDecodeError:
            raw = None
    if name in _TERMINAL_TOOLS:
        if isinstance(raw, dict):
            actions.command(raw.get("command"))
        return
    if name not in _FILE_TOOLS:
        return
    if isinstance(raw, dict):
        for key in ("filePath", "path", "file_path", "uri"):
            actions.path(_uri_path(raw.get(key)))
        actions.patch(raw.get("input"))
    uris = details if isinstance(details, list) else data.get("values") if data.get("kind") == "resources" else []
    for uri in uris if isinstance(uris, list) else []:
        actions.path(_uri_path(uri))
    for key in ("invocationMessage", "pastTenseMessage"):
        msg = part.get(key)
        for uri in file_uris(msg.get("value") if isinstance(msg, dict) else msg):
            actions.path(uri)
