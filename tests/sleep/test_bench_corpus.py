"""The realistic benchmark corpus has the record shapes it claims (bench/corpus_realistic.py)."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

from sleep_testutil import Homes, run

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import corpus_realistic  # noqa: E402


def _records(paths: list[Path]) -> list[dict]:
    return [json.loads(line) for p in paths if p.suffix == ".jsonl" for line in p.read_text().splitlines()]


def test_corpus_has_every_record_shape_and_harvests_cleanly(homes: Homes) -> None:
    files = corpus_realistic.generate(homes.home, 10_000_000, seed=5)

    claude = _records(files["claude-code"])
    kinds = Counter(r["type"] for r in claude)
    assert {"user", "assistant", "attachment", "system", "summary", "file-history-snapshot"} <= set(kinds)
    blocks = Counter(b["type"] for r in claude if r["type"] in ("user", "assistant")
                     and isinstance(r["message"]["content"], list) for b in r["message"]["content"])
    assert {"thinking", "text", "tool_use", "tool_result"} <= set(blocks)
    assert all(b.get("signature") for r in claude if r["type"] == "assistant"
               for b in r["message"]["content"] if b["type"] == "thinking")
    ids = Counter(r["message"]["id"] for r in claude if r["type"] == "assistant")
    assert max(ids.values()) >= 3  # one streamed message over several records
    assert any("subagents" in p.parts for p in files["claude-code"])
    results = [len(json.dumps(r)) for r in claude if r["type"] == "user" and "toolUseResult" in r]
    assert sum(1_000 <= n <= 50_000 for n in results) > len(results) / 2  # mostly 1-50 KB

    codex = _records(files["codex"])
    shapes = Counter((r["type"], r["payload"].get("type"), r["payload"].get("role")) for r in codex)
    for shape in [("session_meta", None, None), ("turn_context", None, None), ("event_msg", "user_message", None),
                  ("response_item", "message", "user"), ("response_item", "reasoning", None),
                  ("response_item", "function_call", None), ("response_item", "function_call_output", None),
                  ("event_msg", "exec_command_end", None), ("event_msg", "token_count", None),
                  ("response_item", "custom_tool_call", None), ("event_msg", "agent_message", None),
                  ("response_item", "message", "assistant")]:
        assert shapes[shape], shape
    assert shapes[("response_item", "message", "user")] > shapes[("event_msg", "user_message", None)]  # doubled
    assert any("<environment_context>" in json.dumps(r) for r in codex)

    copilot = files["copilot"]
    assert any(p.suffix == ".json" for p in copilot) and any(p.parent.name == "chatSessions" and p.suffix == ".jsonl"
                                                             for p in copilot)
    vscode = [json.loads(p.read_text()) for p in copilot if p.suffix == ".json"]
    parts = Counter(part.get("kind") for s in vscode for req in s["requests"] for part in req["response"])
    assert {"toolInvocationSerialized", "textEditGroup"} <= set(parts)
    assert all(req["result"]["metadata"]["renderedUserMessage"] for s in vscode for req in s["requests"])
    logs = _records([p for p in copilot if "chatSessions" in p.parts])
    assert any(r.get("k", [None])[-1] == "result" for r in logs)
    cli = Counter(r["type"] for r in _records([p for p in copilot if p.name == "events.jsonl"]))
    assert {"session.start", "user.message", "assistant.message", "tool.execution_complete"} <= set(cli)

    report = run()
    assert report.skipped == {} and report.sessions_new > 5
    assert report.lines_skipped_undecoded > report.lines_total / 3
    assert report.actions["shell_commands"] > 0 and report.actions["files"] > 0
