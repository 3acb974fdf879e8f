"""Property tests: deciding from bytes which lines to skip never loses what is kept.

For every host, random sessions built from the record shapes of FORMATS.md (with
adversarial text: quoted JSON fragments, the rejection sentence, lines longer
than the byte-check window) are parsed twice, once as the harvest does and once
with every byte-level skip switched off; the two sessions must be identical. For
Claude Code each line is also checked directly: a skipped line never carries a
prompt, a final answer, a tool call or a rejected tool use.
"""

from __future__ import annotations

import io
import json
import re
from unittest import mock

import orjson
import sleep_builders as b
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sleep.harvest.reader import ParseContext
from sleep.redact import Redactor
from sleep.harvest.sources import SourceFile
from sleep.harvest.sources import claude_code, codex, copilot_cli, copilot_vscode
from sleep.harvest.sources.claude_code import ClaudeCodeSource
from sleep.harvest.sources.codex import CodexSource
from sleep.harvest.sources.copilot_cli import CopilotCliSource
from sleep.harvest.sources.copilot_vscode import CopilotVSCodeSource

CWD = "/work/app"
REJECTED = "The user doesn't want to proceed with this tool use. To tell you how to proceed, the user said:\nno"
PROPS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                       HealthCheck.data_too_large])
_FRAGMENTS = ['"type":"text"', '"type":"tool_use"', '"type":"user"', '"type":"assistant"', '"type":"tool_result"',
              '{"kind":1,"k":["requests",0,"result"]}', REJECTED, "\\", '"', "\u00e9\u4e2d", "sk-ant-api03-" + "Q" * 30]
_text = st.one_of(
    st.text(max_size=60),
    st.lists(st.sampled_from(_FRAGMENTS + ["run the tests", "ok"]), min_size=1, max_size=4).map(" ".join),
    st.tuples(st.integers(4000, 7000), st.sampled_from(_FRAGMENTS)).map(lambda t: "x" * t[0] + t[1]),
)
_tool_name = st.sampled_from(["Bash", "Read", "Edit", "Write", "Grep", "Skill", "Task"])


def _parse(source, kind: str, lines: list[str], incremental: bool = True):
    ctx = ParseContext(redactor=Redactor(use_detect_secrets=False))
    file = SourceFile(f"/virtual/{kind}", source.name, kind, incremental=incremental, session_id="s",
                      project_dir=CWD)
    data = "".join(line + "\n" for line in lines).encode()
    result = source.parse(file, io.BytesIO(data), 0, None, ctx)
    return (result.session.to_dict(with_state=False) if result.session else None), ctx.stats


# ----- Claude Code --------------------------------------------------------------------------

@st.composite
def claude_record(draw) -> dict:
    kind = draw(st.sampled_from(["prompt", "blocks", "result", "assistant", "other"]))
    t = draw(st.integers(0, 1000))
    common = dict(sid="s", cwd=CWD, t=t)
    if kind == "prompt":
        return b.claude_user(draw(_text), **common)
    if kind == "blocks":
        blocks = draw(st.lists(st.one_of(
            _text.map(b.text),
            st.just({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBOR" * 20}})),
            min_size=1, max_size=3))
        return b.claude_user(blocks, **common)
    if kind == "result":
        content = draw(st.one_of(_text, st.just(REJECTED)))
        return b.claude_tool_result(f"t{t}", content, is_error=draw(st.booleans()), **common)
    if kind == "assistant":
        blocks = draw(st.lists(st.one_of(
            _text.map(lambda x: {"type": "thinking", "thinking": x, "signature": "EqQBCkYIBxgCKkA" * 8}),
            st.just({"type": "redacted_thinking", "data": "abc"}),
            _text.map(b.text),
            st.tuples(_tool_name, _text).map(lambda nt: b.tool_use(f"u{t}", nt[0], {"command": nt[1],
                                                                                   "file_path": CWD + "/a.py"}))),
            min_size=1, max_size=3))
        return b.claude_assistant(blocks, msg_id=f"m{draw(st.integers(0, 3))}", **common)
    other = draw(st.sampled_from(["attachment", "system", "progress", "file-history-snapshot", "summary",
                                  "queue-operation", "brand-new-type"]))
    return {"parentUuid": None, "type": other, "data": {"message": {"type": "assistant", "content": [
        b.text(draw(_text))]}}, "content": draw(_text), "timestamp": b.ts(t), "uuid": b.uid(t)}


def _claude_carries(rec: dict) -> bool:
    """An independent reading of FORMATS.md: does this record hold something the index keeps?"""
    msg = rec.get("message") or {}
    content = msg.get("content")
    if rec["type"] == "user":
        if isinstance(content, str):
            return bool(content.strip())
        blocks = [x for x in content if isinstance(x, dict)]
        if any(x["type"] == "tool_result" for x in blocks):
            return any(x["type"] == "tool_result" and x.get("is_error") and REJECTED[:40] in json.dumps(x["content"])
                       for x in blocks)
        return any(x["type"] == "text" for x in blocks)
    if rec["type"] == "assistant":
        return any(x["type"] in ("text", "tool_use") for x in content)
    return False


@PROPS
@given(st.lists(claude_record(), min_size=1, max_size=12))
def test_claude_code_skipped_lines_never_carry_what_is_kept(records: list[dict]) -> None:
    for rec in records:
        line = b.dumps(rec).encode()
        if claude_code.skippable(line):
            assert not _claude_carries(rec), rec


@PROPS
@given(st.lists(claude_record(), min_size=1, max_size=12))
def test_claude_code_session_is_the_same_with_and_without_byte_skips(records: list[dict]) -> None:
    lines = [b.dumps(r) for r in records]
    fast, stats = _parse(ClaudeCodeSource(), "session", lines)
    with mock.patch.object(claude_code, "skippable", lambda data: False):
        slow, _ = _parse(ClaudeCodeSource(), "session", lines)
    assert fast == slow


def test_claude_code_typical_bulk_is_skipped_undecoded() -> None:
    result = b.dumps(b.claude_tool_result("t", "x" * 20_000, sid="s", cwd=CWD)).encode()
    thinking = b.dumps(b.claude_assistant([{"type": "thinking", "thinking": "hmm", "signature": "s"}],
                                          sid="s", cwd=CWD, msg_id="m")).encode()
    snapshot = b'{"type":"file-history-snapshot","messageId":"x","snapshot":{}}'
    assert all(claude_code.skippable(x) for x in (result, thinking, snapshot))
    unknown = b'{"type":"brand-new-record","timestamp":"2025-03-01T09:00:00Z"}'
    assert not claude_code.skippable(unknown)


# ----- Codex --------------------------------------------------------------------------------

@st.composite
def codex_line(draw) -> dict:
    t = draw(st.integers(0, 1000))
    kind = draw(st.sampled_from(["user", "agent", "assistant", "input_message", "call", "custom", "local",
                                 "output", "reasoning", "token", "aborted", "turn_context", "exec_end"]))
    text = draw(_text)
    if kind == "user":
        return b.codex_line("event_msg", {"type": "user_message", "message": text, "images": []}, t)
    if kind == "agent":
        return b.codex_line("event_msg", {"type": "agent_message", "message": text}, t)
    if kind == "assistant":
        return b.codex_line("response_item", {"type": "message", "role": "assistant",
                                              "content": [{"type": "output_text", "text": text}]}, t)
    if kind == "input_message":
        role = draw(st.sampled_from(["user", "developer"]))
        return b.codex_line("response_item", {"type": "message", "role": role,
                                              "content": [{"type": "input_text", "text": text}]}, t)
    if kind == "call":
        args = json.dumps({"cmd": text} if draw(st.booleans()) else {"command": ["bash", "-lc", text]})
        return b.codex_line("response_item", {"type": "function_call", "name": draw(st.sampled_from(
            ["exec_command", "shell", "apply_patch", "read_file"])), "arguments": args, "call_id": f"c{t}"}, t)
    if kind == "custom":
        return b.codex_line("response_item", {"type": "custom_tool_call", "name": "apply_patch", "call_id": f"c{t}",
                                              "input": b.PATCH + text}, t)
    if kind == "local":
        return b.codex_line("response_item", {"type": "local_shell_call", "call_id": f"c{t}", "status": "completed",
                                              "action": {"type": "exec", "command": ["cargo", "test", text]}}, t)
    if kind == "output":
        return b.codex_line("response_item", {"type": "function_call_output", "call_id": f"c{t}", "output": text}, t)
    if kind == "reasoning":
        return b.codex_line("response_item", {"type": "reasoning", "summary": [{"type": "summary_text",
                                                                                 "text": text}]}, t)
    if kind == "token":
        return b.codex_line("event_msg", {"type": "token_count", "info": {"total": t}}, t)
    if kind == "aborted":
        return b.codex_line("event_msg", {"type": "turn_aborted", "reason": "interrupted"}, t)
    if kind == "exec_end":
        return b.codex_line("event_msg", {"type": "exec_command_end", "call_id": f"c{t}", "stdout": text}, t)
    return b.codex_line("turn_context", {"cwd": CWD, "model": draw(st.sampled_from(["gpt-5", "o3"]))}, t)


@PROPS
@given(st.lists(codex_line(), min_size=1, max_size=12))
def test_codex_session_is_the_same_with_and_without_byte_skips(lines: list[dict]) -> None:
    rollout = [b.dumps(b.codex_meta(b.uid("p"), CWD))] + [b.dumps(x) for x in lines]
    fast, _ = _parse(CodexSource(), "rollout", rollout)
    with mock.patch.object(codex, "skippable", lambda head: False), \
            mock.patch.object(codex, "_TURN_CONTEXT_RX", re.compile(rb"(?!)")):
        slow, _ = _parse(CodexSource(), "rollout", rollout)
    assert fast == slow


# ----- Copilot CLI --------------------------------------------------------------------------

@st.composite
def cli_event(draw) -> dict:
    t = draw(st.integers(0, 1000))
    kind = draw(st.sampled_from(["user.message", "assistant.message", "tool.execution_start",
                                 "tool.execution_complete", "assistant.message_delta", "hook.start", "abort"]))
    text = draw(_text)
    data = {"user.message": {"content": text},
            "assistant.message": {"content": text, "toolRequests": [
                {"toolCallId": f"k{t}", "name": "bash", "arguments": {"command": text}}]},
            "tool.execution_start": {"toolCallId": f"k{t}", "toolName": "view", "arguments": {"path": text}},
            "tool.execution_complete": {"toolCallId": f"k{t}", "result": {"content": text}},
            "assistant.message_delta": {"deltaContent": text}, "hook.start": {"input": text}, "abort": {}}[kind]
    return b.cli_event(kind, data, t, t)


@PROPS
@given(st.lists(cli_event(), min_size=1, max_size=12))
def test_copilot_cli_session_is_the_same_with_and_without_byte_skips(events: list[dict]) -> None:
    log = [b.dumps(b.cli_event("session.start", {"sessionId": "s", "context": {"cwd": CWD}}, 0, 0))]
    log += [b.dumps(e) for e in events]
    fast, _ = _parse(CopilotCliSource(), "events", log)
    with mock.patch.object(copilot_cli, "skippable", lambda data: False):
        slow, _ = _parse(CopilotCliSource(), "events", log)
    assert fast == slow


# ----- VS Code Copilot Chat -----------------------------------------------------------------

_KEYS = st.sampled_from(["result", "variableData", "contentReferences", "followups", "message", "response",
                         "timestamp", "modelId", "vote", "codeCitations", "text", "value", "isSystemInitiated"])


@st.composite
def vscode_patch(draw) -> dict:
    path = ["requests", draw(st.integers(0, 2))] + draw(st.lists(st.one_of(_KEYS, st.integers(0, 2)), max_size=3))
    kind = draw(st.sampled_from([1, 2, 3]))
    value = draw(st.one_of(_text, st.just({"text": "do it"}), st.just([b.md("answer")]), st.just(1)))
    rec = {"kind": kind, "k": path}
    if kind != 3:
        rec["v"] = value
    return rec


@PROPS
@given(st.lists(vscode_patch(), max_size=12))
def test_copilot_vscode_session_is_the_same_with_and_without_byte_skips(patches: list[dict]) -> None:
    log = [b.dumps(x) for x in b.copilot_log_lines(b.copilot_session("v", b.copilot_actions_requests(CWD)))]
    log += [orjson.dumps(p).decode() for p in patches]
    fast, _ = _parse(CopilotVSCodeSource(user_dirs=[]), "jsonl", log, incremental=False)
    with mock.patch.object(copilot_vscode, "skippable_patch", lambda data: False):
        slow, _ = _parse(CopilotVSCodeSource(user_dirs=[]), "jsonl", log, incremental=False)
    assert fast == slow
