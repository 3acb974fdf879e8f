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


# ----- issue 31: the shapes Gemini CLI writes today ----------------------------------------------------
# Shapes checked against google-gemini/gemini-cli packages/core/src/services/chatRecordingService.ts
# (commit 9a91371dcfaa0e79c47b5a03fb1a4e1a0f1ada39: loadConversationRecord, pushMessage, updateMetadata,
# updateMessagesFromHistory, rewindTo), packages/core/src/core/logger.ts (logs.json) and
# packages/core/src/utils/environmentContext.ts (<session_context>), and the npm @google/gemini-cli 0.61.0
# bundle. Every record below is written here in that shape, with our own texts.

SID = "5f0c2a7e-1b2c-4d3e-8f90-123456789abc"


def _meta(sid: str = SID, **extra) -> dict:
    return {"sessionId": sid, "projectHash": project_hash(CWD), "startTime": b.ts(0), "lastUpdated": b.ts(0),
            "kind": "main", **extra}


def _shell_call(status: str = "success") -> dict:
    call = {"id": "c1", "name": "run_shell_command", "args": {"command": "pytest -q tests", "directory": CWD},
            "status": status, "timestamp": b.ts(3)}
    if status == "success":
        call["result"] = [{"functionResponse": {"id": "c1", "name": "run_shell_command",
                                                "response": {"output": "3 passed"}}}]
    return call


def test_jsonl_last_line_of_a_message_id_wins_and_set_patches_are_metadata(gemini: Path) -> None:
    """JSONL (0.39+): metadata line; each recordMessage appends the message then a
    ``{"$set": {"lastUpdated"}}`` patch; a gemini message is appended again under its id when its
    tool calls finish (first with the calls scheduled, then with status and result). The CLI's loader
    keeps the last line of an id: a reader keeping the first loses the finished calls' skill and
    files, and one keeping both counts every tool twice."""
    chats = gemini / "tmp" / "garden" / "chats"
    skill = {"id": "c2", "name": "activate_skill", "args": {"name": "pytest-runner"}, "status": "success"}
    edit = {"id": "c3", "name": "replace", "args": {"file_path": f"{CWD}/src/water.py", "old_string": "a",
                                                     "new_string": "b"}, "status": "success"}
    g1 = {"id": "m2", "timestamp": b.ts(2), "type": "gemini", "content": "", "model": "gemini-3-pro-preview",
          "thoughts": [], "tokens": None}
    b.write_jsonl(chats / f"session-2026-05-01T10-00-{SID[:8]}.jsonl", [
        _meta(),
        {"id": "m1", "timestamp": b.ts(1), "type": "user", "content": [{"text": "run the tests and fix water.py"}]},
        {"$set": {"lastUpdated": b.ts(1)}},
        g1,
        {"$set": {"lastUpdated": b.ts(2)}},
        {**g1, "toolCalls": [{**_shell_call(), "status": "scheduled", "result": None}]},
        {**g1, "toolCalls": [_shell_call(), skill, edit]},
        {"$set": {"lastUpdated": b.ts(3)}},
        {"id": "m3", "timestamp": b.ts(4), "type": "gemini", "content": "Fixed; 3 tests pass.",
         "model": "gemini-3-pro-preview"},
        {"$set": {"lastUpdated": b.ts(4), "summary": "Fix water.py"}},
    ])
    (gemini / "projects.json").write_text(json.dumps({"projects": {CWD: "garden"}}))
    report = run(source="gemini")
    assert not report.skipped
    [s] = _sessions()
    assert [p.text for p in s.prompts] == ["run the tests and fix water.py"]
    assert s.tools == {"run_shell_command": 1, "activate_skill": 1, "replace": 1}
    assert s.skills == {"pytest-runner": 1}
    assert s.prompts[0].shell == ["pytest -q"] and s.prompts[0].files == ["src/water.py"]
    assert s.finals == ["Fixed; 3 tests pass."] and s.ended_at == b.ts(4)


def test_jsonl_whole_message_array_in_one_set_patch_with_injected_session_context(gemini: Path) -> None:
    """A newer build (updateMessagesFromHistory) writes ``{"$set": {"messages": [...]}}``: the whole
    array, led by the ``<session_context>`` message the CLI injects (getEnvironmentContext), which is
    no human prompt. A prompt the patch no longer carries (compressed away or rewound with
    ``{"$rewindTo": id}``) was still typed and is kept; ids are never counted twice."""
    chats = gemini / "tmp" / "garden" / "chats"
    context = {"id": "env-1", "timestamp": b.ts(0), "type": "user", "content": [{"text": (
        "<session_context>\nThis is the Gemini CLI. We are setting up the context for our chat.\n"
        f"Today's date is Friday, May 1, 2026.\nMy operating system is: linux\n- **Workspace Directories:**\n"
        f"  - {CWD}\n</session_context>")}]}
    u1 = {"id": "u1", "timestamp": b.ts(1), "type": "user", "content": [{"text": "list the plant types"}]}
    g1 = {"id": "g1", "timestamp": b.ts(2), "type": "gemini", "content": "Fern, cactus.", "model": "gemini-3-flash"}
    u2 = {"id": "u2", "timestamp": b.ts(3), "type": "user", "content": [{"text": "add orchids"}]}
    g2 = {"id": "g2", "timestamp": b.ts(4), "type": "gemini", "content": "Added orchids.", "model": "gemini-3-flash"}
    b.write_jsonl(chats / f"session-2026-05-02T10-00-{SID[:8]}.jsonl", [
        _meta(), {"$set": {"messages": [context, u1, g1], "lastUpdated": b.ts(2)}},
        u2, {"$set": {"lastUpdated": b.ts(3)}}, g2, {"$rewindTo": "u2"},
        {"$set": {"messages": [context, {**u1, "content": [{"text": "list the plant types"}]}, g1],
                  "lastUpdated": b.ts(5)}},
    ])
    (gemini / "projects.json").write_text(json.dumps({"projects": {CWD: "garden"}}))
    assert not run(source="gemini").skipped
    [s] = _sessions()
    assert [p.text for p in s.prompts] == ["list the plant types", "add orchids"]
    assert s.finals == ["Fern, cactus.", "Added orchids."]


def test_single_json_stores_display_content_not_the_expanded_at_file(gemini: Path) -> None:
    """Single JSON (~0.29): ``content`` is what the model got, ``@file`` references expanded
    (``--- Content from referenced files ---``); ``displayContent`` is what the person typed."""
    chats = gemini / "tmp" / project_hash(CWD) / "chats"
    chats.mkdir(parents=True)
    expanded = [{"text": "explain @src/water.py"}, {"text": "\n--- Content from referenced files ---"},
                {"text": "\nContent from @src/water.py:\n"}, {"text": "def water(): ...\n"},
                {"text": "\n--- End of content ---"}]
    (chats / f"session-2025-11-03T09-00-{SID[:8]}.json").write_text(json.dumps({
        "sessionId": SID, "projectHash": project_hash(CWD), "startTime": b.ts(0), "lastUpdated": b.ts(2),
        "messages": [
            {"id": "u1", "timestamp": b.ts(1), "type": "user", "content": expanded,
             "displayContent": [{"text": "explain @src/water.py"}]},
            {"id": "g1", "timestamp": b.ts(2), "type": "gemini", "content": "It waters.", "model": "gemini-2.5-pro"}]}))
    run(source="gemini")
    [s] = _sessions()
    assert [p.text for p in s.prompts] == ["explain @src/water.py"]


@pytest.mark.parametrize("opening", [
    "Your task is to do a deep investigation of the codebase to find all relevant files for the following "
    "user objective:\n<objective>\n{objective}\n</objective>",
    "{objective}",  # an agent whose query template is just its argument ("${{request}}")
])
def test_single_json_subagent_file_sharing_its_parents_session_id(gemini: Path, opening: str) -> None:
    """~0.29 wrote a delegated agent's chat as a second ``session-<time>-<id[:8]>.json`` with the
    parent's ``sessionId`` and no ``kind``; its first user message is the agent's query template
    (codebase_investigator: "Your task is to do a deep investigation ... <objective>...").
    It is kept as a subagent session of its own, never merged into the parent nor read as the
    person's prompt; the parent, whose first message the person typed, stays whole."""
    chats = gemini / "tmp" / project_hash(CWD) / "chats"
    chats.mkdir(parents=True)
    objective = "find where the watering interval is computed"
    parent = {"sessionId": SID, "projectHash": project_hash(CWD), "startTime": b.ts(0), "lastUpdated": b.ts(9),
              "messages": [
                  {"id": "u1", "timestamp": b.ts(1), "type": "user", "content": [{"text": f"why do ferns dry out? see {CWD}/src/water.py"}]},
                  {"id": "g1", "timestamp": b.ts(2), "type": "gemini", "content": "", "model": "gemini-2.5-pro",
                   "toolCalls": [{"id": "c1", "name": "codebase_investigator", "args": {"objective": objective},
                                  "status": "success", "timestamp": b.ts(6)}]},
                  {"id": "g2", "timestamp": b.ts(7), "type": "gemini", "content": "The interval ignores humidity."},
                  {"id": "u2", "timestamp": b.ts(8), "type": "user", "content": [{"text": "fix it"}]}]}
    child = {"sessionId": SID, "projectHash": project_hash(CWD), "startTime": b.ts(3), "lastUpdated": b.ts(5),
             "messages": [
                 {"id": "s1", "timestamp": b.ts(3), "type": "user",
                  "content": [{"text": opening.format(objective=objective)}]},
                 {"id": "s2", "timestamp": b.ts(4), "type": "gemini", "content": "",
                  "toolCalls": [{"id": "c9", "name": "read_file", "args": {"absolute_path": f"{CWD}/src/water.py"},
                                 "status": "success"}]}]}
    (chats / f"session-2025-11-03T09-00-{SID[:8]}.json").write_text(json.dumps(parent))
    (chats / f"session-2025-11-03T09-01-{SID[:8]}.json").write_text(json.dumps(child))
    run(source="gemini")
    by_id = {s.session_id: s for s in _sessions()}
    assert len(by_id) == 2
    main = by_id[SID]
    # the person's prompt names a path the subagent read: a file tool's argument is no delegation
    assert [p.text for p in main.prompts] == [f"why do ferns dry out? see {CWD}/src/water.py", "fix it"]
    assert not main.is_subagent
    [sub] = [s for k, s in by_id.items() if k != SID]
    assert sub.is_subagent and sub.parent_session_id == SID


def test_unmapped_hash_folder_is_resolved_from_the_paths_the_chat_names(gemini: Path) -> None:
    """No cwd is recorded: the folder is ``sha256(project root)``. With no ``projects.json`` entry,
    the root is found by hashing the workspace directories of ``<session_context>`` and the
    absolute paths the tools touched (and their parents)."""
    chats = gemini / "tmp" / project_hash(CWD) / "chats"
    chats.mkdir(parents=True)
    (chats / f"session-2025-11-03T09-00-{SID[:8]}.json").write_text(json.dumps({
        "sessionId": SID, "projectHash": project_hash(CWD), "startTime": b.ts(0), "lastUpdated": b.ts(2),
        "messages": [
            {"id": "u1", "timestamp": b.ts(1), "type": "user", "content": "tidy the fertiliser module"},
            {"id": "g1", "timestamp": b.ts(2), "type": "gemini", "content": "Done.",
             "toolCalls": [{"id": "c1", "name": "write_file", "status": "success",
                            "args": {"file_path": f"{CWD}/src/feed/fertiliser.py", "content": "x"}}]}]}))
    run(source="gemini")
    [s] = _sessions()
    assert s.project_dir == CWD
    assert s.prompts[0].files == ["src/feed/fertiliser.py"]


def test_logs_json_sessions_without_a_chat_file(gemini: Path) -> None:
    """``tmp/<project>/logs.json`` (Logger.logMessage): ``[{sessionId, messageId, type: "user",
    message, timestamp}]``, every line the person entered, also ``!shell`` inputs and sessions whose
    chat file never came to be. A session with a chat file (named by its id's first 8 characters)
    is read from the chat only; one without is read from the log."""
    folder = gemini / "tmp" / "garden"
    chats = folder / "chats"
    chats.mkdir(parents=True)
    other = "9a8b7c6d-0000-4000-8000-00000000beef"
    (chats / f"session-2025-11-03T09-00-{SID[:8]}.json").write_text(json.dumps({
        "sessionId": SID, "projectHash": project_hash(CWD), "startTime": b.ts(0), "lastUpdated": b.ts(2),
        "messages": [{"id": "u1", "timestamp": b.ts(1), "type": "user", "content": "prune the cache"},
                     {"id": "g1", "timestamp": b.ts(2), "type": "gemini", "content": "Pruned."}]}))
    logs = [
        {"sessionId": SID, "messageId": 0, "type": "user", "message": "prune the cache", "timestamp": b.ts(1)},
        {"sessionId": other, "messageId": 0, "type": "user", "message": "!git status", "timestamp": b.ts(10)},
        {"sessionId": other, "messageId": 1, "type": "user", "message": "summarise the open changes",
         "timestamp": b.ts(11)},
        {"sessionId": other, "messageId": 2, "type": "user", "message": "!npm test -- --watch=false",
         "timestamp": b.ts(12)},
        {"sessionId": other, "messageId": 3, "type": "user", "message": "/stats", "timestamp": b.ts(13)},
        {"sessionId": other, "messageId": 4, "type": "user", "message": "commit them as one", "timestamp": b.ts(14)},
    ]
    (folder / "logs.json").write_text(json.dumps(logs, indent=2))
    (gemini / "projects.json").write_text(json.dumps({"projects": {CWD: "garden"}}))
    report = run(source="gemini")
    assert report.sources["gemini-cli"].sessions_new == 2
    by_id = {s.session_id: s for s in _sessions()}
    assert [p.text for p in by_id[SID].prompts] == ["prune the cache"]
    s = by_id[other]
    assert s.project_dir == CWD
    assert [p.text for p in s.prompts] == ["summarise the open changes", "commit them as one"]
    assert s.prompts[0].shell == ["npm test"] and s.commands == {"stats": 1}
    assert (s.started_at, s.ended_at) == (b.ts(10), b.ts(14))
    assert run(source="gemini").sources["gemini-cli"].sessions_new == 0  # unchanged: nothing re-read


def test_jsonl_subagent_chat_under_its_parents_folder(gemini: Path) -> None:
    """Newer builds (ChatRecordingService.initialize, kind "subagent") write a delegated agent's
    chat to ``chats/<parent session id>/<its session id>.jsonl`` with ``"kind": "subagent"``: read as
    that parent's subagent session, beside the parent's own chat."""
    chats = gemini / "tmp" / "garden" / "chats"
    child = "0d1e2f3a-aaaa-4bbb-8ccc-ddddeeeeffff"
    b.write_jsonl(chats / f"session-2026-05-01T10-00-{SID[:8]}.jsonl", [
        _meta(), {"id": "u1", "timestamp": b.ts(1), "type": "user", "content": [{"text": "map the repo"}]}])
    b.write_jsonl(chats / SID / f"{child}.jsonl", [
        _meta(child, kind="subagent", directories=[CWD]),
        {"id": "s1", "timestamp": b.ts(2), "type": "user", "content": [{"text": "Get Started!"}]}])
    (gemini / "projects.json").write_text(json.dumps({"projects": {CWD: "garden"}}))
    assert run(source="gemini").sources["gemini-cli"].sessions_new == 2
    by_id = {s.session_id: s for s in _sessions()}
    assert not by_id[SID].is_subagent
    assert by_id[child].is_subagent and by_id[child].parent_session_id == SID


def test_a_json_chat_resumed_by_a_jsonl_build_is_one_session(gemini: Path) -> None:
    """Resuming a ~0.29 ``.json`` chat, a JSONL build (ChatRecordingService.initialize) writes
    ``<same name>.jsonl``: the metadata, every old message again, then the new turns. The old file
    stays. One session, each prompt once, the new turns included."""
    chats = gemini / "tmp" / "garden" / "chats"
    chats.mkdir(parents=True)
    u1 = {"id": "u1", "timestamp": b.ts(1), "type": "user", "content": "sort the seed list"}
    g1 = {"id": "g1", "timestamp": b.ts(2), "type": "gemini", "content": "Sorted."}
    u2 = {"id": "u2", "timestamp": b.ts(50), "type": "user", "content": "now by sowing month"}
    name = f"session-2025-11-03T09-00-{SID[:8]}.json"
    old = {k: v for k, v in _meta().items() if k != "kind"}  # ~0.29 wrote no kind; the resume keeps none
    (chats / name).write_text(json.dumps({**old, "messages": [u1, g1]}))
    b.write_jsonl(chats / (name + "l"), [old, u1, g1, {"$set": {"sessionId": SID}}, u2,
                                         {"$set": {"lastUpdated": b.ts(50)}}])
    (gemini / "projects.json").write_text(json.dumps({"projects": {CWD: "garden"}}))
    report = run(source="gemini")
    assert report.sources["gemini-cli"].sessions_new == 1 and not report.skipped
    [s] = _sessions()
    assert [p.text for p in s.prompts] == ["sort the seed list", "now by sowing month"]


def test_old_hash_folder_resolved_by_the_root_a_newer_build_recorded(gemini: Path) -> None:
    """A project used with an older build has a ``tmp/<sha256 of root>`` folder; a newer build
    keeps the root in ``tmp/<label>/.project_root`` and ``history/<label>/.project_root`` (as the
    real 0.61 writes them). That root names the old hash folder too, though ``projects.json`` is gone
    and the old chat names no absolute path."""
    old = gemini / "tmp" / project_hash(CWD) / "chats"
    old.mkdir(parents=True)
    (old / f"session-2025-06-01T09-00-{SID[:8]}.json").write_text(json.dumps({
        "sessionId": SID, "projectHash": project_hash(CWD), "startTime": b.ts(0), "lastUpdated": b.ts(1),
        "messages": [{"id": "u1", "timestamp": b.ts(1), "type": "user", "content": "rename the beds"}]}))
    (gemini / "history" / "garden").mkdir(parents=True)
    (gemini / "history" / "garden" / ".project_root").write_text(CWD)
    run(source="gemini")
    [s] = _sessions()
    assert s.project_dir == CWD


def test_every_gemini_file_read_is_one_the_watcher_notes(gemini: Path) -> None:
    """Chats, delegated agents' chats one folder down and ``logs.json`` sessions: each lies under a
    watched root that wants it (in watch mode a harvest reads only what was noted)."""
    from sleep.harvest.reader import ParseStats
    from sleep.harvest.sources.gemini_cli import GeminiCliSource
    from sleep.scheduler.roots import transcript_roots

    chats = gemini / "tmp" / "garden" / "chats"
    b.write_jsonl(chats / f"session-2026-05-01T10-00-{SID[:8]}.jsonl", [_meta()])
    b.write_jsonl(chats / SID / "0d1e2f3a.jsonl", [_meta("0d1e2f3a", kind="subagent")])
    (gemini / "tmp" / "garden" / "logs.json").write_text(json.dumps([
        {"sessionId": "other", "messageId": 0, "type": "user", "message": "hi", "timestamp": b.ts(1)}]))
    found = list(GeminiCliSource().discover(ParseStats()))
    assert {f.kind for f in found} == {"chat", "logs"} and len(found) == 3
    roots = [r for r in transcript_roots() if r.host == "gemini-cli"]
    for f in found:
        assert any(r.wants(f.container or f.path) for r in roots), f.path


def test_a_home_laid_out_as_gemini_writes_it_stores_every_typed_prompt_once(gemini: Path) -> None:
    """Issue 31's done-when for Gemini CLI, on one home: an old hash folder (single JSON, a
    subagent file under the parent's id, ``@file`` expansions, no projects.json entry, the root known
    from a newer build's ``.project_root``), a newer label folder (JSONL with re-written answers and a
    whole-array ``$set``; a resumed ``.json``/``.jsonl`` pair; ``logs.json`` with sessions that have
    a chat file and one that has none). Every typed prompt is stored exactly, once, in one session
    each, with its project."""
    other = "/work/orchard"
    old = gemini / "tmp" / project_hash(other) / "chats"
    old.mkdir(parents=True)
    a = "aaaaaaaa-0000-4000-8000-000000000001"
    (old / f"session-2025-10-01T09-00-{a[:8]}.json").write_text(json.dumps({
        "sessionId": a, "projectHash": project_hash(other), "startTime": b.ts(0), "lastUpdated": b.ts(9),
        "messages": [
            {"id": "1", "timestamp": b.ts(1), "type": "user", "content": [
                {"text": "compare @a.txt"}, {"text": "\n--- Content from referenced files ---"}, {"text": "A"}],
             "displayContent": [{"text": "compare @a.txt"}]},
            {"id": "2", "timestamp": b.ts(2), "type": "gemini", "content": "",
             "toolCalls": [{"id": "c", "name": "generalist", "args": {"request": "count the apple trees per row"},
                            "status": "success"}]},
            {"id": "3", "timestamp": b.ts(5), "type": "user", "content": "thanks, now graph it"}]}))
    (old / f"session-2025-10-01T09-01-{a[:8]}.json").write_text(json.dumps({
        "sessionId": a, "projectHash": project_hash(other), "startTime": b.ts(3), "lastUpdated": b.ts(4),
        "messages": [{"id": "s", "timestamp": b.ts(3), "type": "user", "content": "count the apple trees per row"}]}))
    (gemini / "history" / "orchard").mkdir(parents=True)
    (gemini / "history" / "orchard" / ".project_root").write_text(other)

    label = gemini / "tmp" / "garden"
    chats = label / "chats"
    c, d, e = ("cccccccc-0000-4000-8000-000000000003", "dddddddd-0000-4000-8000-000000000004",
               "eeeeeeee-0000-4000-8000-000000000005")
    g = {"id": "g", "timestamp": b.ts(12), "type": "gemini", "content": ""}
    b.write_jsonl(chats / f"session-2026-05-01T10-00-{c[:8]}.jsonl", [
        _meta(c),
        {"$set": {"messages": [{"id": "env", "timestamp": b.ts(10), "type": "user",
                                "content": "<session_context>\n- **Workspace Directories:**\n  - /x\n</session_context>"}]}},
        {"id": "u", "timestamp": b.ts(11), "type": "user", "content": [{"text": "water the ferns"}]},
        g, {**g, "toolCalls": [_shell_call()]}, {"$set": {"lastUpdated": b.ts(12)}}])
    name = f"session-2025-11-01T10-00-{d[:8]}.json"
    ud = {"id": "u", "timestamp": b.ts(20), "type": "user", "content": "repot the cactus"}
    (chats / name).write_text(json.dumps({"sessionId": d, "projectHash": "h", "messages": [ud]}))
    b.write_jsonl(chats / (name + "l"), [{"sessionId": d, "projectHash": "h"}, ud,
                                         {"id": "v", "timestamp": b.ts(21), "type": "user", "content": "and the aloe"}])
    (label / "logs.json").write_text(json.dumps([
        {"sessionId": c, "messageId": 0, "type": "user", "message": "water the ferns", "timestamp": b.ts(11)},
        {"sessionId": d, "messageId": 0, "type": "user", "message": "repot the cactus", "timestamp": b.ts(20)},
        {"sessionId": e, "messageId": 0, "type": "user", "message": "mulch the beds", "timestamp": b.ts(30)},
        {"sessionId": e, "messageId": 1, "type": "user", "message": "!ls beds", "timestamp": b.ts(31)}]))
    (gemini / "projects.json").write_text(json.dumps({"projects": {CWD: "garden"}}))

    report = run(source="gemini")
    assert not report.skipped
    people = {s.session_id: (s.project_dir, [p.text for p in s.prompts]) for s in _sessions() if not s.is_subagent}
    assert people == {
        a: (other, ["compare @a.txt", "thanks, now graph it"]),
        c: (CWD, ["water the ferns"]),
        d: (CWD, ["repot the cactus", "and the aloe"]),
        e: (CWD, ["mulch the beds"]),
    }
    [sub] = [s for s in _sessions() if s.is_subagent]
    assert sub.parent_session_id == a and sub.project_dir == other
