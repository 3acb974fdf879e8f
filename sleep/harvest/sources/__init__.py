"""Transcript sources: one module per host, one shared contract.

A source finds its host's session files (:meth:`Source.discover`) and turns the
bytes of one file, from a cursor offset, into at most one :class:`Session`
plus typed-prompt history lines (:meth:`Source.parse`). A store that keeps many
sessions in one database yields one *row file* per session (:class:`SourceFile`,
``container``), so the same rule holds: one cursor, one session. It never raises for bad
input: every skipped line or file is counted in ``ctx.stats`` by reason.
Secrets are redacted (``ctx.redactor``) before text enters a record.
Sessions that SkillOpt's own replays created are reported with
``ParseResult.replay`` so the harvester can skip and count them.
"""

from __future__ import annotations

import errno
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Protocol

import orjson

from sleep import paths
from sleep.harvest.reader import ParseContext, ParseStats, loads_lenient, open_binary
from sleep.jsonshape import as_dict as as_dict  # re-exported: the sources import them from here
from sleep.jsonshape import as_list as as_list
from sleep.sessions import HistoryPrompt, Session


@dataclass
class SourceFile:
    """One file a source will read.

    ``incremental``: an append-only line log, read from the cursor offset;
    otherwise the whole file is re-read whenever it changes.
    ``replay_hint``: the path alone shows it is a SkillOpt replay (not read).

    A *row file* is one chat inside a database that holds many (Cursor's
    ``state.vscdb``, OpenCode's ``opencode.db``): ``container`` is the database,
    ``path`` is ``<container>#<chat key>`` (:func:`sleep.harvest.sources.sqlite_ro.row_path`,
    the cursor's key) and ``version`` is ``(size, mtime_ns)`` as the source's listing
    knows the chat (its stored size and last update). The harvest compares that
    version instead of a file's stat, so a chat is re-read only when it changed, and
    the source's ``parse`` gets no open file (``f`` is None): it reads the database.
    """

    path: str
    host: str
    kind: str
    incremental: bool = True
    session_id: str | None = None
    parent_session_id: str | None = None
    project_dir: str | None = None
    project_slug: str | None = None
    replay_hint: bool = False
    container: str | None = None
    version: tuple[int, int] | None = None


@dataclass
class ParseResult:
    """What one read of one file produced.

    ``end_offset``: where the next incremental read starts (end of the last
    complete line). ``file_skip_reason``: the whole file was unusable (counted
    by the source); the harvester remembers it until the file changes.
    """

    session: Session | None = None
    history: list[HistoryPrompt] = field(default_factory=list)
    end_offset: int = 0
    replay: bool = False
    file_skip_reason: str | None = None


class Source(Protocol):
    """A host's transcript reader (see module docstring)."""

    name: str

    def discover(self, stats: ParseStats) -> Iterator[SourceFile]:
        """Every candidate file, cheaply (directory listings, no file content)."""
        ...

    def parse(self, file: SourceFile, f: BinaryIO | None, start: int, prior: Session | None,
              ctx: ParseContext) -> ParseResult:
        """Read ``f`` from byte ``start`` (0 unless incremental) continuing ``prior``
        (``f`` is None for a row file: the source reads its ``container``)."""
        ...

    def project_of(self, file: SourceFile, ctx: ParseContext) -> str | None:
        """The file's project directory, reading as little as possible (for --project)."""
        ...

    def scope_hint(self, file: SourceFile, project: str) -> bool | None:
        """False if the path alone rules the file out of ``project``; None if unknown."""
        ...


class HomeSource:
    """What most sources share: they read one folder of their host, ``home`` when given
    (a test's folder), else the host's own (:func:`sleep.paths.source_home` of :attr:`name`),
    and no path alone rules a file out (:meth:`scope_hint` None) unless the source says so."""

    name: str

    def __init__(self, home: Path | None = None) -> None:
        self._home = home

    @property
    def home(self) -> Path:
        return self._home or paths.source_home(self.name)

    def scope_hint(self, file: SourceFile, project: str) -> bool | None:
        return None


def block_text(content: Any) -> str:
    """The text of a message's content: the string, or its ``text`` blocks joined (tool calls,
    images and other blocks left out)."""
    if isinstance(content, str):
        return content
    return "\n".join(b["text"] for b in as_list(content)
                     if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str))


def slugify(path: str) -> str:
    """Claude Code's project folder name for a working directory."""
    return re.sub(r"[^A-Za-z0-9]", "-", path)


def scan_dir(path: Path | str, stats: ParseStats) -> list[os.DirEntry[str]]:
    """Entries of a directory, or [] (counted) if it cannot be listed."""
    try:
        with os.scandir(path) as it:
            return list(it)
    except (FileNotFoundError, NotADirectoryError):
        return []
    except OSError as exc:
        reason = "symlink_loop" if exc.errno == errno.ELOOP else "unreadable_directory"
        stats.skip_file(reason, str(path))
        return []


def is_dir(entry: os.DirEntry[str]) -> bool:
    """Whether ``entry`` is a directory (through a symlink too); False when it cannot be told."""
    try:
        return entry.is_dir()
    except OSError:
        return False


def walk_files(root: Path | str, want: Callable[[str], bool], stats: ParseStats,
               max_depth: int = 8) -> Iterator[str]:
    """Files under ``root`` whose name satisfies ``want``, following directory
    symlinks once each: a directory reached twice (a symlink loop) is counted
    as ``symlink_loop`` and not entered again."""
    seen: set[tuple[int, int]] = set()

    def visit(directory: str, depth: int) -> Iterator[str]:
        try:
            st = os.stat(directory)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                stats.skip_file("symlink_loop", directory)
            return
        key = (st.st_dev, st.st_ino)
        if key in seen:
            stats.skip_file("symlink_loop", directory)
            return
        seen.add(key)
        for entry in sorted(scan_dir(directory, stats), key=lambda e: e.name):
            if is_dir(entry):
                if depth < max_depth:
                    yield from visit(entry.path, depth + 1)
            elif want(entry.name):
                yield entry.path

    if os.path.isdir(root):
        yield from visit(str(root), 0)


def head_records(path: str, marker: bytes, max_lines: int,
                 max_line_bytes: int = 1 << 20) -> Iterator[dict[str, Any]]:
    """The JSON objects among the first ``max_lines`` lines of ``path`` whose bytes
    hold ``marker``: a cheap peek (for :meth:`Source.project_of`). Lines that do not
    decode are passed over uncounted; the full read counts them."""
    with open_binary(path) as f:
        for _ in range(max_lines):
            data = f.readline(max_line_bytes)
            if not data:
                return
            if marker not in data:
                continue
            try:
                rec = loads_lenient(data)
            except orjson.JSONDecodeError:
                continue
            if isinstance(rec, dict):
                yield rec


def text_of(value: object) -> str:
    """Text from a string or a list of text parts (``{"text": ...}`` blocks)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = []
        for item in value:
            if isinstance(item, str):
                parts.append(item)
            elif isinstance(item, dict) and isinstance(item.get("text"), str):
                parts.append(item["text"])
        return "\n".join(parts)
    return ""


# Separators may still be JSON-escaped (``skills\\\\name\\\\SKILL.md`` in a tool's raw
# argument string on Windows): one or more backslashes, or a slash.
SKILL_PATH_RX = re.compile(r"skills(?:/|\\+)([a-z0-9][a-z0-9\-]{0,63})(?:/|\\+)SKILL\.md")


def skills_in(text: str) -> list[str]:
    """Skill names whose SKILL.md a tool call opened (how Codex and Copilot load skills)."""
    return SKILL_PATH_RX.findall(text) if "SKILL.md" in text else []


def all_sources() -> dict[str, Source]:
    """Every source by name, in harvest order (one reader per source of every host in
    :mod:`sleep.hosts`)."""
    from sleep import hosts

    return {spec.name: spec.make_reader() for host in hosts.all_hosts() for spec in host.sources}


def __getattr__(name: str):
    # SOURCE_GROUPS: the CLI --source choices and the sources each selects, derived from the
    # host registry when read (so a host registered later is included).
    if name == "SOURCE_GROUPS":
        from sleep import hosts

        return hosts.source_groups()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
