"""Each sample of a run (input → output → expected → score → judge feedback, and an agent's
trajectory), and the items × skill versions matrix.

Sources, all inside the run directory (:mod:`sleep.ui.runfiles`):

- ``items.jsonl`` (the run's items as the trainer saw them; older runs and caller-task
  runs have ``tasks.jsonl``): id, prompt, context, reference, judge;
- ``steps/step_NNNN/rollouts.json``: the train rollouts of each step (response,
  scores, feedback; ``trajectory`` when the backend recorded one: commands run, files
  changed, checks);
- ``steps/step_NNNN/gate.json``: each evaluated val item's delta (candidate − current);
- ``dataset.json``: which items are train and which val.

Every text passes the outbound filter (:mod:`sleep.ui.coerce`); a missing file gives
empty values and a sentence saying what is missing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from skillopt_core.run.reader import RunReader, splits_of
from sleep.ui import coerce as c
from sleep.ui import rundata
from sleep.ui.coerce import Problems
from sleep.ui.outbound import outbound
from sleep.ui.rundata import finite, gate_record, history, load_json, numbered
from sleep.ui.runfiles import RunFileError, json_object
from sleep.ui.runs import RunRef

MAX_TEXT = 200_000  # one prompt, response or reference shown at most this long
MATRIX_STEPS = 60  # columns of the matrix by default (the latest steps)


def _bounded(text: str) -> str:
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + f"\n… (cut: {len(text):,} characters in all)"


def _show(value: Any) -> str:
    """A reference or judge spec as text (strings as written, the rest as indented JSON)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return _bounded(outbound(value))
    try:
        return _bounded(outbound(json.dumps(value, ensure_ascii=False, indent=1, default=str)))
    except (TypeError, ValueError, RecursionError):
        return _bounded(outbound(str(value)))


@dataclass(frozen=True)
class Item:
    id: str
    prompt: str = ""
    context: str = ""
    expected: str = ""  # the reference
    judge: str = ""  # the judge spec


def _items(data: bytes) -> dict[str, Item]:
    out: dict[str, Item] = {}
    p = Problems()
    for line in data.splitlines():
        d = json_object(line)
        if d is None:
            continue
        tid = c.text(d.get("id"), p, "items.jsonl", "id")
        if tid:
            out[tid] = Item(tid, _bounded(c.text(d.get("prompt"), p, "items.jsonl", "prompt")),
                            _bounded(c.text(d.get("context"), p, "items.jsonl", "context")),
                            _show(d.get("reference")), _show(d.get("judge")))
    return out


def items(ref: RunRef) -> tuple[dict[str, Item], str]:
    """The run's items by id, and a sentence when they cannot be shown."""
    for name in ("items.jsonl", "tasks.jsonl"):
        try:
            got = rundata.CACHE.build(ref.path, name, "items", _items)
        except RunFileError as exc:
            return {}, str(exc)
        if got is not None:
            return got, ""
    return {}, ("This run directory holds no items.jsonl (runs made before the dashboard showed samples), "
                "so prompts and references are not shown; responses, scores and feedback are.")


# ----- one sample ----------------------------------------------------------------------------

@dataclass(frozen=True)
class TrajStep:
    kind: str
    title: str  # a one-line summary (the command, the tool, the file)
    body: str = ""  # output or text
    status: str = ""  # ok | error | denied | passed | failed | ""


@dataclass(frozen=True)
class Trajectory:
    steps: tuple[TrajStep, ...]
    commands: int
    files: tuple[tuple[str, str], ...]  # (path, change)
    checks: tuple[TrajStep, ...]
    unknown: int = 0
    dropped: int = 0


def _exit(code: Any) -> str:
    return "ok" if code == 0 else ("error" if isinstance(code, int) else "")


def _trajectory(value: Any, p: Problems, where: str) -> Trajectory | None:
    d = c.mapping(value, p, where, "trajectory")
    if not d:
        return None
    steps = []
    files: dict[str, str] = {}
    checks = []
    t = lambda s, k: c.text(s.get(k), p, where, f"trajectory.{k}")  # noqa: E731
    for s in c.records(d.get("steps"), p, where, "trajectory.steps"):
        kind = t(s, "kind")
        if kind == "text":
            steps.append(TrajStep(kind, "said", _bounded(t(s, "text"))))
        elif kind == "tool_call":
            steps.append(TrajStep(kind, f"called {t(s, 'name') or 'a tool'}", t(s, "input")))
        elif kind == "tool_result":
            err = c.flag(s.get("is_error"), p, where, "trajectory.is_error")
            steps.append(TrajStep(kind, f"result of {t(s, 'name') or 'the tool'}", t(s, "output"),
                                  "error" if err else ""))
        elif kind == "command":
            denied = c.flag(s.get("denied"), p, where, "trajectory.denied")
            code = s.get("exit_code")
            status = "denied" if denied else _exit(code)
            steps.append(TrajStep(kind, f"$ {t(s, 'command')}", t(s, "output"),
                                  status + (f" (exit {code})" if isinstance(code, int) and not denied else "")))
        elif kind == "file_change":
            files.pop(t(s, "path"), None)
            files[t(s, "path")] = t(s, "change") or "modified"
            steps.append(TrajStep(kind, f"{t(s, 'change') or 'modified'} {t(s, 'path')}"))
        elif kind == "check":
            code = s.get("exit_code")
            step = TrajStep(kind, f"check: {t(s, 'command')}", t(s, "output"), "passed" if code == 0 else "failed")
            checks.append(step)
            steps.append(step)
        else:
            steps.append(TrajStep(kind or "raw", f"event {t(s, 'event_type') or kind or '?'}", t(s, "data")))
    return Trajectory(tuple(steps), sum(1 for s in steps if s.kind == "command"), tuple(files.items()),
                      tuple(checks), c.count(d.get("unknown_events"), p, where, "unknown_events"),
                      c.count(d.get("dropped"), p, where, "dropped"))


@dataclass(frozen=True)
class Sample:
    index: int  # position in rollouts.json
    task_id: str
    sample: int
    response: str
    hard: float | None
    soft: float | None
    feedback: str
    cached: bool
    failed: bool
    trajectory: Trajectory | None

    @property
    def passed(self) -> bool:
        return self.hard is not None and self.hard >= 1.0


def _samples(value: Any, p: Problems) -> list[Sample]:
    out = []
    for i, r in enumerate(c.records(value, p, "rollouts.json", "the file")):
        w = f"rollouts.json, rollout {i + 1}"
        out.append(Sample(i, c.text(r.get("task_id"), p, w, "task_id"), c.count(r.get("sample"), p, w, "sample"),
                          _bounded(c.text(r.get("response"), p, w, "response")), c.number(r.get("hard"), p, w, "hard"),
                          c.number(r.get("soft"), p, w, "soft"), c.text(r.get("feedback"), p, w, "feedback"),
                          c.flag(r.get("cached"), p, w, "cached"), c.flag(r.get("failed"), p, w, "failed"),
                          _trajectory(r.get("trajectory"), p, w) if r.get("trajectory") is not None else None))
    return out


def step_samples(ref: RunRef, step: int, problems: Problems) -> list[Sample]:
    return load_json(ref.path, f"{RunReader.step_dir(step)}/rollouts.json", problems, _samples, [])


@dataclass
class SampleView:
    ref: RunRef
    step: int
    sample: Sample
    item: Item | None
    items_note: str
    count: int  # samples of this step
    skill_version: int  # the skill the rollout ran under (the one after step - 1)
    problems: list[str] = field(default_factory=list)


def sample_view(ref: RunRef, step: int, index: int) -> SampleView | None:
    p = Problems()
    samples = step_samples(ref, step, p)
    if not 0 <= index < len(samples):
        return None
    by_id, note = items(ref)
    s = samples[index]
    return SampleView(ref, step, s, by_id.get(s.task_id), note if not by_id else (
        "" if s.task_id in by_id else f"{s.task_id} is not among the run's items"), len(samples), step - 1, p.lines)


# ----- items × skill versions ----------------------------------------------------------------

@dataclass(frozen=True)
class Cell:
    state: str  # pass | fail | fixed | broke | up | down | same | "" (not run)
    text: str = ""
    link: str = ""


@dataclass
class Matrix:
    steps: list[int]  # the columns
    actions: dict[int, str]  # step -> gate action
    val_rows: list[tuple[str, list[Cell]]]
    train_rows: list[tuple[str, list[Cell]]]
    first: int
    last: int
    total_steps: int
    prompts: dict[str, str]
    problems: list[str] = field(default_factory=list)

    @property
    def earlier(self) -> int:
        return max(0, self.first - 1)


def _splits(ref: RunRef, p: Problems) -> dict[str, list[str]]:
    def build(value: Any, q: Problems) -> dict[str, list[str]]:
        return {outbound(k): [outbound(i) for i in ids] for k, ids in (splits_of(value, q) or {}).items()}
    return load_json(ref.path, RunReader.DATASET, p, build, {})


def matrix(ref: RunRef, first: int | None = None, last: int | None = None) -> Matrix:
    """Val items × steps (what each step's candidate fixed or broke, by the gate's per-item deltas)
    and train items × skill versions (pass/fail of each rollout, and where that changed)."""
    p = Problems()
    steps_done = [h.step for h in history(ref.path, p)]
    actions = {h.step: h.action for h in history(ref.path, p)}
    all_steps = sorted(set(steps_done) | set(numbered(ref.path, "steps", "step_")))
    hi = last if last is not None else (all_steps[-1] if all_steps else 0)
    lo = first if first is not None else max(1, hi - MATRIX_STEPS + 1)
    cols = [s for s in all_steps if lo <= s <= hi]
    splits = _splits(ref, p)
    url = ref.url

    # Val: the gate's deltas per step.
    deltas: dict[int, dict[str, float]] = {}
    for s in cols:
        deltas[s] = load_json(ref.path, f"{RunReader.step_dir(s)}/gate.json", p, _gate_deltas, {})
    val_ids = list(splits.get("val") or sorted({i for d in deltas.values() for i in d}))
    val_rows = []
    for item in val_ids:
        cells = []
        for s in cols:
            d = deltas[s].get(item)
            if d is None:
                cells.append(Cell(""))
            else:
                kept = actions.get(s, "").startswith("accept")
                state = ("fixed" if kept else "up") if d > 0 else (("broke" if kept else "down") if d < 0 else "same")
                cells.append(Cell(state, f"{d:+.2f}", f"{url}/steps/{s}"))
        val_rows.append((item, cells))

    # Train: pass/fail of each rollout under the skill it ran with; changes from its last run.
    runs: dict[str, dict[int, tuple[Sample, int]]] = {}
    for s in cols:
        for smp in step_samples(ref, s, p):
            if smp.sample == 0:
                runs.setdefault(smp.task_id, {})[s] = (smp, smp.index)
    train_ids = [i for i in (splits.get("train") or []) if i in runs] + sorted(
        i for i in runs if i not in set(splits.get("train") or []))
    train_rows = []
    for item in train_ids:
        cells, before = [], None
        for s in cols:
            got = runs[item].get(s)
            if got is None:
                cells.append(Cell(""))
                continue
            smp, index = got
            passed = smp.passed
            state = "pass" if passed else "fail"
            if before is not None and before != passed:
                state = "fixed" if passed else "broke"
            before = passed
            cells.append(Cell(state, "✓" if passed else "✗", f"{url}/steps/{s}/samples/{index}"))
        train_rows.append((item, cells))
    by_id, _ = items(ref)
    return Matrix(cols, actions, val_rows, train_rows, lo, hi, all_steps[-1] if all_steps else 0,
                  {k: v.prompt for k, v in by_id.items()}, p.lines)


@dataclass
class ItemHistory:
    item_id: str
    item: Item | None
    items_note: str
    split: str
    train: list[tuple[int, Sample]]  # (step, sample) of every train rollout of the item
    val: list[tuple[int, float, str]]  # (step, delta, gate action) where the gate evaluated it
    problems: list[str] = field(default_factory=list)


def item_history(ref: RunRef, item_id: str) -> ItemHistory | None:
    """Everything the run did with one item, or None when the run knows no such item."""
    p = Problems()
    by_id, note = items(ref)
    splits = _splits(ref, p)
    split = next((name for name, ids in splits.items() if item_id in ids), "")
    steps = sorted(set(h.step for h in history(ref.path, p)) | set(numbered(ref.path, "steps", "step_")))
    actions = {h.step: h.action for h in history(ref.path, p)}
    train, val = [], []
    for s in steps:
        train += [(s, smp) for smp in step_samples(ref, s, p) if smp.task_id == item_id]
        d = load_json(ref.path, f"{RunReader.step_dir(s)}/gate.json", p, _gate_deltas, dict[str, float]()).get(item_id)
        if d is not None:
            val.append((s, d, actions.get(s, "")))
    if not (train or val or split or item_id in by_id):
        return None
    return ItemHistory(item_id, by_id.get(item_id), note, split, train, val, p.lines)


def _gate_deltas(value: Any, q: Problems) -> dict[str, float]:
    """A step's ``gate.json`` as item id -> the candidate's change on it."""
    record = gate_record(value, q)
    return {k: f for k, v in record.deltas.items() if (f := finite(v)) is not None} if record is not None else {}
