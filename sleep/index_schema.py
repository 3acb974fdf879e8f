"""What each index migration creates, and the check that an index really has it.

``PRAGMA user_version`` alone is not trusted. An index written by an older
build can say version 4 without migration 3's tables (two branches numbered
their migrations independently, and the one that landed first took 4), and a
later build would then apply 5, 6, ... on top and fail for ever on the missing
tables. So the expected schema is derived from the migration list itself: the
migrations are applied, in order, to an empty in-memory database, and the
tables, columns and indexes each one adds are noted. :func:`gaps` lists what a
database lacks of the migrations up to its version, :func:`repair` adds it.
A migration added later, with any version number, is covered without touching
this module.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol


class _Migration(Protocol):
    @property
    def version(self) -> int: ...
    @property
    def description(self) -> str: ...
    @property
    def sql(self) -> str: ...


@dataclass(frozen=True)
class Added:
    """The schema objects one migration adds (as they stand right after it)."""

    version: int
    description: str
    tables: dict[str, str] = field(default_factory=dict)  # name -> CREATE TABLE statement
    columns: dict[tuple[str, str], str] = field(default_factory=dict)  # (table, column) -> column definition
    indexes: dict[str, str] = field(default_factory=dict)  # name -> CREATE INDEX statement


@dataclass(frozen=True)
class Gap:
    """What a database lacks of one migration at or below its version."""

    added: Added
    tables: list[str]
    columns: list[tuple[str, str]]
    indexes: list[str]

    def describe(self) -> str:
        parts = [f"table {t}" for t in self.tables] + [f"column {t}.{c}" for t, c in self.columns] \
            + [f"index {i}" for i in self.indexes]
        return f"migration {self.added.version} ({', '.join(parts)})"


_cache: dict[tuple, list[Added]] = {}


def added_by(migrations: Sequence[_Migration], statements) -> list[Added]:
    """For each migration (in version order), what it adds; cached per migration list."""
    ordered = sorted(migrations, key=lambda m: m.version)
    key = tuple((m.version, m.sql) for m in ordered)
    if key not in _cache:
        conn = sqlite3.connect(":memory:")
        try:
            out, before = [], _schema(conn)
            for m in ordered:
                for statement in statements(m.sql):
                    conn.execute(statement)
                after = _schema(conn)
                out.append(Added(
                    m.version, m.description,
                    tables={t: sql for t, (sql, _) in after.tables.items() if t not in before.tables},
                    columns={(t, c): d for t, (_, cols) in after.tables.items() for c, d in cols.items()
                             if c not in before.tables.get(t, ("", {}))[1]},
                    indexes={i: sql for i, sql in after.indexes.items() if i not in before.indexes}))
                before = after
        finally:
            conn.close()
        _cache[key] = out
    return _cache[key]


def gaps(conn: sqlite3.Connection, added: list[Added], version: int) -> list[Gap]:
    """What ``conn`` lacks of the migrations numbered ``version`` or lower."""
    have = _names(conn)
    out = []
    for a in added:
        if a.version > version:
            continue
        tables = [t for t in a.tables if t not in have.tables]
        columns = [(t, c) for (t, c) in a.columns if t in have.tables and c not in have.tables[t]]
        indexes = [i for i in a.indexes if i not in have.indexes]
        if tables or columns or indexes:
            out.append(Gap(a, tables, columns, indexes))
    return out


def repair(conn: sqlite3.Connection, found: list[Gap]) -> None:
    """Add what :func:`gaps` found, oldest migration first (the caller holds a transaction).

    A missing table is created as it stood right after its migration (later
    migrations' columns are then added by their own gaps); a missing column is
    added with its declared type, NOT NULL and default.
    """
    for gap in found:
        for t in gap.tables:
            conn.execute(gap.added.tables[t])
        for t, c in gap.columns:
            conn.execute(f'ALTER TABLE "{t}" ADD COLUMN {gap.added.columns[(t, c)]}')
        for i in gap.indexes:
            conn.execute(gap.added.indexes[i])


@dataclass
class _Snapshot:
    tables: dict[str, tuple[str, dict[str, str]]]  # name -> (sql, column -> definition)
    indexes: dict[str, str]


@dataclass
class _Names:
    tables: dict[str, set[str]]
    indexes: set[str]


def _schema(conn: sqlite3.Connection) -> _Snapshot:
    tables: dict[str, tuple[str, dict[str, str]]] = {}
    indexes: dict[str, str] = {}
    for kind, name, sql in conn.execute("SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL"
                                        " AND name NOT LIKE 'sqlite_%'"):
        if kind == "table":
            cols = {row[1]: _definition(row) for row in conn.execute(f'PRAGMA table_info("{name}")')}
            tables[name] = (sql, cols)
        elif kind == "index":
            indexes[name] = sql
    return _Snapshot(tables, indexes)


def _definition(row: tuple) -> str:
    """``ALTER TABLE ... ADD COLUMN`` text for a ``PRAGMA table_info`` row."""
    _, name, kind, notnull, default, _pk = row
    text = f'"{name}" {kind}'.rstrip()
    if notnull:
        text += " NOT NULL"
    if default is not None:
        text += f" DEFAULT {default}"
    return text


def _names(conn: sqlite3.Connection) -> _Names:
    tables: dict[str, set[str]] = {}
    for table, column in conn.execute("SELECT m.name, p.name FROM sqlite_master AS m"
                                      " JOIN pragma_table_info(m.name) AS p WHERE m.type = 'table'"):
        tables.setdefault(table, set()).add(column)
    indexes = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    return _Names(tables, indexes)
