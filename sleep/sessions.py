"""The Session record every source yields, and small helpers for building it.

A Session is what SkillOpt-Sleep keeps of one agent session: who ran it (host),
where (project dir), when (UTC), what the person typed (prompts), what the
agent finally answered to each prompt (finals), which tools and skills it used,
and the person's explicit feedback. All text in a stored Session has been
through redaction (sleep.redact); raw transcript lines are never stored.

Times are ISO 8601 UTC strings with a ``Z`` suffix and millisecond precision
(``2025-01-31T09:15:02.123Z``), so they sort as text and compare across hosts.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from skillopt_core.timestamps import utc_iso, utc_stamp_ms

MAX_TURN_ACTIONS = 50  # shell signatures / files kept per turn

_ISO_NORMAL = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
_ISO_FAST = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?Z$")


def iso_utc(value: Any) -> str | None:
    """Normalise a timestamp (ISO string, epoch seconds or epoch milliseconds) to ISO UTC.

    Returns None for anything unparseable; never raises.
    """
    try:
        if isinstance(value, bool) or value is None:
            return None
        if isinstance(value, (int, float)):
            return utc_stamp_ms(int(value) if value > 1e11 else int(value * 1000))
        elif isinstance(value, str):
            if len(value) == 24 and _ISO_NORMAL.match(value):
                return value  # already the normal form (most hosts write it)
            text = value.strip()
            if _ISO_FAST.match(text):
                # Already UTC: only the fraction needs normalising.
                base, _, frac = text[:-1].partition(".")
                return f"{base}.{(frac + '000')[:3]}Z"
            dt = datetime.fromisoformat(text.replace("Z", "+00:00"))
            dt = dt.replace(tzinfo=timezone.utc) if dt.tzinfo is None else dt.astimezone(timezone.utc)
        else:
            return None
    except (ValueError, OverflowError, OSError):
        return None
    return utc_iso(dt)


def _same_dir(a: str, b: str) -> bool:
    return a.rstrip("/\\") == b.rstrip("/\\")


@dataclass
class Prompt:
    """One prompt the person typed (never tool output or injected context), and
    what the agent did in the turn it opened: ``shell`` holds a short signature
    of each shell command run (program and subcommand, e.g. ``pytest -q``,
    ``ruff check``; never the full command line), ``files`` the project-relative
    paths read or changed. Both are redacted, de-duplicated and in first-use order.
    ``project`` is the directory the prompt was typed in when that is not the
    session's ``project_dir`` (the person moved into a sub-project mid-session);
    ``files`` are then relative to it. None means the session's project."""

    text: str
    at: str | None = None
    shell: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    project: str | None = None


@dataclass
class Feedback:
    """An explicit signal from the person.

    kind: ``correction`` ("no, use pnpm"), ``approval`` ("perfect, thanks"),
    ``rejection`` (a tool use the person refused, with their reason if given) or
    ``interruption`` (the person stopped the agent mid-turn).
    prompt_index: the prompt (turn) the signal belongs to, if known.
    """

    kind: str
    text: str
    at: str | None = None
    prompt_index: int | None = None


@dataclass
class Session:
    """One harvested agent session (see module docstring for the conventions).

    ``finals[i]`` is the last assistant text of the turn opened by
    ``prompts[i]`` (None when the agent answered only with tool calls or the
    turn is still open). ``tools`` and ``skills`` map names to use counts.
    ``state`` is the source's private continuation state for incremental reads;
    it is stored with the session but is not part of the public record.
    ``entrypoint`` is the host's own word for how the session was started
    (Claude Code ``entrypoint`` such as ``cli`` / ``sdk-cli``, Codex
    ``originator`` such as ``codex_cli_rs`` / ``codex_exec``); ``scripted`` is
    true when that marks the person's own automation (``claude -p``, the SDK,
    ``codex exec``) rather than an interactive session. ``models`` lists every
    model the session used, in first-use order; ``model`` is the last one.
    """

    host: str
    session_id: str
    project_dir: str | None = None
    started_at: str | None = None
    ended_at: str | None = None
    prompts: list[Prompt] = field(default_factory=list)
    finals: list[str | None] = field(default_factory=list)
    tools: dict[str, int] = field(default_factory=dict)
    skills: dict[str, int] = field(default_factory=dict)
    commands: dict[str, int] = field(default_factory=dict)
    feedback: list[Feedback] = field(default_factory=list)
    is_subagent: bool = False
    parent_session_id: str | None = None
    entrypoint: str | None = None
    scripted: bool = False
    model: str | None = None
    models: list[str] = field(default_factory=list)
    source_path: str | None = None
    state: dict[str, Any] = field(default_factory=dict)

    # ----- building (used by sources) -------------------------------------------------

    def note_time(self, at: str | None) -> None:
        """Widen [started_at, ended_at] to include ``at`` (an ISO UTC string)."""
        if not at:
            return
        if self.started_at is None or at < self.started_at:
            self.started_at = at
        if self.ended_at is None or at > self.ended_at:
            self.ended_at = at

    def note_model(self, model: str | None) -> None:
        """The session is (now) using ``model``: it becomes ``model`` and joins ``models``."""
        if not model:
            return
        self.model = model
        if model not in self.models:
            self.models.append(model)

    def add_prompt(self, text: str, at: str | None, project: str | None = None) -> int:
        """Open a new turn with a (redacted) prompt typed in ``project`` (None: the
        session's project); returns its index."""
        if project is not None and self.project_dir is not None and _same_dir(project, self.project_dir):
            project = None
        self.prompts.append(Prompt(text=text, at=at, project=project))
        self.finals.append(None)
        return len(self.prompts) - 1

    def set_final(self, text: str) -> None:
        """Record ``text`` as the current turn's final answer (ignored before any prompt)."""
        if self.finals:
            self.finals[-1] = text

    def add_tool(self, name: str | None) -> None:
        if name:
            self.tools[name] = self.tools.get(name, 0) + 1

    def add_skill(self, name: str | None) -> None:
        if name:
            self.skills[name] = self.skills.get(name, 0) + 1

    def add_command(self, name: str | None) -> None:
        if name:
            self.commands[name] = self.commands.get(name, 0) + 1

    def add_shell(self, signature: str | None) -> None:
        """Note a shell command signature on the current turn (ignored before any prompt)."""
        if signature and self.prompts and signature not in self.prompts[-1].shell \
                and len(self.prompts[-1].shell) < MAX_TURN_ACTIONS:
            self.prompts[-1].shell.append(signature)

    def add_file(self, path: str | None) -> None:
        """Note a project-relative file path on the current turn (ignored before any prompt)."""
        if path and self.prompts and path not in self.prompts[-1].files \
                and len(self.prompts[-1].files) < MAX_TURN_ACTIONS:
            self.prompts[-1].files.append(path)

    def turn_project(self, index: int = -1) -> str | None:
        """The project directory turn ``index`` was typed in."""
        if not self.prompts:
            return self.project_dir
        return self.prompts[index].project or self.project_dir

    def projects(self) -> list[str]:
        """Every project directory a turn of this session was typed in (the session's first)."""
        out = [self.project_dir] if self.project_dir else []
        for p in self.prompts:
            if p.project and p.project not in out:
                out.append(p.project)
        return out

    def for_project(self, project: str, under: Callable[[str | None, str], bool]) -> Session | None:
        """This session as seen from ``project``: itself if it belongs there (``under(
        project_dir, project)``), else a copy holding only the turns typed in ``project``
        or below (with that turn's directory as ``project_dir``), or None if it has none."""
        if under(self.project_dir, project):
            return self
        keep = [i for i, p in enumerate(self.prompts) if p.project and under(p.project, project)]
        if not keep:
            return None
        copy = Session.from_dict(self.to_dict(with_state=False))
        first = copy.prompts[keep[0]].project
        copy.prompts = [copy.prompts[i] for i in keep]
        copy.finals = [copy.finals[i] for i in keep]
        for p in copy.prompts:
            p.project = None if p.project == first else p.project
        index_of = {old: new for new, old in enumerate(keep)}
        copy.feedback = [Feedback(f.kind, f.text, f.at, index_of[f.prompt_index])
                         for f in copy.feedback if f.prompt_index in index_of]
        copy.project_dir = first
        return copy

    # ----- (de)serialisation -------------------------------------------------------------

    def to_dict(self, *, with_state: bool = True) -> dict[str, Any]:
        # Built by hand: dataclasses.asdict deep-copies every value, which showed up
        # as a tenth of the harvest's time on large corpora.
        data: dict[str, Any] = {
            "host": self.host, "session_id": self.session_id, "project_dir": self.project_dir,
            "started_at": self.started_at, "ended_at": self.ended_at,
            "prompts": [{"text": p.text, "at": p.at, "shell": list(p.shell), "files": list(p.files),
                         **({"project": p.project} if p.project else {})} for p in self.prompts],
            "finals": list(self.finals), "tools": dict(self.tools), "skills": dict(self.skills),
            "commands": dict(self.commands),
            "feedback": [{"kind": f.kind, "text": f.text, "at": f.at, "prompt_index": f.prompt_index}
                         for f in self.feedback],
            "is_subagent": self.is_subagent, "parent_session_id": self.parent_session_id,
            "entrypoint": self.entrypoint, "scripted": self.scripted, "model": self.model, "models": list(self.models),
            "source_path": self.source_path,
        }
        if with_state:
            data["state"] = self.state
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Session:
        known = {f for f in cls.__dataclass_fields__}
        kwargs = {k: v for k, v in data.items() if k in known}
        kwargs["prompts"] = [Prompt(**p) for p in data.get("prompts") or []]
        kwargs["feedback"] = [Feedback(**f) for f in data.get("feedback") or []]
        if not kwargs.get("models") and kwargs.get("model"):
            kwargs["models"] = [kwargs["model"]]  # stored before sessions kept every model
        return cls(**kwargs)


@dataclass
class HistoryPrompt:
    """One line of a host's typed-prompt history (``history.jsonl``), redacted."""

    host: str
    text: str
    at: str | None = None
    project_dir: str | None = None
    session_id: str | None = None


def __getattr__(name: str):
    # HOSTS: the values ``Session.host`` takes, one per transcript source of sleep/hosts/.
    if name == "HOSTS":
        from sleep.hosts import source_names

        return tuple(source_names())
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
