"""DeepSeek Harness (``dsh``): sessions under ``$DSH_HOME/sessions`` (default ``~/.dsh``).

Each session has a folder ``sessions/<project key>/<session id>/`` holding its event log,
one file per format generation: ``session.jsonl.zstd`` (the first), then
``session.v3.jsonl.zstd``, ``session.v4.jsonl.zstd`` ... (a format upgrade writes a new file
and keeps the old one). A log is appended one zstd frame per flush, so it is read across
frames; an unfinished last frame gives what it holds so far (its partial line is left for
the next read). Uncompressed ``session*.jsonl`` logs are read too. The project key folds the
working directory's separators and case (``--D-project-dsh-dsh-plugin--``): the header's
``cwd`` is the project.

Records ``{"type", "data", "seq", "time"}`` (shapes: the harness's own snapshot logs and
its runtime notes, docs/genuine-files.md):

- ``session`` (first line): ``id``, ``cwd``, ``createdAt`` (ms), ``version``; a delegated
  agent's log adds ``origin: "subagent"``, ``parentSession`` and ``delegationDepth`` >= 1;
- ``user/message``: ``data.content`` blocks and ``data.source.kind``: ``user`` is what the
  person typed (in a subagent's log, the task it was given); ``plugin`` /
  ``runtime-context`` / ``system-prompt`` (injected context) and ``agent-message``
  (another agent's relay) are not;
- ``assistant/message``: ``data.message.content`` blocks ``text`` / ``reasoning`` /
  ``tool-call`` ``{id, name, arguments}`` (arguments a JSON string),
  ``data.message.source.model``; ``tool/call`` repeats each call;
- ``turn/end`` ``data.reason.kind`` ``completed`` / ``aborted`` / ``error``;
- many others (``turn/start``, ``step/*``, ``system/message``, ``developer/message``,
  ``request/*``, ``agent/inbox/spliced`` (a queued message before it is delivered),
  ``session/title``, ``llm/retry``, ``assistant/attempt``, ``permission/*``, ``sandbox/*``,
  ``approval/*``, ``subagent/*``, ``orc/*``, ``tool/result``) carry no prompt or answer.

The generations of one session are read together as one session: a message or call
that two generations both hold (by its id) counts once.
"""

from __future__ import annotations

import io
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from skillopt_core.replay import is_replay_path
from sleep.harvest.reader import ParseContext, ParseStats
from sleep.harvest.sources import HomeSource, ParseResult, SourceFile, as_dict, as_list, block_text, scan_dir
from sleep.harvest.sources.actions import TurnActions
from sleep.harvest.sources.turns import LogParser
from sleep.sessions import Feedback, Session, iso_utc

_zstandard: Any
try:
    import zstandard as _zstandard
except ImportError:  # optional: the `zstd` program is used instead when present
    _zstandard = None

HOST = "dsh"
_LOG_RX = re.compile(r"^session(?:\.v(\d+))?\.jsonl(\.zstd)?$")
_SHELL_TOOLS = frozenset({"bash"})
_FILE_TOOLS = frozenset({"read", "write", "edit", "read_image"})
_MAX_LOG = 256 << 20


def generations(folder: Path | str, stats: ParseStats) -> list[str]:
    """The event logs of one session folder, oldest format first."""
    found = []
    for entry in scan_dir(folder, stats):
        m = _LOG_RX.match(entry.name)
        if m and entry.is_file():
            found.append((int(m.group(1) or 0), entry.name.endswith(".zstd"), entry.path))
    return [p for _, _, p in sorted(found)]


def decompress(path: str, data: bytes) -> bytes | None:
    """The text of a zstd log read across its frames (None: no zstd decoder here). An
    unfinished last frame gives what it holds so far."""
    if _zstandard is not None:
        reader = _zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data), read_across_frames=True)
        out = bytearray()
        try:
            while chunk := reader.read(1 << 20):
                out += chunk
                if len(out) > _MAX_LOG:
                    break
        except _zstandard.ZstdError:
            pass  # a damaged frame: keep what came before it
        return bytes(out)
    program = shutil.which("zstd")
    if program is None:
        return None
    done = subprocess.run([program, "-dcq"], check=False, input=data, capture_output=True, timeout=120)
    return done.stdout  # a truncated last frame: zstd exits non-zero after writing what it could




class DshSource(HomeSource):
    name = HOST  # no scope_hint: the project key folds case and separators, only the header tells

    def discover(self, stats: ParseStats) -> Iterator[SourceFile]:
        for project in sorted(scan_dir(self.home / "sessions", stats), key=lambda e: e.name):
            if not project.is_dir():
                continue
            for folder in sorted(scan_dir(project.path, stats), key=lambda e: e.name):
                if not folder.is_dir():
                    continue
                logs = generations(folder.path, stats)
                if logs:
                    # The newest generation stands for the session: it changes when the session does.
                    yield SourceFile(logs[-1], HOST, "session", incremental=False, session_id=folder.name,
                                     project_slug=project.name)

    def project_of(self, file: SourceFile, ctx: ParseContext) -> str | None:
        header = self._header(file.path)
        cwd = header.get("cwd") if header else None
        return cwd if isinstance(cwd, str) else None

    def _header(self, path: str) -> dict[str, Any] | None:
        try:
            with open(path, "rb") as f:
                data = f.read(1 << 16)
        except OSError:
            return None
        if path.endswith(".zstd"):
            data = decompress(path, data) or b""
        line = data.split(b"\n", 1)[0]
        try:
            rec = orjson.loads(line)
        except orjson.JSONDecodeError:
            return None
        return rec if isinstance(rec, dict) and rec.get("type") == "session" else None

    def parse(self, file: SourceFile, f: BinaryIO | None, start: int, prior: Session | None,
              ctx: ParseContext) -> ParseResult:
        folder = Path(file.path).parent
        session = Session(host=HOST, session_id=file.session_id or folder.name, source_path=file.path)
        reader = _Reader(session, file, ctx)
        for path in generations(folder, ctx.stats):
            data = f.read() if f is not None and path == file.path else _read(path, ctx)
            if data is None:
                continue
            ctx.stats.bytes_read += len(data)
            if path.endswith(".zstd"):
                text = decompress(path, data)
                if text is None:
                    ctx.stats.skip_file("zstd_unavailable", path)
                    return ParseResult(None, file_skip_reason="zstd_unavailable")
                data = text
            complete = data if data.endswith(b"\n") else data[:data.rfind(b"\n") + 1]
            for n, line in enumerate(complete.split(b"\n")):
                if line.strip():
                    reader.feed(line, f"{path}@{n + 1}")
                if reader.replay:
                    return ParseResult(None, replay=True)
        reader.close()
        if reader.replay:
            return ParseResult(None, replay=True)
        if not session.prompts and session.started_at is None:
            return ParseResult(None)
        return ParseResult(session)


def _read(path: str, ctx: ParseContext) -> bytes | None:
    try:
        with open(path, "rb") as f:
            return f.read(_MAX_LOG)
    except OSError:
        ctx.stats.skip_file("unreadable_file", path)
        return None


class _Reader(LogParser):
    """One session's records, across its generations, in order (read whole each time: the
    turn bookkeeping of :class:`LogParser`, none of its continuation state)."""

    def __init__(self, session: Session, file: SourceFile, ctx: ParseContext) -> None:
        super().__init__(session, file, ctx)
        self.seen_messages: set[str] = set()
        self.seen_calls: set[str] = set()
        self.actions = TurnActions(session, ctx)

    def feed(self, line: bytes, where: str) -> None:
        stats = self.ctx.stats
        rec = self.ctx.loads(line, where)
        if rec is None:
            return
        rtype = rec.get("type")
        if not isinstance(rtype, str):
            stats.skip_line("unknown_record_type", where)
            return
        at = iso_utc(rec.get("time"))
        self.s.note_time(at)
        data = as_dict(rec.get("data"))
        if rtype == "session":
            self._header(rec)
        elif rtype == "user/message":
            self._user(data, at)
        elif rtype == "assistant/message":
            self._assistant(data)
        elif rtype == "tool/call":
            self._tool(data.get("callId"), data.get("name"), data.get("arguments"))
        elif rtype == "turn/end":
            reason = as_dict(data.get("reason"))
            if reason.get("kind") == "aborted" and self.s.prompts:
                self.s.feedback.append(Feedback("interruption", "", at, len(self.s.prompts) - 1))
        else:
            stats.ignored()
            return
        stats.kept()

    def _header(self, rec: dict[str, Any]) -> None:
        sid = rec.get("id")
        if isinstance(sid, str) and sid:
            self.s.session_id = sid
        self.s.note_time(iso_utc(rec.get("createdAt")))
        cwd = rec.get("cwd")
        if isinstance(cwd, str) and cwd:
            self.s.project_dir = cwd
            if is_replay_path(cwd):
                self.replay = True
        depth = rec.get("delegationDepth")
        if rec.get("origin") == "subagent" or (isinstance(depth, int) and depth > 0):
            self.s.is_subagent = True
            parent = rec.get("parentSession")
            self.s.parent_session_id = parent if isinstance(parent, str) else None

    def _user(self, data: dict[str, Any], at: str | None) -> None:
        source = as_dict(data.get("source"))
        if source.get("kind") != "user":
            return  # injected context, another agent's relay
        mid = data.get("id")
        text = block_text(data.get("content")).strip()
        key = mid if isinstance(mid, str) and mid else text
        if not text or key in self.seen_messages:
            return
        self.seen_messages.add(key)
        self._prompt(text, at)

    def _assistant(self, data: dict[str, Any]) -> None:
        msg = as_dict(data.get("message"))
        source = as_dict(msg.get("source"))
        model = source.get("model")
        self.s.note_model(model if isinstance(model, str) else None)
        for block in as_list(msg.get("content")):
            if isinstance(block, dict) and block.get("type") == "tool-call":
                self._tool(block.get("id"), block.get("name"), block.get("arguments"))
        text = block_text(msg.get("content")).strip()
        if text:
            self._final(text)

    def _tool(self, call_id: Any, name: Any, args: Any) -> None:
        if not isinstance(name, str):
            return
        if isinstance(call_id, str):
            if call_id in self.seen_calls:
                return  # the assistant's block and tool/call describe one call
            self.seen_calls.add(call_id)
        self.s.add_tool(name)
        self.answered = True
        args = self.actions.arguments(args)
        if not isinstance(args, dict):
            return
        if name in _SHELL_TOOLS:
            self.actions.shell(args.get("command"))
        elif name in _FILE_TOOLS:
            self.actions.file(args.get("file_path", args.get("path")))

    def close(self) -> None:
        self._close_turn()  # no continuation state: the logs are read whole every time
