"""What the agent did in a turn, as every source records it: shell-command
signatures (:mod:`sleep.shell_signature`) and project-relative file paths.

Paths are kept relative to the session's project directory, with ``/``
separators, normalised (``./a/../b.py`` is ``b.py``). A path outside the
project (an absolute path elsewhere, ``~/...``, or one that climbs out with
``..``) is dropped and counted as ``file_outside_project``: a miner compares
the files of one project across sessions, and neither a basename (ambiguous
with the project's own ``README.md`` or ``package.json``) nor an absolute path
(it carries the user name and other projects' names) serves that.

Every value passes through the harvest's redactor once before it is stored
(values repeat a lot within a session, so redactions are cached per file).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import unquote, urlparse

import orjson

from skillopt_core.replay import is_replay_prompt
from sleep.harvest.reader import ParseContext
from sleep.harvest.sources import ParseResult
from sleep.harvest.sources.turns import open_turn
from sleep.sessions import Session
from sleep.shell_signature import argv_signatures, shell_signatures

MAX_PATH_CHARS = 1024
_DRIVE_RX = re.compile(r"^[A-Za-z]:[\\/]")
_PATCH_FILE_RX = re.compile(r"^\*\*\* (?:Add File|Update File|Delete File|Move to): (.+?)\s*$", re.M)
_FILE_URI_RX = re.compile(r"file://[^\s)\]\"'>#?]+")

# Claude Code tools and the input keys that name the file (or directory) they touch.
CLAUDE_PATH_KEYS: dict[str, tuple[str, ...]] = {
    "Read": ("file_path",), "Edit": ("file_path",), "MultiEdit": ("file_path",), "Write": ("file_path",),
    "NotebookEdit": ("notebook_path",), "NotebookRead": ("notebook_path",), "Grep": ("path",),
    "Glob": ("path",), "LS": ("path",),
}
Message = tuple[Any, str, "str | None", Iterable[Any]]  # role, text, time, tool calls


def _slashes(path: str) -> str:
    return path.replace("\\", "/") if ("\\" in path and (_DRIVE_RX.match(path) or "/" not in path)) else path


def project_path(path: Any, project: str | None, cwd: str | None = None) -> str | None:
    """``path`` relative to ``project`` (see module docstring), or None if it is outside
    the project or not a usable path. A relative ``path`` is taken from ``cwd`` when
    given (an absolute directory), else from the project directory."""
    if not isinstance(path, str) or not path.strip() or len(path) > MAX_PATH_CHARS or "\0" in path or "\n" in path:
        return None
    p = path.strip()
    if p.startswith("file://"):
        parsed = urlparse(p)
        p = unquote(parsed.path)
        if len(p) >= 3 and p[0] == "/" and p[2] == ":":  # file:///c:/x on Windows
            p = p[1:]
    if p.startswith("~"):
        return None
    p = _slashes(p)
    if not (p.startswith("/") or _DRIVE_RX.match(p)) and cwd:
        p = _slashes(cwd).rstrip("/") + "/" + p
    if p.startswith("/") or _DRIVE_RX.match(p):
        if not project:
            return None
        root = posixpath.normpath(_slashes(project))
        full = posixpath.normpath(p)
        fold = _DRIVE_RX.match(root) is not None  # Windows paths compare case-insensitively
        r, f = (root.lower(), full.lower()) if fold else (root, full)
        if f == r or not f.startswith(r.rstrip("/") + "/"):
            return None
        rel = full[len(root.rstrip("/")) + 1:]
    else:
        rel = posixpath.normpath(p)
    if rel in (".", "") or rel == ".." or rel.startswith("../") or rel.startswith("/"):
        return None
    return rel


def patch_files(text: Any) -> list[str]:
    """Paths named by the file headers of an ``apply_patch`` patch (``*** Update File: x``)."""
    if not isinstance(text, str) or "*** " not in text:
        return []
    out: list[str] = []
    for path in _PATCH_FILE_RX.findall(text):
        if path not in out:
            out.append(path)
    return out


def file_uris(text: Any) -> list[str]:
    """``file://`` URIs in a message (how VS Code names the files a tool read)."""
    if not isinstance(text, str) or "file://" not in text:
        return []
    return _FILE_URI_RX.findall(text)


class TurnActions:
    """Notes shell signatures and files on the open turn of one session, and, for a source that
    reads a whole session at once, opens its turns (:meth:`prompt`) and keeps their answers
    (:meth:`answer`; ``answered``: the agent answered or acted in the open turn).

    Counts in ``ctx.stats.actions``: ``shell_commands`` seen, ``shell_unrecognised``
    (a command that gave no signature: a bare ``cd``, an ``echo``, a variable as
    program), ``files`` seen and ``file_outside_project``.
    """

    def __init__(self, session: Session, ctx: ParseContext) -> None:
        self.s = session
        self.ctx = ctx
        self.answered = False
        # Commands and paths repeat within a session: each is parsed and redacted once.
        self._redacted: dict[str, str] = {}
        self._signatures: dict[str, list[str]] = {}
        self._paths: dict[tuple[str, str | None, str | None], str | None] = {}

    def prompt(self, text: str, at: str | None) -> bool:
        """Open a turn for the typed ``text`` (its feedback reads whether the agent answered the
        turn before); False, and no turn, when the session's first prompt carries the replay marker."""
        if not self.s.prompts and is_replay_prompt(text):
            return False
        open_turn(self.s, text, at, self.ctx.redactor, follows_answer=bool(self.s.prompts) and self.answered)
        self.answered = False
        return True

    def answer(self, text: str) -> None:
        """The agent said ``text`` in the open turn: its final answer so far (none before a prompt)."""
        if text and self.s.prompts:
            self.s.finals[-1] = self.ctx.redactor.redact(text)
            self.answered = True

    def arguments(self, args: Any) -> Any:
        """A tool call's arguments, decoded when they came as a JSON object in a string; None
        (counted as ``tool_arguments_unreadable``) when that string does not decode."""
        if isinstance(args, str) and args.startswith("{"):
            try:
                return orjson.loads(args)
            except orjson.JSONDecodeError:
                self.ctx.stats.actions["tool_arguments_unreadable"] += 1
                return None
        return args

    def _clean(self, value: str) -> str:
        out = self._redacted.get(value)
        if out is None:
            out = self.ctx.redactor.redact(value)
            if len(self._redacted) < 4096:
                self._redacted[value] = out
        return out

    def command(self, command: Any) -> None:
        """A shell command line (a string, or an argument vector)."""
        if not self.s.prompts or command is None:
            return
        stats = self.ctx.stats.actions
        stats["shell_commands"] += 1
        if isinstance(command, str):
            sigs = self._signatures.get(command)
            if sigs is None:
                sigs = shell_signatures(command)
                if len(self._signatures) < 4096:
                    self._signatures[command] = sigs
        else:
            sigs = argv_signatures(command)
        if not sigs:
            stats["shell_unrecognised"] += 1
        for sig in sigs:
            self.s.add_shell(self._clean(sig))

    def path(self, path: Any, cwd: str | None = None) -> None:
        if not self.s.prompts or not isinstance(path, str) or not path:
            return
        stats = self.ctx.stats.actions
        stats["files"] += 1
        project = self.s.turn_project()
        key = (path, cwd, project)
        if key in self._paths:
            rel = self._paths[key]
        else:
            rel = project_path(path, project, cwd)
            if len(self._paths) < 4096:
                self._paths[key] = rel
        if rel is None:
            stats["file_outside_project"] += 1
            return
        self.s.add_file(self._clean(rel))

    def shell(self, command: Any) -> None:
        """A shell tool's command: its signatures (:meth:`command`) and the skills whose
        SKILL.md it opens."""
        self.command(command)
        self.skills_named(command)

    def file(self, path: Any) -> None:
        """A file tool's path: the file (:meth:`path`) and the skill whose SKILL.md it is."""
        self.skills_named(path)
        self.path(path)

    def skills_named(self, text: Any) -> None:
        """Count the skills whose SKILL.md ``text`` names as used."""
        if isinstance(text, str):
            from sleep.harvest.sources import skills_in

            for skill in skills_in(text):
                self.s.add_skill(skill)

    def patch(self, text: Any, cwd: str | None = None) -> None:
        for path in patch_files(text):
            self.path(path, cwd)

    def claude_tool(self, name: str | None, inp: Any) -> None:
        """A Claude Code ``tool_use`` block's input."""
        if not isinstance(inp, dict) or not name:
            return
        if name == "Bash":
            self.command(inp.get("command") if isinstance(inp.get("command"), str) else None)
            return
        for key in CLAUDE_PATH_KEYS.get(name, ()):
            self.path(inp.get(key))


def session_of(s: Session, messages: Iterable[Message], tool: Callable[[Session, TurnActions, Any], None],
               ctx: ParseContext) -> ParseResult:
    """``s`` with the turns of its ``messages``, for a source that reads a whole session at once
    (Goose, Hermes, Amp): a ``user`` message with text opens a turn (a replay's first prompt makes
    the whole session a replay), an ``assistant`` message's tool calls go to ``tool`` (the turn is
    then answered) and its text is the turn's answer so far; a session with no prompt and no time
    is none."""
    actions = TurnActions(s, ctx)
    for role, text, at, calls in messages:
        if role == "user" and text:
            if not actions.prompt(text, at):
                return ParseResult(None, replay=True)
        elif role == "assistant":
            for call in calls:
                tool(s, actions, call)
                actions.answered = True
            actions.answer(text)
    if not s.prompts and s.started_at is None:
        return ParseResult(None)
    return ParseResult(s)
