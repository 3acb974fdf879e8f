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
message and part files. Versions that keep everything in an ``opencode.db`` SQLite
database are not read yet.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, BinaryIO, Iterator

import orjson

from skillopt_core.replay import is_replay_path, is_replay_prompt
from sleep import paths
from sleep.harvest.reader import ParseContext, ParseStats
from sleep.sessions import Session, iso_utc
from sleep.harvest.sources import ParseResult, SourceFile, scan_dir, skills_in
from sleep.harvest.sources.actions import TurnActions
from sleep.harvest.sources.turns import open_turn

HOST = "opencode"
MAX_JSON_BYTES = 16 << 20
_SHELL_TOOLS = frozenset({"bash", "shell"})
_FILE_TOOLS = frozenset({"read", "edit", "write", "patch", "multiedit", "list", "glob", "grep"})
_PATH_KEYS = ("filePath", "file_path", "path")


class OpenCodeSource:
    name = HOST

    def __init__(self, home: Path | None = None) -> None:
        self._home = home

    @property
    def home(self) -> Path:
        return self._home or paths.opencode_home()

    @property
    def storage(self) -> Path:
        return self.home / "storage"

    def discover(self, stats: ParseStats) -> Iterator[SourceFile]:
        for project in sorted(scan_dir(self.storage / "session", stats), key=lambda e: e.name):
            try:
                if not project.is_dir():
                    continue
            except OSError:
                continue
            for entry in sorted(scan_dir(project.path, stats), key=lambda e: e.name):
                if entry.name.endswith(".json"):
                    yield SourceFile(entry.path, HOST, "session", incremental=False,
                                     session_id=entry.name[:-5], project_slug=project.name)

    def scope_hint(self, file: SourceFile, project: str) -> bool | None:
        return None

    def project_of(self, file: SourceFile, ctx: ParseContext) -> str | None:
        doc = _read_json(Path(file.path), ctx, count=False)
        return _session_dir(doc, self.storage) if doc is not None else None

    def parse(self, file: SourceFile, f: BinaryIO, start: int, prior: Session | None,
              ctx: ParseContext) -> ParseResult:
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
        s = Session(host=HOST, session_id=sid or Path(file.path).stem, source_path=file.path,
                    project_dir=_session_dir(doc, self.storage))
        if isinstance(doc.get("parentID"), str):
            s.is_subagent, s.parent_session_id = True, doc["parentID"]
        times = doc.get("time") if isinstance(doc.get("time"), dict) else {}
        s.note_time(iso_utc(times.get("created")))
        s.note_time(iso_utc(times.get("updated")))
        if is_replay_path(s.project_dir):
            return ParseResult(None, replay=True)
        return self._messages(s, ctx)

    def _messages(self, s: Session, ctx: ParseContext) -> ParseResult:
        actions = TurnActions(s, ctx)
        answered = False
        folder = self.storage / "message" / s.session_id
        for entry in sorted(scan_dir(folder, ctx.stats), key=lambda e: e.name):
            if not entry.name.endswith(".json"):
                continue
            msg = _read_json(Path(entry.path), ctx)
            if msg is None:
                continue
            mid = msg.get("id") if isinstance(msg.get("id"), str) else entry.name[:-5]
            times = msg.get("time") if isinstance(msg.get("time"), dict) else {}
            at = iso_utc(times.get("created"))
            s.note_time(at)
            s.note_time(iso_utc(times.get("completed")))
            parts = self._parts(mid, ctx)
            role = msg.get("role")
            if role == "user":
                text = "\n".join(p["text"] for p in parts if p.get("type") == "text"
                                 and isinstance(p.get("text"), str) and not p.get("synthetic")).strip()
                if not text:
                    continue
                if not s.prompts and is_replay_prompt(text):
                    return ParseResult(None, replay=True)
                open_turn(s, text, at, ctx.redactor, follows_answer=bool(s.prompts) and answered)
                answered = False
            elif role == "assistant":
                if isinstance(msg.get("modelID"), str):
                    s.note_model(msg["modelID"])
                texts = []
                for p in parts:
                    if p.get("type") == "tool":
                        _tool(s, actions, p)
                        answered = True
                    elif p.get("type") == "text" and isinstance(p.get("text"), str) and p["text"].strip():
                        texts.append(p["text"])
                if texts and s.prompts:
                    s.finals[-1] = ctx.redactor.redact("\n\n".join(texts))
                    answered = True
        return ParseResult(s)

    def _parts(self, message_id: str, ctx: ParseContext) -> list[dict[str, Any]]:
        out = []
        for entry in sorted(scan_dir(self.storage / "part" / message_id, ctx.stats), key=lambda e: e.name):
            if entry.name.endswith(".json"):
                part = _read_json(Path(entry.path), ctx)
                if part is not None:
                    out.append(part)
        return out


def _tool(s: Session, actions: TurnActions, part: dict[str, Any]) -> None:
    name = part.get("tool") if isinstance(part.get("tool"), str) else None
    s.add_tool(name)
    state = part.get("state") if isinstance(part.get("state"), dict) else {}
    inp = state.get("input") if isinstance(state.get("input"), dict) else {}
    if name == "skill" and isinstance(inp.get("name"), str):
        s.add_skill(inp["name"])
    if name in _SHELL_TOOLS:
        actions.command(inp.get("command"))
        if isinstance(inp.get("command"), str):
            for skill in skills_in(inp["command"]):
                s.add_skill(skill)
    elif name in _FILE_TOOLS:
        for key in _PATH_KEYS:
            if isinstance(inp.get(key), str):
                for skill in skills_in(inp[key]):
                    s.add_skill(skill)
                actions.path(inp[key])
                break


def _session_dir(doc: dict[str, Any], storage: Path) -> str | None:
    """The session's ``directory``, else its project's ``worktree``."""
    if isinstance(doc.get("directory"), str) and doc["directory"]:
        return doc["directory"]
    pid = doc.get("projectID")
    if isinstance(pid, str) and pid and "/" not in pid and "\\" not in pid:
        try:
            project = orjson.loads((storage / "project" / f"{pid}.json").read_bytes())
        except (OSError, orjson.JSONDecodeError):
            return None
        if isinstance(project, dict) and isinstance(project.get("worktree"), str):
            return project["worktree"]
    return None


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
