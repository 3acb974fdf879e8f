"""What an agent did during one completion: an ordered, bounded trajectory.

Agent-CLI backends (claude-code, codex, copilot) read it from the host's
streaming output and return it on :attr:`Completion.trajectory`; chat backends
return None. The steps are typed values:

- :class:`TextStep`: assistant text (intermediate or final);
- :class:`ToolCall`: a tool the agent called (name, input);
- :class:`ToolResult`: what the tool returned (output bounded to
  :data:`MAX_OUTPUT_CHARS`), ``is_error`` when the host said so;
- :class:`CommandRun`: a shell command (as the host reported it, a string) with
  its exit code when known, bounded output, and ``denied`` when the host or the
  sandbox refused to run it;
- :class:`FileChange`: a file the agent added, modified or deleted (path
  relative to the working directory);
- :class:`CheckRun`: a verification command run *after* the agent finished,
  in the same working directory and sandbox (see ``CompletionRequest.checks``);
- :class:`RawStep`: an event of a type the parser does not know, kept (bounded)
  and counted in :attr:`Trajectory.unknown_events`, never fatal.

The trajectory is bounded as a whole (:data:`MAX_STEPS`; steps beyond are
counted in ``dropped``). It knows nothing of git or hosts: a caller that can see
the working directory (the sleep layer's checkout) may add the file changes it
observed itself with :meth:`Trajectory.with_steps`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any, ClassVar, Literal

MAX_OUTPUT_CHARS = 2000
MAX_INPUT_CHARS = 2000
MAX_STEPS = 400

Change = Literal["added", "modified", "deleted"]


def bounded(text: Any, limit: int = MAX_OUTPUT_CHARS) -> str:
    """``text`` as a string of at most ``limit`` characters (head and tail kept)."""
    if not isinstance(text, str):
        try:
            text = json.dumps(text, ensure_ascii=False, default=str)
        except (TypeError, ValueError):
            text = str(text)
    if len(text) <= limit:
        return text
    keep = max(0, limit - 40)
    return f"{text[: keep // 2]}\n... [{len(text) - keep} characters cut] ...\n{text[-(keep - keep // 2):]}"


@dataclass(frozen=True)
class TextStep:
    text: str
    kind: ClassVar[str] = "text"


@dataclass(frozen=True)
class ToolCall:
    name: str
    input: str = ""  # the tool input as bounded JSON text
    id: str = ""
    kind: ClassVar[str] = "tool_call"


@dataclass(frozen=True)
class ToolResult:
    id: str
    output: str = ""
    is_error: bool = False
    name: str = ""
    kind: ClassVar[str] = "tool_result"


@dataclass(frozen=True)
class CommandRun:
    command: str
    exit_code: int | None = None
    output: str = ""
    denied: bool = False
    kind: ClassVar[str] = "command"

    @property
    def ok(self) -> bool:
        return not self.denied and self.exit_code == 0


@dataclass(frozen=True)
class FileChange:
    """``lines_added`` / ``lines_removed``: the diff stat, when the caller measured it."""

    path: str
    change: Change = "modified"
    lines_added: int | None = None
    lines_removed: int | None = None

    def describe(self) -> str:
        stat = f", +{self.lines_added} -{self.lines_removed}" if self.lines_added is not None else ""
        return f"{self.path} ({self.change}{stat})"
    kind: ClassVar[str] = "file_change"


@dataclass(frozen=True)
class CheckRun:
    command: str
    exit_code: int | None
    output: str = ""
    kind: ClassVar[str] = "check"

    @property
    def passed(self) -> bool:
        return self.exit_code == 0


@dataclass(frozen=True)
class RawStep:
    event_type: str
    data: str = ""
    kind: ClassVar[str] = "raw"


Step = TextStep | ToolCall | ToolResult | CommandRun | FileChange | CheckRun | RawStep
_KINDS: dict[str, type] = {"text": TextStep, "tool_call": ToolCall, "tool_result": ToolResult, "command": CommandRun,
                           "file_change": FileChange, "check": CheckRun, "raw": RawStep}


@dataclass(frozen=True)
class Trajectory:
    """The ordered steps of one completion. ``unknown_events``: events the parser
    kept as :class:`RawStep`; ``dropped``: steps beyond :data:`MAX_STEPS`."""

    steps: tuple[Step, ...] = ()
    unknown_events: int = 0
    dropped: int = 0

    def commands(self) -> list[CommandRun]:
        return [s for s in self.steps if isinstance(s, CommandRun)]

    def file_changes(self) -> list[FileChange]:
        """Every changed path once (the last change reported for it wins)."""
        seen: dict[str, FileChange] = {}
        for s in self.steps:
            if isinstance(s, FileChange):
                seen.pop(s.path, None)
                seen[s.path] = s
        return list(seen.values())

    def checks(self) -> list[CheckRun]:
        return [s for s in self.steps if isinstance(s, CheckRun)]

    def with_steps(self, *steps: Step) -> Trajectory:
        room = max(0, MAX_STEPS - len(self.steps))
        return replace(self, steps=self.steps + tuple(steps[:room]), dropped=self.dropped + max(0, len(steps) - room))

    def summary(self, limit: int = 1500) -> str:
        """A bounded plain-text account: commands with exit codes, files changed,
        checks, denials and how many other steps there were. No tool output."""
        lines: list[str] = []
        for s in self.steps:
            if isinstance(s, CommandRun):
                status = "denied" if s.denied else f"exit {s.exit_code}" if s.exit_code is not None else "exit ?"
                lines.append(f"- ran `{bounded(s.command, 200)}` ({status})")
            elif isinstance(s, CheckRun):
                lines.append(f"- after the agent finished, a verification command {'passed' if s.passed else 'failed'}")
        changes = self.file_changes()
        if changes:
            shown = ", ".join(c.describe() for c in changes[:20])
            more = f" and {len(changes) - 20} more" if len(changes) > 20 else ""
            lines.append(f"- files changed: {shown}{more}")
        tools = [s.name for s in self.steps if isinstance(s, ToolCall)]
        if tools:
            lines.append(f"- {len(tools)} tool call(s): {', '.join(sorted(set(tools)))}")
        if self.unknown_events:
            lines.append(f"- {self.unknown_events} event(s) of unknown type")
        if not lines:
            return "- no commands run, no files changed"
        text = "\n".join(lines)
        return text if len(text) <= limit else text[: limit - 20].rsplit("\n", 1)[0] + "\n- (more not shown)"

    def to_dict(self) -> dict[str, Any]:
        return {"steps": [_step_dict(s) for s in self.steps], "unknown_events": self.unknown_events,
                "dropped": self.dropped}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Trajectory:
        steps = []
        for raw in data.get("steps") or []:
            kind = _KINDS.get(str(raw.get("kind")))
            if kind is None:
                continue
            steps.append(kind(**{k: v for k, v in raw.items() if k != "kind"}))
        return cls(tuple(steps), int(data.get("unknown_events") or 0), int(data.get("dropped") or 0))


def _step_dict(step: Step) -> dict[str, Any]:
    out = {"kind": step.kind}
    out.update({k: v for k, v in step.__dict__.items() if k != "kind"})
    return out


class TrajectoryBuilder:
    """Collects steps while a parser reads events, bounding each and the whole."""

    def __init__(self) -> None:
        self.steps: list[Step] = []
        self.unknown = 0
        self.dropped = 0

    def add(self, step: Step) -> None:
        if len(self.steps) >= MAX_STEPS:
            self.dropped += 1
            return
        self.steps.append(step)

    def raw(self, event: dict[str, Any]) -> None:
        self.unknown += 1
        self.add(RawStep(str(event.get("type") or "?"), bounded(event, 500)))

    def build(self) -> Trajectory:
        return Trajectory(tuple(self.steps), self.unknown, self.dropped)


__all__ = ["CheckRun", "CommandRun", "FileChange", "RawStep", "Step", "TextStep", "ToolCall", "ToolResult",
           "Trajectory", "TrajectoryBuilder", "bounded"]
