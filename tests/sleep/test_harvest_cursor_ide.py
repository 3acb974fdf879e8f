"""The Cursor IDE's agent (composer) chats in ``state.vscdb`` (issue 22 §2).

The databases are built here in the shape public reverse-engineering notes and their
readers' fixtures describe (sleep/harvest/sources/cursor_ide.py cites them):
``globalStorage/state.vscdb`` with ``ItemTable`` and ``cursorDiskKV(key TEXT UNIQUE ON
CONFLICT REPLACE, value BLOB)`` (michaeldhood/chatrxiv docs/cursor/storage-reference.md,
"SQLite Tables"), ``composerData:<id>`` (``_v`` 10: ``fullConversationHeadersOnly``,
``createdAt``/``lastUpdatedAt`` ms, ``modelConfig``), ``bubbleId:<id>:<bubble>`` (``_v`` 3:
``type`` 1/2, ``text``, ISO ``createdAt``, ``modelInfo``, ``toolFormerData`` with JSON-string
``params``/``rawArgs``: ``run_terminal_command_v2``, ``edit_file_v2``
``relativeWorkspacePath``, ``read_file_v2`` ``targetFile``), ``workspaceIdentifier``, the
``composerHeaders`` table of newer versions, and ``workspaceStorage/<hash>/state.vscdb``
``ItemTable`` ``composer.composerData`` ``{allComposers}`` beside ``workspace.json``
``{"folder": "file:///..."}``. All text is invented.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from pathlib import Path

import pytest
from sleep_testutil import Homes, run

from sleep import hosts
from sleep.index import Index
from sleep.harvest.reader import ParseStats
from sleep.scheduler.roots import transcript_roots
from sleep.harvest.sources import all_sources

APP = "/work/app"
API = "/work/api"
T0 = 1767225600000  # 2026-01-01T00:00:00Z
SECRET = "ghp_" + "Z8kQ2m" * 6  # a GitHub token shape (36 characters after the prefix)
KV = "CREATE TABLE {} (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)"


@pytest.fixture
def user(homes: Homes, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.delenv("SKILLOPT_CURSOR_IDE_HOME", raising=False)
    u = homes.home / ".config" / "Cursor" / "User"
    (u / "globalStorage").mkdir(parents=True)
    return u


def _db(path: Path, *tables: str, wal: bool = True) -> sqlite3.Connection:
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, isolation_level=None)
    if wal:
        conn.execute("PRAGMA journal_mode=WAL")
    for t in tables:
        conn.execute(KV.format(t))
    return conn


def _workspace(user: Path, wsh: str, folder: str, composers: list[dict] | None = None) -> Path:
    ws = user / "workspaceStorage" / wsh
    ws.mkdir(parents=True, exist_ok=True)
    (ws / "workspace.json").write_text(json.dumps({"folder": "file://" + folder}))
    conn = _db(ws / "state.vscdb", "ItemTable", wal=False)
    conn.execute("INSERT INTO ItemTable VALUES ('composer.composerData', ?)",
                 (json.dumps({"allComposers": composers or [], "selectedComposerIds": []}),))
    conn.close()
    return ws / "state.vscdb"


def _tool(name: str, params: dict, tool: int = 15) -> dict:
    return {"tool": tool, "toolCallId": f"toolu_{name}", "status": "completed", "name": name,
            "params": json.dumps(params), "result": json.dumps({"output": "ok", "exitCode": 0})}


def _bubble(bid: str, kind: int, text: str = "", at: int = 0, **extra) -> dict:
    return {"_v": 3, "type": kind, "bubbleId": bid, "text": text,
            "createdAt": f"2026-01-01T00:{at:02d}:00.000Z", **extra}


def put_chat(conn: sqlite3.Connection, cid: str, bubbles: list[dict], *, updated: int = T0 + 60000,
             ident: dict | None = None, model: str = "claude-4.5-sonnet") -> None:
    composer = {"_v": 10, "composerId": cid, "name": f"chat {cid}", "createdAt": T0, "lastUpdatedAt": updated,
                "status": "completed", "unifiedMode": "agent", "modelConfig": {"modelName": model, "maxMode": False},
                "text": "a draft the person has not sent", "blobEncryptionKey": "never-read",
                "fullConversationHeadersOnly": [{"bubbleId": b["bubbleId"], "type": b["type"]} for b in bubbles]}
    if ident is not None:
        composer["workspaceIdentifier"] = ident
    conn.execute("INSERT INTO cursorDiskKV VALUES (?, ?)", (f"composerData:{cid}", json.dumps(composer)))
    for b in bubbles:
        conn.execute("INSERT INTO cursorDiskKV VALUES (?, ?)", (f"bubbleId:{cid}:{b['bubbleId']}", json.dumps(b)))


def put_legacy_tabs(db: Path, tabs: dict) -> None:
    """The older IDE's chats: the tabs JSON under ``workbench.panel.aichat.view.aichat.chatdata``."""
    conn = sqlite3.connect(db)
    conn.execute("INSERT INTO ItemTable VALUES (?, ?)", ("workbench.panel.aichat.view.aichat.chatdata", json.dumps(tabs)))
    conn.commit()
    conn.close()


def chat_one() -> list[dict]:
    return [
        _bubble("u1", 1, "make the date parser accept ISO weeks", 1, modelInfo={"modelName": "claude-4.5-sonnet"}),
        _bubble("a1", 2, "", 2, capabilityType=15, toolFormerData=_tool("run_terminal_command_v2",
                                                                         {"command": "pytest tests/test_dates.py -q"})),
        _bubble("a2", 2, "", 2, toolFormerData=_tool("edit_file_v2", {"relativeWorkspacePath": f"{APP}/src/dates.py"},
                                                      38)),
        _bubble("a3", 2, "", 2, toolFormerData=_tool("fetch_rules", {"rule_names": ["python-style"]}, 16)),
        _bubble("a4", 2, "", 2, toolFormerData=_tool("read_file_v2",
                                                      {"targetFile": f"{APP}/.cursor/skills/dates/SKILL.md"}, 40)),
        _bubble("a5", 2, "The parser accepts ISO weeks now.", 3, modelInfo={"modelName": "gpt-5"}),
        _bubble("u2", 1, f"no, keep the old format; the deploy token is {SECRET}", 4),
        _bubble("a6", 2, "Kept the old format and added a test.", 5),
    ]


def build(user: Path) -> Path:
    """Three chats in one global database: two in APP (one named by its workspace hash, one
    by the composerHeaders table), one in API (listed by its workspace database)."""
    _workspace(user, "a" * 32, APP)
    _workspace(user, "b" * 32, API, [{"composerId": "c-api", "createdAt": T0, "lastUpdatedAt": T0 + 60000}])
    db = user / "globalStorage" / "state.vscdb"
    conn = _db(db, "ItemTable", "cursorDiskKV")
    conn.execute("CREATE TABLE composerHeaders (composerId TEXT PRIMARY KEY, workspaceId TEXT, createdAt INTEGER, "
                 "lastUpdatedAt INTEGER, isArchived INTEGER, value TEXT)")
    conn.execute("INSERT INTO ItemTable VALUES ('cursorAuth/accessToken', 'not-to-be-read')")
    put_chat(conn, "c-one", chat_one(), ident={"id": "a" * 32})
    put_chat(conn, "c-two", [_bubble("u1", 1, "rename the ledger module", 1), _bubble("a1", 2, "Renamed.", 2)])
    conn.execute("INSERT INTO composerHeaders VALUES ('c-two', ?, ?, ?, 0, '{}')", ("a" * 32, T0, T0 + 60000))
    put_chat(conn, "c-api", [_bubble("u1", 1, "add a healthcheck endpoint", 1), _bubble("a1", 2, "Added /health.", 2)])
    conn.close()
    return db


def sessions() -> dict[str, object]:
    with Index.open() as idx:
        return {s.session_id: s for s in idx.sessions(host="cursor-ide")}


def test_many_chats_of_one_database(user: Path) -> None:
    build(user)
    report = run(source="cursor")
    assert sorted(os.listdir(user / "globalStorage")) == ["state.vscdb"]  # a closed WAL database: no -wal/-shm made
    rep = report.sources["cursor-ide"]
    assert (rep.files_seen, rep.files_read, rep.sessions_new) == (3, 3, 3)
    got = sessions()
    assert {k: s.project_dir for k, s in got.items()} == {"c-one": APP, "c-two": APP, "c-api": API}
    s = got["c-one"]
    assert [p.text for p in s.prompts][0] == "make the date parser accept ISO weeks"
    assert s.finals == ["The parser accepts ISO weeks now.", "Kept the old format and added a test."]
    assert s.tools == {"run_terminal_command_v2": 1, "edit_file_v2": 1, "fetch_rules": 1, "read_file_v2": 1}
    assert s.prompts[0].shell == ["pytest -q"]
    assert "src/dates.py" in s.prompts[0].files
    assert s.skills == {"python-style": 1, "dates": 1}
    assert s.models == ["claude-4.5-sonnet", "gpt-5"]
    assert s.started_at == "2026-01-01T00:00:00.000Z" and s.ended_at == "2026-01-01T00:05:00.000Z"
    assert s.feedback and s.feedback[0].kind == "correction"
    # the draft in the input box is not a prompt, and nothing of the secrets beside the chats is kept
    stored = json.dumps([x.to_dict() for x in got.values()])
    for never in ("a draft the person has not sent", "never-read", "not-to-be-read"):
        assert never not in stored


def test_a_planted_secret_is_redacted_before_it_is_stored(user: Path) -> None:
    db = build(user)
    conn = sqlite3.connect(db)
    put_chat(conn, "c-sec", [_bubble("u1", 1, "run the deploy", 1),
                             _bubble("a1", 2, "", 2, toolFormerData=_tool(
                                 "run_terminal_cmd", {"command": f"GITHUB_TOKEN={SECRET} ./deploy.sh"}))],
             ident={"id": "a" * 32})
    conn.commit()
    conn.close()
    report = run(source="cursor")
    assert report.secrets_redacted >= 1  # the prompt's; a command is kept as its signature only
    index_bytes = b"".join(p.read_bytes() for p in user.parents[3].rglob("sleep.sqlite3*") if p.is_file())
    assert SECRET.encode() not in index_bytes
    assert "[REDACTED" in sessions()["c-one"].prompts[1].text


def test_re_harvest_reads_only_new_and_changed_chats(user: Path) -> None:
    db = build(user)
    run(source="cursor")
    again = run(source="cursor").sources["cursor-ide"]
    assert (again.files_read, again.files_unchanged, again.bytes_read) == (0, 3, 0)  # nothing read
    conn = sqlite3.connect(db)
    put_chat(conn, "c-new", [_bubble("u1", 1, "bump the version", 1)], ident={"id": "a" * 32})
    bubbles = chat_one() + [_bubble("u3", 1, "also update the changelog", 6), _bubble("a7", 2, "Updated.", 7)]
    put_chat(conn, "c-one", bubbles, updated=T0 + 420000, ident={"id": "a" * 32})
    conn.commit()
    conn.close()
    third = run(source="cursor").sources["cursor-ide"]
    assert (third.files_read, third.sessions_new, third.sessions_updated, third.files_unchanged) == (2, 1, 1, 2)
    assert len(sessions()["c-one"].prompts) == 3
    assert len(sessions()) == 4


def test_project_scope(user: Path) -> None:
    build(user)
    assert run(source="cursor", project="/work/elsewhere").sessions_new == 0
    assert run(source="cursor", project=API).sessions_new == 1
    assert set(sessions()) == {"c-api"}
    assert run(source="cursor", project=APP).sessions_new == 2


def test_bad_json_is_counted_and_costs_only_its_value(user: Path) -> None:
    db = build(user)
    conn = sqlite3.connect(db)
    conn.execute("INSERT INTO cursorDiskKV VALUES ('composerData:c-bad', '{not json')")
    conn.execute("UPDATE cursorDiskKV SET value = '{\"type\": 1, \"text\": ' WHERE key = 'bubbleId:c-two:a1'")
    conn.execute("INSERT INTO cursorDiskKV VALUES ('composerData:c-null', 'null')")
    conn.commit()
    conn.close()
    report = run(source="cursor")
    assert report.skipped_lines.get("invalid_json") == 2 and report.skipped_lines.get("not_an_object") == 1
    got = sessions()
    assert set(got) == {"c-one", "c-two", "c-api"}
    assert [p.text for p in got["c-two"].prompts] == ["rename the ledger module"]
    assert not got["c-two"].finals[0]  # its answer was the broken bubble


def test_harvest_while_the_ide_holds_a_write_transaction_and_nothing_is_written(user: Path) -> None:
    db = build(user)
    files = [db, Path(f"{db}-wal"), Path(f"{db}-shm")]
    writer = sqlite3.connect(db, isolation_level=None)
    writer.execute("PRAGMA wal_autocheckpoint=0")
    writer.execute("BEGIN IMMEDIATE")
    writer.execute("INSERT INTO cursorDiskKV VALUES ('composerData:c-pending', '{\"composerId\": \"c-pending\"}')")
    try:
        assert all(p.exists() for p in files)
        before = {p.name: (hashlib.sha256(p.read_bytes()).hexdigest(), os.stat(p).st_mtime_ns) for p in files}
        report = run(source="cursor")
        after = {p.name: (hashlib.sha256(p.read_bytes()).hexdigest(), os.stat(p).st_mtime_ns) for p in files}
        assert report.sources["cursor-ide"].sessions_new == 3  # the uncommitted chat is not seen
        assert after == before
    finally:
        writer.execute("COMMIT")
        writer.close()
    assert "c-pending" not in sessions()


def test_a_locked_rollback_journal_database_is_counted_not_fatal(user: Path) -> None:
    db = user / "globalStorage" / "state.vscdb"
    conn = _db(db, "ItemTable", "cursorDiskKV", wal=False)
    put_chat(conn, "c1", [_bubble("u1", 1, "hello", 1)])
    conn.execute("BEGIN EXCLUSIVE")  # a writer in the middle of a rollback-journal write
    try:
        report = run(source="cursor")
        assert report.skipped_files.get("unreadable_sqlite") == 1 and report.sessions_new == 0
    finally:
        conn.execute("COMMIT")
        conn.close()
    assert run(source="cursor").sessions_new == 1  # the next harvest reads it


def test_no_chat_table_and_an_empty_one(user: Path) -> None:
    db = user / "globalStorage" / "state.vscdb"
    _db(db, "ItemTable").close()  # VS Code's own shape: no cursorDiskKV at all
    report = run(source="cursor")
    assert (report.sessions_new, report.skipped) == (0, {})
    sqlite3.connect(db).execute(KV.format("cursorDiskKV")).connection.close()
    report = run(source="cursor")
    assert (report.sessions_new, report.skipped) == (0, {})


def test_an_old_chat_kept_whole_in_its_workspace_database(user: Path) -> None:
    _workspace(user, "c" * 32, APP, [{"composerId": "c-old", "createdAt": T0, "lastUpdatedAt": T0 + 1000,
                                      "conversation": [_bubble("u1", 1, "explain the build", 1),
                                                       _bubble("a1", 2, "It uses make.", 2)]}])
    run(source="cursor")
    [s] = sessions().values()
    assert (s.session_id, s.project_dir, s.finals) == ("c-old", APP, ["It uses make."])


def test_a_replay_chat_is_skipped(user: Path, tmp_path: Path) -> None:
    replay = tmp_path / "replays" / "skillopt-replay" / "r1"
    _workspace(user, "d" * 32, str(replay))
    conn = _db(user / "globalStorage" / "state.vscdb", "ItemTable", "cursorDiskKV")
    put_chat(conn, "c-r", [_bubble("u1", 1, "a replayed task", 1)], ident={"id": "d" * 32})
    conn.close()
    report = run(source="cursor")
    assert (report.sessions_new, report.replay_sessions_skipped) == (0, 1)


def test_registry_home_flag_and_watcher(user: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from sleep.cli import main

    assert "cursor-ide" in hosts.source_groups()["cursor"]
    elsewhere = tmp_path / "other" / "User"
    (elsewhere / "globalStorage").mkdir(parents=True)
    conn = _db(elsewhere / "globalStorage" / "state.vscdb", "ItemTable", "cursorDiskKV")
    put_chat(conn, "c-flag", [_bubble("u1", 1, "hello from another profile", 1)])
    conn.close()
    monkeypatch.setenv("SKILLOPT_CURSOR_IDE_HOME", "unset by the flag below")  # restored after the test
    assert main(["harvest", "--source", "cursor", "--cursor-ide-home", str(elsewhere), "--all-projects",
                 "--json"]) == 0
    assert set(sessions()) == {"c-flag"}
    monkeypatch.delenv("SKILLOPT_CURSOR_IDE_HOME")
    build(user)
    roots = transcript_roots()
    found = [f for f in all_sources()["cursor-ide"].discover(ParseStats())]
    assert len(found) == 3
    for f in found:  # a chat is noted when its database or its WAL changes
        assert f.container and any(r.host == "cursor-ide" and r.wants(f.container) for r in roots)
        assert any(r.host == "cursor-ide" and r.wants(f.container + "-wal") for r in roots)
    rules = hosts.skills_of("cursor").candidates("python-style", Path(APP))
    assert Path(APP) / ".cursor" / "rules" / "python-style.mdc" in rules


def test_chats_parsed_in_worker_processes_match_one_process(user: Path, homes: Homes,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    from sleep.harvest import pool as harvest_pool

    build(user)
    monkeypatch.setenv("SKILLOPT_HARVEST_WORKERS", "1")
    run(source="cursor")
    one = {k: s.to_dict() for k, s in sessions().items()}
    homes.index.unlink()
    monkeypatch.setenv("SKILLOPT_HARVEST_WORKERS", "2")
    monkeypatch.setattr(harvest_pool, "POOL_MIN_BYTES", 0)
    monkeypatch.setattr("sleep.harvest.harvester.POOL_MIN_BYTES", 0)
    report = run(source="cursor")
    pooled = {k: s.to_dict() for k, s in sessions().items()}
    assert report.sources["cursor-ide"].sessions_new == 3
    for d in (*one.values(), *pooled.values()):
        d.pop("harvested_at", None)
    assert pooled == one
    again = run(source="cursor").sources["cursor-ide"]
    assert again.files_read == 0


def test_the_chat_panel_of_older_versions(user: Path) -> None:
    """``workbench.panel.aichat.view.aichat.chatdata`` in a workspace database: the shape of the
    genuine one slevin48/cursor-history commits (74b0ce6, Cursor of 2024-11)."""
    db = _workspace(user, "e" * 32, APP)
    tabs = {"tabs": [
        {"tabId": "t-1", "chatTitle": "Sidebar", "lastSendTime": T0 + 5000, "tabState": "chat",
         "bubbles": [{"type": "user", "id": "b1", "text": "why does the sidebar overflow", "richText": "{}",
                      "messageType": 2, "fileSelections": [], "selections": []},
                     {"type": "ai", "id": "b2", "text": "The flex child needs min-width: 0.", "rawText": "...",
                      "modelType": "claude-3.5-sonnet", "requestId": "r1", "codeBlocks": []},
                     {"type": "user", "id": "b3", "text": "", "isFocused": True}]},
        {"tabId": "t-empty", "chatTitle": "New chat", "bubbles": [{"type": "user", "id": "b9", "text": ""}]}],
        "selectedTabId": "t-1", "displayTabs": True}
    put_legacy_tabs(db, tabs)
    run(source="cursor")
    [s] = sessions().values()
    assert (s.session_id, s.project_dir, [p.text for p in s.prompts]) == ("t-1", APP, ["why does the sidebar overflow"])
    assert s.finals == ["The flex child needs min-width: 0."] and s.models == ["claude-3.5-sonnet"]
    assert run(source="cursor").sources["cursor-ide"].files_read == 0


def test_with_the_watcher_a_chat_is_read_when_its_database_changes(user: Path, homes: Homes) -> None:
    """Through real file events: the IDE's write lands in the WAL; the watcher notes it; the
    next harvest reads the noted database's changed chat only."""
    import time

    from sleep.scheduler.watcher import Watcher

    db = build(user)
    w = Watcher(coalesce_s=0.2).start()
    try:
        first = run(source="cursor")
        assert first.sources["cursor-ide"].files_read == 3
        ide = sqlite3.connect(db, isolation_level=None)
        ide.execute("PRAGMA wal_autocheckpoint=0")  # the IDE holds it open: its writes stay in the WAL
        put_chat(ide, "c-two", [_bubble("u1", 1, "rename the ledger module", 1), _bubble("a1", 2, "Renamed.", 2),
                                _bubble("u2", 1, "and its tests", 3)], updated=T0 + 999999)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with Index.open() as index:
                noted = {p for (p,) in index.conn.execute("SELECT path FROM noted_files")}
            if noted & {str(db), f"{db}-wal"}:
                break
            time.sleep(0.05)
        assert noted & {str(db), f"{db}-wal"}
        second = run(source="cursor")
        ide.close()
    finally:
        w.stop()
    assert second.watch["cursor-ide"].startswith("noted files only")
    rep = second.sources["cursor-ide"]
    assert (rep.files_read, rep.sessions_updated, rep.files_unchanged) == (1, 1, 2)
    assert len(sessions()["c-two"].prompts) == 2


# ----- issue 31 §1: shapes of genuine Cursor databases --------------------------------------

def test_the_2023_chat_panel_keeps_the_typed_text_in_its_delegate(user: Path) -> None:
    """The 2023 chat panel (the genuine 2023 workspace ``state.vscdb`` issue 31 read; no public
    copy found with the search tool): a user bubble's ``text`` is empty and what was typed is in
    ``delegate.a``; each tab ends with the input box's empty draft, which is no prompt. The tab
    and bubble fields around them are those of slevin48/cursor-history 74b0ce6 (2024-11).
    Invented text in that shape."""
    db = _workspace(user, "f" * 32, APP)
    tabs = {"tabs": [
        {"tabId": "t-2023", "chatTitle": "Chat", "lastSendTime": T0 + 5000, "tabState": "chat",
         "bubbles": [{"type": "user", "id": "b1", "text": "", "delegate": {"a": "why is the build slow"},
                      "initText": "{}", "selections": [], "fileSelections": []},
                     {"type": "ai", "id": "b2", "text": "The cache is cold.", "modelType": "gpt-4",
                      "requestId": "r1"},
                     {"type": "user", "id": "b3", "text": "",  # serialised (not seen; read if a version does)
                      "delegate": json.dumps({"a": "no, it is warm; look again"})},
                     {"type": "ai", "id": "b4", "text": "Then the linker is the cost.", "modelType": "gpt-4"},
                     {"type": "user", "id": "b5", "text": "", "delegate": {"a": ""}, "isFocused": True}]}]}
    put_legacy_tabs(db, tabs)
    run(source="cursor")
    [s] = sessions().values()
    assert [p.text for p in s.prompts] == ["why is the build slow", "no, it is warm; look again"]
    assert s.project_dir == APP and s.finals == ["The cache is cold.", "Then the linker is the cost."]


def test_rows_with_a_null_key_or_value_are_skipped_and_counted(user: Path) -> None:
    """``cursorDiskKV`` of genuine databases holds rows whose value is NULL (chats and bubbles,
    listed or not: 16 in AdamEps/urpg_app e78fd6a state.vscdb) and one whose key is NULL (issue
    31's genuine files): each is counted, none stops the harvest."""
    build(user)
    conn = sqlite3.connect(user / "globalStorage" / "state.vscdb")
    conn.execute("INSERT INTO cursorDiskKV VALUES (NULL, ?)", (b"\x00\x01",))
    conn.execute("INSERT INTO cursorDiskKV VALUES ('bubbleId:c-two:unlisted', NULL)")
    conn.execute("INSERT INTO cursorDiskKV VALUES ('composerData:c-null', NULL)")
    conn.commit()
    conn.close()
    report = run(source="cursor")
    assert set(sessions()) == {"c-one", "c-two", "c-api"}
    assert report.skipped_lines.get("null_key") == 1
    assert report.skipped_lines.get("null_value") == 2


def test_an_empty_tool_former_data_is_no_tool_call(user: Path) -> None:
    """Most agent bubbles carry ``toolFormerData: {}`` (issue 31's genuine databases) or one with
    only ``additionalData`` (the genuine AdamEps/urpg_app e78fd6a global state.vscdb, see
    test_harvest_sqlite_genuine_shapes.py); a reply that is only that (a cancelled request) is no
    answer, so the next prompt is no reaction to one."""
    _workspace(user, "a" * 32, APP)
    conn = _db(user / "globalStorage" / "state.vscdb", "ItemTable", "cursorDiskKV")
    put_chat(conn, "c-empty", [
        _bubble("u1", 1, "rename the ledger module", 1),
        _bubble("a1", 2, "", 2, toolFormerData={}),
        _bubble("a2", 2, "", 2, toolFormerData={"additionalData": {}}),
        _bubble("u2", 1, "no, that is wrong, keep the old name", 3),
        _bubble("a3", 2, "Kept it.", 4, toolFormerData={}),
    ], ident={"id": "a" * 32})
    conn.close()
    run(source="cursor")
    s = sessions()["c-empty"]
    assert [p.text for p in s.prompts] == ["rename the ledger module", "no, that is wrong, keep the old name"]
    assert s.tools == {} and s.feedback == []
    assert s.finals == [None, "Kept it."]


def test_a_chat_reaches_its_folder_only_through_the_workspace_database(user: Path) -> None:
    """Newer workspace databases keep no ``allComposers``; ``composer.composerData`` is
    ``{selectedComposerIds, lastFocusedComposerIds, hasMigratedMultipleComposers}`` (the
    "current" shape a Cursor reader found with the search tool documents beside the legacy
    ``allComposers``). A chat whose record names no workspace gets its folder from there; a
    chat two workspaces name stays without one."""
    for wsh, folder, ids in (("a" * 32, APP, ["c-app", "c-both"]), ("b" * 32, API, ["c-both"])):
        ws = user / "workspaceStorage" / wsh
        ws.mkdir(parents=True)
        (ws / "workspace.json").write_text(json.dumps({"folder": "file://" + folder}))
        conn = _db(ws / "state.vscdb", "ItemTable", wal=False)
        conn.execute("INSERT INTO ItemTable VALUES ('composer.composerData', ?)", (json.dumps(
            {"selectedComposerIds": ids[:1], "lastFocusedComposerIds": ids, "hasMigratedComposerData": True,
             "hasMigratedMultipleComposers": True}),))
        conn.close()
    conn = _db(user / "globalStorage" / "state.vscdb", "ItemTable", "cursorDiskKV")
    put_chat(conn, "c-app", [_bubble("u1", 1, "add a healthcheck", 1)])
    put_chat(conn, "c-both", [_bubble("u1", 1, "add a readiness probe", 1)])
    conn.close()
    run(source="cursor")
    got = sessions()
    assert got["c-app"].project_dir == APP
    assert got["c-both"].project_dir is None
