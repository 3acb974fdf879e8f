"""The training loop: epochs of steps, each step
rollout → reflect → aggregate → select → update → gate,
with the slow update and meta skill at epoch boundaries.

State after every finished step goes to ``state.json`` (atomically), so a run
stopped anywhere resumes from its last finished step and, with deterministic
backends, produces the same history as an uninterrupted run.
"""

from __future__ import annotations

import math
import random
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Sequence

from skillopt_core.run import events as ev
from skillopt_core.optim.aggregate import aggregate
from skillopt_core.run.budget import BudgetExceeded
from skillopt_core.run.config import Settings
from skillopt_core.tasks.data import Dataset, split_tasks
from skillopt_core.skill.edits import Edit, apply_edits
from skillopt_core.optim.epoch import SLOW_UPDATE_BLOCK, compare_items, summarize_comparison, write_meta_notes, write_slow_update_guidance
from skillopt_core.evaluation.gate import GateDecision, GateSettings, decide, decide_early
from skillopt_core.optim.reflect import reflect
from skillopt_core.evaluation.rollout import RolloutCache, RolloutResult, mean_score, per_item, run_rollouts
from skillopt_core.run.rundir import RunDir, atomic_write_json, atomic_write_text, read_json
from skillopt_core.run.runtime import Runtime, initial_skill
from skillopt_core.optim.schedule import describe_budget, edit_budget, lr_value
from skillopt_core.optim.select import select
from skillopt_core.skill.document import Skill
from skillopt_core.tasks.task import Task

STATE_VERSION = 1


@dataclass
class TrainState:
    global_step: int  # steps finished
    epochs_done: int
    initial_skill: str
    current_skill: str
    epoch_start_skill: str
    best_skill: str
    best_val: float | None
    rejected: list[dict] = field(default_factory=list)
    meta_notes: str = ""
    history: list[dict] = field(default_factory=list)
    ledger: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"version": STATE_VERSION, **self.__dict__}

    @classmethod
    def from_dict(cls, data: dict) -> "TrainState":
        data = dict(data)
        version = data.pop("version", None)
        if version != STATE_VERSION:
            raise ValueError(f"state.json version {version} is not supported (expected {STATE_VERSION}).")
        return cls(**data)


@dataclass(frozen=True)
class RunSummary:
    run_id: str
    run_dir: str
    status: str
    steps_done: int
    total_steps: int
    initial_val: float | None
    best_val: float | None
    initial_test: float | None
    best_test: float | None
    usage: dict
    accepted: int
    rejected: int

    def to_dict(self) -> dict:
        return dict(self.__dict__)


def load_notices(env, cache: RolloutCache) -> list[ev.Notice]:
    """What was skipped while loading, said once at the start of a run."""
    notes = []
    problems = list(getattr(env, "load_problems", []) or [])
    if problems:
        notes.append(ev.Notice("warning", f"{len(problems)} task records skipped while loading; first: {problems[0]}"))
    if cache.skipped_lines:
        notes.append(ev.Notice("warning", f"{cache.skipped_lines} unreadable rollout-cache lines ignored (they are re-run)"))
    return notes


class Trainer:
    def __init__(self, settings: Settings, runtime: Runtime, run_dir: RunDir, bus: ev.EventBus) -> None:
        self.s = settings
        self.rt = runtime
        self.run_dir = run_dir
        self.bus = bus
        self.cache = RolloutCache(run_dir.cache_path)
        tasks = runtime.env.load_tasks()
        self.data: Dataset = split_tasks(tasks, seed=settings.env.split_seed, ratio=tuple(settings.env.split_ratio))
        if not self.data.train or not self.data.val:
            raise ValueError(
                f"Need at least one train and one val item; the split gave {self.data.summary()}. "
                "Load more items (env.limit) or change env.split_ratio."
            )
        self.by_id: dict[str, Task] = {t.id: t for t in tasks}
        self.val = list(self.data.val[: settings.evaluation.val_limit] if settings.evaluation.val_limit else self.data.val)
        self.test = list(self.data.test[: settings.evaluation.test_limit] if settings.evaluation.test_limit else self.data.test)
        n_train = len(self.data.train)
        self.steps_per_epoch = settings.train.steps_per_epoch or max(1, math.ceil(n_train / settings.train.batch_size))
        self.total_steps = settings.train.num_epochs * self.steps_per_epoch
        self.gate_settings = GateSettings(
            policy=settings.evaluation.gate_policy, min_effect=settings.evaluation.min_effect, alpha=settings.evaluation.alpha
        )
        self._step = 0

    # --- helpers -----------------------------------------------------------

    def _emit(self, event: ev.Event) -> None:
        self.bus.emit(event)

    async def _rollout(self, skill: Skill, tasks: Sequence[Task], phase: str, label: str = "") -> list[RolloutResult]:
        t = self.s.train
        self._emit(ev.RolloutStarted(self._step, self.total_steps, phase, len(tasks) * t.samples_per_item, t.workers, label))

        def progress(done: int, total: int) -> None:
            self._emit(ev.RolloutProgress(self._step, phase, done, total))

        results = await run_rollouts(
            self.rt.env, self.rt.target, skill, tasks,
            samples=t.samples_per_item, workers=t.workers, cache=self.cache, seed=t.seed,
            max_tokens=self.s.model.target_max_tokens, temperature=self.s.model.temperature, on_progress=progress,
        )
        self._emit(ev.RolloutDone(
            self._step, self.total_steps, phase, mean_score(results, self.s.evaluation.gate_metric),
            len(results), sum(r.cached for r in results), label,
        ))
        return results

    async def _val_scores(self, skill: Skill, label: str) -> dict[str, float]:
        results = await self._rollout(skill, self.val, "val", label)
        return per_item(results, self.s.evaluation.gate_metric)

    async def _gate(self, current: Skill, candidate: Skill, current_scores: dict[str, float]) -> tuple[GateDecision, dict[str, float]]:
        """Evaluate the candidate on val in chunks, stopping once the decision is certain."""
        chunk = max(1, self.s.train.workers) if self.s.evaluation.early_stop else len(self.val)
        cand: dict[str, float] = {}
        for start in range(0, len(self.val), chunk):
            part = self.val[start : start + chunk]
            results = await run_rollouts(
                self.rt.env, self.rt.target, candidate, part,
                samples=self.s.train.samples_per_item, workers=self.s.train.workers, cache=self.cache,
                seed=self.s.train.seed, max_tokens=self.s.model.target_max_tokens, temperature=self.s.model.temperature,
            )
            cand.update(per_item(results, self.s.evaluation.gate_metric))
            if self.s.evaluation.early_stop and len(cand) < len(self.val):
                early = decide_early(self.gate_settings, current_scores, cand)
                if early is not None:
                    return early, cand
        return decide(self.gate_settings, current_scores, cand), cand

    @staticmethod
    def _mean(scores: dict[str, float]) -> float:
        return sum(scores.values()) / len(scores) if scores else 0.0

    def _batch(self, epoch: int, index: int) -> list[Task]:
        train = list(self.data.train)
        order = list(range(len(train)))
        random.Random(self.s.train.seed * 1_000_003 + epoch).shuffle(order)
        size = min(self.s.train.batch_size, len(train))
        start = (index * size) % len(train)
        picks = [order[(start + k) % len(train)] for k in range(size)]
        return [train[i] for i in picks]

    def _save_state(self, state: TrainState) -> None:
        state.ledger = self.rt.ledger.snapshot()
        atomic_write_json(self.run_dir.state_path, state.to_dict())
        atomic_write_json(self.run_dir.history_path, state.history)
        atomic_write_text(self.run_dir.best_skill_path, state.best_skill)

    # --- the run -------------------------------------------------------------

    def _fresh_state(self) -> TrainState:
        skill = initial_skill(self.s, self.rt.env).render()
        atomic_write_text(self.run_dir.skill_path(0), skill)
        return TrainState(0, 0, skill, skill, skill, skill, None)

    def load_or_create_state(self) -> tuple[TrainState, bool]:
        if self.run_dir.state_path.exists():
            # The ledger was restored from this state by whoever built the runtime (see run.py).
            return TrainState.from_dict(read_json(self.run_dir.state_path)), True
        return self._fresh_state(), False

    async def run(self) -> RunSummary:
        state, resumed = self.load_or_create_state()
        self._emit(ev.RunStarted(
            self.run_dir.run_id, self.s.env.name, str(self.run_dir.path), self.total_steps,
            {"train": len(self.data.train), "val": len(self.val), "test": len(self.test)},
            self.rt.describe_backends(), state.global_step if resumed else 0,
        ))
        for note in load_notices(self.rt.env, self.cache):
            self._emit(note)
        status = "completed"
        initial_val = None
        try:
            current = Skill.parse(state.current_skill)
            current_scores = await self._val_scores(current, "val baseline" if not resumed else "val current")
            initial_val = self._mean(await self._val_scores(Skill.parse(state.initial_skill), "val initial")) if resumed else self._mean(current_scores)
            if state.best_val is None:
                state.best_val = self._mean(current_scores)
            while True:
                epoch_of_next = state.global_step // self.steps_per_epoch
                if state.epochs_done < epoch_of_next:
                    await self._epoch_boundary(state, state.epochs_done)
                    current = Skill.parse(state.current_skill)
                    current_scores = await self._val_scores(current, "val current")
                    state.epochs_done += 1
                    state.epoch_start_skill = state.current_skill
                    state.rejected = []
                    self._save_state(state)
                    continue
                if state.global_step >= self.total_steps:
                    break
                current, current_scores = await self._train_step(state, current, current_scores)
                self._save_state(state)
        except BudgetExceeded as exc:
            status = "budget_exhausted"
            self._emit(ev.BudgetStopped(state.global_step + 1, f"{exc}. The run stopped cleanly after step {state.global_step}; "
                                        f"resume with `skillopt train --resume {self.run_dir.path}` and a larger budget "
                                        "(--set budget.max_calls=N)."))
        initial_test = best_test = None
        if status == "completed" and self.s.evaluation.eval_test and self.test:
            self._step = 0
            try:
                initial_test = mean_score(await self._rollout(Skill.parse(state.initial_skill), self.test, "test", "test initial"), self.s.evaluation.gate_metric)
                best_test = mean_score(await self._rollout(Skill.parse(state.best_skill), self.test, "test", "test best"), self.s.evaluation.gate_metric)
            except BudgetExceeded as exc:
                status = "budget_exhausted"
                self._emit(ev.BudgetStopped(state.global_step, f"{exc} during the final test evaluation."))
        self._save_state(state)
        summary = RunSummary(
            self.run_dir.run_id, str(self.run_dir.path), status, state.global_step, self.total_steps,
            initial_val, state.best_val, initial_test, best_test, self.rt.ledger.totals(),
            sum(1 for h in state.history if h["action"].startswith("accept")),
            sum(1 for h in state.history if h["action"] == "reject"),
        )
        atomic_write_json(self.run_dir.summary_path, summary.to_dict())
        if self.s.output.plot:
            from skillopt_core.run.plot import plot_history

            plot_history(state.history, self.run_dir.plot_path, initial_val)
        self._emit(ev.RunEnd(self.run_dir.run_id, str(self.run_dir.path), status, state.best_val, initial_test, best_test, state.global_step))
        return summary

    async def _train_step(self, state: TrainState, current: Skill, current_scores: dict[str, float]) -> tuple[Skill, dict[str, float]]:
        gs = state.global_step
        epoch, index = divmod(gs, self.steps_per_epoch)
        step = gs + 1
        self._step = step
        total = self.total_steps
        sdir = self.run_dir.step_dir(step)
        ledger_before = self.rt.ledger.snapshot()
        timings: dict[str, float] = {}
        t0 = time.perf_counter()
        self._emit(ev.StepStarted(step, total, epoch + 1))

        batch = self._batch(epoch, index)
        results = await self._rollout(current, batch, "train")
        train_score = mean_score(results, "hard")
        atomic_write_json(sdir / "rollouts.json", [r.to_dict() for r in results])
        timings["rollout"] = time.perf_counter() - t0

        t1 = time.perf_counter()
        pairs = [(self.by_id[r.task_id], r) for r in results]
        o = self.s.optimizer
        refl = await reflect(
            self.rt.optimizer, current, pairs, minibatch_size=o.minibatch_size, include_successes=o.include_successes,
            show_reference=o.show_reference, seed=self.s.train.seed * 7919 + gs,
            rejected=[Edit.from_dict(e) for e in state.rejected], meta_notes=state.meta_notes,
            max_tokens=self.s.model.optimizer_max_tokens,
        )
        timings["reflect"] = time.perf_counter() - t1
        t2 = time.perf_counter()
        agg = await aggregate(self.rt.optimizer, refl.edits, use_model=o.merge_with_model, max_tokens=self.s.model.optimizer_max_tokens)
        atomic_write_json(sdir / "patches.json", {
            "proposed": [e.to_dict() for e in refl.edits], "merged": [p.to_dict() for p in agg.patches],
            "invalid_replies": refl.invalid_replies, "problems": refl.problems,
            "merge_used_model": agg.used_model, "merge_fallback": agg.fallback_reason,
        })
        self._emit(ev.PatchesGenerated(step, total, len(agg.patches), refl.invalid_replies, refl.skipped_edits))
        timings["aggregate"] = time.perf_counter() - t2

        t3 = time.perf_counter()
        budget = edit_budget(gs, total, o.learning_rate, o.lr_scheduler, o.min_learning_rate)
        budget_text = describe_budget(gs, total, o.learning_rate, o.lr_scheduler, o.min_learning_rate)
        sel = await select(self.rt.optimizer, agg.patches, budget, use_model=o.rank_with_model, skill_text=current.render())
        self._emit(ev.EditsSelected(step, total, len(sel.selected), len(agg.patches), budget, budget_text))
        selected = [p.edit for p in sel.selected]
        result = apply_edits(current, selected)
        outcomes = Counter(oc.status for oc in result.outcomes)
        self._emit(ev.EditsApplied(step, total, dict(outcomes)))
        atomic_write_json(sdir / "selected.json", {
            "budget": budget, "budget_text": budget_text, "ranked_by": sel.ranked_by, "note": sel.note,
            "edits": [{**oc.edit.to_dict(), "status": oc.status, "detail": oc.detail} for oc in result.outcomes],
        })
        candidate = result.skill
        atomic_write_text(sdir / "candidate.md", candidate.render())
        timings["select_update"] = time.perf_counter() - t3

        t4 = time.perf_counter()
        val_before = self._mean(current_scores)
        decision: GateDecision | None = None
        cand_scores: dict[str, float] = {}
        if candidate.hash == current.hash:
            action, reason = "no_change", "candidate identical to the current skill; 0 model calls"
        elif not self.s.evaluation.use_gate:
            cand_scores = await self._val_scores(candidate, "val candidate")
            action, reason = "accept_ungated", f"gate off; val score {self._mean(cand_scores):.2f}"
        else:
            decision, cand_scores = await self._gate(current, candidate, current_scores)
            action, reason = ("accept" if decision.accept else "reject"), decision.reason
        gate_record = decision.to_dict() if decision else {"action": action, "reason": reason}
        atomic_write_json(sdir / "gate.json", gate_record)
        self._emit(ev.GateDecided(
            step, total, action, reason,
            decision.current_mean if decision else self._mean(current_scores),
            decision.candidate_mean if decision else (self._mean(cand_scores) if cand_scores else None),
            decision.n_evaluated if decision else len(cand_scores), len(self.val),
        ))

        if action.startswith("accept"):
            if len(cand_scores) < len(self.val):
                cand_scores = await self._val_scores(candidate, "val accepted")
            new_val = self._mean(cand_scores)
            if action == "accept" or state.best_val is None or new_val > state.best_val:
                state.best_val, state.best_skill = new_val, candidate.render()
            current, current_scores = candidate, cand_scores
            state.current_skill = candidate.render()
        elif action == "reject":
            state.rejected.extend(e.to_dict() for e in selected)
        timings["gate"] = time.perf_counter() - t4
        timings["total"] = time.perf_counter() - t0
        atomic_write_text(self.run_dir.skill_path(step), current.render())

        state.history.append({
            "step": step, "epoch": epoch + 1, "train_score": train_score,
            # Full-val means; a candidate rejected early is scored on the items the
            # gate evaluated (gate_evaluated of gate_items).
            "val_current": val_before,
            "val_candidate": self._mean(cand_scores) if cand_scores else None,
            "val_after": self._mean(current_scores), "best_val": state.best_val,
            "action": action, "gate_reason": reason,
            "gate_items": len(self.val), "gate_evaluated": decision.n_evaluated if decision else len(cand_scores),
            "gate_early_stopped": bool(decision and decision.early_stopped),
            "n_proposed": len(refl.edits), "n_patches": len(agg.patches), "n_selected": len(selected),
            "n_applied": result.applied_count, "outcomes": dict(outcomes), "invalid_replies": refl.invalid_replies,
            "skipped_edits": refl.skipped_edits, "budget": budget, "budget_text": budget_text, "lr": lr_value(gs, total, o.learning_rate, o.lr_scheduler, o.min_learning_rate),
            "selected_edits": [e.to_dict() for e in selected], "skill_hash": current.hash,
            "usage": self.rt.ledger.diff(ledger_before), "timings": timings,
        })
        state.global_step += 1
        return current, current_scores

    async def _epoch_boundary(self, state: TrainState, epoch: int) -> None:
        """Slow update and meta skill after epoch ``epoch`` (0-based)."""
        o = self.s.optimizer
        self._step = state.global_step
        su_summary: dict[str, Any] = {}
        if o.use_slow_update:
            su_summary = await self._slow_update(state, epoch)
        notes_written = False
        if o.use_meta_skill:
            records = [h for h in state.history if h["epoch"] == epoch + 1]
            reply = await write_meta_notes(self.rt.optimizer, records, state.meta_notes, self.s.model.optimizer_max_tokens)
            mdir = self.run_dir.meta_skill_dir(epoch + 1)
            if reply.text:
                state.meta_notes = reply.text
                notes_written = True
            atomic_write_text(mdir / "notes.md", (state.meta_notes or "") + "\n")
            atomic_write_json(mdir / "meta.json", {"updated": notes_written, "error": reply.error})
        self._emit(ev.EpochEnd(epoch + 1, self.s.train.num_epochs, su_summary, notes_written))

    async def _slow_update(self, state: TrainState, epoch: int) -> dict[str, Any]:
        previous, current = Skill.parse(state.epoch_start_skill), Skill.parse(state.current_skill)
        items = self._batch(epoch, 0)
        prev_res = await self._rollout(previous, items, "slow_update", "slow update: epoch start")
        cur_res = await self._rollout(current, items, "slow_update", "slow update: epoch end")
        groups = compare_items(per_item(prev_res), per_item(cur_res))
        responses = {r.task_id: r.response for r in cur_res}
        reply = await write_slow_update_guidance(
            self.rt.optimizer, previous.render(), current.render(), groups, self.by_id, responses,
            current.protected_block(SLOW_UPDATE_BLOCK) or "", self.s.model.optimizer_max_tokens,
        )
        sdir = self.run_dir.slow_update_dir(epoch + 1)
        record: dict[str, Any] = {"groups": groups, "summary": summarize_comparison(groups), "guidance": reply.text, "error": reply.error}
        action = "none"
        candidate = None
        if reply.text:
            try:
                candidate = current.set_protected_block(SLOW_UPDATE_BLOCK, reply.text)
            except ValueError as exc:  # e.g. the reply itself contains a protected-region marker
                record["error"] = f"guidance not usable: {exc}"
        if candidate is not None:
            if candidate.hash == current.hash:
                action = "no_change"
            elif self.s.optimizer.slow_update_gate:
                cur_scores = await self._val_scores(current, "val current")
                decision, _ = await self._gate(current, candidate, cur_scores)
                record["gate"] = decision.to_dict()
                action = "accept" if decision.accept else "reject"
            else:
                action = "accept_ungated"
            if action.startswith("accept"):
                state.current_skill = candidate.render()
                if action == "accept":
                    scores = await self._val_scores(candidate, "val accepted")
                    state.best_val, state.best_skill = self._mean(scores), state.current_skill
            atomic_write_text(sdir / "candidate.md", candidate.render())
        record["action"] = action
        atomic_write_json(sdir / "comparison.json", record)
        return {"summary": f"{record['summary']}; guidance {action}", "action": action}
