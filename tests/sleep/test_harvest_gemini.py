"""Gemini CLI chats under ``~/.gemini/tmp/<project>/chats/`` (issue 22 §2, harvest only).

Fixtures are hand-written in the shape Gemini CLI writes (its docs, "Chat
Recording": every conversation is saved to ``~/.gemini/tmp/<project_hash>/chats``;
session JSON ``{sessionId, projectHash, startTime, lastUpdated, messages}`` with
``user`` / ``gemini`` messages and ``toolCalls`` ``{id, name, args, result, status,
timestamp}``; ``projects.json`` ``{"projects": {"<path>": "<label>"}}`` in newer
versions; ``.jsonl`` chats with a header line).
"""

from __future__ import annotations

import json
from pathlib import Path

import sleep_builders as b
import pytest
from sleep_testutil import Homes, run

from sleep.index import Index
from sleep.harvest.sources.gemini_cli import project_hash

CWD = "/work/garden"


@pytest.fixture
def gemini(homes: Homes, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GEMINI_CLI_HOME", str(homes.home))
    return homes.home / ".gemini"


def _messages() -> list[dict]:
    return [
        {"id": "m1", "timestamp": b.ts(1), "type": "user", "content": [{"text": "add a watering schedule page"}]},
        {"id": "m2", "timestamp": b.ts(5), "type": "gemini", "content": "", "model": "gemini-2.5-pro",
         "thoughts": [{"subject": "Plan", "description": "...", "timestamp": b.ts(2)}],
         "toolCalls": [
             {"id": "t1", "name": "run_shell_command", "args": {"command": "npm run test -- --watch=false",
                                                               "directory": CWD},
              "status": "success", "timestamp": b.ts(3),
              "result": [{"functionResponse": {"id": "t1", "name": "run_shell_command",
                                               "response": {"output": "ok"}}}]},
             {"id": "t2", "name": "write_file", "args": {"file_path": f"{CWD}/src/schedule.tsx", "content": "x"},
              "status": "success", "timestamp": b.ts(4)},
             {"id": "t3", "name": "activate_skill", "args": {"name": "react-pages"}, "status": "success"}]},
        {"id": "m3", "timestamp": b.ts(6), "type": "gemini", "content": "Added the schedule page.",
         "model": "gemini-2.5-flash"},
        {"id": "m4", "timestamp": b.ts(7), "type": "user", "content": "/stats"},
        {"id": "m5", "timestamp": b.ts(8), "type": "user", "content": "no, use the existing calendar component"},
        {"id": "m6", "timestamp": b.ts(9), "type": "gemini", "content": "Switched to Calendar."},
    ]


def _check(s) -> None:
    assert s.project_dir == CWD
    assert [p.text for p in s.prompts] == ["add a watering schedule page", "no, use the existing calendar component"]
    assert s.finals == ["Added the schedule page.", "Switched to Calendar."]
    assert s.prompts[0].shell == ["npm run test"]
    assert s.prompts[0].files == ["src/schedule.tsx"]
    assert s.skills == {"react-pages": 1}
    assert s.models == ["gemini-2.5-pro", "gemini-2.5-flash"]
    assert s.commands == {"stats": 1}
    assert [f.kind for f in s.feedback] == ["correction"]
    assert (s.started_at, s.ended_at) == (b.ts(0), b.ts(9))


def _sessions():
    with Index.open() as idx:
        return idx.sessions(host="gemini-cli")


def test_hash_folder_json_chat(gemini: Path) -> None:
    chats = gemini / "tmp" / project_hash(CWD) / "chats"
    chats.mkdir(parents=True)
    (chats / "session-2025-03-01T09-00-abcd1234.json").write_text(json.dumps({
        "sessionId": "g1", "projectHash": project_hash(CWD), "startTime": b.ts(0), "lastUpdated": b.ts(9),
        "messages": _messages()}, indent=2))
    (gemini / "projects.json").write_text(json.dumps({"projects": {CWD: "garden"}}))
    report = run(source="gemini")
    [s] = _sessions()
    _check(s)
    assert report.sources["gemini-cli"].sessions_new == 1


def test_labelled_folder_jsonl_chat_and_project_scope(gemini: Path) -> None:
    chats = gemini / "tmp" / "garden" / "chats"
    chats.mkdir(parents=True)
    header = {"sessionId": "g2", "projectHash": project_hash(CWD), "startTime": b.ts(0), "kind": "main"}
    b.write_jsonl(chats / "session-2025-03-01T09-00-ef567890.jsonl", [header, *_messages(),
                                                                      {"lastUpdated": b.ts(9)}])
    (gemini / "projects.json").write_text(json.dumps({"projects": {CWD: "garden"}}))
    assert run(source="gemini", project="/work/other").sources["gemini-cli"].sessions_new == 0
    assert run(source="gemini", project=CWD).sources["gemini-cli"].sessions_new == 1
    [s] = _sessions()
    _check(s)


def test_unmapped_hash_folder_is_in_scope_of_its_own_project_only(gemini: Path) -> None:
    chats = gemini / "tmp" / project_hash(CWD) / "chats"
    chats.mkdir(parents=True)
    (chats / "session-x.json").write_text(json.dumps({"sessionId": "g3", "startTime": b.ts(0),
                                                      "messages": _messages()}))
    assert run(source="gemini", project="/work/other").files_out_of_scope == 1
    assert run(source="gemini", project=CWD).sessions_new == 1


def test_bad_chat_file_is_counted(gemini: Path) -> None:
    chats = gemini / "tmp" / "garden" / "chats"
    chats.mkdir(parents=True)
    (chats / "session-bad.json").write_text("{not json")
    report = run(source="gemini")
    assert report.sessions_new == 0 and report.skipped_lines == {"invalid_json": 1}


def test_a_gemini_3_session_that_delegated_and_failed_tools(gemini: Path) -> None:
    # The shape of a genuine Gemini CLI session of April 2026 (gemini-3-flash-preview; pasted, with its
    # texts elided, in a public project's notes on message types): "kind": "main"; user content as a
    # list, answers as a string with "thoughts"; write_file calls that failed ("status": "error", the
    # error inside result[].functionResponse.response); a call delegated to the `generalist` subagent
    # whose resultDisplay is an object ({isSubagentProgress, agentName, recentActivity: [...]}) in which
    # the subagent's refused activate_skill ({"skill_name": ...}) appears. Our own texts below.
    failed = {"functionResponse": {"id": "w1", "name": "write_file",
                                   "response": {"error": 'Tool "write_file" not found.'}}}
    messages = [
        {"id": "u1", "timestamp": b.ts(1), "type": "user", "content": [{"text": "make two greeting files"}]},
        {"id": "g1", "timestamp": b.ts(2), "type": "gemini", "content": "I will write two files.",
         "thoughts": [{"subject": "Setup", "description": "...", "timestamp": b.ts(2)}],
         "tokens": {"input": 10, "output": 5, "cached": 0, "thoughts": 3, "tool": 0, "total": 18},
         "model": "gemini-3-flash-preview",
         "toolCalls": [
             {"id": "w1", "name": "write_file", "args": {"file_path": "greet.txt", "content": "hi\n"},
              "result": [failed], "status": "error", "timestamp": b.ts(2), "resultDisplay": "not found",
              "description": "", "displayName": "write_file", "renderOutputAsMarkdown": False}]},
        {"id": "g2", "timestamp": b.ts(3), "type": "gemini", "content": "Delegating.", "thoughts": [],
         "model": "gemini-3-flash-preview",
         "toolCalls": [
             {"id": "d1", "name": "generalist", "args": {"request": "Create greet.txt"},
              "result": [{"functionResponse": {"id": "d1", "name": "generalist",
                                               "response": {"output": "Subagent 'generalist' failed."}}}],
              "status": "success", "timestamp": b.ts(3),
              "resultDisplay": {"isSubagentProgress": True, "agentName": "generalist", "state": "error",
                                "recentActivity": [
                                    {"id": "a1", "type": "tool_call", "content": "activate_skill",
                                     "displayName": "activate_skill", "args": '{"skill_name":"greeter"}',
                                     "status": "error"}]},
              "description": "Delegating to agent 'generalist'", "displayName": "Generalist Agent"},
             {"id": "s1", "name": "activate_skill", "args": {"name": "file-maker"}, "status": "error"},
             {"id": "s2", "name": "activate_skill", "args": {"skill_name": "greeter"}, "status": "success"}]},
    ]
    chats = gemini / "tmp" / project_hash(CWD) / "chats"
    chats.mkdir(parents=True)
    head = {"sessionId": "g3", "projectHash": project_hash(CWD), "startTime": b.ts(0), "lastUpdated": b.ts(3)}
    (chats / "session-2026-04-01T11-11-g3.json").write_text(
        json.dumps({**head, "messages": messages, "kind": "main"}, indent=2))
    (chats / "session-2026-04-01T11-12-g4.json").write_text(json.dumps(
        {**head, "sessionId": "g4", "kind": "subagent",
         "messages": [{"id": "x1", "timestamp": b.ts(4), "type": "user", "content": "Create greet.txt"}]}))
    report = run(source="gemini")
    assert not report.skipped
    by_id = {s.session_id: s for s in _sessions()}
    s = by_id["g3"]
    assert [p.text for p in s.prompts] == ["make two greeting files"]
    assert s.prompts[0].files == ["greet.txt"]  # what the turn set out to change, though the tool failed
    assert s.models == ["gemini-3-flash-preview"]
    assert s.finals == ["Delegating."]
    assert s.skills == {"greeter": 1}  # a refused activation is no skill used; the subagent's is its own
    assert not s.is_subagent
    assert by_id["g4"].is_subagent  # "kind": "subagent": delegated work, not the person's prompt
