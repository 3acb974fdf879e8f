"""The SQLite readers against the shapes of genuine stores (issue 22 §2).

No genuine ``state.vscdb`` or ``opencode.db`` file is public; the closest are the recon
reports of Li-Mingshuang/cyber-overseer (commit 202721a), which quote, truncated, the
records of a real Cursor 3.15.6 ``User`` folder (docs/recon/cursor.md: the
``composerHeaders`` table with ``isSubagent``/``recency``/``checkpointAt``, ItemTable
``composer.composerHeaders`` ``{"allComposers": [{"type": "head", ..., "workspaceIdentifier":
{"id", "uri": {"$mid", "fsPath", "_sep", "external", "path", "scheme"}}}]}``, ``composerData``
``_v`` 17 with ``modelConfig {modelName, maxMode, selectedModels}`` next to ``_v`` 3 ones
without it, bubbles ``_v`` 2 whose only time is ``timingInfo``, ``toolFormerData {name:
"edit_file", status}``, SQL NULL values, the ``empty-window`` workspace) and of a real OpenCode
1.18.11 ``opencode.db`` (docs/recon/opencode.md: its ``session`` columns including
``metadata``, ``agent``, ``model`` JSON, ``directory`` with forward slashes on Windows,
``project_id`` ``global``; ``message.data`` with ``parentID``, ``mode``, ``path {cwd, root}``,
``tokens``, ``finish``; ``part.data`` of types ``step-start``, ``reasoning``, ``text`` with
``time {start, end}``, ``tool`` (``edit`` with a Windows ``filePath``, ``bash``), ``patch``,
``step-finish``, ``file``; plus the ``event`` tables). These fixtures rebuild those shapes
with invented text and ids.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from sleep_testutil import Homes, run

from sleep.index import Index

WIN_PROJECT = "c:\\work\\notes"
KV = "CREATE TABLE {} (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)"


def _uri(fs_path: str) -> dict:
    posix = "/" + fs_path.replace("\\", "/")
    return {"$mid": 1, "fsPath": fs_path, "_sep": 1, "external": "file://" + posix.replace(":", "%3A", 1),
            "path": posix, "scheme": "file"}


@pytest.fixture
def cursor_user(homes: Homes, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    user = homes.home / ".config" / "Cursor" / "User"
    (user / "globalStorage").mkdir(parents=True)
    ws = user / "workspaceStorage"
    (ws / "7528743e31b416a085742122d6d1fed6").mkdir(parents=True)
    (ws / "7528743e31b416a085742122d6d1fed6" / "workspace.json").write_text(
        json.dumps({"folder": "file:///c%3A/work/site"}))
    (ws / "empty-window").mkdir()  # a window without a folder: no workspace.json
    conn = sqlite3.connect(user / "globalStorage" / "state.vscdb", isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute(KV.format("ItemTable"))
    conn.execute(KV.format("cursorDiskKV"))
    conn.execute("CREATE TABLE composerHeaders (composerId TEXT PRIMARY KEY, workspaceId TEXT, createdAt INTEGER, "
                 "lastUpdatedAt INTEGER, isArchived INTEGER, isSubagent INTEGER, recency INTEGER, "
                 "checkpointAt INTEGER, value TEXT)")
    head = {"type": "head", "composerId": "c22dc724-aaaa-4bbb-8ccc-000000000001", "lastUpdatedAt": 1783746502872,
            "conversationCheckpointLastUpdatedAt": 1783746512188, "createdAt": 1783745985854,
            "unifiedMode": "agent", "forceMode": "edit", "hasUnreadMessages": False, "isArchived": False,
            "subtitle": "Read test.bat", "workspaceIdentifier": {"id": "0d17d028f8b44d5cb7b90c7814392c22",
                                                                 "uri": _uri(WIN_PROJECT)},
            "name": "Where the demo data comes from"}
    conn.execute("INSERT INTO ItemTable VALUES ('composer.composerHeaders', ?)", (json.dumps({"allComposers": [head]}),))
    conn.execute("INSERT INTO ItemTable VALUES ('cursorAuth/accessToken', 'invented-token')")
    # An old chat (_v 3, no workspaceIdentifier, no modelConfig): its project is the header's uri.
    old = {"_v": 3, "composerId": head["composerId"], "createdAt": 1783745985854, "lastUpdatedAt": 1783746502872,
           "status": "completed", "conversationMap": {}, "subagentComposerIds": ["sub-0001"],
           "fullConversationHeadersOnly": [{"bubbleId": "b-u1", "type": 1},
                                           {"bubbleId": "b-a1", "type": 2, "serverBubbleId": "s-1"},
                                           {"bubbleId": "b-a2", "type": 2, "serverBubbleId": "s-2"},
                                           {"bubbleId": "b-null", "type": 2}]}
    bubbles = {
        "b-u1": {"_v": 2, "type": 1, "bubbleId": "b-u1", "text": "where does the demo data come from",
                 "richText": "{}", "tokenCount": {"inputTokens": 0, "outputTokens": 0}, "isAgentic": True,
                 "capabilitiesRan": {"mutate-request": [6]}, "context": {}, "codeBlocks": [],
                 "timingInfo": {"clientStartTime": 62550.5, "clientRpcSendTime": 1750484350669,
                                "clientSettleTime": 1750484365218, "clientEndTime": 1750484365218}},
        "b-a1": {"type": 2, "text": "", "isThought": True, "capabilityType": 15,
                 "toolFormerData": {"name": "edit_file", "status": "completed",
                                    "rawArgs": json.dumps({"target_file": WIN_PROJECT + "\\demo.bat"})},
                 "codeBlocks": 1, "checkpointId": "k1"},
        "b-a2": {"_v": 2, "type": 2, "bubbleId": "b-a2", "text": "It reads the training set from disk.",
                 "tokenCount": {"inputTokens": 36163, "outputTokens": 26493}, "toolResults": [],
                 "allThinkingBlocks": []},
    }
    conn.execute("INSERT INTO cursorDiskKV VALUES (?, ?)", (f"composerData:{head['composerId']}", json.dumps(old)))
    for bid, b in bubbles.items():
        conn.execute("INSERT INTO cursorDiskKV VALUES (?, ?)", (f"bubbleId:{head['composerId']}:{bid}", json.dumps(b)))
    conn.execute("INSERT INTO cursorDiskKV VALUES (?, NULL)", (f"bubbleId:{head['composerId']}:b-null",))
    # A new chat (_v 17) with its own workspaceIdentifier and a composerHeaders row.
    new = {"_v": 17, "composerId": "12443f40-aaaa-4bbb-8ccc-000000000002", "createdAt": 1786269935374,
           "lastUpdatedAt": 1786269999000, "status": "completed", "unifiedMode": "agent", "agentBackend": "cursor-agent",
           "modelConfig": {"modelName": "composer-2.5", "maxMode": False, "selectedModels": []},
           "workspaceIdentifier": {"id": "7528743e31b416a085742122d6d1fed6"},
           "blobEncryptionKey": "invented-key", "generatingBubbleIds": [], "conversationState": "~",
           "fullConversationHeadersOnly": [{"bubbleId": "n-u1", "type": 1}, {"bubbleId": "n-a1", "type": 2}]}
    conn.execute("INSERT INTO cursorDiskKV VALUES (?, ?)", (f"composerData:{new['composerId']}", json.dumps(new)))
    conn.execute("INSERT INTO cursorDiskKV VALUES (?, ?)", (f"bubbleId:{new['composerId']}:n-u1", json.dumps(
        {"_v": 3, "type": 1, "bubbleId": "n-u1", "text": "greet me in Chinese", "createdAt": "2026-02-27T16:07:18.345Z"})))
    conn.execute("INSERT INTO cursorDiskKV VALUES (?, ?)", (f"bubbleId:{new['composerId']}:n-a1", json.dumps(
        {"_v": 3, "type": 2, "bubbleId": "n-a1", "text": "你好！", "createdAt": "2026-02-27T16:07:20.000Z",
         "modelInfo": {"modelName": "composer-2"}})))
    conn.execute("INSERT INTO composerHeaders VALUES (?, ?, ?, ?, 0, 0, 1, NULL, '{}')",
                 (new["composerId"], "7528743e31b416a085742122d6d1fed6", 1786269935374, 1786269999000))
    # The subagent the old chat started, the empty draft of a window without a folder, a NULL chat.
    sub = {"_v": 17, "composerId": "sub-0001", "createdAt": 1750484351000, "lastUpdatedAt": 1750484360000,
           "fullConversationHeadersOnly": [{"bubbleId": "s-u1", "type": 1}]}
    conn.execute("INSERT INTO cursorDiskKV VALUES ('composerData:sub-0001', ?)", (json.dumps(sub),))
    conn.execute("INSERT INTO cursorDiskKV VALUES ('bubbleId:sub-0001:s-u1', ?)",
                 (json.dumps({"_v": 3, "type": 1, "text": "list the .bat files"}),))
    draft = {"_v": 17, "composerId": "empty-state-draft", "status": "none", "text": "half typed",
             "workspaceIdentifier": {"id": "empty-window"}, "fullConversationHeadersOnly": [],
             "lastUpdatedAt": 1786269935442, "createdAt": 1786269935374}
    conn.execute("INSERT INTO cursorDiskKV VALUES ('composerData:empty-state-draft', ?)", (json.dumps(draft),))
    conn.execute("INSERT INTO cursorDiskKV VALUES ('composerData:a9617912-0000-4000-8000-000000000003', NULL)")
    conn.execute("INSERT INTO cursorDiskKV VALUES ('agentKv:blob:ab12', ?)", (b"\x00\x01binary",))
    conn.execute("INSERT INTO cursorDiskKV VALUES ('checkpointId:c22:k1', '{}')")
    conn.close()
    return user


def test_cursor_3_15_shapes(cursor_user: Path) -> None:
    report = run(source="cursor")
    with Index.open() as idx:
        got = {s.session_id: s for s in idx.sessions(host="cursor-ide")}
    assert set(got) == {"c22dc724-aaaa-4bbb-8ccc-000000000001", "12443f40-aaaa-4bbb-8ccc-000000000002", "sub-0001"}
    old = got["c22dc724-aaaa-4bbb-8ccc-000000000001"]
    assert old.project_dir == WIN_PROJECT  # from the ItemTable header's workspaceIdentifier.uri
    assert old.prompts[0].at == "2025-06-21T05:39:10.669Z"  # timingInfo.clientRpcSendTime
    assert old.finals == ["It reads the training set from disk."]
    assert old.tools == {"edit_file": 1}
    new = got["12443f40-aaaa-4bbb-8ccc-000000000002"]
    assert new.project_dir == "c:/work/site"  # composerHeaders / workspaceIdentifier id -> workspace.json
    assert new.models == ["composer-2.5", "composer-2"] and new.finals == ["你好！"]
    sub = got["sub-0001"]
    assert (sub.is_subagent, sub.parent_session_id) == (True, old.session_id)
    assert report.skipped_lines.get("null_value") == 2  # the NULL bubble and the NULL chat
    assert report.sources["cursor-ide"].files_seen == 5  # three chats, the draft, the NULL chat
    assert old.prompts[0].files == ["demo.bat"]  # a Windows path inside the Windows project


OC_SCHEMA = [
    "CREATE TABLE project (id TEXT PRIMARY KEY, worktree TEXT NOT NULL, vcs TEXT, name TEXT, icon_url TEXT, "
    "icon_color TEXT, time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, time_initialized INTEGER, "
    "sandboxes TEXT NOT NULL, commands TEXT)",
    "CREATE TABLE project_directory (project_id TEXT, directory TEXT, type TEXT, strategy TEXT, time_created INTEGER)",
    "CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT NOT NULL, workspace_id TEXT, parent_id TEXT, "
    "slug TEXT NOT NULL, directory TEXT NOT NULL, path TEXT, title TEXT NOT NULL, version TEXT NOT NULL, "
    "share_url TEXT, summary_additions INTEGER, summary_deletions INTEGER, summary_files INTEGER, "
    "summary_diffs TEXT, metadata TEXT, cost REAL, tokens_input INTEGER, tokens_output INTEGER, "
    "tokens_reasoning INTEGER, tokens_cache_read INTEGER, tokens_cache_write INTEGER, revert TEXT, "
    "permission TEXT, agent TEXT, model TEXT, time_created INTEGER, time_updated INTEGER, "
    "time_compacting INTEGER, time_archived INTEGER)",
    "CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT, time_created INTEGER, time_updated INTEGER, "
    "data TEXT)",
    "CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT, session_id TEXT, time_created INTEGER, "
    "time_updated INTEGER, data TEXT)",
    "CREATE TABLE event (id TEXT PRIMARY KEY, aggregate_id TEXT, seq INTEGER, type TEXT, data TEXT)",
    "CREATE TABLE event_sequence (aggregate_id TEXT PRIMARY KEY, seq INTEGER, owner_id TEXT)",
]


def test_opencode_1_18_shapes(homes: Homes) -> None:
    data = homes.home / ".local" / "share" / "opencode"
    data.mkdir(parents=True)
    conn = sqlite3.connect(data / "opencode.db", isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    for stmt in OC_SCHEMA:
        conn.execute(stmt)
    sid, t = "ses_01a09204effeT71oU1XNKFbv19", 1786895880000
    conn.execute("INSERT INTO project VALUES ('global', '/', NULL, NULL, NULL, NULL, ?, ?, NULL, '[]', NULL)", (t, t))
    conn.execute("INSERT INTO session (id, project_id, slug, directory, title, version, agent, model, cost, "
                 "tokens_input, time_created, time_updated) VALUES (?, 'global', 'kind-cactus', "
                 "'C:/work/notes', 'fix line spacing', 'local', 'build', ?, 0.0027, 10619, ?, ?)",
                 (sid, json.dumps({"id": "deepseek-v4-flash", "providerID": "deepseek", "variant": "default"}),
                  t, t + 11519))
    user = {"role": "user", "time": {"created": t + 6987}, "agent": "build",
            "model": {"providerID": "deepseek", "modelID": "deepseek-v4-flash"}}
    asst = {"parentID": "msg_00b4b1c36001mtluvTQ3KnHy6k", "role": "assistant", "mode": "build", "agent": "build",
            "path": {"cwd": "C:\\work\\notes", "root": "C:\\work\\notes"}, "cost": 0.00007784,
            "tokens": {"total": 12996, "input": 92, "output": 104, "reasoning": 0, "cache": {"write": 0, "read": 12800}},
            "modelID": "deepseek-v4-flash", "providerID": "deepseek",
            "time": {"created": t + 8326, "completed": t + 11512}, "finish": "stop"}
    conn.execute("INSERT INTO message VALUES ('msg_00b4b1c36001mtluvTQ3KnHy6k', ?, ?, ?, ?)",
                 (sid, t + 6987, t + 6987, json.dumps(user)))
    conn.execute("INSERT INTO message VALUES ('msg_00b4b1c37002aaaaaaaaaaaaaa', ?, ?, ?, ?)",
                 (sid, t + 8326, t + 11512, json.dumps(asst)))
    parts = [
        ("prt_01", "msg_00b4b1c36001mtluvTQ3KnHy6k", {"type": "text", "text": "no change, the spacing is the same"}),
        ("prt_02", "msg_00b4b1c36001mtluvTQ3KnHy6k",
         {"type": "file", "mime": "text/plain", "filename": "plan.md", "url": "file:///C:/work/notes/plan.md"}),
        ("prt_03", "msg_00b4b1c37002aaaaaaaaaaaaaa", {"snapshot": "8999", "type": "step-start"}),
        ("prt_04", "msg_00b4b1c37002aaaaaaaaaaaaaa",
         {"type": "reasoning", "text": "The desktop appearance file differs.", "time": {"start": t + 5549,
                                                                                      "end": t + 6204}}),
        ("prt_05", "msg_00b4b1c37002aaaaaaaaaaaaaa",
         {"type": "tool", "tool": "bash", "callID": "call_00_a", "state": {"status": "completed", "input": {
             "command": "Get-ChildItem -LiteralPath \".obsidian\" -Filter \"*.json\""}, "output": "..."}}),
        ("prt_06", "msg_00b4b1c37002aaaaaaaaaaaaaa",
         {"type": "tool", "tool": "edit", "callID": "call_00_b", "state": {"status": "completed", "input": {
             "filePath": "C:\\work\\notes\\.obsidian\\appearance.json", "oldString": "a", "newString": "b"},
             "output": "Edit applied successfully.", "metadata": {"diagnostics": {}, "diff": "Index: ..."}}}),
        ("prt_07", "msg_00b4b1c37002aaaaaaaaaaaaaa",
         {"type": "patch", "hash": "e4e4", "files": ["C:/work/notes/.obsidian/appearance.json"]}),
        ("prt_08", "msg_00b4b1c37002aaaaaaaaaaaaaa",
         {"type": "text", "text": "The snippet is enabled now.", "time": {"start": t + 9642, "end": t + 10412}}),
        ("prt_09", "msg_00b4b1c37002aaaaaaaaaaaaaa",
         {"reason": "stop", "snapshot": "8999", "type": "step-finish", "cost": 0.00007784}),
    ]
    for pid, mid, part in parts:
        conn.execute("INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)", (pid, mid, sid, t, t, json.dumps(part)))
    conn.execute("INSERT INTO event VALUES ('evt_1', ?, 1, 'session.created.1', '{}')", (sid,))
    conn.close()
    report = run(source="opencode")
    assert report.sessions_new == 1
    with Index.open() as idx:
        [s] = idx.sessions(host="opencode")
    assert s.project_dir == "C:/work/notes"
    assert [p.text for p in s.prompts] == ["no change, the spacing is the same"]
    assert s.finals == ["The snippet is enabled now."]
    assert s.tools == {"bash": 1, "edit": 1} and s.models == ["deepseek-v4-flash"]
    assert s.prompts[0].shell == ["Get-ChildItem -LiteralPath"]
    assert s.prompts[0].files == [".obsidian/appearance.json"]  # backslashed, under the forward-slashed directory


def test_cursor_2025_tool_bubbles_the_headers_do_not_list(homes: Homes, monkeypatch: pytest.MonkeyPatch) -> None:
    """A genuine global state.vscdb of 2025-09 (AdamEps/urpg_app e78fd6a, composerData ``_v`` 9,
    bubbles ``_v`` 3 without ``createdAt``, ``modelConfig {"modelName": "default"}``, 16 NULL
    values) lists only prompts and final answers in ``fullConversationHeadersOnly``; the turn's
    tool-call bubbles (``capabilityType`` 15, ``read_file`` ``targetFile``, ``grep`` ``pattern``,
    ``codebase_search``, one with only ``additionalData``) are stored between them, unlisted."""
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    user = homes.home / ".config" / "Cursor" / "User"
    ws = user / "workspaceStorage" / "w1"
    ws.mkdir(parents=True)
    (ws / "workspace.json").write_text(json.dumps({"folder": "file:///work/urpg"}))
    conn = sqlite3.connect(ws / "state.vscdb")
    conn.execute(KV.format("ItemTable"))
    conn.execute("INSERT INTO ItemTable VALUES ('composer.composerData', ?)",
                 (json.dumps({"allComposers": [{"composerId": "c9", "createdAt": 1757880000000}]}),))
    conn.commit()
    conn.close()
    (user / "globalStorage").mkdir(parents=True)
    conn = sqlite3.connect(user / "globalStorage" / "state.vscdb")
    conn.execute(KV.format("ItemTable"))
    conn.execute(KV.format("cursorDiskKV"))
    rows = [  # in the order Cursor wrote them (row order)
        ("u1", {"_v": 3, "type": 1, "bubbleId": "u1", "text": "why does the map not load", "requestId": "r1",
                "timingInfo": {"clientRpcSendTime": 1757880001000}}),
        ("t1", {"_v": 3, "type": 2, "bubbleId": "t1", "text": "", "capabilityType": 15, "toolFormerData": {
            "tool": 40, "name": "read_file", "status": "completed",
            "params": json.dumps({"targetFile": "/work/urpg/src/map.ts", "charsLimit": 100000})}}),
        ("x1", {"_v": 3, "type": 2, "bubbleId": "x1", "text": "Let me look for the loader."}),
        ("t2", {"_v": 3, "type": 2, "bubbleId": "t2", "text": "", "capabilityType": 15, "toolFormerData": {
            "tool": 41, "name": "grep", "status": "completed",
            "rawArgs": json.dumps({"pattern": "loadMap", "outputMode": "content"})}}),
        ("t3", {"_v": 3, "type": 2, "bubbleId": "t3", "text": "", "toolFormerData": {"additionalData": {}}}),
        ("a1", {"_v": 3, "type": 2, "bubbleId": "a1", "text": "The loader awaits a promise it never resolves."}),
        ("u0", {"_v": 3, "type": 1, "bubbleId": "u0", "text": "a prompt the person edited away"}),
    ]
    composer = {"_v": 9, "composerId": "c9", "createdAt": 1757880000000, "lastUpdatedAt": 1757880100000,
                "status": "completed", "modelConfig": {"modelName": "default", "maxMode": False}, "conversationMap": {},
                "fullConversationHeadersOnly": [{"bubbleId": "u1", "type": 1},
                                                {"bubbleId": "a1", "type": 2, "serverBubbleId": "s1"}]}
    conn.execute("INSERT INTO cursorDiskKV VALUES ('composerData:c9', ?)", (json.dumps(composer),))
    for bid, b in rows:
        conn.execute("INSERT INTO cursorDiskKV VALUES (?, ?)", (f"bubbleId:c9:{bid}", json.dumps(b)))
    conn.execute("INSERT INTO cursorDiskKV VALUES ('composerData:c-gone', NULL)")
    conn.commit()
    conn.close()
    report = run(source="cursor")
    with Index.open() as idx:
        [s] = idx.sessions(host="cursor-ide")
    assert [p.text for p in s.prompts] == ["why does the map not load"]
    assert s.finals == ["The loader awaits a promise it never resolves."]
    assert s.tools == {"read_file": 1, "grep": 1}
    assert s.prompts[0].files == ["src/map.ts"] and s.project_dir == "/work/urpg"
    assert s.models == []  # "default" names no model
    assert s.prompts[0].at == "2025-09-14T20:00:01.000Z"
    assert report.skipped_lines.get("null_value") == 1
