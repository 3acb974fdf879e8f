"""The stress corpus: synthetic transcripts dominated by large tool outputs, with
base64 images and one 50 MB tool-result line (the original harvest benchmark).

It measures the worst lines a harvest meets (memory must stay flat; a 50 MB line
is never held), not typical speed: real sessions are mostly small records, which
bench/corpus_realistic.py models. ``python bench/harvest.py --stress`` reports it
separately.
"""

from __future__ import annotations

import base64
import json
import random
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "sleep"))

import sleep_builders as b  # noqa: E402  (the tests' format builders, written from FORMATS.md)
from corpus_realistic import files_by_host  # noqa: E402  (bench/ is on sys.path when run)

HOST_SHARE = {"claude-code": 0.45, "codex": 0.30, "copilot-vscode": 0.15, "copilot-cli": 0.10}
MEAN_FILE_BYTES = 250_000

_CODE = (
    "def handler(event, context):\n    \"\"\"Process one record.\"\"\"\n    data = json.loads(event['body'])\n"
    "    if not data.get('id'):\n        raise ValueError(f\"missing id in {data!r}\")\n    return {'ok': True}\n"
    "PASSED tests/test_api.py::test_handler_accepts_valid_body\tFAILED tests/test_api.py::test_missing_id - "
    "AssertionError: expected 'ok'\n  File \"/work/app/api/handler.py\", line 42, in handler\n"
    "npm WARN deprecated glob@7.2.3: Glob versions prior to v9 are no longer supported\n"
)


class Gen:
    """Deterministic random content of realistic shapes."""

    def __init__(self, seed: int) -> None:
        self.r = random.Random(seed)
        self.pool = (_CODE * 400)[: 256 * 1024]
        self.words = ("fix the failing test in the parser module and keep the public api stable "
                      "add logging to the retry loop use pnpm not npm refactor the config loader "
                      "explain why the cache misses on cold start").split()

    def text(self, n: int) -> str:
        start = self.r.randrange(0, len(self.pool) - 1)
        out = []
        while n > 0:
            piece = self.pool[start:start + n]
            out.append(piece)
            n -= len(piece)
            start = 0
        return "".join(out)

    def prompt(self) -> str:
        p = " ".join(self.r.choice(self.words) for _ in range(self.r.randint(6, 40)))
        if self.r.random() < 0.03:
            p += " with token=ghp_" + "".join(self.r.choice("abcdefghijkLMNOP0123456789") for _ in range(36))
        return p

    def result_size(self) -> int:
        x = self.r.random()
        if x < 0.70:
            return self.r.randint(300, 8_000)
        if x < 0.95:
            return self.r.randint(8_000, 100_000)
        return self.r.randint(100_000, 500_000)

    def image(self) -> str:
        return base64.b64encode(self.r.randbytes(self.r.randint(200_000, 2_000_000))).decode()


def _write(path: Path, lines: list) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = "".join((x if isinstance(x, str) else b.dumps(x)) + "\n" for x in lines).encode()
    path.write_bytes(data)
    return len(data)


def gen_claude(g: Gen, home: Path, i: int, target: int) -> int:
    sid = b.uid(f"bench-claude-{i}")
    cwd = f"/work/project{i % 40}"
    t, size, lines, turn = 0.0, 0, [], 0
    while size < target:
        turn += 1
        first = len(lines)
        lines.append(b.claude_user(g.prompt(), sid=sid, cwd=cwd, t=t))
        if g.r.random() < 0.05:
            lines.append(b.claude_user([{"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                                                      "data": g.image()}},
                                        b.text("what is wrong in this screenshot?")], sid=sid, cwd=cwd, t=t))
        for k in range(g.r.randint(1, 6)):
            mid = f"msg_{i}_{turn}_{k}"
            lines.append(b.claude_assistant([{"type": "thinking", "thinking": g.text(400), "signature": "s" * 200}],
                                            sid=sid, cwd=cwd, msg_id=mid, t=t))
            lines.append(b.claude_assistant([b.tool_use(f"tu_{mid}", g.r.choice(["Bash", "Read", "Edit", "Grep"]),
                                                        {"command": g.text(80)})], sid=sid, cwd=cwd, msg_id=mid, t=t))
            lines.append(b.claude_tool_result(f"tu_{mid}", g.text(g.result_size()), sid=sid, cwd=cwd, t=t + 1))
            t += 2
        lines.append(b.claude_assistant([b.text(g.text(600))], sid=sid, cwd=cwd, msg_id=f"fin_{i}_{turn}", t=t))
        lines.append({"type": "file-history-snapshot", "messageId": b.uid(t), "snapshot": {
            "trackedFileBackups": {"a.py": {"backupFileName": "x", "version": 1, "backupTime": b.ts(t)}},
            "timestamp": b.ts(t)}, "isSnapshotUpdate": False})
        size += sum(len(b.dumps(x)) + 1 for x in lines[first:])
    return _write(b.claude_session_path(home / ".claude", cwd, sid), lines)


def gen_codex(g: Gen, home: Path, i: int, target: int) -> int:
    sid = b.uid(f"bench-codex-{i}")
    cwd = f"/work/project{i % 40}"
    meta = b.codex_meta(sid, cwd, i)
    meta["payload"]["instructions"] = g.text(12_000)
    lines: list = [meta, *b.codex_injected(cwd, i), b.codex_line("turn_context", {"cwd": cwd, "model": "gpt-5-codex"})]
    size, t, n = 0, 1.0, 0
    while size < target:
        turn = [*b.codex_user_turn(g.prompt(), t)]
        for _ in range(g.r.randint(1, 6)):
            n += 1
            turn.append(b.codex_line("response_item", {"type": "reasoning", "summary": [],
                                                       "encrypted_content": g.text(3000)}, t))
            turn += b.codex_call("shell", json.dumps({"command": ["bash", "-lc", g.text(60)]}), f"c{n}",
                                 g.text(g.result_size()), t)
            turn.append(b.codex_line("event_msg", {"type": "exec_command_end", "call_id": f"c{n}",
                                                   "aggregated_output": g.text(g.result_size() // 2)}, t))
            turn.append(b.codex_line("event_msg", {"type": "token_count", "info": {"total": n}}, t))
        turn += b.codex_assistant(g.text(500), t + 1)
        size += sum(len(b.dumps(x)) + 1 for x in turn)
        lines += turn
        t += 5
    return _write(b.codex_rollout_path(home / ".codex", sid, t=i), lines)


def _copilot_request(g: Gen, n: int, t: float) -> dict:
    parts: list = [b.md(g.text(200))]
    for k in range(g.r.randint(1, 5)):
        inv = b.tool_inv(g.r.choice(["copilot_readFile", "run_in_terminal", "copilot_findFiles"]), f"call_{n}_{k}",
                         "Read file")
        inv["resultDetails"] = {"input": g.text(200), "output": [{"type": "embed", "value": g.text(g.result_size())}]}
        parts.append(inv)
    parts.append(b.md(g.text(500)))
    return b.copilot_request(g.prompt(), parts, t, f"request_{n}")


def gen_copilot_vscode(g: Gen, home: Path, i: int, target: int) -> int:
    chat = b.vscode_workspace(home / ".config" / "Code" / "User", f"ws{i % 30}", f"/work/project{i % 40}")
    reqs, size, n = [], 0, 0
    while size < target:
        n += 1
        reqs.append(_copilot_request(g, n, n * 10.0))
        size += len(b.dumps(reqs[-1]))
    session = b.copilot_session(f"bench-vscode-{i}", reqs)
    if i % 2:
        return _write(chat / f"bench-vscode-{i}.jsonl", b.copilot_log_lines(session))
    return _write(chat / f"bench-vscode-{i}.json", [session])


def gen_copilot_cli(g: Gen, home: Path, i: int, target: int) -> int:
    sid = f"bench-cli-{i}"
    lines = [b.cli_event("session.start", {"sessionId": sid, "context": {"cwd": f"/work/project{i % 40}"}}, 0, 0)]
    size, n = 0, 0
    while size < target:
        n += 1
        ev = [b.cli_event("user.message", {"content": g.prompt()}, n, n * 10)]
        for k in range(g.r.randint(1, 5)):
            ev.append(b.cli_event("assistant.message", {"content": "", "toolRequests": [
                {"toolCallId": f"t{n}_{k}", "name": "bash", "arguments": {"command": g.text(60)}}]}, n, n * 10 + k))
            ev.append(b.cli_event("tool.execution_start", {"toolCallId": f"t{n}_{k}", "toolName": "bash"}, n, n))
            ev.append(b.cli_event("tool.execution_complete", {"toolCallId": f"t{n}_{k}", "success": True,
                                                              "result": {"content": g.text(g.result_size())}}, n, n))
        ev.append(b.cli_event("assistant.message", {"content": g.text(400), "toolRequests": []}, n, n * 10 + 9))
        size += sum(len(b.dumps(x)) + 1 for x in ev)
        lines += ev
    return _write(home / ".copilot" / "session-state" / sid / "events.jsonl", lines)


GENERATORS = {"claude-code": gen_claude, "codex": gen_codex, "copilot-vscode": gen_copilot_vscode,
              "copilot-cli": gen_copilot_cli}


def generate(home: Path, total_bytes: int, seed: int = 7, huge_line: bool = True) -> dict[str, list[Path]]:
    g = Gen(seed)
    for host, share in HOST_SHARE.items():
        budget, i = int(total_bytes * share), 0
        while budget > 0:
            target = max(4_000, min(int(g.r.lognormvariate(0, 0.9) * MEAN_FILE_BYTES * 0.05), 4_000_000))
            budget -= GENERATORS[host](g, home, i, target)
            i += 1
    if huge_line:  # one 50 MB tool-result line in a Claude transcript
        path = b.claude_session_path(home / ".claude", "/work/huge", "huge")
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "wb") as f:
            f.write(b.dumps(b.claude_user("summarise the log", sid="huge", cwd="/work/huge")).encode() + b"\n")
            f.write(b'{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t",'
                    b'"content":"' + b"log line \\n" * (5 << 20) + b'"}]},"timestamp":"2025-03-01T09:00:00.000Z"}\n')
    return files_by_host(home)
