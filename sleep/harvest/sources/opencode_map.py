"""One mapping from OpenCode's records to a :class:`Session`, whichever store they come from.

OpenCode keeps the same records in its JSON storage (sleep.harvest.sources.opencode) and, in
newer versions, in its SQLite database (sleep.harvest.sources.opencode_db): a session
``{id, projectID, directory, parentID?, time: {created, updated}}``, its messages
``{id, role, time: {created, completed?}, modelID?, providerID?}`` in creation order, and
each message's parts ``{id, type, ...}``: ``text`` parts hold ``text`` (``synthetic``
ones are injected, not typed), ``tool`` parts ``tool`` and ``state: {status, input,
output}``. Both loaders hand these dicts to :func:`build_session`.

A shell command the person ran (``!ls``) is a user message whose only text is the
synthetic "The following tool was executed by the user", then an assistant message with
the ``bash`` tool: stored as the turn's shell command, neither a prompt nor an agent tool
call (newer stores give it as a ``shell`` record, passed here as role ``shell``). The
answers to the ``question`` tool (``state.metadata.answers``, one list per question) are
the person's words: kept as feedback on the open turn (``answer`` unless they read as a
correction or an approval).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from skillopt_core.replay import is_replay_path
from sleep.feedback import classify_feedback
from sleep.harvest.reader import ParseContext
from sleep.harvest.sources import ParseResult, as_dict
from sleep.harvest.sources.actions import TurnActions
from sleep.sessions import Feedback, Session, iso_utc

HOST = "opencode"
_SHELL_TOOLS = frozenset({"bash", "shell", "pwsh", "powershell", "cmd"})
USER_SHELL_TEXT = "The following tool was executed by the user"
_FILE_TOOLS = frozenset({"read", "edit", "write", "patch", "multiedit", "list", "glob", "grep"})
_PATH_KEYS = ("filePath", "file_path", "path")

Message = tuple[dict[str, Any], list[dict[str, Any]]]  # a message and its parts


def session_dir(doc: dict[str, Any], worktree_of: Callable[[str], str | None]) -> str | None:
    """The session's ``directory``, else its project's ``worktree``."""
    if isinstance(doc.get("directory"), str) and doc["directory"]:
        return doc["directory"]
    pid = doc.get("projectID")
    if isinstance(pid, str) and pid:
        return worktree_of(pid)
    return None


def build_session(doc: dict[str, Any], session_id: str, source_path: str, project_dir: str | None,
                  messages: Iterable[Message], ctx: ParseContext) -> ParseResult:
    """The Session of one OpenCode session record and its messages (see module docstring)."""
    sid = doc.get("id") if isinstance(doc.get("id"), str) else session_id
    s = Session(host=HOST, session_id=sid or session_id, source_path=source_path, project_dir=project_dir)
    if isinstance(doc.get("parentID"), str) and doc["parentID"]:
        s.is_subagent, s.parent_session_id = True, doc["parentID"]
    times = as_dict(doc.get("time"))
    s.note_time(iso_utc(times.get("created")))
    s.note_time(iso_utc(times.get("updated")))
    if is_replay_path(s.project_dir):
        return ParseResult(None, replay=True)
    actions = TurnActions(s, ctx)
    user_shell = False  # the previous user message announced a command the person ran
    for msg, parts in messages:
        times = as_dict(msg.get("time"))
        at = iso_utc(times.get("created"))
        s.note_time(at)
        s.note_time(iso_utc(times.get("completed")))
        role = msg.get("role")
        if role == "shell":
            actions.shell(msg.get("command"))
            continue
        if role == "user":
            said = [p.get("text") for p in parts if p.get("type") == "text"]
            user_shell = bool(said) and all(
                isinstance(t, str) and t.strip() == USER_SHELL_TEXT for t in said)
            text = "\n".join(p["text"] for p in parts if p.get("type") == "text"
                             and isinstance(p.get("text"), str) and not p.get("synthetic")).strip()
            if not text:
                continue
            if not actions.prompt(text, at):
                return ParseResult(None, replay=True)
        elif role == "assistant":
            if isinstance(msg.get("modelID"), str):
                s.note_model(msg["modelID"])
            texts = []
            ran_by_person, user_shell = user_shell, False
            for p in parts:
                if p.get("type") == "tool" and ran_by_person and p.get("tool") in _SHELL_TOOLS:
                    state = as_dict(p.get("state"))
                    inp = as_dict(state.get("input"))
                    actions.shell(inp.get("command"))
                elif p.get("type") == "tool":
                    _tool(s, actions, p)
                    for answer in _answers(p):
                        redacted = ctx.redactor.redact(answer)
                        kind = classify_feedback(answer, follows_agent_turn=True) or "answer"
                        s.feedback.append(Feedback(kind, redacted, at, len(s.prompts) - 1 if s.prompts else None))
                    actions.answered = True
                elif p.get("type") == "text" and isinstance(p.get("text"), str) and p["text"].strip():
                    texts.append(p["text"])
            actions.answer("\n\n".join(texts))
    return ParseResult(s)


def _answers(part: dict[str, Any]) -> list[str]:
    """The person's answers to a ``question`` tool call (``metadata.answers``; newer stores
    ``structured.answers``): one list of chosen or typed strings per question."""
    if part.get("tool") != "question":
        return []
    state = as_dict(part.get("state"))
    out: list[str] = []
    for key in ("metadata", "structured", "result"):
        holder = state.get(key)
        answers = holder.get("answers") if isinstance(holder, dict) else None
        if isinstance(answers, list):
            for entry in answers:
                values = entry if isinstance(entry, list) else [entry]
                out.extend(v.strip() for v in values if isinstance(v, str) and v.strip())
            return out
    return out


def _tool(s: Session, actions: TurnActions, part: dict[str, Any]) -> None:
    name = part.get("tool") if isinstance(part.get("tool"), str) else None
    s.add_tool(name)
    state = as_dict(part.get("state"))
    inp = as_dict(state.get("input"))
    if name == "skill" and isinstance(inp.get("name"), str):
        s.add_skill(inp["name"])
    if name in _SHELL_TOOLS:
        actions.shell(inp.get("command"))
    elif name in _FILE_TOOLS:
        for key in _PATH_KEYS:
            if isinstance(inp.get(key), str):
                actions.file(inp[key])
                break
