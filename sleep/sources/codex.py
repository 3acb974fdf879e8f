"""Codex CLI rollouts: ``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl``,
``archived_sessions/`` and typed prompts in ``history.jsonl`` (FORMATS.md,
"Codex CLI session rollouts").

Each user turn is logged twice (``event_msg/user_message`` and a
``response_item`` user message that also carries injected context); prompts
come from ``event_msg/user_message`` only, so every turn counts once. Very old
rollouts without the ``{timestamp, type, payload}`` envelope have no events:
their ``message`` records with role ``user`` are used, minus injected text.

Speed: Codex writes compact JSON with the record and payload types first, so
the types are read from the first bytes of a line; outputs (tool results,
reasoning, token counts, compaction history) are never decoded.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, BinaryIO, Iterator

from skillopt_core.replay import is_replay_path
from sleep import paths
from sleep.reader import ParseContext, ParseStats
from sleep.sessions import Session, iso_utc
from sleep.sources import ParseResult, SourceFile, head_records, skills_in, text_of, walk_files
from sleep.sources.history import parse_codex_history
from sleep.sources.turns import LogParser, parse_log

HOST = "codex"
_HEAD = 200
_TYPES_RX = re.compile(rb'"type":"([a-z_]+)","payload":\{"type":"([a-z_]+)"')
_COMPACTED = b'"type":"compacted"'
_TS_RX = re.compile(rb'^\{"timestamp":"([^"]{10,40})"')

# Payload types that never hold a prompt, a final answer or a tool name.
SKIP_PAYLOADS = frozenset({
    b"function_call_output", b"custom_tool_call_output", b"reasoning", b"token_count",
    b"exec_command_end", b"exec_command_begin", b"exec_command_output_delta", b"patch_apply_end",
    b"patch_apply_begin", b"turn_diff", b"agent_reasoning", b"agent_reasoning_raw_content",
    b"mcp_tool_call_end", b"mcp_tool_call_begin", b"web_search_end", b"task_started",
    b"task_complete", b"get_history_entry_response", b"view_image_tool_call",
    b"local_shell_call_output", b"ghost_snapshot", b"compaction",
})
KNOWN_TYPES = frozenset({"session_meta", "turn_context", "response_item", "event_msg", "compacted"})
# Legacy (pre-envelope) record types.
LEGACY_ITEMS = frozenset({"message", "function_call", "function_call_output", "reasoning",
                          "local_shell_call", "custom_tool_call", "custom_tool_call_output",
                          "web_search_call"})
_INJECTED_PREFIXES = ("<environment_context>", "<user_instructions>", "# AGENTS.md instructions",
                      "<INSTRUCTIONS>", "<user_shell_command>", "<turn_aborted>")


class CodexSource:
    name = HOST

    def __init__(self, home: Path | None = None) -> None:
        self._home = home

    @property
    def home(self) -> Path:
        return self._home or paths.codex_home()

    def discover(self, stats: ParseStats) -> Iterator[SourceFile]:
        def want(name: str) -> bool:
            return name.startswith("rollout-") and name.endswith(".jsonl")

        for sub in ("sessions", "archived_sessions"):
            for path in walk_files(self.home / sub, want, stats):
                yield SourceFile(path, HOST, "rollout", session_id=_id_from_name(Path(path).name))
        history = self.home / "history.jsonl"
        if history.exists() or history.is_symlink():
            yield SourceFile(str(history), HOST, "history")

    def scope_hint(self, file: SourceFile, project: str) -> bool | None:
        return None

    def project_of(self, file: SourceFile, ctx: ParseContext) -> str | None:
        """The cwd of ``session_meta`` or ``turn_context`` in the first lines."""
        for rec in head_records(file.path, b'"cwd"', 20, 4 << 20):
            payload = rec.get("payload") if isinstance(rec.get("payload"), dict) else rec
            cwd = payload.get("cwd")
            if isinstance(cwd, str):
                return cwd
        return None

    def parse(self, file: SourceFile, f: BinaryIO, start: int, prior: Session | None,
              ctx: ParseContext) -> ParseResult:
        if file.kind == "history":
            return parse_codex_history(file, f, start, ctx)
        session = prior or Session(host=HOST, session_id=file.session_id or Path(file.path).stem,
                                   source_path=file.path)
        return parse_log(_RolloutParser(session, file, ctx), f, start, prior)


def _id_from_name(name: str) -> str | None:
    m = re.search(r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$", name)
    return m.group(1) if m else None


class _RolloutParser(LogParser):
    def __init__(self, session: Session, file: SourceFile, ctx: ParseContext) -> None:
        super().__init__(session, file, ctx)
        self.cur_ts: str | None = None

    def feed(self, data: bytes, where: str) -> None:
        stats = self.ctx.stats
        head = data[:_HEAD]
        m = _TYPES_RX.search(head)
        if (m and m.group(2) in SKIP_PAYLOADS) or _COMPACTED in head:
            ts = _TS_RX.match(head)
            if ts:
                self.s.note_time(iso_utc(ts.group(1).decode("ascii", "replace")))
            stats.ignored()
            return
        rec = self.ctx.loads(data, where)
        if rec is None:
            return
        rtype = rec.get("type")
        payload = rec.get("payload")
        self.cur_ts = iso_utc(rec.get("timestamp"))
        if rtype in KNOWN_TYPES and isinstance(payload, dict):
            self.s.note_time(self.cur_ts)
            if self._enveloped(rtype, payload):
                stats.kept()
            else:
                stats.ignored()
            return
        if rtype in KNOWN_TYPES:
            stats.skip_line("missing_payload", where)
            return
        if rtype is None and "id" in rec and "timestamp" in rec:
            # Legacy first line: session meta at top level.
            self._meta(rec)
            stats.kept()
            return
        if rtype in LEGACY_ITEMS:
            self.s.note_time(self.cur_ts)
            self._legacy_item(rec)
            stats.kept()
            return
        if rtype is None and rec.get("record_type") == "state":
            stats.ignored()
            return
        stats.skip_line("unknown_record_type", where)

    # --- enveloped records -----------------------------------------------------------

    def _enveloped(self, rtype: str, p: dict[str, Any]) -> bool:
        if rtype == "session_meta":
            self._meta(p)
            return True
        if rtype == "turn_context":
            cwd = p.get("cwd")
            if self.s.project_dir is None and isinstance(cwd, str):
                self._set_project(cwd)
            if isinstance(p.get("model"), str):
                self.s.model = p["model"]
            return True
        ptype = p.get("type")
        if rtype == "event_msg":
            if ptype == "user_message":
                msg = p.get("message")
                if isinstance(msg, str) and msg.strip():
                    self._prompt(msg.strip(), self.cur_ts)
                return True
            if ptype == "agent_message":
                msg = p.get("message")
                if isinstance(msg, str) and msg.strip():
                    self._final(msg)
                return True
            if ptype in ("turn_aborted",):
                self._feedback("interruption", "", self.cur_ts)
                return True
            return False
        if rtype == "response_item":
            if ptype == "message":
                if p.get("role") == "assistant":
                    text = _content_text(p.get("content"))
                    if text.strip():
                        self._final(text)
                    return True
                return False  # user / developer messages: the event_msg copy is the prompt
            if ptype in ("function_call", "custom_tool_call", "local_shell_call", "web_search_call"):
                self._tool(p)
                return True
            return False
        return False  # compacted

    def _meta(self, p: dict[str, Any]) -> None:
        sid = p.get("id")
        if isinstance(sid, str) and sid:
            self.s.session_id = sid
        self.s.note_time(iso_utc(p.get("timestamp")))
        cwd = p.get("cwd")
        if isinstance(cwd, str):
            self._set_project(cwd)
        source = p.get("source")
        if isinstance(source, dict) and "subagent" in source:
            self.s.is_subagent = True
            parent = source.get("subagent")
            if isinstance(parent, dict) and isinstance(parent.get("parent_thread_id"), str):
                self.s.parent_session_id = parent["parent_thread_id"]

    def _set_project(self, cwd: str) -> None:
        self.s.project_dir = cwd
        if is_replay_path(cwd):
            self.replay = True

    def _tool(self, p: dict[str, Any]) -> None:
        ptype = p.get("type")
        if ptype == "web_search_call":
            name = "web_search"
        elif ptype == "local_shell_call":
            name = "local_shell"
        else:
            name = p.get("name") if isinstance(p.get("name"), str) else None
        self.s.add_tool(name)
        args = p.get("arguments") if ptype == "function_call" else p.get("input")
        if isinstance(args, str):
            for skill in skills_in(args):
                self.s.add_skill(skill)
        self.answered = True

    def _legacy_item(self, rec: dict[str, Any]) -> None:
        if rec.get("type") == "message":
            text = _content_text(rec.get("content"))
            if rec.get("role") == "user":
                stripped = text.strip()
                if stripped and not stripped.startswith(_INJECTED_PREFIXES):
                    self._prompt(stripped, iso_utc(rec.get("timestamp")))
            elif rec.get("role") == "assistant" and text.strip():
                self._final(text)
        elif rec.get("type") in ("function_call", "custom_tool_call", "local_shell_call", "web_search_call"):
            self._tool(rec)


def _content_text(content: Any) -> str:
    """Text of ``input_text`` / ``output_text`` parts (or a plain string)."""
    return text_of(content)
