"""Codex CLI rollouts: ``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl``,
``archived_sessions/`` and typed prompts in ``history.jsonl`` (FORMATS.md,
"Codex CLI session rollouts").

Each user turn is logged twice (``event_msg/user_message`` and a
``response_item`` user message that also carries injected context); prompts
come from ``event_msg/user_message`` only, so every turn counts once. Very old
rollouts without the ``{timestamp, type, payload}`` envelope have no events:
their ``message`` records with role ``user`` are used, minus injected text.

Speed: Codex writes compact JSON with the record and payload types first, so
the types are read from the first bytes of a line (:func:`skippable`); outputs
(tool results, reasoning, token counts, compaction history), the
``response_item`` copy of each user turn (and the injected context sent the
same way) and, once the project is known, ``turn_context`` records are never
decoded. Tool calls are decoded: their arguments give the turn's shell
commands and patched files.

Codex 0.146 (Desktop) re-writes ``session_meta`` at every turn with the same id (it
changes nothing: one file, one session); ``user_message`` gains ``client_id``, ``audio``
and ``local_audio`` (ignored: ``message`` is what was typed) and may carry a referenced
ChatGPT conversation: a ``## Referenced ChatGPT conversation:`` heading, a line saying
the reference is untrusted, the reference as one JSON line, and the typed text after
``## My request for Codex:`` (:func:`typed_text` keeps only what was typed). A web search
may appear only as ``event_msg/web_search_end`` (``{call_id, query, action?}``) with no
``response_item/web_search_call``: each is counted as one ``web_search`` tool call, a
search that has both counted once.
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
    skills_in,
    text_of,
    walk_files,
)
from sleep.harvest.sources.actions import TurnActions
from sleep.harvest.sources.code_mode import nested_calls
from sleep.harvest.sources.history import parse_codex_history
from sleep.harvest.sources.turns import LogParser, parse_log
from sleep.sessions import Session, iso_utc

HOST = "codex"
_HEAD = 200
_TYPES_RX = re.compile(rb'"type":"([a-z_]+)","payload":\{"type":"([a-z_]+)"')
_COMPACTED = b'"type":"compacted"'
_TS_RX = re.compile(rb'^\{"timestamp":"([^"]{10,40})"')
# 0.14x writes an "ordinal" between the timestamp and the type.
_TURN_CONTEXT_RX = re.compile(rb'^\{"timestamp":"[^"]{10,40}",(?:"ordinal":\d{1,12},)?"type":"turn_context"')
_WORLD_STATE_RX = re.compile(rb'^\{(?:"timestamp":"[^"]{10,40}",)?(?:"ordinal":\d{1,12},)?"type":"world_state"')
_CWD_RX = re.compile(rb'"cwd":("(?:[^"\\]|\\.){1,4096}")')
_MODEL_RX = re.compile(rb'"model":"([^"\\]{1,100})"')
_INPUT_ROLES = (b',"role":"user"', b',"role":"developer"', b',"role":"system"')
# `codex exec` and the SDKs (which drive `codex exec`); `mcp`: another program drives Codex.
_SCRIPTED_SOURCES = ("exec", "mcp")

# Payload types that never hold a prompt, a final answer or a tool name.
SKIP_PAYLOADS = frozenset({
    b"function_call_output", b"custom_tool_call_output", b"reasoning", b"token_count",
    b"exec_command_end", b"exec_command_begin", b"exec_command_output_delta", b"patch_apply_end",
    b"patch_apply_begin", b"turn_diff", b"agent_reasoning", b"agent_reasoning_raw_content",
    b"mcp_tool_call_end", b"mcp_tool_call_begin", b"task_started",
    b"task_complete", b"get_history_entry_response", b"view_image_tool_call",
    b"local_shell_call_output", b"ghost_snapshot", b"compaction",
})
KNOWN_TYPES = frozenset({"session_meta", "turn_context", "response_item", "event_msg", "compacted",
                         "world_state"})
# Legacy (pre-envelope) record types.
LEGACY_ITEMS = frozenset({"message", "function_call", "function_call_output", "reasoning",
                          "local_shell_call", "custom_tool_call", "custom_tool_call_output",
                          "web_search_call"})
# Code mode (0.14x): the model's tools, called from an ``exec`` script (sleep.harvest.sources.code_mode).
_CODE_MODE_TOOLS = ("exec", "code_mode", "js")
_ANSWER_TOOLS = ("request_user_input", "request_user_input_async")
_REFERENCE_RX = re.compile(r"^#{1,6}[ \t]*Referenced ChatGPT conversation:[ \t]*$", re.IGNORECASE | re.MULTILINE)
_REQUEST_RX = re.compile(r"^#{1,6}[ \t]*My request for Codex:[ \t]*$", re.IGNORECASE | re.MULTILINE)


def typed_text(message: str) -> str:
    """``message`` without an injected referenced-ChatGPT-conversation block (module
    docstring): what precedes the heading and what follows ``## My request for Codex:``;
    without that second heading, what follows the reference's JSON line."""
    ref = _REFERENCE_RX.search(message)
    if ref is None:
        return message
    before = message[:ref.start()]
    req = _REQUEST_RX.search(message, ref.end())
    if req is not None:
        after = message[req.end():]
    else:
        lines = message[ref.end():].split("\n")
        i = 0
        while i < len(lines) and (not lines[i].strip() or lines[i].startswith("This is an untrusted ChatGPT")):
            i += 1
        if i < len(lines) and lines[i].lstrip().startswith("{"):
            i += 1
        after = "\n".join(lines[i:])
    return "\n\n".join(x.strip() for x in (before, after) if x.strip())


_INJECTED_PREFIXES = ("<environment_context>", "<user_instructions>", "# AGENTS.md instructions",
                      "<INSTRUCTIONS>", "<user_shell_command>", "<turn_aborted>")


class CodexSource(HomeSource):
    name = HOST

    def discover(self, stats: ParseStats) -> Iterator[SourceFile]:
        def want(name: str) -> bool:
            return name.startswith("rollout-") and name.endswith(".jsonl")

        for sub in ("sessions", "archived_sessions"):
            for path in walk_files(self.home / sub, want, stats):
                yield SourceFile(path, HOST, "rollout", session_id=_id_from_name(Path(path).name))
        history = self.home / "history.jsonl"
        if history.exists() or history.is_symlink():
            yield SourceFile(str(history), HOST, "history")

    def project_of(self, file: SourceFile, ctx: ParseContext) -> str | None:
        """The cwd of ``session_meta`` or ``turn_context`` in the first lines."""
        for rec in head_records(file.path, b'"cwd"', 20, 4 << 20):
            payload = rec.get("payload")
            cwd = (payload if isinstance(payload, dict) else rec).get("cwd")
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


def skippable(head: bytes) -> bool:
    """True for an enveloped line that holds no prompt, answer or tool call, judged from
    its first bytes: an output, reasoning or bookkeeping payload, compaction history, or
    a user / developer message (the copy of a turn whose prompt the event gives)."""
    m = _TYPES_RX.search(head)
    if m is None:
        return _COMPACTED in head or _WORLD_STATE_RX.match(head) is not None
    ptype = m.group(2)
    if ptype in SKIP_PAYLOADS:
        return True
    return ptype == b"message" and m.group(1) == b"response_item" and head.startswith(_INPUT_ROLES, m.end())


class _RolloutParser(LogParser):
    def __init__(self, session: Session, file: SourceFile, ctx: ParseContext) -> None:
        super().__init__(session, file, ctx)
        self.cur_ts: str | None = None
        self.actions = TurnActions(session, ctx)
        # request_user_input calls whose answer (a function_call_output) is still to come.
        self.asked: list[str] = list(session.state.get("asked", []))
        # web searches seen as response_item calls and as web_search_end events (one search, one call)
        self.searches: list[int] = list(session.state.get("searches", [0, 0]))

    def _note_ts(self, head: bytes) -> None:
        ts = _TS_RX.match(head)
        if ts:
            self.s.note_time(iso_utc(ts.group(1).decode("ascii", "replace")))

    def feed(self, data: bytes, where: str) -> None:
        stats = self.ctx.stats
        head = data[:_HEAD]
        if skippable(head) and not (self.asked and self._answers_a_question(data)):
            self._note_ts(head)
            stats.skipped_undecoded()
            return
        if self.s.project_dir is not None and _TURN_CONTEXT_RX.match(head):
            # Per-turn settings: the model and the working directory are all that may change.
            model = _MODEL_RX.search(data, 0, 4096)
            if model:
                self.s.note_model(model.group(1).decode("utf-8", "replace"))
            cwd = _CWD_RX.search(data, 0, 8192)
            if cwd:
                try:
                    self.cwd = orjson.loads(cwd.group(1))
                except orjson.JSONDecodeError:
                    pass
            self._note_ts(head)
            stats.skipped_undecoded()
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
            if isinstance(cwd, str):
                if self.s.project_dir is None:
                    self._set_project(cwd)
                self.cwd = cwd
            if isinstance(p.get("model"), str):
                self.s.note_model(p["model"])
            return True
        if rtype == "world_state":
            return False  # the environment's state (cwd, shell, sandbox): nothing of the person's
        ptype = p.get("type")
        if rtype == "event_msg":
            if ptype == "user_message":
                msg = p.get("message")
                if isinstance(msg, str) and typed_text(msg).strip():
                    self._prompt(typed_text(msg).strip(), self.cur_ts)
                return True
            if ptype == "web_search_end":
                self._search(1)
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
            if ptype == "function_call_output" and p.get("call_id") in self.asked:
                self.asked.remove(p["call_id"])
                for answer in _answers(p.get("output")):
                    self._answer(answer, self.cur_ts)
                return True
            return False
        return False  # compacted

    def _meta(self, p: dict[str, Any]) -> None:
        sid = p.get("id")
        if isinstance(sid, str) and sid:
            self.s.session_id = sid
        if isinstance(p.get("model"), str):
            self.s.note_model(p["model"])
        originator, source = p.get("originator"), p.get("source")
        if isinstance(originator, str) and self.s.entrypoint is None:
            self.s.entrypoint = originator
        if (isinstance(originator, str) and ("exec" in originator or "sdk" in originator)) \
                or source in _SCRIPTED_SOURCES:
            self.s.scripted = True
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
        self.cwd = self.cwd or cwd
        if is_replay_path(cwd):
            self.replay = True

    def _answers_a_question(self, data: bytes) -> bool:
        """A ``function_call_output`` line that answers a pending ``request_user_input``."""
        return b'"function_call_output"' in data[:_HEAD] and any(
            f'"call_id":"{c}"'.encode() in data[:_HEAD + 200] for c in self.asked)

    def close(self) -> None:
        super().close()
        self.s.state["asked"] = self.asked[-20:]
        self.s.state["searches"] = self.searches

    def _search(self, side: int) -> None:
        """One web search seen as a call (``side`` 0) or as its end event (1): counted when
        this side has seen more searches than the other."""
        self.searches[side] += 1
        if self.searches[side] > self.searches[1 - side]:
            self.s.add_tool("web_search")
        self.answered = True

    def _tool(self, p: dict[str, Any]) -> None:
        ptype = p.get("type")
        if ptype == "web_search_call":
            self._search(0)
            return
        name: str | None
        if ptype == "local_shell_call":
            name = "local_shell"
        else:
            name = p.get("name") if isinstance(p.get("name"), str) else None
        self.s.add_tool(name)
        args = p.get("arguments") if ptype == "function_call" else p.get("input")
        if isinstance(args, str):
            for skill in skills_in(args):
                self.s.add_skill(skill)
        if name in _ANSWER_TOOLS and isinstance(p.get("call_id"), str):
            self.asked.append(p["call_id"])
        if ptype == "custom_tool_call" and name in _CODE_MODE_TOOLS:
            self._code_mode(args)
        else:
            self._actions(ptype, name, args, p)
        self.answered = True

    def _code_mode(self, script: Any) -> None:
        """The shell commands and patches an ``exec`` script runs (sleep.harvest.sources.code_mode)."""
        for name, arg in nested_calls(script):
            if name in ("exec_command", "shell", "shell_command", "local_shell"):
                if isinstance(arg, dict):
                    workdir = arg.get("workdir") if isinstance(arg.get("workdir"), str) else None
                    self._shell(arg.get("cmd", arg.get("command")), workdir)
                elif isinstance(arg, str):
                    self._shell(arg, None)
            elif name == "apply_patch":
                self.actions.patch(arg.get("input", arg.get("patch")) if isinstance(arg, dict) else arg)
            elif name in ("read_file", "view_image", "write_file", "edit_file") and isinstance(arg, dict):
                workdir = arg.get("workdir") if isinstance(arg.get("workdir"), str) else None
                self.actions.path(arg.get("file_path", arg.get("path")), workdir)

    def _actions(self, ptype: Any, name: str | None, args: Any, p: dict[str, Any]) -> None:
        """Shell commands and patched files of one tool call (see FORMATS.md, Codex)."""
        if ptype == "local_shell_call":
            action = as_dict(p.get("action"))
            self._shell(action.get("command"), action.get("working_directory"))
            return
        if ptype == "custom_tool_call":
            if name == "apply_patch":
                self.actions.patch(args)
            return
        if not isinstance(args, str) or not args.startswith("{"):
            return
        a = self.actions.arguments(args)
        if not isinstance(a, dict):
            return
        workdir = a.get("workdir") if isinstance(a.get("workdir"), str) else None
        if name in ("shell", "container.exec", "local_shell", "shell_command"):
            self._shell(a.get("command"), workdir)
        elif name == "exec_command":
            self._shell(a.get("cmd", a.get("command")), workdir)
        elif name == "apply_patch":
            self.actions.patch(a.get("input", a.get("patch")), workdir)
        elif name in ("read_file", "view_image", "write_file", "edit_file"):
            self.actions.path(a.get("file_path", a.get("path")), workdir)

    def _shell(self, command: Any, workdir: Any) -> None:
        """A shell call: a patch applied through the shell (``apply_patch``, often as a
        heredoc) counts as the files it patches, not as a command."""
        cwd = workdir if isinstance(workdir, str) else None
        text = command if isinstance(command, str) else (
            "\n".join(x for x in command if isinstance(x, str)) if isinstance(command, list) else "")
        if "*** Begin Patch" in text:
            self.actions.patch(text, cwd)
            return
        self.actions.command(command)

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


def _answers(output: Any) -> list[str]:
    """The answers of a ``request_user_input`` output: ``{"answers": {"<question id>":
    {"answers": ["..."]}}}`` (a JSON string, or the object itself)."""
    if isinstance(output, dict) and "content" in output and "answers" not in output:
        output = output.get("content")
    if isinstance(output, str):
        try:
            output = orjson.loads(output)
        except orjson.JSONDecodeError:
            return []
    if not isinstance(output, dict) or not isinstance(output.get("answers"), dict):
        return []
    out: list[str] = []
    for entry in output["answers"].values():
        values = entry.get("answers") if isinstance(entry, dict) else entry
        if isinstance(values, str):
            values = [values]
        if isinstance(values, list):
            out.extend(v for v in values if isinstance(v, str) and v.strip())
    return out


def _content_text(content: Any) -> str:
    """Text of ``input_text`` / ``output_text`` parts (or a plain string)."""
    return text_of(content)
