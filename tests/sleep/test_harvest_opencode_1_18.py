"""OpenCode 1.18 stores as the host writes them (issue 31 item 1).

Shapes seen in the npm package ``opencode-ai`` 1.18.33 (its ``opencode-linux-x64`` binary
embeds the drizzle migrations and the Effect schemas): ``session_message(id, session_id,
type, seq, time_created, time_updated, data)`` with ``data`` the record without ``id`` and
``type`` (``Session.Message.User {text, files?}``, ``ModelSwitched {model: {id, providerID,
variant?}}``, ``Assistant {agent, model, content: [text | reasoning | tool {id, name,
state}]}``, ``Shell {callID, command, output}``); ``session_input(id, session_id, prompt,
delivery, admitted_seq, promoted_seq, time_created)`` with ``prompt`` ``{text}``;
``credential(id, connector_id, method_id, label, value, active, ...)`` and ``account(id,
email, url, access_token, refresh_token, ...)``; the ``question`` tool's completed state
``metadata.answers`` (one list per question); and the user-run shell command written as a
user message whose only text is the synthetic "The following tool was executed by the
user" followed by an assistant ``bash`` tool part. A genuine ``opencode.db`` with its WAL is
committed in brunoaguiarmazoni/Autocheck (91755a8; not copied here). Every record below is
invented; the tokens are synthetic.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path

import pytest
from sleep_testutil import Homes, run

from sleep.index import Index
from test_harvest_opencode_db import SHOP, T0, add_session, make_db

V2_SCHEMA = [
    "CREATE TABLE session_message (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, type TEXT NOT NULL, "
    "seq INTEGER NOT NULL, time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL)",
    "CREATE TABLE session_input (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, prompt TEXT NOT NULL, "
    "delivery TEXT NOT NULL, admitted_seq INTEGER NOT NULL, promoted_seq INTEGER, time_created INTEGER NOT NULL)",
    "CREATE TABLE event_sequence (aggregate_id TEXT PRIMARY KEY, seq INTEGER NOT NULL)",
    "CREATE TABLE event (id TEXT PRIMARY KEY, aggregate_id TEXT NOT NULL, seq INTEGER NOT NULL, type TEXT NOT NULL, "
    "data TEXT NOT NULL)",
    "CREATE TABLE credential (id TEXT PRIMARY KEY, connector_id TEXT NOT NULL, method_id TEXT NOT NULL, "
    "label TEXT NOT NULL, value TEXT NOT NULL, active INTEGER DEFAULT false NOT NULL, time_created INTEGER NOT NULL, "
    "time_updated INTEGER NOT NULL)",
    "CREATE TABLE account (id TEXT PRIMARY KEY, email TEXT NOT NULL, url TEXT NOT NULL, access_token TEXT NOT NULL, "
    "refresh_token TEXT NOT NULL, token_expiry INTEGER, selected_org_id TEXT, time_created INTEGER NOT NULL, "
    "time_updated INTEGER NOT NULL)",
]
CRED_VALUE = "synthetic-credential-value-not-a-real-token-0001"
ACCESS = "synthetic-access-token-not-real-0002"
REFRESH = "synthetic-refresh-token-not-real-0003"


@pytest.fixture
def data(homes: Homes) -> Path:
    d = homes.home / ".local" / "share" / "opencode"
    d.mkdir(parents=True)
    return d


def stored() -> dict:
    with Index.open() as idx:
        return {s.session_id: s for s in idx.sessions(host="opencode")}


def test_rows_only_in_an_orphan_wal_are_read_and_nothing_is_written_beside_the_db(data: Path, tmp_path: Path) -> None:
    """A copied home (or a host that died) leaves ``opencode.db-wal`` without its ``-shm``:
    the rows in the WAL are read, and no ``-shm`` appears beside the person's database."""
    src = tmp_path / "live"
    src.mkdir()
    conn = make_db(src)
    conn.execute("PRAGMA wal_autocheckpoint=0")
    add_session(conn, "ses_in_wal")
    try:
        assert os.path.getsize(src / "opencode.db-wal") > 0
        shutil.copyfile(src / "opencode.db", data / "opencode.db")
        shutil.copyfile(src / "opencode.db-wal", data / "opencode.db-wal")
    finally:
        conn.close()
    before = sorted(os.listdir(data))
    assert run(source="opencode").sessions_new == 1
    assert [p.text for p in stored()["ses_in_wal"].prompts] == ["add a discount code field to the cart",
                                                                "no, use the existing Input component"]
    assert sorted(os.listdir(data)) == before


def orphan_wal(src: Path, data: Path, sessions: int) -> None:
    """OpenCode's database with ``sessions`` sessions, all still in its WAL, copied into ``data`` while
    the writer is open (so the WAL is not checkpointed away)."""
    src.mkdir()
    conn = make_db(src)
    conn.execute("PRAGMA wal_autocheckpoint=0")
    for i in range(sessions):
        add_session(conn, f"ses_{i}")
    try:
        for name in ("opencode.db", "opencode.db-wal"):
            shutil.copyfile(src / name, data / name)
    finally:
        conn.close()


def test_an_orphan_wal_is_copied_once_for_all_its_sessions(data: Path, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    from sleep.harvest.sources import sqlite_ro

    orphan_wal(tmp_path / "live", data, sessions=5)
    copied: list[str] = []
    real = sqlite_ro.shutil.copyfile
    monkeypatch.setattr(sqlite_ro.shutil, "copyfile", lambda a, b_: (copied.append(str(a)), real(a, b_))[1])
    assert run(source="opencode").sessions_new == 5
    assert sorted(copied) == [str(data / "opencode.db"), str(data / "opencode.db-wal")]


def test_harvest_workers_remove_their_copies(data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tempfile

    from sleep.harvest import pool as harvest_pool

    tmp = tmp_path / "tmp"
    tmp.mkdir()
    orphan_wal(tmp_path / "live", data, sessions=6)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    monkeypatch.setenv("SKILLOPT_HARVEST_WORKERS", "2")
    monkeypatch.setattr(harvest_pool, "POOL_MIN_BYTES", 0)
    monkeypatch.setattr("sleep.harvest.harvester.POOL_MIN_BYTES", 0)
    used: list[int] = []
    real_map = harvest_pool.Pool.map
    monkeypatch.setattr(harvest_pool.Pool, "map", lambda self, jobs: (used.append(len(jobs)), real_map(self, jobs))[1])
    assert run(source="opencode").sessions_new == 6
    assert used  # the sessions went through the workers
    from sleep.harvest.sources import sqlite_ro

    sqlite_ro._drop_copies()  # this process's own copy (made while listing the sessions)
    assert list(tmp.iterdir()) == []


def test_rows_in_the_wal_of_a_running_opencode_are_read(data: Path) -> None:
    conn = make_db(data)
    conn.execute("PRAGMA wal_autocheckpoint=0")
    add_session(conn, "ses_live")  # committed, but only in opencode.db-wal while the writer stays open
    try:
        assert run(source="opencode").sessions_new == 1
        assert stored()["ses_live"].prompts[0].text == "add a discount code field to the cart"
    finally:
        conn.close()


def _v2_db(data: Path) -> sqlite3.Connection:
    conn = make_db(data)
    for stmt in V2_SCHEMA:
        conn.execute(stmt)
    return conn


def _row(conn: sqlite3.Connection, sid: str, seq: int, kind: str, data: dict) -> None:
    at = T0 + seq * 1000
    conn.execute("INSERT INTO session_message VALUES (?, ?, ?, ?, ?, ?, ?)",
                 (f"msg_{sid}_{seq:03d}", sid, kind, seq, at, at, json.dumps({"time": {"created": at}, **data})))


def test_session_message_records_inputs_and_secrets_of_1_18(data: Path, homes: Homes) -> None:
    conn = _v2_db(data)
    sid = "ses_v2"
    add_session(conn, sid, msgs=[])
    model = {"id": "gpt-5.2", "providerID": "openai"}
    _row(conn, sid, 1, "model-switched", {"model": model})
    _row(conn, sid, 2, "user", {"text": "rename the cart total helper"})
    _row(conn, sid, 3, "assistant", {"agent": "build", "model": model, "content": [
        {"type": "reasoning", "id": "r1", "text": "Look for the helper."},
        {"type": "tool", "id": "t1", "name": "bash", "state": {"status": "completed",
                                                             "input": {"command": "rg cartTotal"},
                                                             "content": [], "structured": {}}},
        {"type": "text", "id": "x1", "text": "Renamed it."}]})
    _row(conn, sid, 4, "shell", {"callID": "c9", "command": "git status", "output": "clean"})
    _row(conn, sid, 5, "model-switched", {"model": {"id": "claude-opus-4", "providerID": "anthropic"}})
    _row(conn, sid, 6, "synthetic", {"sessionID": sid, "text": "Summary of earlier work"})
    _row(conn, sid, 7, "user", {"text": "now the tests", "files": []})
    conn.execute("INSERT INTO session_input VALUES ('in_1', ?, ?, 'queue', 7, 7, ?)",
                 (sid, json.dumps({"text": "now the tests"}), T0))  # promoted: already the user row
    conn.execute("INSERT INTO session_input VALUES ('in_2', ?, ?, 'queue', 8, NULL, ?)",
                 (sid, json.dumps({"text": "and update the changelog"}), T0 + 9000))  # typed, not yet sent
    conn.execute("INSERT INTO credential VALUES ('cr_1', 'openai', 'api', 'work key', ?, 1, ?, ?)",
                 (CRED_VALUE, T0, T0))
    conn.execute("INSERT INTO account VALUES ('ac_1', 'dev@example.com', 'https://opencode.example', ?, ?, NULL, NULL, "
                 "?, ?)", (ACCESS, REFRESH, T0, T0))
    conn.execute("INSERT INTO event_sequence VALUES (?, 1)", (sid,))
    conn.execute("INSERT INTO event VALUES ('evt_1', ?, 1, 'session.next.prompted', ?)",
                 (sid, json.dumps({"prompt": {"text": "rename the cart total helper"}})))
    conn.close()
    assert run(source="opencode").sessions_new == 1
    s = stored()[sid]
    assert [p.text for p in s.prompts] == ["rename the cart total helper", "now the tests",
                                           "and update the changelog"]
    assert s.project_dir == SHOP
    assert s.models == ["gpt-5.2", "claude-opus-4"]
    assert s.tools == {"bash": 1}
    assert s.prompts[0].shell == ["rg", "git status"]
    assert s.finals[0] == "Renamed it."
    stored_bytes = b"".join(p.read_bytes() for p in homes.index.parent.glob(homes.index.name + "*"))
    assert b"rename the cart total helper" in stored_bytes  # the index is what was read
    for secret in (CRED_VALUE, ACCESS, REFRESH, "dev@example.com"):
        assert secret.encode() not in stored_bytes


def test_a_shell_run_by_the_person_is_a_shell_action_not_a_prompt_or_an_agent_tool(data: Path) -> None:
    conn = make_db(data)
    add_session(conn, "ses_bang", msgs=[
        ("msg_1", "user", 1, [{"type": "text", "text": "why does the build fail"}]),
        ("msg_2", "assistant", 2, [{"type": "text", "text": "A missing import."}]),
        ("msg_3", "user", 3, [{"type": "text", "text": "The following tool was executed by the user",
                               "synthetic": True}]),
        ("msg_4", "assistant", 4, [{"type": "tool", "tool": "bash", "callID": "c1", "state": {
            "status": "completed", "input": {"command": "make clean"}, "output": "ok"}}]),
    ])
    conn.close()
    run(source="opencode")
    s = stored()["ses_bang"]
    assert [p.text for p in s.prompts] == ["why does the build fail"]
    assert s.prompts[0].shell == ["make clean"]
    assert s.tools == {}  # the agent ran nothing


def test_answers_to_the_question_tool_are_the_persons_words(data: Path) -> None:
    conn = make_db(data)
    add_session(conn, "ses_q", msgs=[
        ("msg_1", "user", 1, [{"type": "text", "text": "set up the release workflow"}]),
        ("msg_2", "assistant", 2, [{"type": "tool", "tool": "question", "callID": "c1", "state": {
            "status": "completed",
            "input": {"questions": [{"question": "Which registry?", "header": "Registry",
                                     "options": [{"label": "npm", "description": "public"}]}]},
            "output": 'User has answered your questions: "Which registry?"="GitHub packages, not npm". '
                      "You can now continue with the user's answers in mind.",
            "metadata": {"answers": [["GitHub packages, not npm"]]}}}]),
    ])
    conn.close()
    run(source="opencode")
    s = stored()["ses_q"]
    assert [p.text for p in s.prompts] == ["set up the release workflow"]
    assert [(f.kind, f.text, f.prompt_index) for f in s.feedback if f.text == "GitHub packages, not npm"] \
        in ([("answer", "GitHub packages, not npm", 0)], [("correction", "GitHub packages, not npm", 0)])


def test_version_strings_with_suffixes_are_taken_as_they_are(data: Path) -> None:
    """``session.version`` is free text (1.18.11 writes ``local`` for a build from source; channel
    builds add ``-beta.N``, ``-dev-<stamp>``): nothing is parsed from it, every session is read."""
    conn = make_db(data)
    for i, version in enumerate(("1.18.33-beta.2", "0.0.0-dev-202606101200", "local", "")):
        add_session(conn, f"ses_v{i}")
        conn.execute("UPDATE session SET version = ? WHERE id = ?", (version, f"ses_v{i}"))
    conn.close()
    assert run(source="opencode").sessions_new == 4
    assert all(s.prompts[0].text == "add a discount code field to the cart" for s in stored().values())


def test_a_session_in_both_message_tables_is_read_once(data: Path) -> None:
    """A 1.18 session whose turns are in ``message``/``part`` and again in ``session_message``:
    each prompt once (the ``session_message`` rows are the session's messages)."""
    conn = _v2_db(data)
    add_session(conn, "ses_both")  # the two prompts of test_harvest_opencode_db.records
    _row(conn, "ses_both", 1, "user", {"text": "add a discount code field to the cart"})
    _row(conn, "ses_both", 2, "assistant", {"agent": "build", "model": {"id": "claude-sonnet-4", "providerID": "a"},
                                            "content": [{"type": "text", "id": "x", "text": "Added the field."}]})
    _row(conn, "ses_both", 3, "user", {"text": "no, use the existing Input component"})
    conn.close()
    assert run(source="opencode").sessions_new == 1
    s = stored()["ses_both"]
    assert [p.text for p in s.prompts] == ["add a discount code field to the cart",
                                           "no, use the existing Input component"]
    assert s.project_dir == SHOP
