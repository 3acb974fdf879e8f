"""OpenCode sessions in its JSON storage: ``$XDG_DATA_HOME/opencode/storage``
(default ``~/.local/share/opencode/storage``; docs/sleep-harvest.md, "What is read").

OpenCode keeps one JSON file per thing: ``project/<projectID>.json``
(``{id, worktree, vcs}``), ``session/<projectID>/<sessionID>.json`` (``{id,
projectID, directory, title, parentID?, time: {created, updated}}``),
``message/<sessionID>/<messageID>.json`` (``{id, sessionID, role, time,
modelID?, providerID?, path?: {cwd, root}}``) and ``part/<messageID>/<partID>.json``
(``{id, messageID, type, ...}``: ``text`` parts hold ``text`` (``synthetic``
ones are injected, not typed), ``tool`` parts ``tool`` and ``state: {status,
input, output}``). IDs sort in creation order.

One session is one source file (its ``session/...json``); when it changes (OpenCode
updates ``time.updated`` with every message) the session is re-read whole from its
message and part files. Newer versions keep the same records in ``opencode.db`` in the
same data folder (sleep.harvest.sources.opencode_db); this source reads both, the database first,
and a session the database holds is not read from the JSON storage again. Both loaders
share one mapping (sleep.harvest.sources.opencode_map).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from sleep.harvest.reader import ParseContext, ParseStats
from sleep.harvest.side_files import read_side_file
from sleep.harvest.sources import HomeSource, ParseResult, SourceFile, is_dir, opencode_db, scan_dir
from sleep.harvest.sources.opencode_map import HOST, Message, build_session, session_dir
from sleep.sessions import Session

MAX_JSON_BYTES = 16 << 20


class OpenCodeSource(HomeSource):
    name = HOST

    @property
    def storage(self) -> Path:
        return self.home / "storage"

    def discover(self, stats: ParseStats) -> Iterator[SourceFile]:
        # The database first: a session it holds is not read again from the JSON storage
        # it was migrated from (one session, one record).
        in_db: set[str] = set()
        for file in opencode_db.discover(self.home, stats):
            in_db.add(file.session_id or "")
            yield file
        for project in sorted(scan_dir(self.storage / "session", stats), key=lambda e: e.name):
            if not is_dir(project):
                continue
            for entry in sorted(scan_dir(project.path, stats), key=lambda e: e.name):
                if entry.name.endswith(".json") and entry.name[:-5] not in in_db:
                    yield SourceFile(entry.path, HOST, "session", incremental=False,
                                     session_id=entry.name[:-5], project_slug=project.name)

    def project_of(self, file: SourceFile, ctx: ParseContext) -> str | None:
        if file.container is not None:
            return file.project_dir
        doc = _read_json(Path(file.path), ctx, count=False)
        return _session_dir(doc, self.storage) if doc is not None else None

    def parse(self, file: SourceFile, f: BinaryIO | None, start: int, prior: Session | None,
              ctx: ParseContext) -> ParseResult:
        if file.container is not None:
            return opencode_db.parse(file, ctx)
        assert f is not None
        data = f.read(MAX_JSON_BYTES + 1)
        ctx.stats.bytes_read += len(data)
        if len(data) > MAX_JSON_BYTES:
            ctx.stats.skip_file("file_too_large", file.path)
            return ParseResult(None, file_skip_reason="file_too_large")
        doc = ctx.loads(data, f"{file.path}@0")
        if doc is None:
            return ParseResult(None, file_skip_reason="unusable")
        ctx.stats.kept()
        sid = doc.get("id") if isinstance(doc.get("id"), str) else file.session_id
        return build_session(doc, sid or Path(file.path).stem, file.path, _session_dir(doc, self.storage),
                             self._messages(sid or Path(file.path).stem, ctx), ctx)

    def _messages(self, session_id: str, ctx: ParseContext) -> Iterator[Message]:
        """The session's messages and their parts, from their JSON files in id order."""
        folder = self.storage / "message" / session_id
        for entry in sorted(scan_dir(folder, ctx.stats), key=lambda e: e.name):
            if not entry.name.endswith(".json"):
                continue
            msg = _read_json(Path(entry.path), ctx)
            if msg is None:
                continue
            mid = msg.get("id")
            if not isinstance(mid, str):
                mid = entry.name[:-5]
            yield msg, self._parts(mid, ctx)

    def _parts(self, message_id: str, ctx: ParseContext) -> list[dict[str, Any]]:
        out = []
        for entry in sorted(scan_dir(self.storage / "part" / message_id, ctx.stats), key=lambda e: e.name):
            if entry.name.endswith(".json"):
                part = _read_json(Path(entry.path), ctx)
                if part is not None:
                    out.append(part)
        return out


def _session_dir(doc: dict[str, Any], storage: Path) -> str | None:
    """The session's ``directory``, else its project file's ``worktree``."""
    def worktree(pid: str) -> str | None:
        if "/" in pid or "\\" in pid:
            return None
        try:
            project = orjson.loads(read_side_file(storage / "project" / f"{pid}.json"))
        except (OSError, orjson.JSONDecodeError):
            return None
        if isinstance(project, dict) and isinstance(project.get("worktree"), str):
            return project["worktree"]
        return None

    return session_dir(doc, worktree)


def _read_json(path: Path, ctx: ParseContext, count: bool = True) -> dict[str, Any] | None:
    """One storage JSON object, or None (counted by reason when ``count``)."""
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_JSON_BYTES + 1)
    except OSError:
        if count:
            ctx.stats.skip_file("unreadable_file", str(path))
        return None
    if count:
        ctx.stats.bytes_read += len(data)
    if len(data) > MAX_JSON_BYTES:
        if count:
            ctx.stats.skip_file("file_too_large", str(path))
        return None
    if not count:
        try:
            doc = orjson.loads(data)
        except orjson.JSONDecodeError:
            return None
        return doc if isinstance(doc, dict) else None
    doc = ctx.loads(data, f"{path}@0")
    if doc is not None:
        ctx.stats.kept()
    return doc
