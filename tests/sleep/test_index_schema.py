"""An index of every historic schema opens, gets what it lacks, and serves every command;
an index with a gap under its version number (the old build ca058ac) is repaired; an index
newer than the code is refused with one line and left as it was.

Historic indexes are built from the migration list itself (the first k migrations, with
``user_version`` k), so a migration added later gets its own case without editing this file.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import orjson
import pytest
from sleep_testutil import Homes

from sleep.cli import main
from sleep.index import MIGRATIONS, Index, Migration, _statements
from sleep.index_schema import added_by, gaps
from sleep.sessions import Session

HISTORIC = [m.version for m in MIGRATIONS]


def build(path: Path, versions: list[int], user_version: int | None = None) -> Path:
    """An index holding exactly the named migrations, claiming ``user_version`` (default: the last)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    for m in MIGRATIONS:
        if m.version in versions:
            for statement in _statements(m.sql):
                conn.execute(statement)
    conn.execute(f"PRAGMA user_version = {user_version if user_version is not None else max(versions)}")
    record = orjson.dumps(Session("codex", "s1", project_dir="/work/app").to_dict())
    conn.execute("INSERT INTO sessions (host, session_id, project_dir, data, harvested_at)"
                 " VALUES ('codex', 's1', '/work/app', ?, 't')", (record,))
    conn.commit()
    conn.close()
    return path


def tables(path: Path) -> set[str]:
    conn = sqlite3.connect(path)
    try:
        return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    finally:
        conn.close()


@pytest.mark.parametrize("version", HISTORIC)
def test_an_index_of_each_historic_schema_is_brought_up_to_date_keeping_its_rows(homes: Homes,
                                                                                 version: int) -> None:
    build(homes.index, [v for v in HISTORIC if v <= version])
    with Index.open() as index:
        assert index.schema_version == MIGRATIONS[-1].version
        assert gaps(index.conn, added_by(MIGRATIONS, _statements), index.schema_version) == []
        assert index.get_session("codex", "s1") is not None
    for command in (["tasks"], ["mine", "--all-projects"], ["review"], ["history"], ["status"]):
        assert main(command) == 0, command


def test_an_index_claiming_version_4_without_migration_3_gets_the_tasks_tables(homes: Homes, capsys) -> None:
    build(homes.index, [1, 2, 4])  # what the build ca058ac wrote: proposals numbered 4, no mined tasks
    assert "mine_sessions" not in tables(homes.index)
    assert main(["mine", "--all-projects"]) == 0
    assert main(["tasks"]) == 0
    assert "no such table" not in capsys.readouterr().err
    assert {"tasks", "task_members", "mine_prompts", "mine_sessions", "mine_runs"} <= tables(homes.index)
    with Index.open() as index:
        assert index.get_session("codex", "s1") is not None and index.repaired == []


def test_a_missing_column_below_the_version_is_added(homes: Homes) -> None:
    build(homes.index, [1], user_version=2)  # says 2, lacks migration 2's columns on sessions
    with Index.open() as index:
        assert any("migration 2" in r and "sessions.scripted" in r for r in index.repaired)
        cols = {r[1] for r in index.conn.execute("PRAGMA table_info(sessions)")}
    assert {"entrypoint", "scripted"} <= cols


def test_a_migration_added_later_is_checked_too(homes: Homes) -> None:
    later = Migration(MIGRATIONS[-1].version + 3, "a later table", "CREATE TABLE later_things (id TEXT PRIMARY KEY)")
    with Index.open() as index:
        index.migrate(MIGRATIONS + [later])
        index.conn.execute("DROP TABLE later_things")  # version says applied, the table is gone
        index.migrate(MIGRATIONS + [later])
        assert index.repaired == [f"migration {later.version} (table later_things)"]
    assert "later_things" in tables(homes.index)


def test_an_index_newer_than_this_build_is_refused_in_one_line_and_left_alone(homes: Homes, capsys) -> None:
    build(homes.index, HISTORIC, user_version=MIGRATIONS[-1].version + 1)
    before = homes.index.read_bytes()
    assert main(["review"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "newer" in err and str(homes.index) in err
    assert "Upgrade" in err and "Traceback" not in err
    assert homes.index.read_bytes() == before
