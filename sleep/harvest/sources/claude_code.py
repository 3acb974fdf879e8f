"""Claude Code transcripts: ``<CLAUDE_CONFIG_DIR>/projects/<slug>/<sessionId>.jsonl``,
subagent runs in ``<slug>/<sessionId>/subagents/agent-<id>.jsonl`` and typed
prompts in ``history.jsonl`` (FORMATS.md, "Claude Code session transcripts").

Speed: most bytes of a transcript are tool results (``type: user`` records
carrying ``tool_result`` blocks), thinking blocks and file snapshots. Every line
is classified from its bytes first (:func:`skippable`) and decoded with orjson
only if it can hold a prompt, an answer, a tool call or a rejected tool use.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from skillopt_core.replay import is_replay_path
from sleep.harvest.reader import ParseContext, ParseStats
from sleep.harvest.sources import (
    HomeSource,
    ParseResult,
    SourceFile,
    as_dict,
    head_records,
    is_dir,
    scan_dir,
    slugify,
    text_of,
)
from sleep.harvest.sources.actions import TurnActions
from sleep.harvest.sources.history import parse_claude_history
from sleep.harvest.sources.turns import LogParser, parse_log
from sleep.sessions import Session, iso_utc

HOST = "claude-code"

KNOWN_TYPES = frozenset({
    "user", "assistant", "attachment", "system", "summary", "custom-title", "ai-title",
    "last-prompt", "permission-mode", "file-history-snapshot", "queue-operation", "progress",
    "tag", "agent-name", "mode",
})
KNOWN_FIELDS = frozenset({
    "parentUuid", "logicalParentUuid", "isSidechain", "userType", "cwd", "sessionId", "version",
    "gitBranch", "type", "message", "uuid", "timestamp", "requestId", "isMeta", "entrypoint",
    "toolUseResult", "isCompactSummary", "isVisibleInTranscriptOnly", "thinkingMetadata", "todos",
    "slug", "agentId", "level", "permissionMode", "isApiErrorMessage", "error", "sourceToolUseID",
    "sourceToolAssistantUUID", "mcpMeta", "imagePasteIds", "origin", "promptId", "planContent",
    "subtype", "content", "durationMs", "toolUseID",
})
# Built-in slash commands: session management, not work worth mining.
BUILTIN_COMMANDS = frozenset({
    "clear", "compact", "model", "resume", "exit", "quit", "help", "config", "cost", "status",
    "login", "logout", "memory", "permissions", "hooks", "mcp", "agents", "doctor", "context",
    "rewind", "add-dir", "ide", "vim", "theme", "bug", "release-notes", "export", "usage",
    "plugin", "plugins", "statusline", "terminal-setup", "upgrade", "privacy-settings",
    "output-style", "todos", "bashes", "continue", "fast", "init",
})
_INJECTED_PREFIXES = (
    "<local-command-stdout>", "<local-command-stderr>", "<local-command-caveat>", "<bash-input>",
    "<bash-stdout>", "<bash-stderr>", "Caveat: The messages below were generated",
    "<user-prompt-submit-hook>", "This session is being continued from a previous conversation",
    "<task-notification>",
)
_SYSTEM_REMINDER_RX = re.compile(r"<system-reminder>[\s\S]*?</system-reminder>\s*")
_COMMAND_NAME_RX = re.compile(r"<command-name>\s*/?([^<\s]+)\s*</command-name>")
_COMMAND_ARGS_RX = re.compile(r"<command-args>([\s\S]*?)</command-args>")
_REJECTED = "The user doesn't want to proceed with this tool use"
_REJECTION_REASON_RX = re.compile(r"the user said:\s*([\s\S]+)$", re.IGNORECASE)
_TS_KEY = b'"timestamp":"'
_TS_NORMAL_RX = re.compile(rb"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")
_REJECTED_B = _REJECTED.encode()
_HEAD = 4096
_TAIL = 4096
_REJECTION_WINDOW = 16384
# The record's own type is the first "type" key of a line: the fields before it
# (uuids, cwd, version, flags) are never objects.
_FIRST_TYPE_RX = re.compile(rb'"type":"([A-Za-z_\-]{1,40})"')
# Record types that never hold a prompt, an answer or a tool call.
IGNORED_TYPES = frozenset({
    b"attachment", b"system", b"summary", b"custom-title", b"ai-title", b"last-prompt", b"permission-mode",
    b"file-history-snapshot", b"queue-operation", b"progress", b"tag", b"agent-name", b"mode",
})
_CWD_RX = re.compile(rb'"cwd":\s*("(?:[^"\\]|\\.){1,4096}")')
# A skill started as a slash command: Claude Code sends its SKILL.md after this line.
_SKILL_BASE_RX = re.compile(r"Base directory for this skill:\s*(\S[^\n]*?)\s*(?:\n|$)")
_MODEL_RX = re.compile(rb'"model":"([^"\\]{1,80})"')
_ENTRYPOINT_RX = re.compile(rb'"entrypoint":"([A-Za-z0-9_.\-]{1,40})"')
# Scripted entry points: `claude -p` and the Agent SDKs.
_SCRIPTED_ENTRYPOINT_PREFIX = "sdk"


def skippable(data: bytes) -> bool:
    """True for a line that cannot hold a prompt, an answer, a tool call or a rejected
    tool use, judged from its bytes: a record of an ignored type, a tool result that is
    not a rejection, an assistant record holding only thinking. Unknown types are not
    skippable (decoding them is how they are counted). A quote inside a JSON string is
    escaped, so ``"type":"tool_use"`` can only be a key and its value, never text."""
    m = _FIRST_TYPE_RX.search(data, 0, _HEAD)
    if m is None:
        if len(data) <= _HEAD:
            return False  # no type at all: decode it and count what it is
        # A huge first field pushed the type out of the head: judge the whole line.
        if b'"type":"assistant"' in data or b'"type":"user"' not in data:
            return False
        return b'"type":"tool_result"' in data and _REJECTED_B not in data
    kind = m.group(1)
    if kind == b"user":
        return b'"type":"tool_result"' in data and data.find(_REJECTED_B, 0, _REJECTION_WINDOW) < 0
    if kind == b"assistant":
        thinking = data.find(b'"type":"thinking"', 0, _HEAD) >= 0 \
            or data.find(b'"type":"redacted_thinking"', 0, _HEAD) >= 0
        return thinking and b'"type":"text"' not in data and b'"type":"tool_use"' not in data
    return kind in IGNORED_TYPES


def ts_from_bytes(data: bytes, start: int = 0) -> str | None:
    """The first ``"timestamp":"..."`` of a raw line from byte ``start``, without decoding it."""
    at = data.find(_TS_KEY, start)
    if at < 0:
        return None
    begin = at + len(_TS_KEY)
    end = data.find(b'"', begin, begin + 48)
    if end < 0:
        return None
    raw = data[begin:end]
    if _TS_NORMAL_RX.fullmatch(raw):
        return raw.decode("ascii")  # already the normal form (what Claude Code writes)
    try:
        return iso_utc(raw.decode("ascii"))
    except UnicodeDecodeError:
        return None


class ClaudeCodeSource(HomeSource):
    name = HOST

    # ----- discovery -------------------------------------------------------------------

    def discover(self, stats: ParseStats) -> Iterator[SourceFile]:
        projects = self.home / "projects"
        for project in sorted(scan_dir(projects, stats), key=lambda e: e.name):
            if not is_dir(project):
                continue
            replay = is_replay_path(project.name)
            for entry in sorted(scan_dir(project.path, stats), key=lambda e: e.name):
                if entry.name.endswith(".jsonl"):
                    yield SourceFile(entry.path, HOST, "session", session_id=entry.name[:-6],
                                     project_slug=project.name, replay_hint=replay)
                    continue
                sub = Path(entry.path) / "subagents"
                for agent in sorted(scan_dir(sub, stats), key=lambda e: e.name):
                    if agent.name.endswith(".jsonl"):
                        yield SourceFile(agent.path, HOST, "subagent",
                                         session_id=f"{entry.name}/{agent.name[:-6]}",
                                         parent_session_id=entry.name,
                                         project_slug=project.name, replay_hint=replay)
        history = self.home / "history.jsonl"
        if history.exists() or history.is_symlink():
            yield SourceFile(str(history), HOST, "history")

    def scope_hint(self, file: SourceFile, project: str) -> bool | None:
        """False when the project slug rules the file out without reading it."""
        if file.project_slug is None:
            return None
        slug = slugify(project.rstrip("/\\") or project)
        if file.project_slug == slug or file.project_slug.startswith(slug + "-") \
                or slug.startswith(file.project_slug + "-"):
            return None  # the project, below it, or above it (the cwd may move into the project)
        return False

    def project_of(self, file: SourceFile, ctx: ParseContext) -> str | None:
        """The first cwd, found by its bytes; a transcript written with spaced JSON
        (``"cwd": "``) or escaped keys is found by parsing its first lines."""
        for marker in (b'"cwd":"', b'"cwd"'):
            for rec in head_records(file.path, marker, 200):
                if isinstance(rec.get("cwd"), str):
                    return rec["cwd"]
        return None

    # ----- parsing ---------------------------------------------------------------------

    def parse(self, file: SourceFile, f: BinaryIO, start: int, prior: Session | None,
              ctx: ParseContext) -> ParseResult:
        if file.kind == "history":
            return parse_claude_history(file, f, start, ctx)
        session = prior or Session(
            host=HOST, session_id=file.session_id or Path(file.path).stem,
            is_subagent=file.kind == "subagent", parent_session_id=file.parent_session_id,
            source_path=file.path)
        return parse_log(_SessionParser(session, file, ctx), f, start, prior)


class _SessionParser(LogParser):
    """Feeds the lines of one transcript into a Session (continuing its state)."""

    def __init__(self, session: Session, file: SourceFile, ctx: ParseContext) -> None:
        super().__init__(session, file, ctx)
        st = session.state
        self.msg_id: str | None = st.get("msg_id")
        # The message whose text parts make up the open turn's final answer so far.
        self.final_mid: str | None = st.get("final_mid")
        self.msg_tool_ids: list[str] = list(st.get("msg_tool_ids", []))
        # Raw text parts of the current turn's final message; redacted when the turn closes
        # (a message streamed in parts replaces the base class's single ``final_raw``).
        self.final_parts: list[str] | None = None
        self.actions = TurnActions(session, ctx)

    def feed(self, data: bytes, where: str) -> None:
        stats = self.ctx.stats
        if skippable(data):
            self.s.note_time(ts_from_bytes(data, max(0, len(data) - _TAIL)))
            # Only the first _HEAD bytes are looked at (searched in place, not copied).
            if self.s.project_dir is None or self.s.entrypoint is None:
                self._session_fields_from_bytes(data)
            if data.find(b'"role":"assistant"', 0, _HEAD) >= 0:
                self._thinking_only(data)
            stats.skipped_undecoded()
            return
        rec = self.ctx.loads(data, where)
        if rec is None:
            return
        kind = rec.get("type")
        if kind not in KNOWN_TYPES:
            stats.skip_line("unknown_record_type", where)
            return
        self.s.note_time(iso_utc(rec.get("timestamp")))
        self._session_fields(rec.get("cwd"), rec.get("entrypoint"))
        if kind == "user":
            self._check_fields(rec)
            if self._mine(rec):
                self._user(rec)
            stats.kept()
        elif kind == "assistant":
            self._check_fields(rec)
            if self._mine(rec):
                self._assistant(rec)
            stats.kept()
        else:
            stats.ignored()

    def _thinking_only(self, data: bytes) -> None:
        """What an undecoded thinking-only assistant record still tells (from its first
        _HEAD bytes): the agent answered, with this model."""
        if (self.file.kind != "subagent" and data.find(b'"isSidechain":true', 0, _HEAD) >= 0) \
                or data.find(b'"isApiErrorMessage":true', 0, _HEAD) >= 0:
            return
        m = _MODEL_RX.search(data, 0, _HEAD)
        if m and m.group(1) == b"<synthetic>":
            return
        if m:
            self.s.note_model(m.group(1).decode("utf-8", "replace"))
        self.answered = True

    def _session_fields(self, cwd: Any, entrypoint: Any) -> None:
        """The session's project (its first cwd) and how it was started (first entrypoint)."""
        if isinstance(cwd, str):
            self.cwd = cwd  # every record carries the cwd it was written in
            if self.s.project_dir is None:
                self.s.project_dir = cwd
                if is_replay_path(cwd):
                    self.replay = True
        if self.s.entrypoint is None and isinstance(entrypoint, str):
            self.s.entrypoint = entrypoint
            self.s.scripted = entrypoint.startswith(_SCRIPTED_ENTRYPOINT_PREFIX)

    def _session_fields_from_bytes(self, data: bytes) -> None:
        """:meth:`_session_fields` for a line that is not decoded, from its first _HEAD
        bytes (its cwd is a short JSON string)."""
        cwd = _CWD_RX.search(data, 0, _HEAD)
        entry = _ENTRYPOINT_RX.search(data, 0, _HEAD)
        try:
            self._session_fields(orjson.loads(cwd.group(1)) if cwd else None,
                                 entry.group(1).decode("ascii") if entry else None)
        except orjson.JSONDecodeError:
            pass

    def _mine(self, rec: dict[str, Any]) -> bool:
        # Old versions inline subagent traffic in the main file as sidechains.
        return self.file.kind == "subagent" or not rec.get("isSidechain")

    def _check_fields(self, rec: dict[str, Any]) -> None:
        if not KNOWN_FIELDS.issuperset(rec.keys()):
            self.ctx.stats.records_with_unknown_fields += 1

    def _user(self, rec: dict[str, Any]) -> None:
        msg = rec.get("message")
        if not isinstance(msg, dict):
            return
        content = msg.get("content")
        at = iso_utc(rec.get("timestamp"))
        texts: list[str] = []
        has_tool_result = False
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            for block in content:
                if not isinstance(block, dict):
                    continue
                btype = block.get("type")
                if btype == "text" and isinstance(block.get("text"), str):
                    texts.append(block["text"])
                elif btype == "tool_result":
                    has_tool_result = True
                    self._tool_result(block, at)
        if has_tool_result or not texts:
            return
        text = "\n".join(texts).strip()
        if "Base directory for this skill:" in text:
            self._skill_started(text)
        if rec.get("isMeta") or rec.get("isCompactSummary") or rec.get("isVisibleInTranscriptOnly"):
            return
        if text.startswith("[Request interrupted by user"):
            self._feedback("interruption", "", at)
            return
        if "<command-name>" in text[:400] or text.startswith("<command-message>"):
            name_m = _COMMAND_NAME_RX.search(text)
            name = name_m.group(1) if name_m else ""
            self.s.add_command(name or None)
            if not name or name in BUILTIN_COMMANDS:
                return
            args_m = _COMMAND_ARGS_RX.search(text)
            text = f"/{name} {args_m.group(1).strip() if args_m else ''}".strip()
        elif text.startswith(_INJECTED_PREFIXES):
            return
        if "<system-reminder>" in text:
            text = _SYSTEM_REMINDER_RX.sub("", text).strip()
            if not text:
                return
        self._prompt(text, at)

    def _skill_started(self, text: str) -> None:
        """A skill the person started as a slash command (``/name``): Claude Code follows
        the command with the skill's body, headed ``Base directory for this skill: <dir>``;
        the skill is its directory's name."""
        m = _SKILL_BASE_RX.search(text)
        if not m:
            return
        name = re.split(r"[/\\]", m.group(1).rstrip("/\\"))[-1]
        if name:
            self.s.add_skill(name)

    def _prompt(self, text: str, at: str | None) -> bool:
        if not super()._prompt(text, at):
            return False
        self.msg_id = None
        self.msg_tool_ids = []
        self.final_mid = None
        return True

    def _tool_result(self, block: dict[str, Any], at: str | None) -> None:
        if not block.get("is_error"):
            return
        body = text_of(block.get("content"))
        if not body.startswith(_REJECTED):
            return
        m = _REJECTION_REASON_RX.search(body)
        reason = m.group(1).strip() if m else ""
        self._feedback("rejection", self.ctx.redactor.redact(reason) if reason else "", at)

    def _assistant(self, rec: dict[str, Any]) -> None:
        msg = rec.get("message")
        if not isinstance(msg, dict):
            return
        model = msg.get("model")
        if model == "<synthetic>" or rec.get("isApiErrorMessage"):
            return
        if isinstance(model, str):
            self.s.note_model(model)
        mid = msg.get("id") or rec.get("requestId") or rec.get("uuid")
        if mid != self.msg_id:
            # A new message; records of one streamed message share its id.
            self.msg_id = mid
            self.msg_tool_ids = []
        content = msg.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        if not isinstance(content, list):
            return
        for block in content:
            if not isinstance(block, dict):
                continue
            btype = block.get("type")
            if btype == "text" and isinstance(block.get("text"), str) and block["text"].strip():
                self._final_text(block["text"], mid if isinstance(mid, str) else None)
            elif btype == "tool_use":
                tid = block.get("id")
                if tid and tid in self.msg_tool_ids:
                    continue  # the same block logged twice
                if tid:
                    self.msg_tool_ids.append(tid)
                name = block.get("name") if isinstance(block.get("name"), str) else None
                self.s.add_tool(name)
                self.actions.claude_tool(name, block.get("input"))
                if name == "Skill":
                    inp = as_dict(block.get("input"))
                    skill = inp.get("skill") or inp.get("command") or inp.get("name")
                    self.s.add_skill(skill if isinstance(skill, str) else None)
        self.answered = True

    def _final_text(self, text: str, mid: str | None) -> None:
        """A text part of message ``mid``: the turn's final answer is the text of its
        last message that has text (the parts of one streamed message, joined)."""
        if not self.s.prompts:
            return
        if mid != self.final_mid or mid is None:
            self.final_parts = []
            self.final_mid = mid
        elif self.final_parts is None:  # the same message, continued after an earlier read
            prev = self.s.finals[-1]
            self.final_parts = [prev] if prev else []
        if text not in self.final_parts:
            self.final_parts.append(text)

    def _close_turn(self) -> None:
        if self.final_parts is not None and self.s.finals:
            self.s.finals[-1] = self.ctx.redactor.redact("\n\n".join(self.final_parts))
        self.final_parts = None

    def close(self) -> None:
        super().close()
        self.s.state.update(msg_id=self.msg_id, msg_tool_ids=self.msg_tool_ids[-50:], final_mid=self.final_mid)
