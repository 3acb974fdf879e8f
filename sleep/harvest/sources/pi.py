"""Pi (the ``pi`` coding agent, npm ``@mariozechner/pi-coding-agent``): sessions under
``$PI_CODING_AGENT_DIR/sessions`` (default ``~/.pi/agent/sessions``).

One append-only JSONL file per session, ``sessions/--<cwd>--/<timestamp>_<uuid>.jsonl``,
where ``<cwd>`` is the working directory without its leading separator and with ``/``,
``\\`` and ``:`` turned into ``-`` (lossy: the header's ``cwd`` is the project). The format,
from pi-mono's ``packages/coding-agent/docs/session.md`` and the files the real CLI writes
(docs/genuine-files.md):

- a header ``{"type": "session", "version": 3, "id", "timestamp", "cwd"}`` (version 1 adds
  ``provider``/``modelId``; a fork names ``parentSession``, older builds ``branchedFrom``);
  some builds write a ``{"type": "title", ...}`` line before it;
- entries ``{"type", "id", "parentId", "timestamp", ...}`` forming a tree (a branch is
  a second child of an earlier entry, in the same file): ``message`` entries hold an
  ``AgentMessage`` in ``message``: ``user`` (``content`` a string or ``text``/``image``
  blocks: what the person typed), ``assistant`` (``text``/``thinking``/``toolCall``
  ``{name, arguments}`` blocks, ``model``, ``stopReason``), ``toolResult``,
  ``bashExecution`` (a command the person ran with ``!``: a shell action of the open
  turn, no prompt), ``custom``, ``branchSummary``, ``compactionSummary`` (none typed);
  ``model_change`` ``{provider, modelId}``; ``thinking_level_change``, ``compaction``,
  ``branch_summary``, ``custom``, ``custom_message``, ``label``, ``session_info``
  (none typed).

Every ``message`` entry of every branch is read once, in file order: each typed prompt
is stored once even when the person went back and branched. A fork (``pi --fork``, ``/fork``)
is a new file that starts with a copy of its parent's entries (same ids and times) under a
header whose ``parentSession`` is the parent's file: those copies are skipped.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from skillopt_core.replay import is_replay_path
from sleep.harvest.reader import ParseContext, ParseStats
from sleep.harvest.sources import HomeSource, ParseResult, SourceFile, as_list, block_text, head_records, scan_dir
from sleep.harvest.sources.actions import TurnActions
from sleep.harvest.sources.turns import LogParser, parse_log
from sleep.sessions import Session, iso_utc

HOST = "pi"
_SHELL_TOOLS = frozenset({"bash"})
_FILE_TOOLS = frozenset({"read", "write", "edit", "ls", "find", "grep"})
_NOT_TYPED = frozenset({"toolResult", "custom", "branchSummary", "compactionSummary", "hookMessage"})
_QUIET_TYPES = frozenset({"thinking_level_change", "compaction", "branch_summary", "custom", "custom_message",
                          "label", "session_info", "title"})
_SEP_RX = re.compile(r"[/\\:]")


def folder_name(cwd: str) -> str:
    """The session folder Pi names after a working directory (``/w/app`` -> ``--w-app--``)."""
    return "--" + _SEP_RX.sub("-", cwd[1:] if cwd[:1] in ("/", "\\") else cwd) + "--"



def entry_ids(path: str, ctx: ParseContext) -> set[str]:
    """The ids of the ``message`` entries of the session file ``path`` (a fork's parent: ``pi
    --fork`` and ``/fork`` copy its entries, ids and all, into the new file). Empty when the
    parent is gone (then the fork's copies are read as its own, counted in ``stats.actions``
    as ``fork_parent_missing``)."""
    ids: set[str] = set()
    try:
        with open(path, "rb") as f:
            for line in f:
                if b'"type":"message"' not in line:
                    continue
                try:
                    rec = orjson.loads(line)
                except orjson.JSONDecodeError:
                    continue
                if isinstance(rec, dict) and isinstance(rec.get("id"), str):
                    ids.add(rec["id"])
    except OSError:
        ctx.stats.actions["fork_parent_missing"] += 1
    return ids


class PiSource(HomeSource):
    name = HOST

    @property
    def sessions(self) -> Path:
        """``$PI_CODING_AGENT_SESSION_DIR`` when set (Pi's own override), else ``<home>/sessions``."""
        override = None if self._home else os.environ.get("PI_CODING_AGENT_SESSION_DIR")
        return Path(override).expanduser() if override else self.home / "sessions"

    def discover(self, stats: ParseStats) -> Iterator[SourceFile]:
        for folder in sorted(scan_dir(self.sessions, stats), key=lambda e: e.name):
            if not folder.is_dir():
                continue
            for entry in sorted(scan_dir(folder.path, stats), key=lambda e: e.name):
                if entry.name.endswith(".jsonl") and entry.is_file():
                    sid = entry.name[:-6].rpartition("_")[2] or entry.name[:-6]
                    yield SourceFile(entry.path, HOST, "session", session_id=sid, project_slug=folder.name)

    def scope_hint(self, file: SourceFile, project: str) -> bool | None:
        # A session in ``project`` or below it lives in a folder named after a cwd that
        # starts with the project's path: any other folder rules it out.
        if file.project_slug and file.project_slug.startswith("--"):
            return None if file.project_slug.startswith(folder_name(project)[:-2]) else False
        return None

    def project_of(self, file: SourceFile, ctx: ParseContext) -> str | None:
        for rec in head_records(file.path, b'"cwd"', 3):
            if rec.get("type") == "session" and isinstance(rec.get("cwd"), str):
                return rec["cwd"]
        return None

    def parse(self, file: SourceFile, f: BinaryIO | None, start: int, prior: Session | None,
              ctx: ParseContext) -> ParseResult:
        assert f is not None
        session = prior or Session(host=HOST, session_id=file.session_id or Path(file.path).stem,
                                   source_path=file.path)
        return parse_log(_PiParser(session, file, ctx), f, start, prior)


class _PiParser(LogParser):
    def __init__(self, session: Session, file: SourceFile, ctx: ParseContext) -> None:
        super().__init__(session, file, ctx)
        self.actions = TurnActions(session, ctx)
        self.copied: set[str] = set()  # a fork's entries copied from its parent session (their ids)

    def feed(self, data: bytes, where: str) -> None:
        stats = self.ctx.stats
        rec = self.ctx.loads(data, where)
        if rec is None:
            return
        etype = rec.get("type")
        at = iso_utc(rec.get("timestamp"))
        self.s.note_time(at)
        if etype == "session":
            self._header(rec)
        elif etype == "message":
            msg = rec.get("message")
            if not isinstance(msg, dict):
                stats.skip_line("message_without_body", where)
                return
            if self.copied and rec.get("id") in self.copied:
                stats.ignored()  # a fork's copy of its parent's entry: read in the parent's session
                return
            self._message(msg, at or iso_utc(msg.get("timestamp")))
        elif etype == "model_change":
            model = rec.get("modelId")
            self.s.note_model(model if isinstance(model, str) else None)
        elif etype in _QUIET_TYPES:
            stats.ignored()
            return
        else:
            stats.skip_line("unknown_record_type", where)
            return
        stats.kept()

    def _header(self, rec: dict[str, Any]) -> None:
        sid = rec.get("id")
        if isinstance(sid, str) and sid:
            self.s.session_id = sid
        cwd = rec.get("cwd")
        if isinstance(cwd, str) and cwd:
            self.s.project_dir = self.cwd = cwd
            if is_replay_path(cwd):
                self.replay = True
        model = rec.get("modelId")
        self.s.note_model(model if isinstance(model, str) else None)
        parent = rec.get("parentSession") or rec.get("branchedFrom")
        if isinstance(parent, str) and parent.endswith(".jsonl"):
            self.s.parent_session_id = Path(parent).stem.rpartition("_")[2] or None
            self.copied = entry_ids(parent, self.ctx)

    def _message(self, msg: dict[str, Any], at: str | None) -> None:
        role = msg.get("role")
        if role == "user":
            text = block_text(msg.get("content")).strip()
            if text:
                self._prompt(text, at)
        elif role == "assistant":
            model = msg.get("model")
            self.s.note_model(model if isinstance(model, str) else None)
            for block in as_list(msg.get("content")):
                if isinstance(block, dict) and block.get("type") == "toolCall":
                    self._tool(block.get("name"), block.get("arguments"))
            text = block_text(msg.get("content")).strip()
            if text:
                self._final(text)
            if msg.get("stopReason") == "aborted":
                self._feedback("interruption", "", at)
        elif role == "bashExecution":
            self.actions.command(msg.get("command") if isinstance(msg.get("command"), str) else None)
        elif role not in _NOT_TYPED:
            self.ctx.stats.skip_line("unknown_message_role", f"{self.file.path}")

    def _tool(self, name: Any, args: Any) -> None:
        if not isinstance(name, str):
            return
        self.s.add_tool(name)
        self.answered = True
        if not isinstance(args, dict):
            return
        if name in _SHELL_TOOLS:
            self.actions.shell(args.get("command"))
        elif name in _FILE_TOOLS:
            self.actions.file(args.get("path", args.get("file_path")))

