"""A benchmark corpus shaped like real agent sessions (record shapes from FORMATS.md).

What makes it realistic, per host:

- Claude Code: many small records; every turn is a typed prompt, then steps of
  one streamed assistant message split over several records that share
  ``message.id`` (a thinking block with its signature, a short text, a
  ``tool_use``), each followed by a ``tool_result`` record whose
  ``toolUseResult`` repeats the output; outputs mostly 1-50 KB, a few of
  several hundred KB; edits and writes carry file contents; occasional pasted
  screenshots (base64, 50 KB-1 MB); file-history snapshots, attachments and
  ``system`` records; ``Task`` calls write a subagent file.
- Codex: ``session_meta`` with the base instructions, the injected
  ``<user_instructions>`` / ``<environment_context>`` messages, a
  ``turn_context`` per turn, each user turn twice (``response_item`` and
  ``event_msg``), encrypted reasoning, ``exec_command`` / ``shell`` calls with
  their outputs and ``exec_command_end`` events (output again), ``token_count``
  after each call, ``apply_patch`` with ``patch_apply_end``, preambles and the
  final answer twice (``agent_message`` and the assistant message).
- VS Code Copilot Chat: ``.json`` sessions and ``.jsonl`` append logs; requests
  with attached file contents (``variableData``), response parts (markdown,
  terminal and file tool invocations with their output, edit groups with the
  edited text), and the ``result`` metadata: the prompt as rendered for the
  model (instructions, attachments, the request; tens of thousands of tokens,
  as its ``promptTokens`` count shows in real sessions), the global context,
  code blocks, tool-call rounds and results. In logs the result arrives as its
  own ``kind: 1`` patch.
- Copilot CLI: ``events.jsonl`` with tool requests, executions and results.

Deterministic for a seed. Corpora go to a directory the caller chooses (a temp
dir by default in bench/harvest.py); nothing here is ever committed.
"""

from __future__ import annotations

import base64
import json
import random
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "sleep"))

import sleep_builders as b  # noqa: E402  (record builders written from FORMATS.md)

SHARES = {"claude-code": 0.55, "codex": 0.25, "copilot-vscode": 0.12, "copilot-cli": 0.08}

_SNIPPETS = [
    'def load_config(path: str) -> dict:\n    """Read the YAML config; empty files give {}."""\n    with open(path, '
    'encoding="utf-8") as f:\n        data = yaml.safe_load(f)\n    return data or {}\n',
    "export async function fetchUser(id: string): Promise<User> {\n  const res = await fetch(`/api/users/${id}`);\n"
    "  if (!res.ok) throw new Error(`HTTP ${res.status}`);\n  return res.json() as Promise<User>;\n}\n",
    "============================= test session starts ==============================\nplatform linux -- Python 3.12.3,"
    " pytest-8.3.2\ncollected 214 items\n\ntests/test_api.py ........F...                                      [  6%]\n",
    "FAILED tests/test_api.py::test_missing_id - AssertionError: expected 'ok' got None\n  File \"/work/app/api/handler.py"
    "\", line 42, in handler\n    raise ValueError(f\"missing id in {data!r}\")\n",
    "src/components/DataTable.tsx:118:    const rows = useMemo(() => sortRows(data, sortKey), [data, sortKey]);\n"
    "src/hooks/useSort.ts:12:export function sortRows<T>(rows: T[], key: keyof T) {\n",
    "npm WARN deprecated glob@7.2.3: Glob versions prior to v9 are no longer supported\nadded 1423 packages, and audited "
    "1424 packages in 31s\n\n187 packages are looking for funding\n",
    "commit 9fceb02d0ae598e95dc970b74767f19372d61af8\nAuthor: Dana Example <dana@example.com>\nDate:   Tue Mar 4 10:12:01"
    " 2025 +0100\n\n    fix(api): reject empty ids with a 400 instead of a 500\n",
    "   Compiling serde v1.0.210\n   Compiling tokio v1.40.0\n    Finished `test` profile [unoptimized + debuginfo] "
    "target(s) in 41.27s\n     Running unittests src/lib.rs (target/debug/deps/app-3f2a9c)\n",
    "## Summary\n\nThe failure came from `parse_config()` returning `None` for an empty file. I changed it to return `{}`"
    " and added a regression test.\n\n| file | change |\n|---|---|\n| `src/config.py` | early return |\n",
    "Traceback (most recent call last):\n  File \"/usr/lib/python3.12/asyncio/runners.py\", line 118, in run\n    return "
    "self._loop.run_until_complete(task)\nKeyError: 'user_id' — caf\u00e9 \u2713 \u4e2d\u6587\n",
]
_PROMPTS = [
    "fix the failing test in tests/test_api.py and keep the public api stable",
    "run the unit tests and list the failures", "add a --verbose flag to the CLI and document it",
    "refactor the config loader so empty files give an empty dict", "why does the cache miss on cold start?",
    "no, use pnpm not npm", "perfect, thanks", "write a migration that adds a nullable email column to users",
    "update the README with the new install steps", "review this diff and tell me what could break",
    "the build fails on CI but not locally, can you look?", "continue", "rename load_config to read_settings everywhere",
]
_COMMANDS = [
    "cd /work/app && uv run pytest -q tests/test_api.py", "git status --short", "npm run build", "ruff check . --fix",
    "cargo test --workspace", "git diff --stat", "pnpm test -- --watch=false", "ls -la src", "make lint",
    "python -m pytest -x -k config", "docker compose up -d db", "alembic revision --autogenerate -m 'add email'",
    "rg -n 'load_config' src | head -20", "go test ./...", "npx tsc --noEmit",
]
_SECRET = "export GITHUB_TOKEN=ghp_R4nd0mT0k3nV4lu3F0rT3st1ngPurp0s3sXy"


class Gen:
    """Deterministic random content of realistic shapes and sizes."""

    def __init__(self, seed: int) -> None:
        self.r = random.Random(seed)
        pieces = []
        for i in range(400):
            s = self.r.choice(_SNIPPETS)
            pieces.append(s.replace("load_config", f"load_config_{i % 37}").replace("214", str(100 + i)))
        self.pool = "".join(pieces)

    def text(self, n: int) -> str:
        start = self.r.randrange(0, len(self.pool) - 1)
        out, n = [], max(0, n)
        while n > 0:
            piece = self.pool[start:start + n]
            out.append(piece)
            n -= len(piece)
            start = 0
        return "".join(out)

    def output_size(self) -> int:
        """Tool outputs: mostly 1-50 KB (median ~2.5 KB), 2 % between 100 KB and 600 KB."""
        if self.r.random() < 0.02:
            return self.r.randint(100_000, 600_000)
        return int(min(50_000, max(150, self.r.lognormvariate(7.8, 1.1))))

    def prompt(self) -> str:
        p = self.r.choice(_PROMPTS)
        x = self.r.random()
        if x < 0.05:
            p += "\n\n```\n" + self.text(self.r.randint(2_000, 20_000)) + "\n```"  # a pasted log
        elif x < 0.07:
            p += "\n" + _SECRET
        return p

    def final(self) -> str:
        return self.text(self.r.randint(300, 4_000))

    def image(self) -> str:
        return base64.b64encode(self.r.randbytes(self.r.randint(40_000, 750_000))).decode()

    def signature(self) -> str:
        return base64.b64encode(self.r.randbytes(self.r.randint(200, 1_200))).decode()


def _write(path: Path, lines: list[Any]) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = "".join((x if isinstance(x, str) else b.dumps(x)) + "\n" for x in lines).encode()
    path.write_bytes(data)
    return len(data)


# ----- Claude Code -------------------------------------------------------------------------

_USAGE = {"input_tokens": 4, "cache_creation_input_tokens": 1834, "cache_read_input_tokens": 48211,
          "cache_creation": {"ephemeral_5m_input_tokens": 1834, "ephemeral_1h_input_tokens": 0},
          "output_tokens": 412, "service_tier": "standard"}


def _claude_step(g: Gen, sid: str, cwd: str, t: float, mid: str, tid: str, sidechain: bool) -> list[dict]:
    common = dict(sid=sid, cwd=cwd, msg_id=mid, sidechain=sidechain, slug="brisk-otter", entrypoint="cli")
    recs = []
    if g.r.random() < 0.7:
        recs.append(b.claude_assistant([{"type": "thinking", "thinking": g.text(g.r.randint(200, 3_000)),
                                         "signature": g.signature()}], t=t, **common))
    if g.r.random() < 0.5:
        recs.append(b.claude_assistant([b.text(g.text(g.r.randint(40, 400)))], t=t + 0.1, **common))
    tool = g.r.choice(["Bash", "Bash", "Read", "Read", "Edit", "Write", "Grep", "Glob", "TodoWrite"])
    path = f"{cwd}/src/module_{g.r.randint(0, 60)}.py"
    inp: dict[str, Any] = {
        "Bash": {"command": g.r.choice(_COMMANDS), "description": "Run it"},
        "Read": {"file_path": path}, "Grep": {"pattern": "load_config", "path": f"{cwd}/src", "output_mode": "content"},
        "Edit": {"file_path": path, "old_string": g.text(g.r.randint(100, 1_500)),
                 "new_string": g.text(g.r.randint(100, 1_500))},
        "Write": {"file_path": path, "content": g.text(g.r.randint(500, 12_000))},
        "Glob": {"pattern": "**/*.py"}, "TodoWrite": {"todos": [{"content": "fix it", "status": "in_progress"}]},
    }[tool]
    recs.append(b.claude_assistant([b.tool_use(tid, tool, inp)], t=t + 0.2, **common))
    for r in recs:
        r["message"]["usage"] = _USAGE
    out = g.text(g.output_size()) if tool in ("Bash", "Read", "Grep") else f"The file {path} has been updated."
    result = b.claude_tool_result(tid, out, sid=sid, cwd=cwd, t=t + 1)
    result["isSidechain"] = sidechain
    # What toolUseResult repeats depends on the tool (the whole original file for an edit).
    result["toolUseResult"] = {
        "Bash": {"stdout": out, "stderr": "", "interrupted": False, "isImage": False},
        "Read": {"type": "text", "file": {"filePath": path, "content": out, "numLines": 80, "startLine": 1,
                                          "totalLines": 80}},
        "Grep": {"mode": "content", "numFiles": 3, "filenames": [], "content": out, "numLines": 20},
        "Edit": {"filePath": path, "oldString": inp.get("old_string"), "newString": inp.get("new_string"),
                 "originalFile": g.text(g.output_size()), "structuredPatch": [{"oldStart": 1, "lines": ["-a", "+b"]}]},
        "Write": {"type": "create", "filePath": path, "content": inp.get("content"), "structuredPatch": []},
    }.get(tool, {"oldTodos": [], "newTodos": []})
    recs.append(result)
    return recs


def gen_claude(g: Gen, home: Path, i: int, target: int) -> int:
    sid = b.uid(f"rc-{i}")
    cwd = f"/work/project{i % 25}"
    lines: list[Any] = [{"type": "summary", "summary": "Fix the API tests", "leafUuid": b.uid(i)}]
    size, t, turn, written = 0, 0.0, 0, 0
    while size < target:
        turn += 1
        first = len(lines)
        content: Any = g.prompt()
        if g.r.random() < 0.03:
            content = [{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": g.image()}},
                       b.text(content)]
        lines.append(b.claude_user(content, sid=sid, cwd=cwd, t=t, entrypoint="cli"))
        lines.append({"parentUuid": b.uid(t), "isSidechain": False, "type": "attachment", "cwd": cwd,
                      "attachment": {"type": "todo_reminder", "content": g.text(300)}, "timestamp": b.ts(t)})
        for k in range(max(1, int(g.r.lognormvariate(1.5, 0.8)))):
            lines += _claude_step(g, sid, cwd, t, f"msg_{i}_{turn}_{k}", f"toolu_{i}_{turn}_{k}", False)
            t += 2
        if g.r.random() < 0.08:  # a Task call runs a subagent in its own file
            agent = f"a{turn:04x}{i:04x}"
            sub = [b.claude_user("Search the codebase for callers of load_config", sid=sid, cwd=cwd, t=t,
                                 sidechain=True, agentId=agent)]
            for k in range(g.r.randint(3, 15)):
                sub += _claude_step(g, sid, cwd, t + k, f"msg_sub_{agent}_{k}", f"toolu_sub_{agent}_{k}", True)
            sub.append(b.claude_assistant([b.text(g.final())], sid=sid, cwd=cwd, msg_id=f"fin_{agent}", t=t + 20,
                                          sidechain=True))
            written += _write(home / ".claude" / "projects" / b.claude_slug(cwd) / sid / "subagents"
                              / f"agent-{agent}.jsonl", sub)
        lines.append(b.claude_assistant([b.text(g.final())], sid=sid, cwd=cwd, msg_id=f"fin_{i}_{turn}", t=t,
                                        entrypoint="cli"))
        lines.append({"parentUuid": b.uid(t), "type": "system", "subtype": "turn_duration", "durationMs": 41000,
                      "timestamp": b.ts(t), "sessionId": sid, "cwd": cwd, "uuid": b.uid(f"{i}-{turn}")})
        lines.append({"type": "file-history-snapshot", "messageId": b.uid(t), "snapshot": {
            "trackedFileBackups": {f"src/module_{k}.py": {"backupFileName": f"{b.uid(k)[:16]}@v{turn}",
                                                          "version": turn, "backupTime": b.ts(t)} for k in range(6)},
            "messageId": b.uid(t), "timestamp": b.ts(t)}, "isSnapshotUpdate": False})
        size += sum(len(b.dumps(x)) + 1 for x in lines[first:])
        t += 30
    return written + _write(b.claude_session_path(home / ".claude", cwd, sid), lines)


# ----- Codex -------------------------------------------------------------------------------

def gen_codex(g: Gen, home: Path, i: int, target: int) -> int:
    sid = b.uid(f"rx-{i}")
    cwd = f"/work/project{i % 25}"
    meta = b.codex_meta(sid, cwd, i)
    meta["payload"]["instructions"] = g.text(14_000)
    agents_md = "<user_instructions>\n\n" + g.text(3_000) + "\n\n</user_instructions>"
    lines: list[Any] = [meta, *b.codex_injected(cwd, i)]
    lines[1]["payload"]["content"][0]["text"] = agents_md
    size, t, n = 0, 1.0, 0
    while size < target:
        turn = [b.codex_line("turn_context", {"cwd": cwd, "approval_policy": "on-request", "sandbox_policy": {
            "mode": "workspace-write", "network_access": False}, "model": "gpt-5-codex", "effort": "medium",
            "summary": "auto", "user_instructions": agents_md}, t), *b.codex_user_turn(g.prompt(), t)]
        turn.append(b.codex_line("event_msg", {"type": "task_started", "model_context_window": 272000}, t))
        for _ in range(max(1, int(g.r.lognormvariate(1.6, 0.8)))):
            n += 1
            turn.append(b.codex_line("response_item", {"type": "reasoning", "summary": [
                {"type": "summary_text", "text": g.text(200)}], "content": None,
                "encrypted_content": base64.b64encode(g.r.randbytes(g.r.randint(1_000, 6_000))).decode()}, t))
            turn.append(b.codex_line("event_msg", {"type": "agent_reasoning", "text": g.text(200)}, t))
            if g.r.random() < 0.3:
                turn.append(b.codex_line("event_msg", {"type": "agent_message", "message": g.text(150)}, t))
            out = g.text(g.output_size())
            if g.r.random() < 0.2:
                turn.append(b.codex_line("response_item", {"type": "custom_tool_call", "status": "completed",
                                                           "call_id": f"c{n}", "name": "apply_patch",
                                                           "input": b.PATCH + g.text(g.r.randint(300, 4_000))}, t))
                turn.append(b.codex_line("event_msg", {"type": "patch_apply_end", "call_id": f"c{n}", "stdout": "ok",
                                                       "changes": {f"{cwd}/src/cli.py": {"update": {
                                                           "unified_diff": g.text(3_000)}}}}, t))
                turn.append(b.codex_line("response_item", {"type": "custom_tool_call_output", "call_id": f"c{n}",
                                                           "output": "Success. Updated the following files"}, t))
            else:
                args = json.dumps({"cmd": g.r.choice(_COMMANDS), "workdir": cwd, "yield_time_ms": 10000})
                turn += b.codex_call("exec_command", args, f"c{n}", out, t)
                turn.append(b.codex_line("event_msg", {"type": "exec_command_end", "call_id": f"c{n}",
                                                       "aggregated_output": out, "exit_code": 0}, t))
            turn.append(b.codex_line("event_msg", {"type": "token_count", "info": {"total_token_usage": {
                "input_tokens": 48211 + n, "cached_input_tokens": 40000, "output_tokens": 412,
                "reasoning_output_tokens": 256, "total_tokens": 48623 + n}, "model_context_window": 272000},
                "rate_limits": {"primary": {"used_percent": 12.0, "window_minutes": 300}}}, t))
            t += 2
        turn += b.codex_assistant(g.final(), t)
        turn.append(b.codex_line("event_msg", {"type": "task_complete", "last_agent_message": "done"}, t))
        size += sum(len(b.dumps(x)) + 1 for x in turn)
        lines += turn
        t += 30
    return _write(b.codex_rollout_path(home / ".codex", sid, t=i), lines)


# ----- Copilot -----------------------------------------------------------------------------

def _copilot_request(g: Gen, cwd: str, n: int, t: float) -> dict:
    def uri(p: str) -> dict:
        return {"$mid": 1, "fsPath": p, "external": "file://" + p, "path": p, "scheme": "file"}

    parts: list[Any] = [b.md(g.text(200))]
    rounds = []
    for k in range(max(1, int(g.r.lognormvariate(1.3, 0.7)))):
        path = f"{cwd}/src/module_{g.r.randint(0, 60)}.ts"
        out = g.text(g.output_size())
        if g.r.random() < 0.4:
            inv = b.tool_inv("run_in_terminal", f"call_{n}_{k}", "Running command")
            inv["toolSpecificData"] = {"kind": "terminal", "language": "sh", "commandLine": {
                "original": g.r.choice(_COMMANDS)}, "terminalCommandOutput": {"text": out[:20_000]}}
        else:
            inv = b.tool_inv("copilot_readFile", f"call_{n}_{k}", f"Reading [](file://{path}#1-1)")
            inv["resultDetails"] = [uri(path)]
        parts.append(inv)
        rounds.append({"response": g.text(100), "toolCalls": [{"name": inv["toolId"], "id": f"call_{n}_{k}",
                                                              "arguments": json.dumps({"filePath": path})}],
                       "toolInputRetry": 0})
        if g.r.random() < 0.3:
            parts.append({"kind": "textEditGroup", "uri": uri(path), "done": True,
                          "edits": [[{"text": g.text(g.r.randint(200, 3_000)), "range": {
                              "startLineNumber": 1, "startColumn": 1, "endLineNumber": 9, "endColumn": 1}}]]})
    parts.append(b.md(g.final()))
    req = b.copilot_request(g.prompt(), parts, t, f"request_{n}")
    req["variableData"] = {"variables": [{"id": "vscode.implicit.file", "name": f"file:module_{n}.ts",
                                          "value": {"uri": uri(f"{cwd}/src/module_{n}.ts"),
                                                    "content": g.text(g.r.randint(1_000, 15_000))}}]}
    # The result metadata holds the prompt as the model saw it (instructions,
    # attached files, the request: tens of thousands of tokens) and every tool round.
    rendered = ("<instructions>\n" + g.text(g.r.randint(4_000, 12_000)) + "\n</instructions>\n<attachments>\n"
                + g.text(g.r.randint(10_000, 60_000)) + "\n</attachments>\n<userRequest>\n" + req["message"]["text"]
                + "\n</userRequest>")
    req["result"] = {"timings": {"firstProgress": 900, "totalElapsed": 21000},
                     "details": "GPT-5 mini \u2022 0x",
                     "metadata": {"promptTokens": len(rendered) // 4, "outputTokens": 900,
                                  "renderedUserMessage": [{"type": 1, "text": rendered}],
                                  "renderedGlobalContext": [{"type": 1, "text": g.text(g.r.randint(3_000, 12_000))}],
                                  "codeBlocks": [{"code": g.text(600), "language": "ts"}],
                                  "toolCallRounds": rounds, "toolCallResults": {
                                      r["toolCalls"][0]["id"]: {"content": [{"value": g.text(g.output_size() // 2)}]}
                                      for r in rounds}}}
    req["followups"] = [{"kind": "reply", "message": "Run the tests again?"}]
    return req


def gen_copilot_vscode(g: Gen, home: Path, i: int, target: int) -> int:
    cwd = f"/work/project{i % 25}"
    chat = b.vscode_workspace(home / ".config" / "Code" / "User", f"ws{i % 25}", cwd)
    reqs, size = [], 0
    while size < target:
        reqs.append(_copilot_request(g, cwd, len(reqs), len(reqs) * 60.0))
        size += len(b.dumps(reqs[-1]))
    session = b.copilot_session(f"rv-{i}", reqs)
    if i % 2:  # an append log, as VS Code 1.109+ writes; the result arrives as its own patch
        out: list[Any] = []
        added = 0
        for line in b.copilot_log_lines(session):
            if line.get("k") == ["requests"]:
                req = dict(line["v"][0])
                result = req.pop("result")
                out.append({"kind": 2, "k": ["requests"], "v": [req]})
                out.append({"kind": 1, "k": ["requests", added, "result"], "v": result})
                added += 1
            else:
                out.append(line)
        return _write(chat / f"rv-{i}.jsonl", out)
    return _write(chat / f"rv-{i}.json", [session])


def gen_copilot_cli(g: Gen, home: Path, i: int, target: int) -> int:
    sid = f"rcli-{i}"
    cwd = f"/work/project{i % 25}"
    lines: list[Any] = [b.cli_event("session.start", {"sessionId": sid, "copilotVersion": "0.0.400",
                                                      "context": {"cwd": cwd, "branch": "main"}}, 0, 0)]
    size, n = 0, 0
    while size < target:
        n += 1
        ev = [b.cli_event("user.message", {"content": g.prompt(), "transformedContent": g.text(800)}, n, n)]
        for k in range(max(1, int(g.r.lognormvariate(1.3, 0.7)))):
            call = {"toolCallId": f"t{n}_{k}", "name": "bash", "arguments": {"command": g.r.choice(_COMMANDS)}}
            ev.append(b.cli_event("assistant.message", {"content": "", "toolRequests": [call],
                                                        "reasoningText": g.text(400)}, n, n * 10 + k))
            ev.append(b.cli_event("tool.execution_start", {"toolCallId": call["toolCallId"], "toolName": "bash",
                                                           "arguments": call["arguments"]}, n, n))
            ev.append(b.cli_event("tool.execution_complete", {"toolCallId": call["toolCallId"], "success": True,
                                                              "result": {"content": g.text(g.output_size())}}, n, n))
        ev.append(b.cli_event("assistant.message", {"content": g.final(), "toolRequests": []}, n, n * 10 + 9))
        size += sum(len(b.dumps(x)) + 1 for x in ev)
        lines += ev
    return _write(home / ".copilot" / "session-state" / sid / "events.jsonl", lines)


GENERATORS = {"claude-code": gen_claude, "codex": gen_codex, "copilot-vscode": gen_copilot_vscode,
              "copilot-cli": gen_copilot_cli}
# Session sizes (bytes): lognormal around these medians, capped.
MEDIAN_SESSION = {"claude-code": 1_200_000, "codex": 900_000, "copilot-vscode": 400_000, "copilot-cli": 300_000}


def generate(home: Path, total_bytes: int, seed: int = 16) -> dict[str, list[Path]]:
    """Write a corpus of about ``total_bytes`` under ``home`` (split by :data:`SHARES`)."""
    g = Gen(seed)
    for host, share in SHARES.items():
        budget, i = int(total_bytes * share), 0
        while budget > 0:
            target = int(min(8_000_000, max(20_000, g.r.lognormvariate(0, 0.8) * MEDIAN_SESSION[host])))
            budget -= GENERATORS[host](g, home, i, min(target, budget + 20_000))
            i += 1
    return files_by_host(home)


def files_by_host(home: Path) -> dict[str, list[Path]]:
    """The transcript files of each harvest source group (``--source`` values)."""
    return {
        "claude-code": sorted((home / ".claude" / "projects").rglob("*.jsonl")),
        "codex": sorted((home / ".codex" / "sessions").rglob("*.jsonl")),
        "copilot": sorted((home / ".config").rglob("chatSessions/*.json*"))
        + sorted((home / ".copilot").rglob("*.jsonl")),
    }
