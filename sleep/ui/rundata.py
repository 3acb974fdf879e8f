"""One run directory's files, read into typed values for the run and epoch pages.

Every file is opened through :mod:`sleep.ui.runfiles` (inside the run directory
only) and built into typed values with :mod:`sleep.ui.coerce` (a value of the
wrong type is left out and noted, every string passes through
:func:`sleep.ui.outbound.outbound`). Missing files give empty values; a file
that is refused, unreadable or not JSON gives empty values and a line in
``problems``; so a run still being written, an old layout or bad data renders
instead of failing. Paths are built from a :class:`RunRef` (already resolved
by the catalog) and integers, never from URL text. The step page's files are
read by :mod:`sleep.ui.stepdata`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from skillopt_core.run import events as ev
from skillopt_core.run.reader import RunReader
from skillopt_core.run.record import GateRecord, StepRecord
from sleep.ui import coerce as c
from sleep.ui.coerce import Problems, finite
from sleep.ui.outbound import outbound
from sleep.ui.runfiles import FileCache, RunFileError, parse_json
from sleep.ui.runrow import RunRow
from sleep.ui.runs import RunRef

T = TypeVar("T")
MAX_TEXT = 2_000_000  # larger skill or notes files are cut (and the page says so)
TAIL_SCAN = 4 << 20  # the run page looks for warnings in the last 4 MiB of events
CACHE = FileCache()


def load_json(run: Path, rel: str, problems: Problems, build: Callable[[Any, Problems], T], default: T) -> T:
    """``build(parsed JSON, problems)`` for the file ``rel`` of the run, cached per file version;
    ``default`` when the file is absent, refused or not JSON (the last two noted in ``problems``)."""
    name = Path(rel).name

    def make(data: bytes) -> tuple[Any, Problems]:
        found = Problems()
        try:
            value = parse_json(data)
        except ValueError as exc:
            found.add(f"{name} is not valid JSON ({exc}); it is not shown")
            return default, found
        return build(value, found), found

    try:
        got = CACHE.build(run, rel, f"json:{getattr(build, '__qualname__', build)}", make)
    except RunFileError as exc:
        problems.add(str(exc))
        return default
    if got is None:
        return default
    value, found = got
    problems.extend_from(found)
    return value


def _cut(data: bytes) -> str:
    text = data.decode("utf-8", "replace")
    if len(data) <= MAX_TEXT:
        return outbound(text)
    # Cut at a line end, so a secret on the last line is not split into a part the filter misses.
    head = text[: text.rfind("\n", 0, MAX_TEXT) + 1 or MAX_TEXT]
    return outbound(head) + f"\n… (cut: the file is longer than {MAX_TEXT:,} bytes)"


def text_file(run: Path, rel: str) -> str | None:
    """A text file of the run as a page shows it (cut at :data:`MAX_TEXT` bytes), or None when absent.
    :class:`RunFileError` when it is refused (outside the run, not a file, unreadable)."""
    return CACHE.build(run, rel, "text", _cut, limit=MAX_TEXT + 1)


def text_or_problem(run: Path, rel: str, problems: Problems) -> str | None:
    try:
        return text_file(run, rel)
    except RunFileError as exc:
        problems.add(str(exc))
        return None


def numbered(run: Path, folder: str, prefix: str, suffix: str = "") -> list[int]:
    """The numbers N of the files ``<folder>/<prefix>N<suffix>`` of the run, ascending."""
    return RunReader(run).numbered(folder, prefix, suffix)


# ----- history.json ------------------------------------------------------------------------

@dataclass(frozen=True)
class Usage:
    """Model use of one role in one stage of a step."""

    role: str
    stage: str
    calls: int
    input_tokens: int
    output_tokens: int
    latency_s: float | None
    cost_usd: float | None = None


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
    usage: tuple[Usage, ...] = ()

    @property
    def cost_usd(self) -> float | None:
        """What the backends reported this step cost (None when none reported a cost)."""
        costs = [u.cost_usd for u in self.usage if u.cost_usd is not None]
        return sum(costs) if costs else None

    @property
    def accepted(self) -> bool:
        return self.action.startswith("accept")

    @staticmethod
    def from_record(h: dict[Any, Any], problems: Problems | None = None, index: int = 0) -> StepRow:
        """The row of a ``history.json`` object, read leniently by :meth:`StepRecord.from_dict`."""
        p = problems if problems is not None else Problems()
        rec = StepRecord.from_dict(h, p, index)
        usage = tuple(_usage(rec.usage, p, f"history.json, step {rec.step}"))
        return StepRow(
            step=rec.step, epoch=rec.epoch or 1, action=outbound(rec.action) or "?",
            train_score=finite(rec.train_score), val_current=finite(rec.current_val),
            val_candidate=finite(rec.candidate_val),
            val_after=finite(rec.after_val), best_val=finite(rec.best_val), gate_reason=outbound(rec.gate_reason),
            gate_evaluated=rec.gate_evaluated_count, gate_items=rec.gate_item_count,
            early_stopped=rec.gate_stopped_early, n_proposed=rec.proposed_count + rec.caller_edit_count,
            n_patches=rec.patch_count, n_selected=rec.selected_count, n_applied=rec.applied_count,
            failed_items=rec.failed_item_count, tokens=sum(u.input_tokens + u.output_tokens for u in usage),
            calls=sum(u.calls for u in usage),
            timings={outbound(k): v for k, v in rec.timings.items() if finite(v) is not None},
            budget_text=outbound(rec.budget_text), usage=usage)


def _usage(value: Any, p: Problems, where: str):
    for role, stages in c.mapping(value, p, where, "usage").items():
        for stage, u in c.mapping(stages, p, where, f"usage.{role}").items():
            key = f"usage.{role}.{stage}"
            u = c.mapping(u, p, where, key)
            yield Usage(outbound(str(role)), outbound(str(stage)), c.count(u.get("calls"), p, where, f"{key}.calls"),
                        c.count(u.get("input_tokens"), p, where, f"{key}.input_tokens"),
                        c.count(u.get("output_tokens"), p, where, f"{key}.output_tokens"),
                        c.number(u.get("latency_s"), p, where, f"{key}.latency_s"),
                        c.number(u.get("cost_usd"), p, where, f"{key}.cost_usd"))


def _history(value: Any, p: Problems) -> list[StepRow]:
    if not isinstance(value, list):
        p.bad("history.json", "the file", value, "a list of steps")
        return []
    out = []
    for i, h in enumerate(value):
        if isinstance(h, dict):
            out.append(StepRow.from_record(h, p, i))
        else:
            p.bad("history.json", f"record {i + 1}", h, "an object")
    return out


def history(run: Path, problems: Problems) -> list[StepRow]:
    return load_json(run, RunReader.HISTORY, problems, _history, [])


def gate_record(value: Any, p: Problems) -> GateRecord | None:
    """A step's ``gate.json`` read leniently (:meth:`GateRecord.from_dict`: each wrong value a
    problem); None when it is not an object."""
    if not isinstance(value, dict):
        p.bad("gate.json", "the file", value, "an object")
        return None
    return GateRecord.from_dict(value, p)


# ----- epochs ------------------------------------------------------------------------------

@dataclass(frozen=True)
class SlowUpdate:
    """An epoch's ``comparison.json``: the slow update's groups, guidance and decision."""

    action: str
    summary: str
    error: str
    guidance: str
    groups: tuple[tuple[str, tuple[str, ...]], ...]
    gate_reason: str | None


def _slow_update(value: Any, p: Problems) -> SlowUpdate | None:
    where = "comparison.json"
    d = c.mapping(value, p, where, "the file")
    if not d:
        return None
    groups = tuple((outbound(str(name)), tuple(c.texts(ids, p, where, f"groups.{name}")))
                   for name, ids in c.mapping(d.get("groups"), p, where, "groups").items())
    gate = c.mapping(d.get("gate"), p, where, "gate")
    return SlowUpdate(action=c.text(d.get("action"), p, where, "action") or "not run",
                      summary=c.text(d.get("summary"), p, where, "summary"),
                      error=c.text(d.get("error"), p, where, "error"),
                      guidance=c.text(d.get("guidance"), p, where, "guidance"), groups=groups,
                      gate_reason=c.text(gate.get("reason"), p, where, "gate.reason") if gate else None)


@dataclass(frozen=True)
class EpochInfo:
    epoch: int
    slow_update: SlowUpdate | None  # comparison.json
    meta_notes: str | None
    problems: tuple[str, ...] = ()

    @property
    def slow_action(self) -> str:
        return self.slow_update.action if self.slow_update else "not run"


def _epoch(run: Path, n: int, problems: Problems) -> EpochInfo:
    mine = Problems()
    slow = load_json(run, f"slow_update/epoch_{n:02d}/comparison.json", mine, _slow_update, None)
    notes = text_or_problem(run, f"meta_skill/epoch_{n:02d}/notes.md", mine)
    problems.extend_from(mine)
    return EpochInfo(n, slow, notes, tuple(mine.lines))


def epoch_info(ref: RunRef, epoch: int) -> EpochInfo | None:
    info = _epoch(ref.path, epoch, Problems())
    if info.slow_update is None and info.meta_notes is None and not info.problems:
        return None
    return info


# ----- the run page --------------------------------------------------------------------------

@dataclass(frozen=True)
class RunStart:
    """What the run's first event (``run_started``) says about it."""

    backends: tuple[tuple[str, str], ...] = ()
    splits: tuple[tuple[str, str], ...] = ()


@dataclass
class RunPage:
    ref: RunRef
    row: RunRow
    started: RunStart
    steps: list[StepRow]
    epochs: list[EpochInfo]
    skill_steps: list[int]  # steps with a skills/step_NNNN.md
    events_offset: int  # where a live page starts following events.jsonl
    notices: list[str] = field(default_factory=list)  # warnings the run itself emitted
    problems: list[str] = field(default_factory=list)  # what the page could not read or left out
    activity: str = ""  # what a running run was doing at its last event

    @property
    def initial_val(self) -> float | None:
        if self.row.initial_val is not None:
            return self.row.initial_val
        return self.steps[0].val_current if self.steps else None


def _start(event: ev.Event | None) -> RunStart:
    if not isinstance(event, ev.RunStarted):
        return RunStart()

    def pairs(values: dict[str, Any]) -> tuple[tuple[str, str], ...]:
        return tuple((outbound(str(k)), outbound(str(v))) for k, v in values.items())

    return RunStart(pairs(event.backends), pairs(event.splits))


def load_run(ref: RunRef, row: RunRow) -> RunPage:
    path = ref.path
    reader = RunReader(path)
    problems = Problems()
    # Take the offset before reading history.json, so a live page misses no event.
    try:
        offset = reader.events_size()
    except RunFileError as exc:
        problems.add(str(exc))
        offset = 0
    steps = history(path, problems)
    epoch_numbers = sorted(set(reader.numbered("slow_update", "epoch_")) | set(reader.numbered("meta_skill", "epoch_")))
    epochs = [_epoch(path, n, problems) for n in epoch_numbers]
    _, first, last = reader.head_and_tail(problems)
    # Lines are picked by their bytes ("notice") before parsing, so a long run's page stays fast.
    notices = [outbound(e.text) for e in reader.last_events(None, TAIL_SCAN, b'"notice"', problems)
               if isinstance(e, ev.Notice) and e.level == "warning"]
    activity = outbound(ev.event_line(last)) if row.live and last is not None else ""
    return RunPage(ref, row, _start(first), steps, epochs, reader.numbered("skills", "step_", ".md"), offset,
                   notices[-20:], problems.lines, activity)


def skill_text(ref: RunRef, step: int) -> str | None:
    """The skill after ``step`` (:class:`RunFileError` when refused)."""
    return text_file(ref.path, RunReader.skill_file(step))


def best_text(ref: RunRef) -> str | None:
    return text_file(ref.path, RunReader.BEST_SKILL)

