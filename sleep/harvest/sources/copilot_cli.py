"""GitHub Copilot CLI sessions under ``$COPILOT_HOME`` (default ``~/.copilot``).

Current versions append one event per line to
``session-state/<sessionId>/events.jsonl`` (some builds: ``session-state/<id>.jsonl``):
an envelope ``{"type", "data", "id", "timestamp", "parentId"}`` with types such
as ``session.start`` (``data.context.cwd``), ``user.message`` (``data.content``
is what the person typed; ``transformedContent`` adds injected context),
``assistant.message`` (``data.content``, ``data.toolRequests[].name``),
``tool.execution_start`` / ``tool.execution_complete``, ``skill.invoked``,
``abort``. ``workspace.yaml`` beside the log repeats the cwd. Versions before
0.0.342 wrote one ``history-session-state/<id>.json`` per session with an
OpenAI-style ``chatMessages`` array; those are read whole.

What a turn did comes from its tool requests: ``bash`` / ``shell`` /
``powershell`` calls give shell signatures, file tools (``view``, ``edit``,
``create``, ``str_replace_editor``, ...) their ``path``, ``apply_patch`` the
files its patch names. Arguments are an object or a JSON string.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from skillopt_core.replay import is_replay_path
from sleep.harvest.reader import ParseContext, ParseStats
from sleep.harvest.side_files import read_side_file
from sleep.harvest.sources import (
    HomeSource,
    ParseResult,
    SourceFile,
    as_dict,
    head_records,
    scan_dir,
    skills_in,
    text_of,
)
from sleep.harvest.sources.actions import TurnActions
from sleep.harvest.sources.turns import LogParser, parse_log
from sleep.sessions import Session, iso_utc

HOST = "copilot-cli"
_KNOWN_NAMESPACES = ("session.", "user.", "assistant.", "tool.", "skill.", "subagent.", "hook.",
                     "system.", "abort", "pending_messages.", "permission.", "custom_agent.")
_SKIP_HEADS = (b'{"type":"tool.execution_complete"', b'{"type":"tool.execution_partial_result"',
               b'{"type":"assistant.message_delta"', b'{"type":"session.compaction_complete"',
               b'{"type":"hook.')
_SHELL_TOOLS = frozenset({"bash", "shell", "powershell", "run_in_terminal", "write_bash", "sh"})
_FILE_TOOLS = frozenset({"view", "read", "read_file", "edit", "create", "write", "write_file", "str_replace",
                         "str_replace_editor", "insert", "edit_file", "create_file", "glob", "grep", "rg"})
_CWD_RX = re.compile(r"^cwd:\s*['\"]?(.+?)['\"]?\s*$", re.MULTILINE)
# Blocks the CLI adds to what the person typed before storing it: a reminder about
# parallel tool calls (legacy JSON), the current time (flat JSONL), system notices.
_INJECTED_BLOCK_RX = re.compile(
    r"\s*<(reminder|current_datetime|system_reminder|system_notification)>[\s\S]*?</\1>\s*")
# The system prompt of builds that record no cwd: "... working directory: c:\Users\me\app".
_WORKING_DIR_RX = re.compile(r"(?i)\b(?:current )?working directory(?: is)?\s*:?\s*"
                             r"[`'\"]?([^\s`'\"][^\n`'\"]*?)[`'\"]?\s*(?:\n|$)")
_TS_KEY = b'"timestamp":"'


def skippable(data: bytes) -> bool:
    """True for an event that holds no prompt, answer or tool call, judged from its first
    bytes: tool results and partial results, streamed deltas, compaction, hook events."""
    return data.startswith(_SKIP_HEADS)


def _ts_from_tail(data: bytes) -> str | None:
    at = data.rfind(_TS_KEY, max(0, len(data) - 400))
    if at < 0:
        return None
    start = at + len(_TS_KEY)
    end = data.find(b'"', start, start + 48)
    return iso_utc(data[start:end].decode("ascii", "replace")) if end > 0 else None


def typed_text(text: str) -> str:
    """What the person typed: ``text`` without the blocks the CLI injects."""
    if "<" in text and "</" in text:
        text = _INJECTED_BLOCK_RX.sub("\n\n", text)
    return text.strip()


def working_dir_of(system_prompt: Any) -> str | None:
    """The working directory a system prompt names, if it looks like an absolute path."""
    if not isinstance(system_prompt, str) or "orking directory" not in system_prompt:
        return None
    m = _WORKING_DIR_RX.search(system_prompt)
    if not m:
        return None
    path = m.group(1).strip().rstrip(".")
    if path.startswith("/") or re.match(r"^[A-Za-z]:[\\/]", path) or path.startswith("~"):
        return path
    return None


def workspace_cwd(session_dir: Path) -> str | None:
    """``cwd:`` from ``workspace.yaml`` (a one-key read; no YAML parser needed)."""
    try:
        text = read_side_file(session_dir / "workspace.yaml").decode("utf-8", errors="replace")
    except OSError:
        return None
    m = _CWD_RX.search(text)
    return m.group(1) if m else None


class CopilotCliSource(HomeSource):
    name = HOST

    def discover(self, stats: ParseStats) -> Iterator[SourceFile]:
        for entry in sorted(scan_dir(self.home / "session-state", stats), key=lambda e: e.name):
            if entry.name.endswith(".jsonl"):
                yield SourceFile(entry.path, HOST, "events", session_id=entry.name[:-6])
                continue
            events = Path(entry.path) / "events.jsonl"
            if events.exists() or events.is_symlink():
                yield SourceFile(str(events), HOST, "events", session_id=entry.name)
        for entry in sorted(scan_dir(self.home / "history-session-state", stats), key=lambda e: e.name):
            if entry.name.endswith(".json"):
                yield SourceFile(entry.path, HOST, "legacy", incremental=False,
                                 session_id=entry.name[:-5])

    def project_of(self, file: SourceFile, ctx: ParseContext) -> str | None:
        if file.kind != "events":
            return _legacy_project(file.path)
        if not file.path.endswith(".jsonl") or Path(file.path).name == "events.jsonl":
            cwd = workspace_cwd(Path(file.path).parent)
            if cwd:
                return cwd
        for rec in head_records(file.path, b'"cwd"', 20):
            cwd = _cwd_of(rec.get("data"))
            if cwd:
                return cwd
        for rec in head_records(file.path, b'orking directory', 20):
            data = rec.get("data")
            cwd = working_dir_of(data.get("content")) if isinstance(data, dict) else None
            if cwd:
                return cwd
        return None

    def parse(self, file: SourceFile, f: BinaryIO, start: int, prior: Session | None,
              ctx: ParseContext) -> ParseResult:
        if file.kind == "legacy":
            return _parse_legacy(file, f, ctx)
        session = prior or Session(host=HOST, session_id=file.session_id or Path(file.path).stem,
                                   source_path=file.path)
        return parse_log(_EventParser(session, file, ctx), f, start, prior)


def _cwd_of(data: Any) -> str | None:
    if not isinstance(data, dict):
        return None
    ctx = data.get("context")
    for holder in (ctx, data):
        if isinstance(holder, dict) and isinstance(holder.get("cwd"), str):
            return holder["cwd"]
    return None


def tool_actions(actions: TurnActions, name: Any, args: Any) -> None:
    """The shell command or files of one Copilot CLI tool call."""
    args = actions.arguments(args)
    if not isinstance(name, str):
        return
    if name == "apply_patch":
        actions.patch(args.get("input") if isinstance(args, dict) else args)
    elif not isinstance(args, dict):
        return
    elif name in _SHELL_TOOLS:
        actions.command(args.get("command"))
    elif name in _FILE_TOOLS:
        actions.path(args.get("path", args.get("filePath", args.get("file_path"))))


class _EventParser(LogParser):
    def __init__(self, session: Session, file: SourceFile, ctx: ParseContext) -> None:
        super().__init__(session, file, ctx)
        self.call_ids: list[str] = list(session.state.get("call_ids", []))
        self.seen_calls: set[str] = set(self.call_ids)
        self.actions = TurnActions(session, ctx)

    def feed(self, data: bytes, where: str) -> None:
        stats = self.ctx.stats
        if skippable(data):
            self.s.note_time(_ts_from_tail(data))
            stats.skipped_undecoded()
            return
        rec = self.ctx.loads(data, where)
        if rec is None:
            return
        etype = rec.get("type")
        if not isinstance(etype, str) or not etype.startswith(_KNOWN_NAMESPACES):
            stats.skip_line("unknown_record_type", where)
            return
        at = iso_utc(rec.get("timestamp"))
        self.s.note_time(at)
        d = as_dict(rec.get("data"))
        if etype in ("session.start", "session.resume"):
            cwd = _cwd_of(d)
            if cwd:
                self.s.project_dir = cwd
                if is_replay_path(cwd):
                    self.replay = True
            sid = d.get("sessionId")
            if isinstance(sid, str) and sid:
                self.s.session_id = sid
            self.s.note_time(iso_utc(d.get("startTime")))
            model = d.get("selectedModel") or d.get("model")
            if isinstance(model, str):
                self.s.note_model(model)
        elif etype == "user.message":
            text = d.get("content")
            if isinstance(text, str) and d.get("source") not in ("system", "agent"):
                text = typed_text(text)
                if text:
                    self._prompt(text, at)
        elif etype == "system.message":
            if self.s.project_dir is None:
                cwd = working_dir_of(d.get("content"))
                if cwd:
                    self.s.project_dir = cwd
                    if is_replay_path(cwd):
                        self.replay = True
        elif etype == "assistant.message":
            text = d.get("content")
            if isinstance(text, str) and text.strip():
                self._final(text)
            for req in d.get("toolRequests") or []:
                if isinstance(req, dict):
                    self._tool(req.get("toolCallId"), req.get("name"), req.get("arguments"))
        elif etype == "tool.execution_start":
            self._tool(d.get("toolCallId"), d.get("toolName"), d.get("arguments"))
        elif etype == "skill.invoked":
            name = d.get("name") or d.get("skill")
            self.s.add_skill(name if isinstance(name, str) else None)
        elif etype == "session.model_change":
            model = d.get("newModel") or d.get("model")
            if isinstance(model, str):
                self.s.note_model(model)
        elif etype == "abort":
            self._feedback("interruption", "", at)
        else:
            stats.ignored()
            return
        stats.kept()

    def _tool(self, call_id: Any, name: Any, args: Any) -> None:
        if isinstance(call_id, str):
            if call_id in self.seen_calls:
                return  # the request and its execution describe one call
            self.call_ids.append(call_id)
            self.seen_calls.add(call_id)
        self.s.add_tool(name if isinstance(name, str) else None)
        if args is not None:
            text = args if isinstance(args, str) else str(args)
            for skill in skills_in(text):
                self.s.add_skill(skill)
        tool_actions(self.actions, name, args)
        self.answered = True

    def close(self) -> None:
        super().close()
        self.s.state["call_ids"] = self.call_ids[-200:]
        # The cwd may appear only in workspace.yaml beside the log.
        if self.s.project_dir is None:
            self.s.project_dir = workspace_cwd(Path(self.file.path).parent)
        if is_replay_path(self.s.project_dir):
            self.replay = True


def _legacy_project(path: str) -> str | None:
    """The working directory a legacy session's system message names (whole-file read)."""
    try:
        with open(path, "rb") as f:
            data = f.read(4 << 20)
        doc = orjson.loads(data)
    except (OSError, orjson.JSONDecodeError):
        return None
    messages = doc.get("chatMessages") if isinstance(doc, dict) else None
    for msg in messages if isinstance(messages, list) else []:
        if isinstance(msg, dict) and msg.get("role") == "system":
            cwd = working_dir_of(text_of(msg.get("content")))
            if cwd:
                return cwd
    return None


def _timeline(doc: dict[str, Any]) -> tuple[list[tuple[str, str | None]], list[str]]:
    """From a legacy session's ``timeline``: (typed text, time) of each ``user`` entry in
    order, and every entry's time."""
    typed: list[tuple[str, str | None]] = []
    times: list[str] = []
    entries = doc.get("timeline")
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict):
            continue
        at = iso_utc(entry.get("timestamp"))
        if at:
            times.append(at)
        if entry.get("type") == "user" and isinstance(entry.get("text"), str):
            typed.append((typed_text(entry["text"]), at))
    return typed, times


def _parse_legacy(file: SourceFile, f: BinaryIO, ctx: ParseContext) -> ParseResult:
    """``history-session-state/<id>.json``: ``{sessionId, startTime, chatMessages: [...],
    timeline: [...]}``. Prompts come from ``chatMessages`` (the CLI appends a
    ``<reminder>`` block to each, removed here); their times, and the session's end,
    from the ``timeline`` entries, which carry a timestamp each."""
    data = f.read()
    ctx.stats.bytes_read += len(data)
    if not data.strip():
        ctx.stats.skip_file("empty_file", file.path)
        return ParseResult(None, file_skip_reason="empty_file")
    doc = ctx.loads(data, f"{file.path}@0")
    if doc is None:
        return ParseResult(None, file_skip_reason="unusable")
    messages = doc.get("chatMessages") or doc.get("messages")
    if not isinstance(messages, list):
        ctx.stats.skip_line("unknown_session_format", f"{file.path}@0")
        return ParseResult(None, file_skip_reason="unusable")
    ctx.stats.kept()
    sid = doc.get("sessionId") if isinstance(doc.get("sessionId"), str) else file.session_id
    s = Session(host=HOST, session_id=sid or Path(file.path).stem, source_path=file.path)
    s.note_time(iso_utc(doc.get("startTime")))
    typed, times = _timeline(doc)
    for at in times:
        s.note_time(at)
    used = [False] * len(typed)
    actions = TurnActions(s, ctx)
    for msg in messages:
        if not isinstance(msg, dict):
            continue
        role = msg.get("role")
        text = text_of(msg.get("content")).strip()
        if role == "system":
            if s.project_dir is None:
                s.project_dir = working_dir_of(text)
                if is_replay_path(s.project_dir):
                    return ParseResult(None, replay=True)
            continue
        if role == "user" and text:
            text = typed_text(text)
            if not text:
                continue
            if not actions.prompt(text, _prompt_time(text, typed, used)):
                return ParseResult(None, replay=True)
        elif role == "assistant":
            for call in msg.get("tool_calls") or []:
                fn = call.get("function") if isinstance(call, dict) else None
                if isinstance(fn, dict) and isinstance(fn.get("name"), str):
                    s.add_tool(fn["name"])
                    tool_actions(actions, fn["name"], fn.get("arguments"))
                    actions.answered = True
            actions.answer(text)
    return ParseResult(s)


def _prompt_time(text: str, typed: list[tuple[str, str | None]], used: list[bool]) -> str | None:
    """The time of the timeline's ``user`` entry for a prompt: the first unused one with
    the same text, else the next unused one in order."""
    for i, (t, at) in enumerate(typed):
        if not used[i] and t == text:
            used[i] = True
            return at
    for i, (_, at) in enumerate(typed):
        if not used[i]:
            used[i] = True
            return at
    return None
