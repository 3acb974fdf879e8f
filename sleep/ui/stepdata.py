"""One step's files (``steps/step_NNNN/``), read into typed values for the step page.

The trainer writes ``gate.json`` (the gate's decision and per-item deltas),
``selected.json`` (the edits chosen, each with its outcome), ``patches.json``
(proposed and merged edits), ``rollouts.json`` (the train rollouts) and
``candidate.md``. They are read like the run's other files
(:mod:`sleep.ui.rundata`): inside the run directory only, values of the wrong
type left out and noted, texts through the outbound filter.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from skillopt_core.run.reader import RunReader
from skillopt_core.run.record import RecordError, SelectedEdit
from sleep.ui import coerce as c
from sleep.ui.coerce import Problems
from sleep.ui.outbound import outbound, scrub
from sleep.ui.rundata import StepRow, finite, gate_record, history, load_json, text_or_problem
from sleep.ui.runs import RunRef

MAX_ROLLOUTS = 200  # rows of the rollouts table; the rest are counted


@dataclass(frozen=True)
class Gate:
    policy: str = ""
    current_mean: float | None = None
    candidate_mean: float | None = None
    n_items: int | None = None
    reason: str = ""
    deltas: tuple[tuple[str, float], ...] = ()  # largest change first
    n_evaluated: int | None = None
    early_stopped: bool = False

    @property
    def bound(self) -> tuple[str, float] | None:
        """When the gate stopped early: the bound that decided, ("worst", mean if every item not
        evaluated scored 0) or ("best", mean if every one scored 1), over all ``n_items``."""
        if not (self.early_stopped and self.n_items and self.n_evaluated is not None
                and self.candidate_mean is not None and self.n_evaluated < self.n_items):
            return None
        rest = self.n_items - self.n_evaluated
        worst = self.candidate_mean * self.n_evaluated / self.n_items
        if self.current_mean is not None and self.candidate_mean > self.current_mean:
            return ("worst", worst)
        return ("best", worst + rest / self.n_items)


def _gate(value: Any, p: Problems) -> Gate:
    """The step page's view of ``gate.json``, read leniently by :meth:`GateRecord.from_dict`."""
    record = gate_record(value, p)
    if record is None:
        return Gate()
    g = record.decision
    if g is None:
        return Gate(reason=outbound(record.reason))
    deltas = sorted(((outbound(k), f) for k, v in g.deltas.items() if (f := finite(v)) is not None),
                    key=lambda kv: (-abs(kv[1]), kv[0]))
    return Gate(outbound(g.policy), finite(g.current_mean), finite(g.candidate_mean), g.n_items,
                outbound(g.reason), tuple(deltas), g.n_evaluated, g.early_stopped)


@dataclass(frozen=True)
class Selected:
    edits: tuple[SelectedEdit, ...] = ()  # each string through the outbound filter
    budget_text: str = ""
    ranked_by: str = ""
    note: str = ""


def _selected(value: Any, p: Problems) -> Selected:
    where = "selected.json"
    d = c.mapping(value, p, where, "the file")
    edits = []
    for i, e in enumerate(c.records(d.get("edits"), p, where, "edits")):
        try:
            edits.append(scrub(SelectedEdit.from_dict(e, f"{where}, edit {i + 1}", p)))
        except RecordError as exc:
            p.add(f"{exc}; it is not shown")
    return Selected(tuple(edits), c.text(d.get("budget_text"), p, where, "budget_text"),
                    c.text(d.get("ranked_by"), p, where, "ranked_by"), c.text(d.get("note"), p, where, "note"))


@dataclass(frozen=True)
class Patches:
    present: bool = False
    proposed: int = 0
    merged: int = 0
    invalid_replies: int = 0
    merge_fallback: str = ""
    problems: tuple[str, ...] = ()


def _patches(value: Any, p: Problems) -> Patches:
    where = "patches.json"
    d = c.mapping(value, p, where, "the file")
    if not d:
        return Patches()
    return Patches(True, len(c.items(d.get("proposed"), p, where, "proposed")),
                   len(c.items(d.get("merged"), p, where, "merged")),
                   c.count(d.get("invalid_replies"), p, where, "invalid_replies"),
                   c.text(d.get("merge_fallback"), p, where, "merge_fallback"),
                   tuple(c.texts(d.get("problems"), p, where, "problems")))


@dataclass(frozen=True)
class Rollout:
    task_id: str
    sample: int
    hard: float | None
    soft: float | None
    feedback: str
    response: str
    failed: bool


@dataclass(frozen=True)
class Rollouts:
    rows: tuple[Rollout, ...] = ()
    total: int = 0


def _rollouts(value: Any, p: Problems) -> Rollouts:
    where = "rollouts.json"
    records = c.records(value, p, where, "the file")
    rows = []
    for i, r in enumerate(records[:MAX_ROLLOUTS]):
        w = f"{where}, rollout {i + 1}"
        rows.append(Rollout(c.text(r.get("task_id"), p, w, "task_id"), c.count(r.get("sample"), p, w, "sample"),
                            c.number(r.get("hard"), p, w, "hard"), c.number(r.get("soft"), p, w, "soft"),
                            c.text(r.get("feedback"), p, w, "feedback"), c.text(r.get("response"), p, w, "response"),
                            c.flag(r.get("failed"), p, w, "failed")))
    return Rollouts(tuple(rows), len(records))


@dataclass
class StepPage:
    ref: RunRef
    row: StepRow | None
    gate: Gate
    selected: Selected
    patches: Patches
    rollouts: Rollouts
    candidate: str | None  # candidate.md as shown (None: none written, or not shown: see problems)
    before: str | None  # the skill the step started from
    problems: list[str] = field(default_factory=list)


def load_step(ref: RunRef, step: int) -> StepPage | None:
    """One step's files, or None if the run has no such step."""
    path = ref.path
    sdir = RunReader.step_dir(step)
    problems = Problems()
    record = next((h for h in history(path, problems) if h.step == step), None)
    if record is None and not (path / sdir).is_dir():
        return None
    return StepPage(
        ref, record, load_json(path, f"{sdir}/gate.json", problems, _gate, Gate()),
        load_json(path, f"{sdir}/selected.json", problems, _selected, Selected()),
        load_json(path, f"{sdir}/patches.json", problems, _patches, Patches()),
        load_json(path, f"{sdir}/rollouts.json", problems, _rollouts, Rollouts()),
        text_or_problem(path, f"{sdir}/candidate.md", problems),
        text_or_problem(path, RunReader.skill_file(step - 1), problems) if step > 0 else None,
        problems.lines)

