"""Amp (Sourcegraph's agent, CLI and editor extension): one JSON document per thread under
``$XDG_DATA_HOME/amp/threads`` (default ``~/.local/share/amp/threads/T-<uuid>.json``), re-written
whole as the thread grows (so read whole when it changes).

The shape, as several independent readers of people's thread files describe and test it
(docs/genuine-files.md): ``{v, id, created (ms), title, agentMode, nextMessageId, env: {initial:
{trees: [{uri: "file:///path", displayName, repository}], platform}}, messages: [...]}``; each
message ``{role, messageId, content: [...], state?, usage?, meta?: {sentAt}}`` with ``role``
``user`` / ``assistant`` / ``info`` (context Amp adds, such as an AGENTS.md, never typed) and
Anthropic-style content items: ``text``, ``thinking``, ``tool_use`` ``{id, name, input}``,
``tool_result`` ``{toolUseID, run}`` (a user message holding only tool results is no prompt).
The first tree's ``file://`` URI is the project.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO
from urllib.parse import unquote, urlparse

from skillopt_core.replay import is_replay_path
from sleep.harvest.reader import ParseContext, ParseStats
from sleep.harvest.sources import HomeSource, ParseResult, SourceFile, as_dict, as_list, block_text, scan_dir
from sleep.harvest.sources.actions import Message, TurnActions, session_of
from sleep.sessions import Feedback, Session, iso_utc

HOST = "amp"
_SHELL_TOOLS = frozenset({"Bash", "bash", "shell"})
_FILE_TOOLS = frozenset({"Read", "read", "edit_file", "create_file", "Edit", "Write", "undo_edit"})
_MAX_THREAD = 64 << 20


def project_of_thread(doc: dict[str, Any]) -> str | None:
    """The folder of the thread's first ``file://`` tree."""
    env = as_dict(doc.get("env"))
    initial = as_dict(env.get("initial"))
    for tree in initial.get("trees") or []:
        uri = tree.get("uri") if isinstance(tree, dict) else None
        if isinstance(uri, str) and uri.startswith("file://"):
            return unquote(urlparse(uri).path) or None
    return None




class AmpSource(HomeSource):
    name = HOST

    def discover(self, stats: ParseStats) -> Iterator[SourceFile]:
        for entry in sorted(scan_dir(self.home / "threads", stats), key=lambda e: e.name):
            if entry.name.startswith("T-") and entry.name.endswith(".json") and entry.is_file():
                yield SourceFile(entry.path, HOST, "thread", incremental=False, session_id=entry.name[:-5])

    def project_of(self, file: SourceFile, ctx: ParseContext) -> str | None:
        try:
            with open(file.path, "rb") as f:
                data = f.read(_MAX_THREAD)
        except OSError:
            return None
        doc = ctx.loads(data, f"{file.path}@0")
        return project_of_thread(doc) if doc else None

    def parse(self, file: SourceFile, f: BinaryIO | None, start: int, prior: Session | None,
              ctx: ParseContext) -> ParseResult:
        assert f is not None
        data = f.read(_MAX_THREAD + 1)
        ctx.stats.bytes_read += len(data)
        if len(data) > _MAX_THREAD:
            ctx.stats.skip_file("file_too_large", file.path)
            return ParseResult(None, file_skip_reason="file_too_large")
        if not data.strip():
            ctx.stats.skip_file("empty_file", file.path)
            return ParseResult(None, file_skip_reason="empty_file")
        doc = ctx.loads(data, f"{file.path}@0")
        if doc is None:
            return ParseResult(None, file_skip_reason="unusable")
        messages = doc.get("messages")
        if not isinstance(messages, list):
            ctx.stats.skip_file("unknown_thread_format", file.path)
            return ParseResult(None, file_skip_reason="unknown_thread_format")
        ctx.stats.kept()
        sid = doc.get("id") if isinstance(doc.get("id"), str) else file.session_id
        s = Session(host=HOST, session_id=sid or Path(file.path).stem, source_path=file.path)
        s.project_dir = project_of_thread(doc)
        if is_replay_path(s.project_dir):
            return ParseResult(None, replay=True)
        s.note_time(iso_utc(doc.get("created")))
        return session_of(s, _messages(messages, file.path, s, ctx), _tool, ctx)


def _messages(messages: list[Any], path: str, s: Session, ctx: ParseContext) -> Iterator[Message]:
    for n, msg in enumerate(messages):
        if not isinstance(msg, dict):
            ctx.stats.skip_line("not_an_object", f"{path}#messages/{n}")
            continue
        ctx.stats.kept()
        at = iso_utc(as_dict(msg.get("meta")).get("sentAt"))
        s.note_time(at)
        items = as_list(msg.get("content"))
        if msg.get("role") == "assistant":
            usage = as_dict(msg.get("usage"))
            s.note_model(usage.get("model") if isinstance(usage.get("model"), str) else None)
            if as_dict(msg.get("state")).get("type") == "cancelled" and s.prompts:
                s.feedback.append(Feedback("interruption", "", at, len(s.prompts) - 1))
        tools = [item for item in items if isinstance(item, dict) and item.get("type") == "tool_use"]
        yield msg.get("role"), block_text(items).strip(), at, tools

def _tool(s: Session, actions: TurnActions, use: dict[str, Any]) -> None:
    name, args = use.get("name"), use.get("input")
    if not isinstance(name, str):
        return
    s.add_tool(name)
    if not isinstance(args, dict):
        return
    if name in _SHELL_TOOLS:
        actions.shell(args.get("cmd", args.get("command")))
    elif name in _FILE_TOOLS:
        actions.file(args.get("path", args.get("file_path")))
