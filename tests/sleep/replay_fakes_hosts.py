"""Fake `gemini`, `opencode` and `cursor-agent` that speak the hosts' documented streaming
formats *and act* in their working directory (the pattern of :mod:`replay_fakes`, whose
helpers and fake `pnpm`/`npm` they share). The formats and permission rules they follow
(they never set the contract):

- Gemini CLI `gemini -p <prompt> --output-format stream-json`
  (https://geminicli.com/docs/cli/headless/): `init`, `tool_use` {tool_name, tool_id,
  parameters}, `tool_result` {tool_id, status, output | error}, `message`, `result`
  {status, stats}. A `run_shell_command` runs only when `--allowed-tools` names
  `run_shell_command(<prefix>)` for it; headless mode cannot confirm anything else
  (https://geminicli.com/docs/reference/tools/, "Automatic execution and security").
  As the real `gemini` 0.61.0 printed it against the scripted endpoint: `--allowed-tools`
  takes one (comma-separated) value, a second one is read as a positional prompt and refused;
  a refused command is `status: "error"` with `error.type: "policy_violation"` ("Tool
  execution denied by policy."); a command that ran is `success` whatever its exit code,
  and the stream carries no exit code.
- OpenCode `opencode run --format json`, prompt on stdin: `step_start`, `tool_use`
  {part: tool, callID, state {status, input, output | error, metadata.exit}}, `text`,
  `step_finish`; `bash` permission rules from `OPENCODE_CONFIG_CONTENT`, the last
  matching wildcard pattern winning (https://opencode.ai/docs/permissions/).
- Cursor `cursor-agent -p --output-format stream-json <prompt>`
  (https://cursor.com/docs/cli/reference/output-format): `system` init, `tool_call`
  started/completed {shellToolCall {args, result.success {exitCode, stdout, stderr}}},
  `assistant`, `result`; commands run only with `--force` (print mode asks nobody).
"""

from __future__ import annotations

import stat
import sys
from pathlib import Path

import replay_fakes

GEMINI = replay_fakes._COMMON + r'''
argv = sys.argv[1:]
prompt = argv[argv.index("-p") + 1]
allowed = []
if "--allowed-tools" in argv:  # one value per flag (comma-separated), as gemini 0.61 parses it
    value = argv[argv.index("--allowed-tools") + 1]
    following = argv[argv.index("--allowed-tools") + 2:]
    if following and not following[0].startswith("-"):
        sys.stderr.write("Cannot use both a positional prompt and the --prompt (-p) flag together\n")
        sys.exit(1)
    allowed = value.split(",")
prefixes = [a[len("run_shell_command("):-1] for a in allowed if a.startswith("run_shell_command(")]
emit({"type": "init", "timestamp": "t", "session_id": "s", "model": "gemini-2.5-pro"})
ran = []
for n, command in enumerate(plan(prompt)):
    tid = f"run_shell_command-{n}"
    emit({"type": "tool_use", "timestamp": "t", "tool_name": "run_shell_command", "tool_id": tid,
          "parameters": {"command": command}})
    if any(command == p or command.startswith(p + " ") for p in prefixes):
        code, out = run(command)
        ran.append(command)
        # gemini 0.61: no exit code in the stream, and a failed command is a success too
        emit({"type": "tool_result", "timestamp": "t", "tool_id": tid, "status": "success", "output": out.strip()})
    else:
        emit({"type": "tool_result", "timestamp": "t", "tool_id": tid, "status": "error",
              "output": "Tool execution denied by policy.",
              "error": {"type": "policy_violation", "message": "Tool execution denied by policy."}})
answer = "Ran " + (", ".join(ran) or "nothing") + "."
emit({"type": "message", "timestamp": "t", "role": "assistant", "content": answer, "delta": True})
emit({"type": "result", "timestamp": "t", "status": "success",
      "stats": {"total_tokens": 9, "input_tokens": 6, "output_tokens": 3, "duration_ms": 5, "tool_calls": 1}})
'''

OPENCODE = replay_fakes._COMMON + r'''
import fnmatch
prompt = sys.stdin.read()
rules = json.loads(os.environ.get("OPENCODE_CONFIG_CONTENT") or "{}").get("permission", {}).get("bash", "ask")
def decision(command):
    if isinstance(rules, str):
        return rules
    found = "ask"
    for pattern, action in rules.items():
        if fnmatch.fnmatchcase(command, pattern):
            found = action
    return found
def ev(kind, part):
    emit({"type": kind, "timestamp": 1, "sessionID": "ses_x", "part": part})
ev("step_start", {"type": "step-start"})
ran = []
for n, command in enumerate(plan(prompt)):
    if decision(command) == "allow":
        code, out = run(command)
        ran.append(command)
        state = {"status": "completed", "input": {"command": command}, "output": out, "metadata": {"exit": code}}
    else:
        state = {"status": "error", "input": {"command": command},
                 "error": "The user has specified a rule which prevents you from using this specific tool call."}
    ev("tool_use", {"type": "tool", "tool": "bash", "callID": f"call_{n}", "state": state})
ev("step_finish", {"type": "step-finish", "reason": "tool-calls", "tokens": {"input": 5, "output": 2}})
ev("step_start", {"type": "step-start"})
ev("text", {"type": "text", "text": "Ran " + (", ".join(ran) or "nothing") + "."})
ev("step_finish", {"type": "step-finish", "reason": "stop", "tokens": {"input": 5, "output": 2}, "cost": 0})
'''

CURSOR = replay_fakes._COMMON + r'''
argv = sys.argv[1:]
prompt = argv[-1]
force = "--force" in argv
emit({"type": "system", "subtype": "init", "session_id": "s", "model": "Claude 4 Sonnet", "cwd": os.getcwd()})
ran = []
for n, command in enumerate(plan(prompt)):
    call = {"args": {"command": command}}
    emit({"type": "tool_call", "subtype": "started", "call_id": f"c{n}", "tool_call": {"shellToolCall": call}})
    if force:
        code, out = run(command)
        ran.append(command)
        result = {"success": {"command": command, "exitCode": code, "stdout": out, "stderr": ""}}
    else:
        result = {"rejected": {"command": command, "reason": "not approved"}}
    emit({"type": "tool_call", "subtype": "completed", "call_id": f"c{n}",
          "tool_call": {"shellToolCall": {**call, "result": result}}})
answer = "Ran " + (", ".join(ran) or "nothing") + "."
emit({"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": answer}]}})
emit({"type": "result", "subtype": "success", "is_error": False, "result": answer, "session_id": "s"})
'''


def install(bin_dir: Path) -> Path:
    """The three fakes and :mod:`replay_fakes`' `pnpm`/`npm` in ``bin_dir``."""
    replay_fakes.install(bin_dir)
    for name, body in (("gemini", GEMINI), ("opencode", OPENCODE), ("cursor-agent", CURSOR)):
        path = bin_dir / name
        path.write_text(f"#!{sys.executable}\n{body}", encoding="utf-8")
        path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return bin_dir
