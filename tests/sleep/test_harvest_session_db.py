"""The Goose and Hermes sources read their SQLite stores through one helper
(sleep.harvest.sources.session_db): a store that is not a database is counted, never
raised; a store without the tables yet lists nothing; a session deleted between the
listing and the read is skipped as gone."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import goose_testutil as g
import pytest
from test_harvest_amp_hermes import _hermes_rows, hermes_db, hermes_session

from sleep.harvest.reader import ParseContext, ParseStats
from sleep.harvest.sources.goose import GooseSource, database
from sleep.harvest.sources.hermes import HermesSource


def _goose(tmp_path: Path) -> tuple[GooseSource, sqlite3.Connection]:
    conn = g.make_db(tmp_path)
    g.add_session(conn, "20260501_1", "/work/pots", [("user", [g.text("water the pots")], 1777629600, g.VISIBLE)])
    return GooseSource(tmp_path), conn


def _hermes(tmp_path: Path) -> tuple[HermesSource, sqlite3.Connection]:
    conn = hermes_db(tmp_path)
    hermes_session(conn, "20260501_100000_ab12", "cli", _hermes_rows())
    return HermesSource(tmp_path / ".hermes"), conn


@pytest.mark.parametrize("make", [_goose, _hermes])
def test_a_store_that_is_not_a_database_is_counted(tmp_path: Path, make) -> None:
    source, conn = make(tmp_path)
    conn.close()
    db = database(tmp_path) if isinstance(source, GooseSource) else tmp_path / ".hermes" / "state.db"
    for side in (Path(f"{db}-wal"), Path(f"{db}-shm")):
        side.unlink(missing_ok=True)
    db.write_bytes(b"not a database at all" * 100)
    stats = ParseStats()
    assert list(source.discover(stats)) == []
    assert stats.skipped_files == {"unreadable_sqlite": 1}


@pytest.mark.parametrize("make", [_goose, _hermes])
def test_a_store_without_its_tables_lists_nothing(tmp_path: Path, make) -> None:
    source, conn = make(tmp_path)
    conn.execute("DROP TABLE messages")
    conn.commit()
    stats = ParseStats()
    assert list(source.discover(stats)) == [] and not stats.skipped_files
    conn.close()


@pytest.mark.parametrize("make", [_goose, _hermes])
def test_a_session_deleted_after_the_listing_is_gone(tmp_path: Path, make) -> None:
    source, conn = make(tmp_path)
    [file] = list(source.discover(ParseStats()))
    ctx = ParseContext()
    assert source.parse(file, None, 0, None, ctx).session is not None
    conn.execute("DELETE FROM messages")
    conn.execute("DELETE FROM sessions")
    conn.commit()
    result = source.parse(file, None, 0, None, ctx)
    assert result.session is None and result.file_skip_reason == "session_gone"
    conn.close()
