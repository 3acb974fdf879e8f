"""The in-process API: the one way to train and evaluate a skill from Python.

The ``skillopt`` CLI, the nightly sleep cycle, the MCP server and the
dashboard all use it; none rebuilds the loop::

    run = prepare_training(settings, tasks=my_tasks, seed_skill="SKILL.md text or path",
                           backends={"target": b, "optimizer": b, "judge": b})
    run.subscribe(print)                      # typed events, stamped with run id and time
    result = await run.run()                  # TrainingResult; result.summary.status:
                                              #   completed | budget_exhausted | cancelled | failed
    run.cancel()                              # from any thread: stops cleanly, resumable

    summary = await train(settings, resume="outputs/jsonl_tasks/<run_id>")   # prepare + run in one call
    result = await evaluate(settings, skill_path="best_skill.md", split="test")

Tasks come either from the env named in the settings (a benchmark, a JSONL
file) or from the caller: a list of :class:`Task` (split by ``splitter``, by
default the stable hash split of the settings) or a ready :class:`Dataset`.
Caller tasks, the seed skill, the split and caller edits are written into the
run directory, so any run resumes with ``skillopt train --resume RUN_DIR``.

Resuming with settings that change the experiment (the env or its data, the
split, the judge, the models, the batch order) is refused unless ``force``.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from skillopt_core.backends import Backend
from skillopt_core.evaluation.rollout import RolloutCache, mean_score, per_item, run_rollouts
from skillopt_core.run import events as ev
from skillopt_core.run.budget import UsageLedger
from skillopt_core.run.compare import open_run_dir, split_items
from skillopt_core.run.config import ConfigError, Settings, apply_overrides, load_settings, validate_settings
from skillopt_core.run.reader import RunReader, val_rollouts
from skillopt_core.run.record import GateRecord, SelectedEdit, StepDetail, StepRecord
from skillopt_core.run.rundir import RunDir, atomic_write_json, atomic_write_text, read_json
from skillopt_core.run.runtime import build_backends, build_runtime, initial_skill
from skillopt_core.run.state import RunSummary
from skillopt_core.run.trainer import Trainer, load_notices
from skillopt_core.skill.document import Skill, SkillParseError, load_skill
from skillopt_core.skill.edits import Edit
from skillopt_core.tasks.data import SPLITS, Dataset, split_tasks
from skillopt_core.tasks.task import Task

__all__ = ["TrainingResult", "TrainingRun", "evaluate", "experiment_changes", "prepare_training", "resume_settings",
           "train"]

Splitter = Callable[[Sequence[Task]], Dataset]

# Settings whose change makes a resumed run a different experiment.
EXPERIMENT_KEYS = (
    "env", "skill.init", "train.seed", "train.batch_size", "train.steps_per_epoch", "train.samples_per_item",
    "evaluation.gate_metric", "evaluation.gate_policy", "evaluation.val_limit", "evaluation.screen_items",
    "evaluation.remeasure", "evaluation.holdout_judge", "evaluation.substance_judge",
    "evaluation.stock_sentences",
    "model.backend", "model.target_backend", "model.optimizer_backend", "model.judge_backend",
    "model.target", "model.optimizer", "model.judge", "model.temperature", "model.target_max_tokens",
)


def _lookup(data: Mapping[str, Any], dotted: str) -> Any:
    node: Any = data
    for part in dotted.split("."):
        node = node.get(part) if isinstance(node, Mapping) else None
    return node


def experiment_changes(saved: Settings, new: Settings) -> list[str]:
    """``key: old → new`` for every experiment-defining setting that differs."""
    a, b = saved.to_dict(), new.to_dict()
    changes = []
    for key in EXPERIMENT_KEYS:
        old, now = _lookup(a, key), _lookup(b, key)
        if isinstance(old, Mapping) and isinstance(now, Mapping):
            for sub in sorted(set(old) | set(now)):
                if old.get(sub) != now.get(sub):
                    changes.append(f"{key}.{sub}: {old.get(sub)!r} → {now.get(sub)!r}")
        elif old != now:
            changes.append(f"{key}: {old!r} → {now!r}")
    return changes


def resume_settings(run_path: str | Path, overrides: Sequence[str] = ()) -> Settings:
    """The settings a run was started with (its config.yaml), plus overrides."""
    config = Path(run_path) / "config.yaml"
    if not config.exists():
        raise FileNotFoundError(f"{run_path} is not a run directory (no config.yaml). Pass the folder printed as 'Run "
                                f"directory'.")
    return load_settings(config, overrides)


def _with_overrides(settings: Settings, overrides: Sequence[str]) -> Settings:
    if not overrides:
        return settings
    data, origin = settings.to_dict(), dict[tuple, str]()
    apply_overrides(data, overrides, origin)
    return validate_settings(data, origin)


def tasks_fingerprint(tasks: Iterable[Task]) -> str:
    """Changes when any task's id, prompt, context, reference or judge changes."""
    rows = sorted(json.dumps([t.id, t.prompt, t.context, t.reference, t.judge], sort_keys=True,
                             default=str) for t in tasks)
    return hashlib.sha256("\n".join(rows).encode("utf-8")).hexdigest()


def _task_record(task: Task) -> dict:
    """The task as one jsonl_tasks line (empty fields left out)."""
    record = {"id": task.id, "prompt": task.prompt, "context": task.context, "reference": task.reference,
              "judge": task.judge, "tags": list(task.tags), "metadata": task.metadata}
    return {k: v for k, v in record.items() if v not in (None, "", [], {})}


def _write_tasks(path: Path, tasks: Sequence[Task]) -> None:
    for task in tasks:
        if task.judge is None:
            raise ValueError(f"Task {task.id!r} has no judge spec; every task needs one to be scored "
                             "(e.g. {\"type\": \"contains\", \"value\": \"...\"}).")
    atomic_write_text(path, "".join(json.dumps(_task_record(t), ensure_ascii=False, default=str) + "\n" for t in tasks))


def _write_items(path: Path, dataset: Dataset) -> None:
    """The run's items as it saw them (``items.jsonl``, jsonl_tasks lines), so a reader of the run
    directory (the dashboard's sample view) can show each rollout's prompt and reference."""
    atomic_write_text(path, "".join(json.dumps(_task_record(t), ensure_ascii=False, default=str) + "\n"
                                    for name in SPLITS for t in dataset.split(name)))


def _dataset_record(dataset: Dataset) -> dict:
    all_tasks = [t for name in SPLITS for t in dataset.split(name)]
    return {"version": 1, "splits": {name: [t.id for t in dataset.split(name)] for name in SPLITS},
            "fingerprint": tasks_fingerprint(all_tasks)}


def _saved_dataset(run_dir: RunDir, tasks: Sequence[Task], force: bool) -> Dataset | None:
    """The split a run started with, rebuilt from its dataset.json and today's tasks.
    None when the run has no dataset.json (or ``force`` and the tasks changed)."""
    path = run_dir.path / "dataset.json"
    if not path.exists():
        return None
    saved = read_json(path)
    by_id = {t.id: t for t in tasks}
    missing = [i for name in SPLITS for i in saved["splits"].get(name, []) if i not in by_id]
    parts = {name: tuple(by_id[i] for i in saved["splits"].get(name, []) if i in by_id) for name in SPLITS}
    dataset = Dataset(parts["train"], parts["val"], parts["test"])
    changed = missing or tasks_fingerprint([t for p in parts.values() for t in p]) != saved.get("fingerprint")
    if changed and not force:
        detail = (f"{len(missing)} of the run's tasks are gone" if missing
                  else "some tasks' prompts, references or judges changed")
        raise ConfigError(
            f"The tasks changed since run {run_dir.path} started ({detail}); resuming would mix two experiments. "
            "Start a new run, or pass --force to resume anyway with today's tasks."
        )
    return None if changed else dataset


@dataclass(frozen=True)
class TrainingResult:
    """What a finished (or stopped) run gives its in-process caller, so it reads no file: the
    summary, the best and initial skill, the history, the split, the settings and backends it ran
    with, the steps' gate decisions and selected and refused edits, and the val rollouts of any
    skill. ``reader`` reads the run directory for what this process did not hold (the steps of
    an earlier process, for a resumed run). The summary's fields read on the result too
    (``result.status``, ``result.best_val``)."""

    summary: RunSummary
    best_skill: str
    initial_skill: str
    history: tuple[StepRecord, ...]
    splits: dict[str, list[str]]
    settings: Settings
    backends: dict[str, str]
    reader: RunReader
    steps: Mapping[int, StepDetail] = field(default_factory=dict)
    rollout_rows: Sequence[Mapping[str, Any]] = ()
    tasks: Sequence[Task] = ()  # every task of the run as it ran (train, val, test)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.summary, name)

    def to_dict(self) -> dict[str, Any]:
        """The summary's dict (as ``summary.json`` holds it)."""
        return self.summary.to_dict()

    def step_gate(self, step: int) -> GateRecord | None:
        held = self.steps.get(step)
        return held.gate if held is not None else self.reader.step_gate(step)

    def step_selected(self, step: int) -> list[SelectedEdit]:
        held = self.steps.get(step)
        return list(held.selected) if held is not None else self.reader.step_selected(step)

    def step_refused(self, step: int) -> list[tuple[Edit, str]]:
        held = self.steps.get(step)
        return list(held.refused) if held is not None else self.reader.step_refused(step)

    def val_rollouts(self, skill_texts: Iterable[str], task_ids: Iterable[str]) -> dict[str, dict[str, Any]]:
        """Per item, its completion and score under one of ``skill_texts`` (from the cache in memory)."""
        return val_rollouts(self.rollout_rows, skill_texts, task_ids)


class TrainingRun:
    """One prepared training run: subscribe to its events, run it, cancel it."""

    def __init__(self, trainer: Trainer, bus: ev.EventBus, settings: Settings) -> None:
        self._trainer = trainer
        self._bus = bus
        self.settings = settings
        self.run_dir: Path = trainer.run_dir.path
        self.run_id: str = trainer.run_dir.run_id
        self._task: asyncio.Task | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._cancel_requested = False
        self._external_cancel = False
        self._streams: list[ev.EventStream] = []
        self.summary: RunSummary | None = None
        self.result: TrainingResult | None = None

    def subscribe(self, fn: ev.Subscriber) -> None:
        """Call ``fn(event)`` for every event from now on (a raising subscriber is detached, never fatal)."""
        self._bus.subscribe(fn)

    @property
    def estimate(self) -> dict[str, Any]:
        """The preflight estimate of what the run has left: model calls, dollars, the budget-floor
        warnings (:mod:`skillopt_core.run.estimate`); the run also writes it to ``preflight.json``."""
        return self._trainer.preflight()

    def events(self) -> ev.EventStream:
        """An async iterator of the run's events; it ends after ``RunEnd``. Create it before ``run()``."""
        stream = ev.EventStream()
        self._streams.append(stream)
        self._bus.subscribe(stream)
        return stream

    def cancel(self) -> None:
        """Stop the run at its next await point (thread-safe). It ends with
        status ``cancelled`` and resumes like any stopped run."""
        self._cancel_requested = True
        task, loop = self._task, self._loop
        if task is None or loop is None:
            return  # run() checks the flag when it starts
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            task.cancel()
        else:
            loop.call_soon_threadsafe(task.cancel)

    async def run(self) -> TrainingResult:
        """Run to the end (or to a stop) and return its result (:class:`TrainingResult`)."""
        self._loop = asyncio.get_running_loop()
        self._task = asyncio.ensure_future(self._trainer.run())
        if self._cancel_requested:
            self._task.cancel()
        try:
            self.summary = summary = await asyncio.shield(self._task)
            return self._result(summary)
        except asyncio.CancelledError:
            if self._task.done():
                finished = self._trainer.returned
                if finished is not None and not _caller_cancelled():
                    # The trainer returned (its summary is written) while a cancel
                    # was pending with no await left to deliver it: the run ended.
                    self.summary = finished
                    return self._result(finished)
                raise
            # The caller was cancelled: stop the run cleanly, then pass the cancellation on.
            self._external_cancel = True
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            raise
        finally:
            for stream in self._streams:
                stream.close()

    def _result(self, summary: RunSummary) -> TrainingResult:
        t = self._trainer
        state = t.state
        assert state is not None
        self.result = TrainingResult(
            summary, state.best_skill, state.initial_skill, tuple(StepRecord.from_dict(h) for h in state.history),
            {name: [task.id for task in t.data.split(name)] for name in SPLITS}, self.settings,
            t.rt.describe_backends(), RunReader(t.run_dir.path), dict(t.steps), t.cache.rows(),
            tuple(task for name in SPLITS for task in t.data.split(name)))
        return self.result

    def _cancelled_from_outside(self) -> bool:
        return self._external_cancel or not self._cancel_requested


def _caller_cancelled() -> bool:
    """Whether the task awaiting run() has itself been asked to cancel (Python 3.11+;
    3.10 cannot tell, and then a finished run's summary wins)."""
    cancelling = getattr(asyncio.current_task(), "cancelling", None)
    return cancelling is not None and cancelling() > 0


def prepare_training(
    settings: Settings | str | Path | None = None,
    *,
    overrides: Sequence[str] = (),
    resume: str | Path | None = None,
    force: bool = False,
    tasks: Sequence[Task] | Dataset | None = None,
    splitter: Splitter | None = None,
    seed_skill: str | Path | Skill | None = None,
    backends: Mapping[str, Backend] | None = None,
    candidate_edits: Sequence[Edit] = (),
    workdir: str | Path | None = None,
    subscribers: Iterable[ev.Subscriber] = (),
) -> TrainingRun:
    """Prepare a run (new, or ``resume`` = an existing run directory) without starting it.

    ``settings``: a Settings, a config file path, or None for the defaults;
    ``overrides`` are ``section.key=value`` strings applied on top.
    ``tasks``: the caller's tasks (each with a judge spec), or a Dataset with
    the split already made; None = the env of the settings. ``splitter``
    splits a task list (default: the settings' stable hash split).
    ``seed_skill``: Markdown text (a ``str``), a file (a ``Path``), or a Skill (default: the settings'
    ``skill.init`` or the env's seed). ``backends``: role → Backend for any of
    target / optimizer / judge (the others come from the settings).
    ``candidate_edits``: edits of the caller's own (e.g. from a person's
    corrections, with ``origin`` set) that join the optimizer's proposals in the
    first step's aggregate → select → gate. ``workdir``: a directory the
    agent-CLI target runs in for every rollout (caller tasks only).
    """
    if isinstance(settings, (str, Path)):
        settings = load_settings(settings, overrides)
    elif settings is None:
        settings = resume_settings(resume, overrides) if resume is not None else load_settings(None, overrides)
    else:
        settings = _with_overrides(settings, overrides)
    ledger = UsageLedger()
    if resume is not None:
        if tasks is not None or seed_skill is not None or candidate_edits:
            raise ValueError("A resumed run keeps its own tasks, seed skill and caller edits (they are in its "
                             "directory); "
                             "pass only resume=, settings and backends.")
        run_dir = RunDir(Path(resume))
        saved = resume_settings(run_dir.path)
        changes = experiment_changes(saved, settings)
        if changes and not force:
            raise ConfigError(
                f"Resuming {run_dir.path} with these settings would change the experiment: {'; '.join(changes)}. "
                "Resume without them, start a new run, or pass --force."
            )
        if run_dir.state_path.exists():
            ledger = UsageLedger.from_snapshot(read_json(run_dir.state_path).get("ledger") or {})
    # Backends first: a missing key or endpoint must not leave an empty run directory behind.
    metered = build_backends(settings, ledger, dict(backends) if backends else None)
    if resume is None:
        env_name = "jsonl_tasks" if tasks is not None else settings.env.name
        _check_seed(seed_skill)  # a malformed or unreadable skill fails before the run directory exists
        run_dir = RunDir.create(settings.output.root, env_name, settings.output.run_id)
        settings = _materialise_inputs(settings, run_dir, tasks, seed_skill, workdir)
        if candidate_edits:
            atomic_write_json(run_dir.path / "caller_edits.json", [e.to_dict() for e in candidate_edits])
    atomic_write_text(run_dir.config_path, yaml.safe_dump(settings.to_dict(), sort_keys=False))
    runtime = build_runtime(settings, metered=metered)
    all_tasks = runtime.env.load_tasks()
    dataset = _saved_dataset(run_dir, all_tasks, force) if resume is not None else None
    if dataset is None:
        if isinstance(tasks, Dataset):
            dataset = tasks
        elif splitter is not None and resume is None:
            dataset = splitter(all_tasks)
        else:
            dataset = split_tasks(all_tasks, seed=settings.env.split_seed, ratio=settings.env.split_ratio)
        atomic_write_json(run_dir.path / "dataset.json", _dataset_record(dataset))
        if not (run_dir.path / "tasks.jsonl").exists():  # caller tasks are written there already
            _write_items(run_dir.path / "items.jsonl", dataset)
    caller_path = run_dir.path / "caller_edits.json"
    caller = [Edit.from_dict(e) for e in read_json(caller_path)] if caller_path.exists() else []
    bus = ev.EventBus([ev.JsonlEventLog(run_dir.events_path), *subscribers], run_id=run_dir.run_id)
    run: TrainingRun
    trainer = Trainer(settings, runtime, run_dir, bus, dataset, caller,
                      is_external_cancel=lambda: run._cancelled_from_outside())
    run = TrainingRun(trainer, bus, settings)
    return run


def _check_seed(seed_skill: str | Path | Skill | None) -> None:
    """Raise :class:`SkillParseError` naming the file (for a path) when the seed skill cannot be used."""
    if seed_skill is None or isinstance(seed_skill, Skill):
        return
    if isinstance(seed_skill, Path):
        try:
            text = seed_skill.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise SkillParseError(
                f"{seed_skill}: not UTF-8 text (byte {exc.start}); save the skill as UTF-8.") from None
        Skill.parse(text, source=str(seed_skill))
    else:
        Skill.parse(str(seed_skill), source="seed_skill")


def _materialise_inputs(settings: Settings, run_dir: RunDir, tasks, seed_skill, workdir) -> Settings:
    """Write caller tasks and the seed skill into the run directory and point the settings at them."""
    settings = settings.model_copy(deep=True)
    if tasks is not None:
        listed = [t for name in SPLITS for t in tasks.split(name)] if isinstance(tasks, Dataset) else list(tasks)
        if not listed:
            raise ValueError("No tasks given: pass at least one train and one val task.")
        path = run_dir.path / "tasks.jsonl"
        _write_tasks(path, listed)
        options = {"workdir": str(Path(workdir).resolve())} if workdir is not None else {}
        settings.env = settings.env.model_copy(update={"name": "jsonl_tasks", "data_path": str(path.resolve()),
                                                       "limit": None, "options": options})
    elif workdir is not None:
        raise ValueError("workdir= applies to caller tasks (tasks=...); for an env, set its own option.")
    if seed_skill is not None:
        text = seed_skill.render() if isinstance(seed_skill, Skill) else (
            Path(seed_skill).read_text(encoding="utf-8") if isinstance(seed_skill, Path) else str(seed_skill))
        Skill.parse(text, source="seed_skill")  # a malformed skill fails here, before any model call
        path = run_dir.path / "seed_skill.md"
        atomic_write_text(path, text)
        settings.skill = settings.skill.model_copy(update={"init": str(path.resolve())})
    return settings


async def train(settings: Settings | str | Path | None = None, **kwargs: Any) -> TrainingResult:
    """``prepare_training(settings, **kwargs).run()`` in one call."""
    return await prepare_training(settings, **kwargs).run()


async def evaluate(
    settings: Settings,
    *,
    skill_path: str | Path | None = None,
    split: str = "test",
    subscribers: Iterable[ev.Subscriber] = (),
    backends: Mapping[str, Backend] | None = None,
) -> dict:
    """Evaluate one skill on one split; writes ``<root>/<env>/eval-<id>/``.
    Items whose call failed score 0 and are counted in ``failed_items``."""
    runtime = build_runtime(settings, raw_backends=dict(backends) if backends else None)
    skill = load_skill(skill_path) if skill_path else initial_skill(settings, runtime.env)
    run_dir, bus = open_run_dir(settings, "eval", subscribers)
    tasks, data = split_items(settings, runtime.env, split)
    t = settings.train
    cache = RolloutCache(run_dir.cache_path)
    # The split evaluated counts the items evaluated (after test_limit / val_limit), as the result says.
    bus.emit(ev.RunStarted(settings.env.name, str(run_dir.path), 0, {**data.summary(), split: len(tasks)},
                           runtime.describe_backends()))
    for note in load_notices(runtime.env, cache):
        bus.emit(note)
    label = f"eval {split}"
    bus.emit(ev.RolloutStarted(0, 0, split, len(tasks) * t.samples_per_item, t.workers, label))
    results = await run_rollouts(
        runtime.env, runtime.target, skill, tasks, samples=t.samples_per_item, workers=t.workers,
        cache=cache, seed=t.seed, max_tokens=settings.model.target_max_tokens,
        temperature=settings.model.temperature,
        on_progress=lambda done, total: bus.emit(ev.RolloutProgress(0, split, done, total, label)),
    )
    hard, soft = mean_score(results, "hard"), mean_score(results, "soft")
    failed = sum(r.failed for r in results)
    bus.emit(ev.RolloutDone(0, 0, split, hard, len(results), sum(r.cached for r in results), label, failed))
    summary = {
        "run_id": run_dir.run_id, "run_dir": str(run_dir.path), "split": split,
        "skill": str(skill_path or "seed skill"),
        "skill_hash": skill.hash, "n_items": len(tasks), "hard": hard, "soft": soft, "failed_items": failed,
        "per_item": per_item(results, "hard"), "usage": runtime.ledger.totals(),
    }
    atomic_write_json(run_dir.path / "results.json", [r.to_dict() for r in results])
    atomic_write_json(run_dir.summary_path, summary)
    return summary
