"""What the agent did per val instance, before and after: the proposal's evidence as a reviewer reads it.

The night writes one record per val item (:mod:`sleep.replay.evidence`,
``replay_evidence.json`` in its run directory) and hands the same records to the
proposal's report (``ProposalReport.evidence``). This module reads them back
leniently (a record from an older or newer night with fields missing, renamed
or of another type still shows what it has, never fails) into typed values,
and lays them out as the table ``skillopt-sleep show`` prints. The dashboard's
proposal page and the MCP ``show_proposal`` tool read the same values.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from rich.cells import cell_len

from sleep.proposals.message import label

MAX_COMMANDS = 20  # per side, shown; the run directory's replay_evidence.json keeps them all
MAX_FILES = 20


@dataclass(frozen=True)
class Command:
    command: str
    exit_code: int | None = None
    denied: bool = False


@dataclass(frozen=True)
class FileChange:
    path: str
    change: str = ""


@dataclass(frozen=True)
class Check:
    command: str
    passed: bool | None = None
    exit_code: int | None = None


@dataclass(frozen=True)
class Side:
    """One rollout of the instance under one skill. ``replayed`` False: no rollout was found;
    ``acted`` False: a read-only replay (only the answer came back)."""

    replayed: bool = False
    acted: bool = False
    passed: bool | None = None
    score: float | None = None
    feedback: str = ""
    answer: str = ""
    commands: list[Command] = field(default_factory=list)
    files: list[FileChange] = field(default_factory=list)
    checks: list[Check] = field(default_factory=list)

    @property
    def verdict(self) -> str:
        if not self.replayed:
            return "not replayed"
        return "?" if self.passed is None else "pass" if self.passed else "fail"

    @property
    def check(self) -> str:
        """All checks in one word: passed, failed, none."""
        if not self.checks:
            return "none"
        return "passed" if all(c.passed for c in self.checks) else "failed"


@dataclass(frozen=True)
class Instance:
    """One val item: the task id, the start of its prompt, the starting skill's and the candidate's rollouts."""

    task: str
    prompt: str = ""
    before: Side = field(default_factory=Side)
    after: Side = field(default_factory=Side)

    @property
    def moved(self) -> str:
        """``better``, ``worse`` or ``same`` (by the judge's verdict)."""
        b, a = self.before.passed, self.after.passed
        if b is False and a is True:
            return "better"
        if b is True and a is False:
            return "worse"
        return "same"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _str(value: Any) -> str:
    return "" if value is None else str(value)


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    try:
        return int(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def _float(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _bool(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None


def _dicts(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _side(data: Any) -> Side:
    if not isinstance(data, dict):
        return Side()
    passed = _bool(data.get("passed"))
    if passed is None and _float(data.get("hard")) is not None:
        passed = float(data["hard"]) >= 1.0
    return Side(
        replayed=True,
        acted=any(k in data for k in ("commands", "files", "checks")),
        passed=passed,
        score=_float(data.get("score")),
        feedback=_str(data.get("feedback")),
        answer=_str(data.get("answer")),
        commands=[Command(_str(c.get("command")), _int(c.get("exit_code")), bool(c.get("denied")))
                  for c in _dicts(data.get("commands"))],
        files=[FileChange(_str(f.get("path")), _str(f.get("change"))) for f in _dicts(data.get("files"))],
        checks=[Check(_str(c.get("command")), _bool(c.get("passed")), _int(c.get("exit_code")))
                for c in _dicts(data.get("checks"))],
    )


def instances(records: Any) -> list[Instance]:
    """The evidence records (a list of dicts, as the night wrote them) as :class:`Instance` values;
    anything that is not a record with a task id is skipped."""
    out = []
    for r in _dicts(records):
        task = _str(r.get("task") or r.get("task_id") or r.get("id"))
        if task:
            out.append(Instance(task, _str(r.get("prompt")), _side(r.get("before")), _side(r.get("after"))))
    return out


def redact(records: Any, red: Callable[[str], str]) -> list[Any]:
    """``records`` with every string (keys and values) passed through ``red``; numbers, booleans kept."""
    def walk(value: Any) -> Any:
        if isinstance(value, str):
            return red(value)
        if isinstance(value, dict):
            return {walk(k) if isinstance(k, str) else k: walk(v) for k, v in value.items()}
        if isinstance(value, list):
            return [walk(v) for v in value]
        return value

    return walk(records) if isinstance(records, list) else []


# ----- the table of ``show``


def command_text(c: Command, limit: int = 60) -> str:
    """The command on one line (cut at ``limit``), then ``(denied)`` or a non-zero exit code."""
    if c.denied:
        return f"{label(c.command, limit)} (denied)"
    return label(c.command, limit) + (f" (exit {c.exit_code})" if c.exit_code not in (None, 0) else "")


def _commands(side: Side) -> str:
    if not side.replayed:
        return "-"
    if not side.acted:
        return "(read-only: answered only)"
    shown = [command_text(c) for c in side.commands[:MAX_COMMANDS]]
    more = len(side.commands) - len(shown)
    return "; ".join(shown + ([f"+{more} more"] if more > 0 else [])) or "none"


def _files(side: Side) -> str:
    if not side.acted:
        return "-"
    shown = [f"{label(f.path, 50)} ({f.change})" if f.change else label(f.path, 50) for f in side.files[:MAX_FILES]]
    more = len(side.files) - len(shown)
    return "; ".join(shown + ([f"+{more} more"] if more > 0 else [])) or "none"


def _checks(side: Side) -> str:
    if not side.acted or not side.checks:
        return "-"
    return "; ".join(f"{label(c.command, 40)}: {'passed' if c.passed else 'failed'}" for c in side.checks)


_HEADER = ("TASK", "SIDE", "VERDICT", "COMMANDS RUN", "FILES CHANGED", "CHECK")


def table_lines(items: list[Instance]) -> list[str]:
    """The evidence as an aligned table: two rows per val instance (before, after), then the judge's
    sentence for each side that has one."""
    rows: list[tuple[str, ...]] = [_HEADER]
    for i in items:
        for name, side in (("before", i.before), ("after", i.after)):
            rows.append((label(i.task, 24) if name == "before" else "", name, side.verdict,
                         _commands(side), _files(side), _checks(side)))
    widths = [max(cell_len(r[n]) for r in rows) for n in range(len(_HEADER))]
    out = ["  " + "  ".join(c + " " * (widths[n] - cell_len(c)) for n, c in enumerate(r)).rstrip() for r in rows]
    why = []
    for i in items:
        if i.prompt:
            why.append(f"  {label(i.task, 24)}: {label(i.prompt, 100)!r}")
        for name, side in (("before", i.before), ("after", i.after)):
            if side.feedback:
                why.append(f"    {name}: judge: {label(side.feedback, 160)}")
    return out + why
