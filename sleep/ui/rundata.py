"""One run directory's files, read into typed values for the run, step and epoch pages.

Every path here is built from a :class:`RunRef` (already resolved and checked
by the catalog) and integers, never from URL text. Missing or unreadable files
give empty values, and :attr:`RunPage.problems` says which, so a run still
being written (or an old layout) renders instead of failing.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from sleep.ui.runrow import RunRow, first_event, last_event
from sleep.ui.runs import RunRef

STAGES = ("rollout", "reflect", "aggregate", "select_update", "gate")
MAX_TEXT = 2_000_000  # larger skill or config files are cut (and the page says so)


@dataclass(frozen=True)
class StepRow:
    """One history record, as the step table and the curve need it."""

    step: int
    epoch: int
    action: str  # accept | reject | no_change | accept_ungated
    train_score: float | None
    val_current: float | None
    val_candidate: float | None
    val_after: float | None
    best_val: float | None
    gate_reason: str
    gate_evaluated: int
    gate_items: int
    early_stopped: bool
    n_proposed: int
    n_patches: int
    n_selected: int
    n_applied: int
    failed_items: int
    tokens: int
    calls: int
    timings: dict[str, float]
    budget_text: str
    usage: dict[str, Any]

    @property
    def accepted(self) -> bool:
        return self.action.startswith("accept")

    @staticmethod
    def from_record(h: dict[str, Any]) -> "StepRow":
        calls = tokens = 0
        for stages in (h.get("usage") or {}).values():
            for u in (stages or {}).values() if isinstance(stages, dict) else ():
                calls += int(u.get("calls") or 0)
                tokens += int(u.get("input_tokens") or 0) + int(u.get("output_tokens") or 0)
        return StepRow(
            step=int(h.get("step") or 0), epoch=int(h.get("epoch") or 1), action=str(h.get("action") or "?"),
            train_score=h.get("train_score"), val_current=h.get("val_current"),
            val_candidate=h.get("val_candidate"), val_after=h.get("val_after"), best_val=h.get("best_val"),
            gate_reason=str(h.get("gate_reason") or ""), gate_evaluated=int(h.get("gate_evaluated") or 0),
            gate_items=int(h.get("gate_items") or 0), early_stopped=bool(h.get("gate_early_stopped")),
            n_proposed=int(h.get("n_proposed") or 0) + int(h.get("n_caller_edits") or 0),
            n_patches=int(h.get("n_patches") or 0), n_selected=int(h.get("n_selected") or 0),
            n_applied=int(h.get("n_applied") or 0), failed_items=int(h.get("failed_items") or 0),
            tokens=tokens, calls=calls, timings={k: float(v) for k, v in (h.get("timings") or {}).items()},
            budget_text=str(h.get("budget_text") or ""), usage=h.get("usage") or {})


@dataclass(frozen=True)
class EpochInfo:
    epoch: int
    slow_update: dict[str, Any] | None  # comparison.json
    meta_notes: str | None

    @property
    def slow_action(self) -> str:
        return str((self.slow_update or {}).get("action") or "not run")


@dataclass
class RunPage:
    ref: RunRef
    row: RunRow
    started: dict[str, Any]  # the first run_started event
    steps: list[StepRow]
    epochs: list[EpochInfo]
    skill_steps: list[int]  # steps with a skills/step_NNNN.md
    events_offset: int  # where a live page starts following events.jsonl
    last_event: dict[str, Any] | None
    notices: list[str] = field(default_factory=list)  # warnings the run itself emitted
    problems: list[str] = field(default_factory=list)  # files the page could not read

    @property
    def initial_val(self) -> float | None:
        if self.row.initial_val is not None:
            return self.row.initial_val
        return self.steps[0].val_current if self.steps else None


@dataclass
class StepPage:
    ref: RunRef
    row: StepRow | None
    gate: dict[str, Any]
    selected: dict[str, Any]
    patches: dict[str, Any]
    rollouts: list[dict[str, Any]]
    has_candidate: bool
    problems: list[str] = field(default_factory=list)

    @property
    def deltas(self) -> list[tuple[str, float]]:
        """The gate's per-item deltas (candidate - current), largest change first."""
        d = self.gate.get("deltas") or {}
        return sorted(((str(k), float(v)) for k, v in d.items()), key=lambda kv: (-abs(kv[1]), kv[0]))


def _load_json(path: Path, problems: list[str], default: Any) -> Any:
    if not path.is_file():
        return default
    try:
        return orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError) as exc:
        problems.append(f"{path.name}: {exc}")
        return default


def read_text(path: Path) -> str | None:
    """A text file of the run (cut at :data:`MAX_TEXT` characters), or None if absent."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read(MAX_TEXT + 1)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"(could not read {path.name}: {exc.strerror or exc})"
    if len(text) > MAX_TEXT:
        text = text[:MAX_TEXT] + f"\n… (cut: the file is longer than {MAX_TEXT:,} characters)"
    return text


def numbered(folder: Path, prefix: str, suffix: str = "") -> list[int]:
    out = []
    try:
        names = os.listdir(folder)
    except OSError:
        return out
    for name in names:
        if name.startswith(prefix) and name.endswith(suffix):
            digits = name[len(prefix): len(name) - len(suffix)]
            if digits.isdigit():
                out.append(int(digits))
    return sorted(out)


def load_run(ref: RunRef, row: RunRow) -> RunPage:
    path = ref.path
    problems: list[str] = []
    events = path / "events.jsonl"
    # Take the offset before reading history.json, so a live page misses no event.
    try:
        offset = events.stat().st_size
    except OSError:
        offset = 0
    history = _load_json(path / "history.json", problems, [])
    if not isinstance(history, list):
        problems.append("history.json is not a list of steps")
        history = []
    steps = [StepRow.from_record(h) for h in history if isinstance(h, dict)]
    epochs = [EpochInfo(n, _load_json(path / "slow_update" / f"epoch_{n:02d}" / "comparison.json", problems, None),
                        read_text(path / "meta_skill" / f"epoch_{n:02d}" / "notes.md"))
              for n in sorted(set(numbered(path / "slow_update", "epoch_")) | set(numbered(path / "meta_skill", "epoch_")))]
    head, notices, last = _head_events(events)
    return RunPage(ref, row, head, steps, epochs, numbered(path / "skills", "step_", ".md"), offset, last,
                   notices, problems)


def _head_events(events: Path) -> tuple[dict[str, Any], list[str], dict[str, Any] | None]:
    """The first event (run_started), the run's warnings and the last event.

    Only those lines are parsed (warnings are found by their bytes first), and
    only the last 4 MiB are searched for warnings: a long run's page stays fast.
    """
    try:
        size = events.stat().st_size
    except OSError:
        return {}, [], None
    head = first_event(events) or {}
    last = last_event(events, size)
    notices: list[str] = []
    try:
        with open(events, "rb") as fh:
            fh.seek(max(0, size - (4 << 20)))
            data = fh.read()
    except OSError:
        return head, notices, last
    for line in data.splitlines():
        if b'"notice"' in line and b'"warning"' in line:
            try:
                e = orjson.loads(line)
            except orjson.JSONDecodeError:
                continue
            if isinstance(e, dict) and e.get("event") == "notice" and e.get("level") == "warning":
                notices.append(str(e.get("text")))
    return head, notices[-20:], last


def load_step(ref: RunRef, step: int) -> StepPage | None:
    """One step's files, or None if the run has no such step."""
    path = ref.path
    sdir = path / "steps" / f"step_{step:04d}"
    problems: list[str] = []
    history = _load_json(path / "history.json", problems, [])
    record = next((h for h in history if isinstance(h, dict) and h.get("step") == step), None) \
        if isinstance(history, list) else None
    if record is None and not sdir.is_dir():
        return None
    rollouts = _load_json(sdir / "rollouts.json", problems, [])
    return StepPage(
        ref, StepRow.from_record(record) if record else None,
        _load_json(sdir / "gate.json", problems, {}), _load_json(sdir / "selected.json", problems, {}),
        _load_json(sdir / "patches.json", problems, {}), rollouts if isinstance(rollouts, list) else [],
        (sdir / "candidate.md").is_file(), problems)


def skill_text(ref: RunRef, step: int) -> str | None:
    return read_text(ref.path / "skills" / f"step_{step:04d}.md")


def candidate_text(ref: RunRef, step: int) -> str | None:
    return read_text(ref.path / "steps" / f"step_{step:04d}" / "candidate.md")


def epoch_info(ref: RunRef, epoch: int) -> EpochInfo | None:
    problems: list[str] = []
    comparison = _load_json(ref.path / "slow_update" / f"epoch_{epoch:02d}" / "comparison.json", problems, None)
    notes = read_text(ref.path / "meta_skill" / f"epoch_{epoch:02d}" / "notes.md")
    if comparison is None and notes is None:
        return None
    return EpochInfo(epoch, comparison, notes)
