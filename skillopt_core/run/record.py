"""The typed records of a run: one step (a ``history.json`` record), one gate
decision (``steps/step_NNNN/gate.json``) and one selected edit (an entry of
``selected.json``).

The trainer builds these and writes ``to_dict()``; every reader (the night,
proposals, the MCP tools, the dashboard) reads them back with ``from_dict``.
The files keep their keys and key order, so ``history.json`` written before
these types existed reads and writes back byte for byte, and old runs resume.

``from_dict`` is tolerant and versioned: the files carry no version key, so a
record is read as :data:`RECORD_VERSION` unless it says otherwise; keys this
build does not know are kept in ``extra`` (and written back after the known
ones) instead of failing; keys written by older trainers that are missing get
the value the old trainer meant (:func:`migrate_step`). A value of the wrong
type raises :class:`RecordError` naming the key; or, given a ``problems`` list
(the dashboard's, which shows a damaged run instead of failing on it), each
wrong value is noted there ("history.json, step 2: val_candidate is "abc", not
a number") and read as "none" (None, 0, "", {}), and the rest of the record is read.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from skillopt_core.evaluation.gate import GateDecision
from skillopt_core.run.events import show
from skillopt_core.skill.edits import Edit

RECORD_VERSION = 1

__all__ = ["RECORD_VERSION", "GateRecord", "RecordError", "SelectedEdit", "StepDetail", "StepRecord", "migrate_step",
           "show"]


class RecordError(ValueError):
    """A run record whose value has the wrong type (the message names the file's key)."""


# history.json key → StepRecord field, in the file's order. Fields not named here keep their key.
_STEP_KEYS: tuple[tuple[str, str], ...] = (
    ("step", "step"), ("epoch", "epoch"), ("train_score", "train_score"),
    ("val_current", "current_val"), ("val_candidate", "candidate_val"), ("val_after", "after_val"),
    ("best_val", "best_val"), ("best_source", "best_source"), ("best_reason", "best_reason"),
    ("action", "action"), ("gate_reason", "gate_reason"), ("gate_items", "gate_item_count"),
    ("gate_evaluated", "gate_evaluated_count"), ("gate_early_stopped", "gate_stopped_early"),
    ("screen", "screen"), ("n_refused", "refused_count"), ("gate_round", "gate_round"),
    ("n_proposed", "proposed_count"), ("n_caller_edits", "caller_edit_count"), ("n_patches", "patch_count"),
    ("n_selected", "selected_count"), ("n_applied", "applied_count"), ("outcomes", "outcomes"),
    ("invalid_replies", "invalid_reply_count"), ("skipped_edits", "skipped_edit_count"),
    ("failed_items", "failed_item_count"), ("budget", "edit_budget"), ("budget_text", "budget_text"),
    ("lr", "learning_rate"), ("selected_edits", "selected_edits"), ("skill_hash", "skill_hash"),
    ("usage", "usage"), ("timings", "timings"),
)


def _bad(where: str, key: str, value: Any, expected: str) -> RecordError:
    return RecordError(f"{where}: {key} is {show(value)}, not {expected}")


def _number(value: Any, key: str, where: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value  # type: ignore[return-value]  # an int stays an int, so it is written back as it was
    raise _bad(where, key, value, "a number")


def _whole(value: Any, key: str, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, float) and math.isfinite(value) and value == int(value):
            return int(value)
        raise _bad(where, key, value, "a whole number")
    return value


def _text(value: Any, key: str, where: str) -> str:
    if not isinstance(value, str):
        raise _bad(where, key, value, "text")
    return value


def _flag(value: Any, key: str, where: str) -> bool:
    if isinstance(value, bool) or (isinstance(value, int) and value in (0, 1)):
        return bool(value)
    raise _bad(where, key, value, "true or false")


def _mapping(value: Any, key: str, where: str) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise _bad(where, key, value, "an object")
    return dict(value)


def _numbers(value: Any, key: str, where: str) -> dict[str, float]:
    out = {}
    for k, v in _mapping(value, key, where).items():
        n = _number(v, f"{key}.{k}", where)
        if n is not None:
            out[str(k)] = n
    return out


class _Fields:
    """Reads a record's values: strict (the first wrong value raises), or lenient (each wrong value
    goes to ``problems`` and reads as ``none``)."""

    def __init__(self, where: str, problems: list[str] | None) -> None:
        self.where, self.problems = where, problems

    def __call__(self, read: Callable[[Any, str, str], Any], value: Any, key: str, none: Any) -> Any:
        if read is _numbers and isinstance(value, Mapping):  # each entry on its own
            return {str(k): n for k, v in value.items() if (n := self(_number, v, f"{key}.{k}", None)) is not None}
        try:
            return read(value, key, self.where)
        except RecordError as exc:
            if self.problems is None:
                raise
            self.problems.append(str(exc))
            return none


def _edit(value: Any, where: str) -> Edit:
    try:
        return Edit.from_dict(value)
    except ValueError as exc:
        raise RecordError(f"{where}: {exc}") from None


_COUNTS = ("step", "epoch", "gate_items", "gate_evaluated", "n_refused", "gate_round", "n_proposed", "n_caller_edits",
           "n_patches", "n_selected", "n_applied", "invalid_replies", "skipped_edits", "failed_items", "budget")
_NUMBERS = ("train_score", "val_current", "val_candidate", "val_after", "best_val", "lr")
_TEXTS = ("best_source", "best_reason", "action", "gate_reason", "budget_text", "skill_hash")
_OBJECTS = ("outcomes", "usage", "timings")


def migrate_step(data: Mapping[str, Any]) -> dict[str, Any]:
    """A step record of any earlier shape in today's: the keys an older trainer (or a hand-made
    record) did not write get the value that means "none" (no screen, nothing refused, round 0,
    no caller edits, no score: None, no text: "")."""
    out = dict(data)
    version = out.pop("version", RECORD_VERSION)
    if not isinstance(version, int) or version > RECORD_VERSION:
        raise RecordError(f"history.json, step {out.get('step', '?')}: record version {version!r} is newer than "
                          f"this build reads ({RECORD_VERSION}); update SkillOpt to read this run")
    for key in _COUNTS:
        out.setdefault(key, 0)
    for key in (*_NUMBERS, "screen"):
        out.setdefault(key, None)
    for key in _TEXTS:
        out.setdefault(key, "")
    for key in _OBJECTS:
        out.setdefault(key, {})
    out.setdefault("gate_early_stopped", False)
    out.setdefault("selected_edits", [])
    return out


@dataclass(frozen=True)
class StepRecord:
    """One training step as ``history.json`` keeps it.

    The val means are over full val, except ``candidate_val`` of a candidate the gate rejected
    early (over ``gate_evaluated_count`` of ``gate_item_count`` items). ``usage`` is the ledger's
    difference over the step (role → stage → counts), ``timings`` seconds per stage."""

    step: int
    epoch: int
    train_score: float | None
    current_val: float | None
    candidate_val: float | None
    after_val: float | None
    best_val: float | None
    best_source: str
    best_reason: str
    action: str  # accept | accept_ungated | reject | no_change
    gate_reason: str
    gate_item_count: int
    gate_evaluated_count: int
    gate_stopped_early: bool
    screen: dict[str, Any] | None
    refused_count: int
    gate_round: int
    proposed_count: int
    caller_edit_count: int
    patch_count: int
    selected_count: int
    applied_count: int
    outcomes: dict[str, int]
    invalid_reply_count: int
    skipped_edit_count: int
    failed_item_count: int
    edit_budget: int
    budget_text: str
    learning_rate: float | None
    selected_edits: tuple[Edit, ...]
    skill_hash: str
    usage: dict[str, Any] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)  # keys this build does not know, kept as read

    @property
    def accepted(self) -> bool:
        return self.action.startswith("accept")

    @property
    def rejected(self) -> bool:
        return self.action == "reject"

    @property
    def tried(self) -> bool:
        """A candidate was scored against the current skill on val."""
        return self.candidate_val is not None and self.current_val is not None

    @property
    def partial(self) -> bool:
        """The gate decided before scoring all of val (its candidate mean covers fewer items)."""
        return self.gate_stopped_early or self.gate_evaluated_count < self.gate_item_count

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, name in _STEP_KEYS:
            value = getattr(self, name)
            out[key] = [e.to_dict() for e in value] if name == "selected_edits" else value
        return {**out, **self.extra}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], problems: list[str] | None = None, index: int | None = None
                  ) -> StepRecord:
        """The record of one ``history.json`` object (``index``: its place in the file, for messages);
        with ``problems``, lenient (see the module docstring)."""
        if not isinstance(data, Mapping):
            raise RecordError(f"a history.json record is {type(data).__name__}, not an object")
        try:
            d = migrate_step(data)
        except RecordError as exc:  # a newer record: what this build knows of it is still shown
            if problems is None:
                raise
            problems.append(str(exc))
            d = migrate_step({k: v for k, v in data.items() if k != "version"})
        read = _Fields("history.json" if index is None else f"history.json, record {index + 1}", problems)
        step = read(_whole, d["step"], "step", 0)
        read.where = f"history.json, step {step}"
        values: dict[str, Any] = {"step": step}
        for key, name in _STEP_KEYS[1:]:
            reader, none = _STEP_READ.get(key, (_mapping, {}))
            value = d[key]
            values[name] = none if problems is not None and value is None else read(reader, value, key, none)
        known = {key for key, _ in _STEP_KEYS}
        return cls(**values, extra={k: v for k, v in d.items() if k not in known})


def _screen(value: Any, key: str, where: str) -> dict[str, Any] | None:
    return None if value is None else _mapping(value, key, where)


def _edits(value: Any, key: str, where: str) -> tuple[Edit, ...]:
    if not isinstance(value, list):
        raise _bad(where, key, value, "a list")
    return tuple(_edit(e, f"{where}, selected edit {i + 1}") for i, e in enumerate(value))


# history.json key → (its reader, its "none"); the objects (outcomes, usage) are read as mappings.
_STEP_READ: dict[str, tuple[Callable[[Any, str, str], Any], Any]] = {
    **{k: (_whole, 0) for k in _COUNTS}, **{k: (_number, None) for k in _NUMBERS}, **{k: (_text, "") for k in _TEXTS},
    "gate_early_stopped": (_flag, False), "screen": (_screen, None), "timings": (_numbers, {}),
    "selected_edits": (_edits, ()),
}


_DECISION_KEYS = tuple(f.name for f in fields(GateDecision))
_DECISION_NONE: dict[str, Any] = {"accept": False, "policy": "", "current_mean": 0.0, "candidate_mean": 0.0,
                                  "n_items": 0, "n_evaluated": 0, "early_stopped": False, "deltas": {}, "reason": ""}


@dataclass(frozen=True)
class GateRecord:
    """A step's ``gate.json``: the gate's decision with its evidence (per-item deltas), or, when no
    gate ran (no change, the gate off, the screen rejected), the action and why; plus the screen's
    result when one ran."""

    action: str  # accept | reject | no_change | accept_ungated
    reason: str
    decision: GateDecision | None = None
    screen: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def deltas(self) -> dict[str, float]:
        """candidate - current per val item the gate scored ({} when no gate ran)."""
        return dict(self.decision.deltas) if self.decision is not None else {}

    @classmethod
    def of(cls, action: str, reason: str, decision: GateDecision | None,
           screen: dict[str, Any] | None) -> GateRecord:
        return cls(action, decision.reason if decision is not None else reason, decision, screen)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = (self.decision.to_dict() if self.decision is not None
                               else {"action": self.action, "reason": self.reason})
        if self.screen:
            out["screen"] = self.screen
        return {**out, **self.extra}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], problems: list[str] | None = None) -> GateRecord:
        """The record of a ``gate.json`` object; with ``problems``, lenient (see the module docstring)."""
        if not isinstance(data, Mapping):
            raise RecordError(f"gate.json is {type(data).__name__}, not an object")
        read = _Fields("gate.json", problems)
        d = dict(data)
        d.pop("version", None)
        screen = read(_screen, d.pop("screen", None), "screen", None)
        if "accept" in d:  # a decision; what an older or hand-made file left out means "none"
            given = {k: read(reader, d[k], k, _DECISION_NONE[k]) for k, reader in _DECISION_READ.items()
                     if k in d and not (problems is not None and d[k] is None)}
            decision = GateDecision(**{**_DECISION_NONE, **given})
            extra = {k: v for k, v in d.items() if k not in _DECISION_KEYS}
            return cls("accept" if decision.accept else "reject", decision.reason, decision, screen, extra)
        extra = {k: v for k, v in d.items() if k not in ("action", "reason")}
        return cls(read(_text, d.get("action", ""), "action", ""), read(_text, d.get("reason", ""), "reason", ""),
                   None, screen, extra)


_DECISION_READ: dict[str, Callable[[Any, str, str], Any]] = {
    "accept": _flag, "policy": _text, "current_mean": _number, "candidate_mean": _number, "n_items": _whole,
    "n_evaluated": _whole, "early_stopped": _flag, "deltas": _numbers, "reason": _text}


@dataclass(frozen=True)
class SelectedEdit:
    """An edit the step selected, with what applying it did (``status``: applied, target_not_found,
    ambiguous_target, protected_region, no_op; ``detail``) and how many proposals it merged
    (``support``)."""

    edit: Edit
    status: str = "applied"
    detail: str = ""
    support: int = 1

    @property
    def applied(self) -> bool:
        return self.status == "applied"

    def to_dict(self) -> dict[str, Any]:
        return {**self.edit.to_dict(), "status": self.status, "detail": self.detail, "support": self.support}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], where: str = "selected.json",
                  problems: list[str] | None = None) -> SelectedEdit:
        """With ``problems``, lenient in ``status``, ``detail`` and ``support``; an entry that is no
        edit raises :class:`RecordError` either way."""
        if not isinstance(data, Mapping):
            raise RecordError(f"{where}: an edit is {type(data).__name__}, not an object")
        read = _Fields(where, problems)
        return cls(_edit(data, where), read(_text, data.get("status", "applied"), "status", "applied"),
                   read(_text, data.get("detail") or "", "detail", ""),
                   read(_whole, data.get("support", 1), "support", 1))


@dataclass(frozen=True)
class StepDetail:
    """What one step's files hold, in memory: its history record, its gate decision, the edits it
    selected (``selected.json``) and the edits refused before merging (``patches.json``
    ``refused``: the edit and why)."""

    record: StepRecord
    gate: GateRecord
    selected: tuple[SelectedEdit, ...] = ()
    refused: tuple[tuple[Edit, str], ...] = ()
