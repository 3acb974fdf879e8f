"""Fake `claude`, `codex` and `copilot` executables that speak the hosts' documented streaming
formats *and act* in their working directory, plus fake `pnpm` and `npm`.

Formats (the fakes follow them; they never set the contract):

Where the real CLIs differ from the documents, the fakes follow what the real ones printed
(Claude Code 2.1.197 and Codex 0.171.0 driven by tests/sleep/model_endpoint.py): a denied
Bash command's result is "This command requires approval" with ``tool_use_result``
"Error: ..."; Codex reports commands as ``/bin/bash -c '...'`` (``-lc`` with a login shell).
The nights with the real binaries are tests/sleep/test_replay_night_real.py.

- Claude Code `claude -p --output-format stream-json --verbose` (prompt on stdin):
  https://code.claude.com/docs/en/headless ("Stream responses") and the Agent SDK's
  message types: a `system` `init` line, `assistant` messages with `text` and
  `tool_use` {id, name, input} blocks, `user` messages with `tool_result`
  {tool_use_id, content, is_error} blocks (a failed Bash command's content starts
  with `Exit code N`), and a final `result` line {subtype, is_error, result, usage,
  total_cost_usd, permission_denials [{tool_name, tool_use_id, tool_input}]}.
  Permission rules `Bash(prefix:*)` in `--allowedTools` (https://code.claude.com/docs/en/iam,
  "Tool-specific permission rules"); in print mode a tool use no rule allows is denied.
  What the real `claude` 2.1.197 printed against the scripted endpoint (tests/sleep/model_endpoint.py),
  and the fake now prints too: a refused command's result is `is_error: true` with "This command
  requires approval" and the tool use is listed in `permission_denials`; every `user` event carries
  the tool's own `tool_use_result` beside the message (a string "Error: ..." for a failure, for Bash
  {stdout, stderr, interrupted}, for Write {type: create|update, filePath}); a successful Write
  result has no `is_error` key at all; the init event lists the tools that exist (`MultiEdit` is
  silently dropped).
- Codex `codex exec --json` (prompt on stdin with `-`): openai/codex docs/exec.md and
  PR 4525: `thread.started`, `turn.started`, `item.started`/`item.completed` with items
  `command_execution` {command, aggregated_output, exit_code, status} and
  `agent_message` {text}, `turn.completed` {usage: input_tokens, cached_input_tokens,
  output_tokens}. As the real `codex` 0.171.0 printed them: the command is the shell line
  Codex ran, `/bin/bash -lc '<command>'` (a one-word command unquoted), a failed one has
  `status: "failed"` with its exit code (127 and bash's "command not found" for a missing
  program); a file the agent wrote is a `file_change` item whose paths are absolute.
- Copilot CLI `copilot -p <prompt> --output-format json` (prompt in argv): GitHub's
  "Running GitHub Copilot CLI programmatically"
  (https://docs.github.com/en/copilot/how-tos/copilot-cli/automate-copilot-cli/run-cli-programmatically)
  and the session-event schema the CLI runtime emits, github/copilot-sdk
  `nodejs/src/generated/session-events.ts` (generated from session-events.schema.json):
  every line an event {id, timestamp, parentId, type, data}; `user.message` {content},
  `assistant.turn_start`/`assistant.turn_end` {turnId}, `assistant.message`
  {messageId, content, toolRequests [{toolCallId, name, arguments}]},
  `tool.execution_start` {toolCallId, toolName, arguments}, `tool.execution_complete`
  {toolCallId, success, result {content}, error {message, code?}}; `--allow-tool=shell(<cmd>)`
  approves a command by its program, `--deny-tool=shell[(<cmd>)]` refuses it, and with
  `--no-ask-user` in prompt mode anything not approved is refused. A refused command is
  `permission.requested` {requestId, permissionRequest {kind: "shell", fullCommandText,
  intention, commands [{identifier, readOnly}], possiblePaths, possibleUrls,
  hasWriteFileRedirection, canOfferSessionApproval, toolCallId}}, then `permission.completed`
  {requestId, toolCallId, result {kind: "denied-by-rules", rules [{kind, argument}]} or
  {kind: "denied-no-approval-rule-and-could-not-request-from-user"}} (the SDK's
  PermissionResult; docs/features/streaming-events.md), then `tool.execution_complete` with
  success false and, for the unapproved one, the CLI's own message "Permission denied and
  could not request permission from user" (github/copilot-cli issues 549 and 4433; the SDK's
  e2e permissions test matches "Permission denied"); the rule-denied message is the fake's
  own wording. Neither carries `error.code` (the schema makes it optional). Token counts go
  to `--usage-output-file` as {modelMetrics: {<model>: {usage: {inputTokens, outputTokens}}}}
  (the shape the copilot backend reads; GitHub does not document it as a stable contract).

How they act (deterministic, from the installed skill's text): when the skill says
"pnpm" they run `pnpm install`, else `npm install`. A prompt with lines
`ATTACK: <shell command>` runs those commands instead (the sandbox tests).
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

_COMMON = r'''
import json, os, re, subprocess, sys

def emit(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()

def skill_text(prompt):
    m = re.search(r"installed at (\S+?)\)", prompt)
    if not m:
        return ""
    try:
        return open(m.group(1), encoding="utf-8").read()
    except OSError:
        return ""

def plan(prompt):
    attacks = [line.split("ATTACK:", 1)[1].strip() for line in prompt.splitlines() if "ATTACK:" in line]
    if attacks:
        return attacks
    return ["pnpm install"] if "pnpm" in skill_text(prompt).lower() else ["npm install"]

def run(command):
    done = subprocess.run(command, shell=True, capture_output=True, text=True, timeout=60)
    return done.returncode, (done.stdout + done.stderr)[-2000:]
'''

CLAUDE = _COMMON + r'''
argv = sys.argv[1:]
if "-p" not in argv or argv[argv.index("--output-format") + 1] != "stream-json" or "--verbose" not in argv:
    sys.stderr.write("fake claude: needs -p --output-format stream-json --verbose\n")
    sys.exit(2)
allowed = argv[argv.index("--allowedTools") + 1].split(",") if "--allowedTools" in argv else []
prefixes = [a[5:-3] for a in allowed if a.startswith("Bash(") and a.endswith(":*)")]
prompt = sys.stdin.read()
sid = "5b3c2f9e-0d4a-4c53-9d7e-1f2a3b4c5d6e"
KNOWN = {"Bash", "Edit", "Glob", "Grep", "Read", "Skill", "Write", "NotebookEdit", "WebFetch", "WebSearch"}
tools = [t for t in (argv[argv.index("--tools") + 1].split(",") if "--tools" in argv else []) if t in KNOWN]
emit({"type": "system", "subtype": "init", "session_id": sid, "cwd": os.getcwd(), "model": "claude-sonnet-4-6",
      "tools": sorted(tools), "mcp_servers": [], "permissionMode": "default", "claude_code_version": "2.1.197"})
def user(block, extra):
    emit({"type": "user", "session_id": sid, "message": {"role": "user", "content": [block]}, "tool_use_result": extra})
denials, ran = [], []
for n, command in enumerate(plan(prompt)):
    tid = f"toolu_{n:02d}"
    emit({"type": "assistant", "session_id": sid, "message": {"role": "assistant", "content": [
        {"type": "tool_use", "id": tid, "name": "Bash", "input": {"command": command, "description": command}}]}})
    if "Bash" not in tools:
        user({"type": "tool_result", "content": "<tool_use_error>Error: No such tool available: Bash</tool_use_error>",
              "is_error": True, "tool_use_id": tid}, "Error: No such tool available: Bash")
        continue
    if not any(command == p or command.startswith(p + " ") for p in prefixes):
        denials.append({"tool_name": "Bash", "tool_use_id": tid, "tool_input": {"command": command,
                                                                                "description": command}})
        user({"type": "tool_result", "content": "This command requires approval", "is_error": True,
              "tool_use_id": tid}, "Error: This command requires approval")
        continue
    code, out = run(command)
    ran.append(command)
    if code == 0:
        user({"tool_use_id": tid, "type": "tool_result", "content": out or "(no output)", "is_error": False},
             {"stdout": out, "stderr": "", "interrupted": False, "isImage": False})
    else:
        user({"type": "tool_result", "content": f"Exit code {code}\n{out}", "is_error": True, "tool_use_id": tid},
             f"Error: Exit code {code}\n{out}")
answer = "Ran " + (", ".join(ran) or "nothing") + "."
emit({"type": "assistant", "session_id": sid, "message": {"role": "assistant", "content": [{"type": "text", "text": answer}]}})
emit({"type": "result", "subtype": "success", "is_error": False, "result": answer, "session_id": sid,
      "num_turns": 2, "duration_ms": 10, "total_cost_usd": 0.001, "permission_denials": denials,
      "stop_reason": "end_turn", "terminal_reason": "completed",
      "modelUsage": {"claude-sonnet-4-6": {"inputTokens": 40, "outputTokens": 9}},
      "usage": {"input_tokens": 40, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 9}})
'''

CODEX = _COMMON + r'''
argv = sys.argv[1:]
if argv[:2] != ["exec", "--json"] or argv[-1] != "-":
    sys.stderr.write("fake codex: needs exec --json ... -\n")
    sys.exit(2)
prompt = sys.stdin.read()
emit({"type": "thread.started", "thread_id": "0199a213-81c0-7800-8aa1-bbab2a035a53"})
emit({"type": "turn.started"})
ran = []
shell = "/bin/bash -c" if "allow_login_shell=false" in argv else "/bin/bash -lc"  # as Codex 0.171 reports it
for n, command in enumerate(plan(prompt)):
    import shlex
    item = {"id": f"item_{n}", "type": "command_execution", "command": f"{shell} " + shlex.quote(command),
            "aggregated_output": "", "exit_code": None, "status": "in_progress"}
    emit({"type": "item.started", "item": item})
    code, out = run(command)
    ran.append(command)
    emit({"type": "item.completed", "item": {**item, "aggregated_output": out, "exit_code": code,
                                             "status": "completed" if code == 0 else "failed"}})
answer = "Ran " + ", ".join(ran) + "."
emit({"type": "item.completed", "item": {"id": "item_z", "type": "agent_message", "text": answer}})
emit({"type": "turn.completed", "usage": {"input_tokens": 50, "cached_input_tokens": 10, "output_tokens": 8}})
'''

COPILOT = _COMMON + r'''
import itertools, uuid
from datetime import datetime, timezone
argv = sys.argv[1:]
if "-p" not in argv or argv[argv.index("--output-format") + 1] != "json" or "--no-ask-user" not in argv:
    sys.stderr.write("fake copilot: needs -p PROMPT --output-format json --no-ask-user\n")
    sys.exit(2)
prompt = argv[argv.index("-p") + 1]
approved = [a[len("--allow-tool=shell("):-1] for a in argv if a.startswith("--allow-tool=shell(") and a.endswith(")")]
refused = [a[len("--deny-tool=shell("):-1] for a in argv if a.startswith("--deny-tool=shell(") and a.endswith(")")]
everything = "--allow-all-tools" in argv
usage_file = next((a.split("=", 1)[1] for a in argv if a.startswith("--usage-output-file=")), None)
last = [None]
def event(kind, data):
    eid = str(uuid.uuid4())
    emit({"id": eid, "timestamp": datetime.now(timezone.utc).isoformat(), "parentId": last[0], "type": kind, "data": data})
    last[0] = eid
event("user.message", {"content": prompt[:200]})
event("assistant.turn_start", {"turnId": "0"})
ran = []
for n, command in enumerate(plan(prompt)):
    cid = f"call_{n:02d}"
    args = {"command": command, "description": "run " + command.split()[0]}
    event("assistant.message", {"messageId": f"m{n}", "content": "", "toolRequests": [
        {"toolCallId": cid, "name": "bash", "arguments": args, "type": "function"}]})
    event("tool.execution_start", {"toolCallId": cid, "toolName": "bash", "arguments": args})
    program = command.split()[0] if command.split() else ""
    by_rule = "--deny-tool=shell" in argv or program in refused
    if by_rule or not (everything or program in approved):
        rid = f"perm_{n:02d}"
        event("permission.requested", {"requestId": rid, "permissionRequest": {
            "kind": "shell", "fullCommandText": command, "intention": args["description"],
            "commands": [{"identifier": program, "readOnly": False}], "possiblePaths": [], "possibleUrls": [],
            "hasWriteFileRedirection": ">" in command, "canOfferSessionApproval": False, "toolCallId": cid}})
        rule = {"kind": "shell", "argument": None if "--deny-tool=shell" in argv else program}
        result = ({"kind": "denied-by-rules", "rules": [rule]} if by_rule
                  else {"kind": "denied-no-approval-rule-and-could-not-request-from-user"})
        event("permission.completed", {"requestId": rid, "toolCallId": cid, "result": result})
        message = (f"The tool call was denied by the rules: shell({program})" if by_rule
                   else "Permission denied and could not request permission from user")
        event("tool.execution_complete", {"toolCallId": cid, "success": False, "error": {"message": message}})
        continue
    code, out = run(command)
    ran.append(command)
    done = {"toolCallId": cid, "success": code == 0, "result": {"content": out or "(no output)"}}
    if code != 0:
        done["error"] = {"message": f"exit code {code}"}
    event("tool.execution_complete", done)
answer = "Ran " + (", ".join(ran) or "nothing") + "."
event("assistant.message", {"messageId": "mz", "content": answer, "toolRequests": []})
event("assistant.turn_end", {"turnId": "0"})
if usage_file:
    with open(usage_file, "w") as fh:
        json.dump({"modelMetrics": {"gpt-5-mini": {"usage": {"inputTokens": 60, "outputTokens": 7}}}}, fh)
'''

PACKAGE_MANAGER = r'''
import os, sys
name = os.path.basename(sys.argv[0])
lock = {"pnpm": "pnpm-lock.yaml", "npm": "package-lock.json"}[name]
os.makedirs("node_modules", exist_ok=True)
open(os.path.join("node_modules", f".installed-by-{name}"), "w").write(" ".join(sys.argv[1:]) + "\n")
open(lock, "a").write(f"# {name} {' '.join(sys.argv[1:])}\n")
print(f"{name}: installed")
'''


def install(bin_dir: Path) -> Path:
    """Write the fakes into ``bin_dir`` (executable, run by this interpreter) and return it."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    for name, body in (("claude", CLAUDE), ("codex", CODEX), ("copilot", COPILOT), ("pnpm", PACKAGE_MANAGER),
                       ("npm", PACKAGE_MANAGER)):
        path = bin_dir / name
        path.write_text(f"#!{sys.executable}\n{body}", encoding="utf-8")
        path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return bin_dir


def on_path(monkeypatch, bin_dir: Path) -> None:
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
