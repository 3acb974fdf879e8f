"""OpenCode's SQLite store ``opencode.db`` (issue 22 §2).

The database is built here with the tables of OpenCode's drizzle schema
(anomalyco/opencode packages/opencode/src/session/session.sql.ts: ``session`` with
``project_id``, ``parent_id``, ``slug``, ``directory``, ``title``, ``version``,
``time_created``/``time_updated``; ``message(id, session_id, time_created, time_updated,
data)`` and ``part(id, message_id, session_id, time_created, time_updated, data)`` whose
``data`` is the record as JSON without its ids; project/project.sql.ts ``project(id,
worktree, vcs, ..., sandboxes)``). The same invented records are also written as the JSON
storage (tests/sleep/test_harvest_opencode.py's shape) to show one mapping serves both.
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

SHOP = "/work/shop"
BLOG = "/work/blog"
T0 = 1767225600000
SECRET = "AKIA" + "QX7MZ2WL9PDK4TNB"

SCHEMA = [
    "CREATE TABLE project (id TEXT PRIMARY KEY, worktree TEXT NOT NULL, vcs TEXT, name TEXT, icon_url TEXT, "
    "icon_color TEXT, time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, time_initialized INTEGER, "
    "sandboxes TEXT NOT NULL, commands TEXT)",
    "CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT NOT NULL REFERENCES project(id) ON DELETE CASCADE, "
    "workspace_id TEXT, parent_id TEXT, slug TEXT NOT NULL, directory TEXT NOT NULL, path TEXT, title TEXT NOT NULL, "
    "version TEXT NOT NULL, share_url TEXT, summary_additions INTEGER, summary_deletions INTEGER, "
    "summary_files INTEGER, summary_diffs TEXT, revert TEXT, permission TEXT, time_created INTEGER NOT NULL, "
    "time_updated INTEGER NOT NULL, time_compacting INTEGER, time_archived INTEGER)",
    "CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT NOT NULL REFERENCES session(id) ON DELETE CASCADE, "
    "time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL)",
    "CREATE INDEX message_session_time_created_id_idx ON message (session_id, time_created, id)",
    "CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT NOT NULL REFERENCES message(id) ON DELETE CASCADE, "
    "session_id TEXT NOT NULL, time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL)",
    "CREATE INDEX part_message_id_id_idx ON part (message_id, id)",
    "CREATE INDEX part_session_idx ON part (session_id)",
]


def records(sid: str, prompt: str = "add a discount code field to the cart") -> list[tuple[str, str, int, list[dict]]]:
    return [
        (f"msg_{sid}_1", "user", 1, [{"type": "text", "text": prompt},
                                     {"type": "text", "text": "<file>cart.tsx</file>", "synthetic": True}]),
        (f"msg_{sid}_2", "assistant", 2, [
            {"type": "step-start"},
            {"type": "tool", "tool": "bash", "callID": "c1",
             "state": {"status": "completed", "input": {"command": "pnpm test -- cart"}, "output": "ok"}},
            {"type": "tool", "tool": "edit", "callID": "c2",
             "state": {"status": "completed", "input": {"filePath": f"{SHOP}/src/cart.tsx"}}},
            {"type": "tool", "tool": "skill", "callID": "c3", "state": {"status": "completed",
                                                                       "input": {"name": "shop-conventions"}}},
            {"type": "text", "text": "Added the field."}]),
        (f"msg_{sid}_3", "user", 5, [{"type": "text", "text": "no, use the existing Input component"}]),
        (f"msg_{sid}_4", "assistant", 6, [{"type": "text", "text": "Switched to Input."}]),
    ]


def _msg(role: str, t: int) -> dict:
    msg: dict = {"role": role, "time": {"created": T0 + t * 60000}}
    if role == "assistant":
        msg.update(modelID="claude-sonnet-4", providerID="anthropic",
                   time={"created": T0 + t * 60000, "completed": T0 + (t + 1) * 60000})
    return msg


@pytest.fixture
def data(homes: Homes) -> Path:
    d = homes.home / ".local" / "share" / "opencode"
    d.mkdir(parents=True)
    return d


def make_db(data: Path, name: str = "opencode.db") -> sqlite3.Connection:
    conn = sqlite3.connect(data / name, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    for stmt in SCHEMA:
        conn.execute(stmt)
    for pid, tree in (("prj_shop", SHOP), ("prj_blog", BLOG)):
        conn.execute("INSERT INTO project (id, worktree, vcs, time_created, time_updated, sandboxes) "
                     "VALUES (?, ?, 'git', ?, ?, '[]')", (pid, tree, T0, T0))
    return conn


def add_session(conn: sqlite3.Connection, sid: str, project: str = "prj_shop", directory: str = SHOP,
                msgs: list | None = None, updated: int = T0 + 9 * 60000) -> None:
    conn.execute("INSERT INTO session (id, project_id, slug, directory, title, version, time_created, time_updated) "
                 "VALUES (?, ?, ?, ?, 'cart', '1.1.0', ?, ?)", (sid, project, sid, directory, T0, updated))
    for mid, role, t, parts in msgs if msgs is not None else records(sid):
        add_message(conn, sid, mid, role, t, parts)


def add_message(conn: sqlite3.Connection, sid: str, mid: str, role: str, t: int, parts: list[dict]) -> None:
    at = T0 + t * 60000
    conn.execute("INSERT INTO message VALUES (?, ?, ?, ?, ?)", (mid, sid, at, at, json.dumps(_msg(role, t))))
    for i, part in enumerate(parts):
        conn.execute("INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)", (f"prt_{mid}_{i:02d}", mid, sid, at, at,
                                                                     json.dumps(part)))


def write_json_storage(data: Path, sid: str, directory: str = SHOP) -> None:
    st = data / "storage"

    def put(path: Path, doc: dict) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(doc))

    put(st / "project" / "prj_shop.json", {"id": "prj_shop", "worktree": SHOP, "vcs": "git"})
    put(st / "session" / "prj_shop" / f"{sid}.json",
        {"id": sid, "projectID": "prj_shop", "directory": directory, "title": "cart", "version": "0.15.0",
         "time": {"created": T0, "updated": T0 + 9 * 60000}})
    for mid, role, t, parts in records(sid):
        put(st / "message" / sid / f"{mid}.json", {"id": mid, "sessionID": sid, **_msg(role, t)})
        for i, part in enumerate(parts):
            put(st / "part" / mid / f"prt_{mid}_{i:02d}.json", {"id": f"prt_{mid}_{i:02d}", "messageID": mid,
                                                                "sessionID": sid, **part})


def stored() -> dict:
    with Index.open() as idx:
        return {s.session_id: s for s in idx.sessions(host="opencode")}


def test_sessions_of_the_database(data: Path) -> None:
    conn = make_db(data)
    add_session(conn, "ses_a")
    add_session(conn, "ses_b", project="prj_blog", directory=BLOG,
                msgs=[("msg_b_1", "user", 1, [{"type": "text", "text": "draft a post about caching"}])])
    conn.close()
    assert sorted(os.listdir(data)) == ["opencode.db"]  # OpenCode closed it: no -wal/-shm beside it
    report = run(source="opencode")
    assert report.sources["opencode"].sessions_new == 2
    assert sorted(os.listdir(data)) == ["opencode.db"]  # and reading it left none either
    got = stored()
    assert {k: s.project_dir for k, s in got.items()} == {"ses_a": SHOP, "ses_b": BLOG}
    s = got["ses_a"]
    assert [p.text for p in s.prompts] == ["add a discount code field to the cart",
                                           "no, use the existing Input component"]
    assert s.finals == ["Added the field.", "Switched to Input."]
    assert s.tools == {"bash": 1, "edit": 1, "skill": 1} and s.skills == {"shop-conventions": 1}
    assert s.prompts[0].shell == ["pnpm test"] and s.prompts[0].files == ["src/cart.tsx"]
    assert s.models == ["claude-sonnet-4"]
    assert s.feedback and s.feedback[0].kind == "correction"


def test_one_mapping_for_both_stores(data: Path, homes: Homes, tmp_path: Path) -> None:
    write_json_storage(data, "ses_j")
    run(source="opencode")
    from_json = stored()["ses_j"].to_dict()
    homes.index.unlink()
    for p in (data / "storage").rglob("*.json"):
        p.unlink()
    conn = make_db(data)
    add_session(conn, "ses_j")
    conn.close()
    run(source="opencode")
    from_db = stored()["ses_j"].to_dict()
    for d in (from_json, from_db):
        d.pop("source_path", None)
        d.pop("harvested_at", None)
    assert from_db == from_json


def test_a_session_in_both_stores_is_counted_once(data: Path) -> None:
    write_json_storage(data, "ses_old")  # only in the JSON storage
    write_json_storage(data, "ses_moved")  # migrated: in both
    conn = make_db(data)
    add_session(conn, "ses_moved", msgs=records("ses_moved") + [
        ("msg_ses_moved_5", "user", 7, [{"type": "text", "text": "and add a test for it"}])])
    add_session(conn, "ses_new")
    conn.close()
    report = run(source="opencode")
    assert report.sources["opencode"].sessions_new == 3
    got = stored()
    assert set(got) == {"ses_old", "ses_moved", "ses_new"}
    assert len(got["ses_moved"].prompts) == 3  # the database's, newer than the JSON copy


def test_re_harvest_reads_only_changed_sessions(data: Path) -> None:
    conn = make_db(data)
    add_session(conn, "ses_a")
    add_session(conn, "ses_b")
    run(source="opencode")
    again = run(source="opencode").sources["opencode"]
    assert (again.files_read, again.bytes_read) == (0, 0)
    add_message(conn, "ses_a", "msg_ses_a_5", "user", 8, [{"type": "text", "text": "also update the docs"}])
    add_session(conn, "ses_c")
    third = run(source="opencode").sources["opencode"]
    assert (third.files_read, third.sessions_new, third.sessions_updated) == (2, 1, 1)
    assert len(stored()["ses_a"].prompts) == 3
    conn.close()


def test_project_scope_and_a_planted_secret(data: Path, homes: Homes) -> None:
    conn = make_db(data)
    add_session(conn, "ses_a", msgs=records("ses_a", prompt=f"deploy with key {SECRET} please"))
    add_session(conn, "ses_b", project="prj_blog", directory=BLOG)
    conn.close()
    assert run(source="opencode", project="/work/elsewhere").sessions_new == 0
    assert run(source="opencode", project=SHOP).sessions_new == 1
    assert set(stored()) == {"ses_a"}
    assert SECRET not in stored()["ses_a"].prompts[0].text
    index_bytes = b"".join(p.read_bytes() for p in homes.skillopt.rglob("*") if p.is_file())
    assert SECRET.encode() not in index_bytes


def test_bad_json_data_is_counted(data: Path) -> None:
    conn = make_db(data)
    add_session(conn, "ses_a")
    conn.execute("UPDATE part SET data = '{\"type\": \"text\", ' WHERE id = 'prt_msg_ses_a_4_00'")
    conn.execute("UPDATE message SET data = '[1, 2]' WHERE id = 'msg_ses_a_3'")
    conn.close()
    report = run(source="opencode")
    assert report.skipped_lines.get("invalid_json") == 1 and report.skipped_lines.get("not_an_object") == 1
    s = stored()["ses_a"]
    assert [p.text for p in s.prompts] == ["add a discount code field to the cart"]


def test_harvest_while_opencode_writes_and_nothing_is_written(data: Path) -> None:
    conn = make_db(data)
    add_session(conn, "ses_a")
    db = data / "opencode.db"
    files = [db, Path(f"{db}-wal"), Path(f"{db}-shm")]
    conn.execute("PRAGMA wal_autocheckpoint=0")
    conn.execute("BEGIN IMMEDIATE")
    add_session(conn, "ses_pending")
    try:
        before = {p.name: (hashlib.sha256(p.read_bytes()).hexdigest(), os.stat(p).st_mtime_ns) for p in files}
        assert run(source="opencode").sessions_new == 1
        after = {p.name: (hashlib.sha256(p.read_bytes()).hexdigest(), os.stat(p).st_mtime_ns) for p in files}
        assert after == before
    finally:
        conn.execute("COMMIT")
        conn.close()
    assert run(source="opencode").sessions_new == 1  # committed now: read by the next harvest


def test_no_session_table_yet(data: Path) -> None:
    sqlite3.connect(data / "opencode.db").execute("CREATE TABLE kv (k TEXT)").connection.close()
    report = run(source="opencode")
    assert (report.sessions_new, report.skipped) == (0, {})


def test_registry_channel_database_and_watcher(data: Path) -> None:
    from sleep.cli import main

    assert hosts.source_groups()["opencode"] == ("opencode",)
    conn = make_db(data, "opencode-local.db")
    add_session(conn, "ses_dev")
    conn.close()
    assert main(["harvest", "--source", "opencode", "--all-projects", "--json"]) == 0
    assert set(stored()) == {"ses_dev"}
    roots = transcript_roots()
    [f] = all_sources()["opencode"].discover(ParseStats())
    assert f.container == str(data / "opencode-local.db")
    assert any(r.host == "opencode" and r.wants(f.container) for r in roots)
    assert any(r.host == "opencode" and r.wants(f.container + "-wal") for r in roots)
    assert not any(r.host == "opencode" and r.wants(str(data / "opencode.db-shm")) for r in roots)
