"""Builders of synthetic transcripts, written from FORMATS.md (never real sessions).

Used by the tests in this folder and by bench/harvest.py. Each builder returns
plain dicts shaped like the host's records; ``write_jsonl`` writes them the way
the hosts do (compact JSON, one object per line, trailing newline).
"""

from __future__ import annotations

import json
import re
import uuid as uuid_mod
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Iterable

BASE = datetime(2025, 3, 1, 9, 0, 0, tzinfo=timezone.utc)


def ts(seconds: float = 0) -> str:
    t = BASE + timedelta(seconds=seconds)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def ms(seconds: float = 0) -> int:
    return int((BASE + timedelta(seconds=seconds)).timestamp() * 1000)


def uid(n: int | str) -> str:
    return str(uuid_mod.uuid5(uuid_mod.NAMESPACE_URL, f"skillopt-test-{n}"))


def dumps(rec: Any) -> str:
    return json.dumps(rec, separators=(",", ":"), ensure_ascii=False)


def write_jsonl(path: Path, records: Iterable[Any], *, mode: str = "w") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, mode, encoding="utf-8") as f:
        for rec in records:
            f.write((rec if isinstance(rec, str) else dumps(rec)) + "\n")
    return path


# ----- Claude Code -----------------------------------------------------------------------

def claude_slug(cwd: str) -> str:
    return re.sub(r"[^A-Za-z0-9]", "-", cwd)


def claude_session_path(claude_home: Path, cwd: str, sid: str) -> Path:
    return claude_home / "projects" / claude_slug(cwd) / f"{sid}.jsonl"


def _claude_common(kind: str, sid: str, cwd: str, t: float, **extra: Any) -> dict[str, Any]:
    rec = {"parentUuid": extra.pop("parent", None), "isSidechain": extra.pop("sidechain", False),
           "userType": "external", "cwd": cwd, "sessionId": sid, "version": "2.0.14",
           "gitBranch": "main", "type": kind}
    rec.update(extra)
    rec.setdefault("uuid", uid(f"{sid}-{kind}-{t}-{len(extra)}"))
    rec.setdefault("timestamp", ts(t))
    return rec


def claude_user(content: Any, *, sid: str, cwd: str, t: float = 0, **extra: Any) -> dict[str, Any]:
    return _claude_common("user", sid, cwd, t, message={"role": "user", "content": content}, **extra)


def claude_tool_result(tool_use_id: str, content: Any, *, sid: str, cwd: str, t: float = 0,
                       is_error: bool = False) -> dict[str, Any]:
    block = {"tool_use_id": tool_use_id, "type": "tool_result", "content": content, "is_error": is_error}
    return claude_user([block], sid=sid, cwd=cwd, t=t,
                       toolUseResult={"stdout": content if isinstance(content, str) else "", "stderr": ""})


def claude_assistant(blocks: list[dict[str, Any]], *, sid: str, cwd: str, msg_id: str, t: float = 0,
                     model: str = "claude-sonnet-4-5", **extra: Any) -> dict[str, Any]:
    message = {"id": msg_id, "type": "message", "role": "assistant", "model": model,
               "content": blocks, "stop_reason": None, "usage": {"input_tokens": 10, "output_tokens": 5}}
    return _claude_common("assistant", sid, cwd, t, message=message, requestId=f"req_{msg_id}", **extra)


def text(t: str) -> dict[str, Any]:
    return {"type": "text", "text": t}


def tool_use(tool_id: str, name: str, inp: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": name, "input": inp or {}}


def claude_basic_session(sid: str, cwd: str) -> list[dict[str, Any]]:
    """A two-turn session: a task with a skill and tool use, then a correction."""
    return [
        {"type": "summary", "summary": "Fix the build", "leafUuid": uid(1)},
        claude_user("Fix the failing build in the api package", sid=sid, cwd=cwd, t=0),
        claude_assistant([{"type": "thinking", "thinking": "hmm", "signature": "x"}], sid=sid, cwd=cwd,
                         msg_id="msg_1", t=1),
        claude_assistant([text("Let me look at the build first.")], sid=sid, cwd=cwd, msg_id="msg_1", t=1.1),
        claude_assistant([tool_use("toolu_1", "Skill", {"skill": "build-fixer"})], sid=sid, cwd=cwd,
                         msg_id="msg_1", t=1.2),
        claude_tool_result("toolu_1", "Launching skill: build-fixer", sid=sid, cwd=cwd, t=2),
        claude_assistant([tool_use("toolu_2", "Bash", {"command": "npm test"})], sid=sid, cwd=cwd,
                         msg_id="msg_2", t=3),
        claude_tool_result("toolu_2", "1 failing\n" * 20, sid=sid, cwd=cwd, t=4),
        claude_assistant([text("The build is fixed: a missing import in api/index.ts.")], sid=sid, cwd=cwd,
                         msg_id="msg_3", t=5),
        claude_user("no, use pnpm instead of npm", sid=sid, cwd=cwd, t=6),
        claude_assistant([tool_use("toolu_3", "Bash", {"command": "pnpm test"})], sid=sid, cwd=cwd,
                         msg_id="msg_4", t=7),
        claude_tool_result("toolu_3", "all passed", sid=sid, cwd=cwd, t=8),
        claude_assistant([text("Switched to pnpm; all tests pass.")], sid=sid, cwd=cwd, msg_id="msg_5", t=9),
        {"type": "system", "subtype": "turn_duration", "durationMs": 900, "timestamp": ts(9.5),
         "sessionId": sid, "cwd": cwd, "uuid": uid(99)},
    ]


# ----- Codex -----------------------------------------------------------------------------

def codex_rollout_path(codex_home: Path, sid: str, t: float = 0, archived: bool = False) -> Path:
    d = BASE + timedelta(seconds=t)
    stamp = d.strftime("%Y-%m-%dT%H-%M-%S")
    if archived:
        return codex_home / "archived_sessions" / f"rollout-{stamp}-{sid}.jsonl"
    return codex_home / "sessions" / d.strftime("%Y/%m/%d") / f"rollout-{stamp}-{sid}.jsonl"


def codex_line(kind: str, payload: dict[str, Any], t: float = 0) -> dict[str, Any]:
    return {"timestamp": ts(t), "type": kind, "payload": payload}


def codex_meta(sid: str, cwd: str, t: float = 0, originator: str = "codex_cli_rs",
               source: Any = "cli") -> dict[str, Any]:
    return codex_line("session_meta", {"id": sid, "timestamp": ts(t), "cwd": cwd, "originator": originator,
                                       "cli_version": "0.46.0", "source": source,
                                       "model_provider": "openai", "instructions": None,
                                       "git": {"commit_hash": "abc", "branch": "main"}}, t)


def codex_user_turn(prompt: str, t: float) -> list[dict[str, Any]]:
    """One user turn as Codex logs it: twice (response_item + event_msg)."""
    return [
        codex_line("response_item", {"type": "message", "role": "user",
                                     "content": [{"type": "input_text", "text": prompt}]}, t),
        codex_line("event_msg", {"type": "user_message", "message": prompt, "images": []}, t),
    ]


def codex_injected(cwd: str, t: float = 0) -> list[dict[str, Any]]:
    return [
        codex_line("response_item", {"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": "<user_instructions>\n\nAlways run tests.\n\n</user_instructions>"}]}, t),
        codex_line("response_item", {"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": f"<environment_context>\n  <cwd>{cwd}</cwd>\n</environment_context>"}]}, t),
    ]


def codex_assistant(msg: str, t: float) -> list[dict[str, Any]]:
    return [
        codex_line("event_msg", {"type": "agent_message", "message": msg}, t),
        codex_line("response_item", {"type": "message", "role": "assistant",
                                     "content": [{"type": "output_text", "text": msg}]}, t),
    ]


def codex_call(name: str, arguments: str, call_id: str, output: str, t: float) -> list[dict[str, Any]]:
    return [
        codex_line("response_item", {"type": "function_call", "name": name, "arguments": arguments,
                                     "call_id": call_id}, t),
        codex_line("response_item", {"type": "function_call_output", "call_id": call_id,
                                     "output": json.dumps({"output": output, "metadata": {"exit_code": 0}})}, t),
    ]


def codex_basic_session(sid: str, cwd: str) -> list[dict[str, Any]]:
    return [
        codex_meta(sid, cwd, 0),
        *codex_injected(cwd, 0.1),
        codex_line("turn_context", {"cwd": cwd, "approval_policy": "on-request", "model": "gpt-5-codex",
                                    "sandbox_policy": {"mode": "workspace-write"}}, 0.2),
        codex_line("event_msg", {"type": "task_started", "model_context_window": 272000}, 0.3),
        *codex_user_turn("Add a --verbose flag to the CLI", 1),
        codex_line("response_item", {"type": "reasoning", "summary": [], "encrypted_content": "gAAA" * 50}, 2),
        *codex_call("shell", json.dumps({"command": ["cat", ".agents/skills/cli-style/SKILL.md"]}), "c1",
                    "---\nname: cli-style\n---", 3),
        codex_line("response_item", {"type": "custom_tool_call", "name": "apply_patch", "call_id": "c2",
                                     "input": "*** Begin Patch\n*** End Patch"}, 4),
        codex_line("response_item", {"type": "custom_tool_call_output", "call_id": "c2", "output": "ok"}, 4.5),
        codex_line("event_msg", {"type": "token_count", "info": {"total_token_usage": {"input_tokens": 5}}}, 5),
        *codex_assistant("Added --verbose; it prints each step.", 6),
        codex_line("event_msg", {"type": "task_complete", "last_agent_message": "Added --verbose"}, 6.1),
        *codex_user_turn("perfect, thanks", 7),
        *codex_assistant("Glad it helps.", 8),
    ]


# ----- VS Code Copilot Chat -------------------------------------------------------------

def vscode_workspace(user_dir: Path, ws_hash: str, folder: str | None) -> Path:
    ws = user_dir / "workspaceStorage" / ws_hash
    (ws / "chatSessions").mkdir(parents=True, exist_ok=True)
    if folder is not None:
        (ws / "workspace.json").write_text(json.dumps({"folder": "file://" + folder}))
    return ws / "chatSessions"


def copilot_request(prompt: str, parts: list[dict[str, Any]], t: float, rid: str,
                    **extra: Any) -> dict[str, Any]:
    req = {"requestId": rid, "message": {"text": prompt, "parts": [{"kind": "text", "text": prompt}]},
           "variableData": {"variables": []}, "response": parts, "timestamp": ms(t),
           "agent": {"id": "github.copilot.editsAgent"}, "modelId": "copilot/gpt-4.1",
           "isCanceled": False}
    req.update(extra)
    return req


def md(value: str) -> dict[str, Any]:
    return {"value": value, "supportThemeIcons": False, "supportHtml": False}


def tool_inv(tool_id: str, call_id: str, message: str = "Ran tool") -> dict[str, Any]:
    return {"kind": "toolInvocationSerialized", "toolId": tool_id, "toolCallId": call_id,
            "invocationMessage": {"value": message}, "pastTenseMessage": {"value": message},
            "isConfirmed": True, "isComplete": True}


def copilot_session(sid: str, requests: list[dict[str, Any]], t0: float = 0, t1: float = 60) -> dict[str, Any]:
    return {"version": 3, "requesterUsername": "dev", "responderUsername": "GitHub Copilot",
            "initialLocation": "panel", "sessionId": sid, "creationDate": ms(t0),
            "lastMessageDate": ms(t1), "requests": requests}


def copilot_basic_requests() -> list[dict[str, Any]]:
    return [
        copilot_request("Write a unit test for parse_config", [
            md("I'll read the file first."),
            tool_inv("copilot_readFile", "call_1", "Read [](file:///w/.github/skills/testing/SKILL.md)"),
            tool_inv("copilot_createFile", "call_2", "Created test_config.py"),
            md("Added `test_config.py` with three cases."),
        ], 5, "request_1"),
        copilot_request("don't use unittest, use pytest", [md("Rewrote the tests with pytest.")], 30,
                        "request_2", vote=1),
    ]


def copilot_log_lines(session: dict[str, Any]) -> list[dict[str, Any]]:
    """The session as a 1.109+ append log: an empty snapshot, then one append per request."""
    snapshot = dict(session)
    requests = snapshot.pop("requests")
    snapshot["requests"] = []
    lines: list[dict[str, Any]] = [{"kind": 0, "v": snapshot}]
    for i, req in enumerate(requests):
        body = dict(req)
        response = body.pop("response")
        body["response"] = []
        lines.append({"kind": 2, "k": ["requests"], "v": [body]})
        lines.append({"kind": 2, "k": ["requests", i, "response"], "v": response})
    lines.append({"kind": 1, "k": ["lastMessageDate"], "v": session["lastMessageDate"]})
    return lines


# ----- Copilot CLI -----------------------------------------------------------------------

def cli_event(kind: str, data: dict[str, Any], t: float, n: int) -> dict[str, Any]:
    return {"type": kind, "data": data, "id": uid(f"ev-{n}-{t}"), "timestamp": ts(t), "parentId": None}


def copilot_cli_session(sid: str, cwd: str) -> list[dict[str, Any]]:
    return [
        cli_event("session.start", {"sessionId": sid, "version": 1, "producer": "copilot-agent",
                                    "copilotVersion": "0.0.400", "startTime": ts(0),
                                    "context": {"cwd": cwd, "gitRoot": cwd, "branch": "main"}}, 0, 1),
        cli_event("user.message", {"content": "Rename the config loader",
                                   "transformedContent": "<current_datetime>x</current_datetime>\nRename the config loader",
                                   "attachments": []}, 1, 2),
        cli_event("assistant.turn_start", {"turnId": "0"}, 1.5, 3),
        cli_event("skill.invoked", {"name": "refactoring", "path": "/x/SKILL.md"}, 1.7, 4),
        cli_event("assistant.message", {"messageId": "m1", "content": "",
                                        "toolRequests": [{"toolCallId": "tc1", "name": "edit",
                                                          "arguments": {"path": "a.py"}}]}, 2, 5),
        cli_event("tool.execution_start", {"toolCallId": "tc1", "toolName": "edit", "arguments": {}}, 2.1, 6),
        cli_event("tool.execution_complete", {"toolCallId": "tc1", "success": True,
                                              "result": {"content": "done"}}, 2.5, 7),
        cli_event("assistant.message", {"messageId": "m2", "content": "Renamed it to load_settings.",
                                        "toolRequests": []}, 3, 8),
        cli_event("assistant.turn_end", {"turnId": "0"}, 3.1, 9),
        cli_event("user.message", {"content": "no, keep the old name as an alias"}, 4, 10),
        cli_event("assistant.message", {"messageId": "m3", "content": "Kept `load_config` as an alias.",
                                        "toolRequests": []}, 5, 11),
        cli_event("session.shutdown", {}, 6, 12),
    ]


# ----- what the agent did: shell commands and files, per host ----------------------------

PATCH = ("*** Begin Patch\n*** Update File: src/cli.py\n@@\n-verbose = False\n+verbose = True\n"
         "*** Add File: tests/test_cli.py\n+def test_verbose(): ...\n*** End Patch")


def claude_actions_session(sid: str, cwd: str, entrypoint: str = "cli") -> list[dict[str, Any]]:
    """Two turns whose tool calls run shell commands and touch files in and out of ``cwd``."""
    def user(content: Any, t: float, **kw: Any) -> dict[str, Any]:
        return claude_user(content, sid=sid, cwd=cwd, t=t, entrypoint=entrypoint, **kw)

    def call(tid: str, name: str, inp: dict[str, Any], t: float) -> list[dict[str, Any]]:
        return [claude_assistant([tool_use(tid, name, inp)], sid=sid, cwd=cwd, msg_id=f"m-{tid}", t=t,
                                 entrypoint=entrypoint),
                claude_tool_result(tid, "ok", sid=sid, cwd=cwd, t=t + 0.1)]

    return [
        user("run the api tests", 0),
        *call("t1", "Bash", {"command": f"cd {cwd} && uv run pytest -q tests/test_api.py",
                             "description": "Run the API tests"}, 1),
        *call("t2", "Read", {"file_path": f"{cwd}/src/api.py"}, 2),
        *call("t3", "Edit", {"file_path": f"{cwd}/src/api.py", "old_string": "a", "new_string": "b"}, 3),
        *call("t4", "Read", {"file_path": "/etc/hosts"}, 4),
        *call("t5", "Bash", {"command": "git status --short"}, 5),
        claude_assistant([text("Fixed; the API tests pass.")], sid=sid, cwd=cwd, msg_id="m-fin1", t=6),
        user("now lint it", 7),
        *call("t6", "Bash", {"command": "ruff check . --fix && curl -H 'Authorization: Bearer "
                             "Gl.gHysW0t.slAsEjfdKdu1oRg~3tOJ3fBNiW1Lt' https://api.acme.dev/ping"}, 8),
        *call("t7", "Write", {"file_path": f"{cwd}/src/new.py", "content": "x = 1\n"}, 9),
        *call("t8", "NotebookEdit", {"notebook_path": f"{cwd}/nb/explore.ipynb", "new_source": "1"}, 10),
        *call("t9", "Grep", {"pattern": "TODO", "path": f"{cwd}/src"}, 11),
        *call("t10", "Glob", {"pattern": "**/*.py"}, 12),
        *call("t11", "Write", {"file_path": f"{cwd}/keys/ghp_R4nd0mT0k3nV4lu3F0rT3st1ngPurp0s3sXy.txt",
                               "content": "x"}, 13),
        claude_assistant([text("Lint is clean.")], sid=sid, cwd=cwd, msg_id="m-fin2", t=14),
    ]


def codex_actions_session(sid: str, cwd: str, originator: str = "codex_cli_rs") -> list[dict[str, Any]]:
    heredoc = "apply_patch <<'EOF'\n*** Begin Patch\n*** Delete File: old.py\n*** End Patch\nEOF"
    return [
        codex_meta(sid, cwd, 0, originator=originator),
        codex_line("turn_context", {"cwd": cwd, "approval_policy": "on-request", "model": "gpt-5-codex"}, 0.2),
        *codex_user_turn("make the CLI verbose and test it", 1),
        *codex_call("exec_command", json.dumps({"cmd": "pytest -q tests", "workdir": cwd}), "c1", "ok", 2),
        *codex_call("shell", json.dumps({"command": ["bash", "-lc", "cd web && npm run build"]}), "c2", "ok", 3),
        codex_line("response_item", {"type": "custom_tool_call", "name": "apply_patch", "call_id": "c3",
                                     "input": PATCH}, 4),
        codex_line("response_item", {"type": "custom_tool_call_output", "call_id": "c3", "output": "ok"}, 4.1),
        *codex_call("shell", json.dumps({"command": ["bash", "-lc", heredoc], "workdir": cwd}), "c4", "ok", 5),
        codex_line("response_item", {"type": "local_shell_call", "call_id": "c5", "status": "completed",
                                     "action": {"type": "exec", "command": ["cargo", "test", "--quiet"]}}, 6),
        codex_line("turn_context", {"cwd": cwd, "approval_policy": "on-request", "model": "gpt-5.1-codex"}, 6.5),
        *codex_assistant("Done: verbose flag added and tested.", 7),
    ]


def copilot_actions_requests(cwd: str) -> list[dict[str, Any]]:
    def uri(path: str) -> dict[str, Any]:
        return {"$mid": 1, "fsPath": path, "external": "file://" + path, "path": path, "scheme": "file"}

    term = tool_inv("run_in_terminal", "call_t1", "Running tests")
    term["toolSpecificData"] = {"kind": "terminal", "language": "sh",
                                "commandLine": {"original": "npm test -- --watch=false"},
                                "terminalCommandOutput": {"text": "PASS 12 tests"}}
    read = tool_inv("copilot_readFile", "call_r1", f"Reading [](file://{cwd}/src/a.ts#1-1), lines 1 to 40")
    read["resultDetails"] = [uri(f"{cwd}/src/a.ts")]
    replace = tool_inv("copilot_replaceString", "call_e1", "Editing b.ts")
    replace["toolSpecificData"] = {"kind": "input", "rawInput": {"filePath": f"{cwd}/src/b.ts", "oldString": "a",
                                                                   "newString": "b"}}
    outside = tool_inv("copilot_readFile", "call_r2", "Reading [](file:///home/dev/.bashrc)")
    legacy = tool_inv("run_in_terminal", "call_t2", "Running pytest")
    legacy["toolSpecificData"] = {"kind": "terminal", "command": "python -m pytest -x", "language": "sh"}
    return [
        copilot_request("fix the failing test in a.ts", [
            term, read, replace, outside,
            {"kind": "textEditGroup", "uri": uri(f"{cwd}/src/c.ts"), "edits": [[]], "done": True},
            md("Fixed a.ts, b.ts and c.ts."),
        ], 5, "request_1"),
        copilot_request("run the python tests too", [legacy, md("All green.")], 20, "request_2"),
    ]


def copilot_cli_actions_session(sid: str, cwd: str) -> list[dict[str, Any]]:
    patch_args = json.dumps({"input": PATCH})
    return [
        cli_event("session.start", {"sessionId": sid, "context": {"cwd": cwd}}, 0, 1),
        cli_event("user.message", {"content": "build and fix the docs"}, 1, 2),
        cli_event("assistant.message", {"content": "", "toolRequests": [
            {"toolCallId": "k1", "name": "bash", "arguments": {"command": f"cd {cwd} && make test"}},
            {"toolCallId": "k2", "name": "view", "arguments": {"path": f"{cwd}/README.md"}},
            {"toolCallId": "k3", "name": "edit", "arguments": {"path": "docs/index.md", "old_str": "a"}},
            {"toolCallId": "k4", "name": "apply_patch", "arguments": patch_args}]}, 2, 3),
        cli_event("tool.execution_start", {"toolCallId": "k1", "toolName": "bash",
                                           "arguments": {"command": f"cd {cwd} && make test"}}, 2.1, 4),
        cli_event("tool.execution_complete", {"toolCallId": "k1", "success": True, "result": {"content": "ok"}}, 2.2, 5),
        cli_event("assistant.message", {"content": "Docs fixed.", "toolRequests": []}, 3, 6),
    ]
