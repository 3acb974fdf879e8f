"""The training loop: epochs of steps, each step
rollout → reflect → aggregate → select → update → gate,
with the slow update and meta skill at epoch boundaries.

Guarantees (each has its test):

- **Units commit whole.** A step and an epoch boundary each work on a copy
  of the state and commit it when they have finished; ``state.json`` is
  written after each. A stop anywhere (budget, cancellation, a systemic
  failure, a crash) resumes by redoing the interrupted unit, so with
  deterministic backends a stopped-and-resumed run has the same history as an
  uninterrupted one.
- **Screen, then gate (the default).** A candidate is first run on
  ``evaluation.screen_items`` items of the step's train batch, paired with the
  current skill's rollouts of the step (ties pass, and with
  ``evaluation.screen_margin`` a candidate that many items behind); only then on val. With
  ``evaluation.remeasure`` an accepted skill is measured again on a fresh
  round of val sample seeds (``state.gate_round``), and later candidates are
  gated on that round: the comparison is always paired and its bar is never
  the draw that won the accept. Edits that address the judge rather than the
  task are refused before merging (:mod:`skillopt_core.optim.judge_guard`);
  a gated accept whose val judge is a model is re-decided without the
  sentences its edits make every answer say (:mod:`skillopt_core.optim.stock_sentences`).
  With ``evaluation.race_z`` the mean gate (by default; the screen too with
  ``evaluation.race_scope``) stops once its answer is predicted
  (:mod:`skillopt_core.run.racing`); with
  ``evaluation.remeasure_scope: disagreements`` only the val items where the
  accepted draw differed are re-measured, each item keeping its own round.
  With ``train.candidates_per_step`` above 1, successive halving on the
  step's train items picks one candidate for the screen and the gate.
- **Patience.** With ``train.patience`` K, training stops (completed, the best
  skill stands) once K step gates in a row kept the current skill (with
  ``train.patience_counts: clear_rejects`` K clear rejects in a row: a close
  reject decided on every val item ends the streak).
- **The best skill never gets worse.** ``best_skill`` is replaced only by a
  skill whose full-val score is known and strictly higher than ``best_val``,
  whatever path made it current (a gated accept, an ungated accept, the slow
  update), or, after a re-measured accept, by the skill that just passed the
  gate against the best skill itself on the same items and seeds.
  ``state.best_source`` / ``best_reason`` and each history record say
  which skill is best and why.
- **One bad item is not a failed run.** Items whose call failed score 0 and
  are counted; systemic failures stop the run with ``status="failed"``, a
  summary and a resumable state, after cancelling the calls in flight.
- **No work whose result nothing uses.** After the last epoch there are no
  meta notes and no ungated slow update (a gated one still may give a better
  best skill); the current skill's val scores are kept in the state, never
  recomputed.
"""

from __future__ import annotations

import asyncio
import math
import random
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from skillopt_core.backends import BackendError
from skillopt_core.evaluation.gate import TIE_EPSILON, GateDecision, GateSettings, decide, decide_early
from skillopt_core.evaluation.rollout import RolloutCache, RolloutResult, mean_score, per_item, run_rollouts
from skillopt_core.optim.aggregate import Patch, aggregate
from skillopt_core.optim.epoch import (
    SLOW_UPDATE_BLOCK,
    compare_items,
    summarize_comparison,
    write_meta_notes,
    write_slow_update_guidance,
)
from skillopt_core.optim.judge_guard import JudgeGuard, Refusal, own_words, rubric_texts
from skillopt_core.optim.reflect import reflect
from skillopt_core.optim.schedule import describe_budget, edit_budget, lr_value
from skillopt_core.optim.select import select
from skillopt_core.optim.stock_sentences import MIN_TASKS as STOCK_MIN_TASKS
from skillopt_core.optim.stock_sentences import check as stock_check
from skillopt_core.run import events as ev
from skillopt_core.run.budget import BudgetExceeded
from skillopt_core.run.config import Settings
from skillopt_core.run.estimate import estimate_run
from skillopt_core.run.racing import RaceCall, RaceSettings, race, raced_decision
from skillopt_core.run.record import GateRecord, SelectedEdit, StepDetail, StepRecord
from skillopt_core.run.rundir import RunDir, atomic_write_json, atomic_write_text, read_json
from skillopt_core.run.runtime import Runtime, initial_skill
from skillopt_core.run.state import RunSummary, TrainState
from skillopt_core.skill.document import Skill
from skillopt_core.skill.edits import Edit, apply_edits
from skillopt_core.tasks.data import Dataset
from skillopt_core.tasks.judges import JudgeError, validate_judge_spec
from skillopt_core.tasks.judges.substance import substance_spec
from skillopt_core.tasks.task import Task


def load_notices(env, cache: RolloutCache) -> list[ev.Notice]:
    """What was skipped while loading, said once at the start of a run."""
    notes = []
    problems = list(getattr(env, "load_problems", []) or [])
    if problems:
        notes.append(ev.Notice("warning", f"{len(problems)} task records skipped while loading; first: {problems[0]}"))
    if cache.skipped_lines:
        notes.append(ev.Notice("warning",
                               f"{cache.skipped_lines} unreadable rollout-cache lines ignored (they are re-run)"))
    return notes


Seeds = int | Mapping[str, int]  # one sample seed for every item, or each item's own


def _mean(scores: Mapping[str, float]) -> float:
    return math.fsum(scores.values()) / len(scores) if scores else 0.0


class Trainer:
    def __init__(
        self, settings: Settings, runtime: Runtime, run_dir: RunDir, bus: ev.EventBus, dataset: Dataset,
        caller_edits: Sequence[Edit] = (), is_external_cancel: Callable[[], bool] = lambda: False,
    ) -> None:
        self.s = settings
        self.rt = runtime
        self.run_dir = run_dir
        self.bus = bus
        self.cache = RolloutCache(run_dir.cache_path)
        self.data = dataset
        if not dataset.train or not dataset.val:
            raise ValueError(
                f"Need at least one train and one val item; the split gave {dataset.summary()}. "
                "Load more items (env.limit) or change env.split_ratio."
            )
        self.by_id: dict[str, Task] = {t.id: t for part in (dataset.train, dataset.val, dataset.test) for t in part}
        self.caller_edits = list(caller_edits)
        ev_ = settings.evaluation
        self.val = list(dataset.val[: ev_.val_limit] if ev_.val_limit else dataset.val)
        self.test = list(dataset.test[: ev_.test_limit] if ev_.test_limit else dataset.test)
        if ev_.holdout_judge is not None:
            # The held-out check: val is scored by a judge the optimizer never
            # sees (reflection reads train rollouts only, scored by the tasks' own judges).
            try:
                validate_judge_spec(ev_.holdout_judge)
            except (JudgeError, ValueError, TypeError) as exc:
                raise ValueError(f"evaluation.holdout_judge is not a valid judge spec: {exc}") from exc
            self.val = [replace(t, judge=ev_.holdout_judge) for t in self.val]
        elif ev_.substance_judge:  # val's model judges read answers without their claims about themselves
            self.val = [replace(t, judge=spec) if (spec := substance_spec(t.judge)) is not None else t
                        for t in self.val]
        # The stock-sentence check at accepts (skillopt_core/optim/stock_sentences.py), where the substance judge acts.
        self.stock = (ev_.stock_sentences and ev_.holdout_judge is None and ev_.substance_judge
                      and any(t.judge != self.by_id[t.id].judge for t in self.val))
        self._gate_results: list[RolloutResult] = []
        self.steps_per_epoch = (settings.train.steps_per_epoch
                                or max(1, math.ceil(len(dataset.train) / settings.train.batch_size)))
        self.total_steps = settings.train.num_epochs * self.steps_per_epoch
        self.gate_settings = GateSettings(policy=ev_.gate_policy, min_effect=ev_.min_effect, alpha=ev_.alpha)
        race = (RaceSettings(ev_.race_z, ev_.race_min_items, ev_.race_accept_z) if ev_.race_z and ev_.early_stop
                else None)
        self.race = race if ev_.race_scope in ("both", "gate") else None  # the val gate's
        self.screen_race = race if ev_.race_scope in ("both", "screen") else None
        # The person's own words (the caller's edits, tasks' metadata["own_words"]) are never the judge's.
        self.own = own_words(self.by_id.values(), self.caller_edits)
        self.guard = (JudgeGuard(rubric_texts(t.judge for t in self.by_id.values()), self.own,
                                 learned=settings.optimizer.judge_check == "learned")
                      if settings.optimizer.refuse_judge_edits else None)
        self._is_external_cancel = is_external_cancel
        self._step = 0
        self._failed_items = 0
        self.state: TrainState | None = None
        self.returned: RunSummary | None = None  # the summary run() returned (None until it has)
        self.steps: dict[int, StepDetail] = {}  # the steps this process ran, as their files hold them
        self._estimate: dict[str, Any] | None = None

    # --- helpers -----------------------------------------------------------

    def _emit(self, event: ev.Event) -> None:
        self.bus.emit(event)

    def _round_seed(self, gate_round: int) -> int:
        """The sample seed of one round of val measurements (round 0: train.seed)."""
        return self.s.train.seed + 104_729 * gate_round

    def _val_seeds(self, state: TrainState) -> dict[str, int]:
        """Each val item's sample seed: its round's (``state.val_rounds``, else ``state.gate_round``)."""
        return {t.id: self._round_seed(state.val_rounds.get(t.id, state.gate_round)) for t in self.val}

    async def _rollout(self, skill: Skill, tasks: Sequence[Task], phase: str, label: str = "",
                       stop_when: Callable[[Mapping[str, float]], bool] | None = None,
                       seed: Seeds | None = None) -> list[RolloutResult]:
        t = self.s.train
        self._emit(ev.RolloutStarted(self._step, self.total_steps, phase, len(tasks) * t.samples_per_item, t.workers,
                                     label))

        def progress(done: int, total: int) -> None:
            self._emit(ev.RolloutProgress(self._step, phase, done, total, label))

        results = await run_rollouts(
            self.rt.env, self.rt.target, skill, tasks,
            samples=t.samples_per_item, workers=t.workers, cache=self.cache,
            seed=seed if isinstance(seed, int) else t.seed, seeds=seed if isinstance(seed, Mapping) else None,
            max_tokens=self.s.model.target_max_tokens, temperature=self.s.model.temperature, on_progress=progress,
            stop_when=stop_when, metric=self.s.evaluation.gate_metric,
        )
        failed = sum(r.failed for r in results)
        self._failed_items += failed
        self._emit(ev.RolloutDone(
            self._step, self.total_steps, phase, mean_score(results, self.s.evaluation.gate_metric),
            len(results), sum(r.cached for r in results), label, failed,
        ))
        return results

    async def _val_scores(self, skill: Skill, label: str, items: Sequence[Task] | None = None,
                          seed: Seeds | None = None) -> dict[str, float]:
        results = await self._rollout(skill, self.val if items is None else items, "val", label, seed=seed)
        return per_item(results, self.s.evaluation.gate_metric)

    async def _gate(self, candidate: Skill, current: Skill, current_scores: dict[str, float], label: str,
                    seed: Seeds) -> tuple[GateDecision, dict[str, float]]:
        """Evaluate the candidate on val with ``workers`` calls in flight, stopping
        as soon as the gate's decision is certain (when early stopping is on).

        ``current_scores`` were measured with the same val items and sample
        seed (``seed``) as the candidate is now: the comparison is paired.
        With ``evaluation.resample_disagreements`` K, a fully evaluated
        candidate and the current skill are both answered K more times on the
        items where they disagree, and the gate decides on the averages."""
        stop_when = None
        if self.s.evaluation.early_stop:
            def stop_when(partial: Mapping[str, float]) -> bool:
                return len(partial) < len(self.val) and self._gate_early(current_scores, dict(partial)) is not None
        results = await self._rollout(candidate, self.val, "val", label, stop_when=stop_when, seed=seed)
        self._gate_results = results
        cand = per_item(results, self.s.evaluation.gate_metric)
        if len(cand) < len(self.val):
            early = self._gate_early(current_scores, cand)
            assert early is not None  # the evaluation only stops once the decision is certain or raced
            return early, cand
        extra = self.s.evaluation.resample_disagreements
        disagree = [t for t in self.val if abs(cand[t.id] - current_scores[t.id]) > TIE_EPSILON]
        if extra and disagree:
            cur_more, cand_more = dict(current_scores), dict(cand)
            for k in range(1, extra + 1):
                more_seed = seed + k if isinstance(seed, int) else {i: s + k for i, s in seed.items()}
                cur_k = await self._val_scores(current, f"{label}: resample current", disagree, seed=more_seed)
                cand_k = await self._val_scores(candidate, f"{label}: resample candidate", disagree, seed=more_seed)
                for t in disagree:
                    cur_more[t.id] += cur_k[t.id]
                    cand_more[t.id] += cand_k[t.id]
            for t in disagree:
                cur_more[t.id] /= extra + 1
                cand_more[t.id] /= extra + 1
            decision = decide(self.gate_settings, cur_more, cand_more)
            return decision, cand
        return decide(self.gate_settings, current_scores, cand), cand

    async def _stock_check(self, sdir, reason: str, current: Skill, candidate: Skill, current_scores: dict[str, float],
                           cand_scores: dict[str, float], selected: list[Edit], train: Sequence[RolloutResult],
                           refused: list[Refusal], seed: Seeds):
        """An accept re-decided without the stock sentences the candidate's answers gained
        (:mod:`skillopt_core.optim.stock_sentences`); the edits that wrote them are dropped."""
        by_id = {t.id: t for t in self.val}
        gated = list(self._gate_results)
        if len({r.task_id for r in gated}) < STOCK_MIN_TASKS:  # an early accept: too few answers to tell
            done = {r.task_id for r in gated}
            gated += await self._rollout(candidate, [t for t in self.val if t.id not in done], "val", "stock check",
                                         seed=seed)
        verdict = await stock_check(gated, [r.response for r in train],
                                    lambda tid, text: self.rt.env.score(by_id[tid], text),
                                    self.s.evaluation.gate_metric, selected, self.own)
        if verdict is None:
            return "accept", reason, candidate, selected, cand_scores, refused
        atomic_write_json(sdir / "stock.json", verdict.to_dict())
        said = f"the sentence(s) its edits make every answer say, e.g. {verdict.sentences[0]!r}"
        again = decide(self.gate_settings, {k: current_scores[k] for k in verdict.scores}, verdict.scores)
        if not again.accept:
            self._emit(ev.Notice("info", f"accept withdrawn: its gain did not hold without {said}"))
            return "reject", f"{reason}; withdrawn: not without {said} ({again.reason})", candidate, selected, \
                cand_scores, refused
        if not verdict.dropped:
            return "accept", reason, candidate, selected, cand_scores, refused
        kept = [e for e in selected if e not in verdict.dropped]
        refused = [*refused, *(Refusal(e, f"makes every answer say {verdict.sentences[0]!r}, whatever the task")
                               for e in verdict.dropped)]
        trimmed = apply_edits(current, kept).skill
        if trimmed.hash == current.hash:
            return "reject", f"{reason}; withdrawn: its only edits write {said}", candidate, selected, \
                cand_scores, refused
        atomic_write_text(sdir / "candidate.md", trimmed.render())
        return "accept", f"{reason}; {len(verdict.dropped)} edit(s) dropped that write {said}", trimmed, kept, {}, \
            refused

    def _gate_early(self, current_scores: Mapping[str, float], partial: dict[str, float]) -> GateDecision | None:
        """The gate's decision on a partial evaluation: certain (:func:`decide_early`), or, with
        ``evaluation.race_z`` and the mean policy, predicted (:mod:`skillopt_core.run.racing`)."""
        certain = decide_early(self.gate_settings, current_scores, partial)
        if certain is not None or self.race is None or self.gate_settings.policy != "mean":
            return certain
        deltas = [partial[k] - current_scores[k] for k in partial]
        bar = len(current_scores) * (self.gate_settings.min_effect + TIE_EPSILON)
        call = race(self.race, deltas, len(current_scores) - len(partial), bar)
        return None if call is None else raced_decision(self.gate_settings, current_scores, partial, call)

    async def _full_val(self, skill: Skill, partial: dict[str, float], label: str, seed: Seeds) -> dict[str, float]:
        """``partial`` completed to every val item (the rest are evaluated now)."""
        missing = [t for t in self.val if t.id not in partial]
        if not missing:
            return partial
        return {**partial, **await self._val_scores(skill, label, missing, seed=seed)}

    async def _accepted_scores(self, state: TrainState, skill: Skill, partial: dict[str, float], label: str,
                               gated: bool = True) -> dict[str, float]:
        """Full-val scores of a just-accepted skill. After a gated accept with
        ``evaluation.remeasure`` they come from a fresh round of sample seeds
        (the draw that got the skill accepted is biased upwards: it won a
        comparison), and later candidates are measured on that round too;
        otherwise (or after an ungated accept, which no draw selected) the
        draw is completed. With ``evaluation.remeasure_scope: disagreements`` only the
        items where the accepted skill's draw differed from the current skill's are
        measured again (that is where the winning draw's luck lies); the others keep
        their round (``state.val_rounds``), the draw completed where the gate stopped early."""
        if not (self.s.evaluation.remeasure and gated):
            return await self._full_val(skill, partial, label, self._val_seeds(state))
        if self.s.evaluation.remeasure_scope == "all":
            state.gate_round += 1
            state.val_rounds = {}
            return await self._val_scores(skill, f"{label} (re-measured)", seed=self._val_seeds(state))
        before = state.current_scores or {}
        full = await self._full_val(skill, partial, label, self._val_seeds(state))
        differ = [t for t in self.val if t.id in partial and abs(partial[t.id] - before.get(t.id, 0.0)) > TIE_EPSILON]
        rounds = {t.id: state.val_rounds.get(t.id, state.gate_round) for t in self.val}
        state.gate_round += 1
        state.val_rounds = {k: r for k, r in rounds.items() if k not in {t.id for t in differ}}
        if not differ:
            return full
        fresh = await self._val_scores(skill, f"{label} ({len(differ)} differing items re-measured)", differ,
                                       seed=self._val_seeds(state))
        return {**full, **fresh}

    async def _screen(self, candidate: Skill, batch: Sequence[Task],
                      results: Sequence[RolloutResult]) -> dict[str, Any]:
        """The candidate on the first ``evaluation.screen_items`` items of the
        step's train batch, against the current skill's rollouts of this step
        on the same items and seeds. Ties pass: the screen only stops a
        candidate that did worse. With ``evaluation.early_stop`` the screen
        stops once its answer is certain (scores lie in 0..1, so the candidate
        passes as soon as its sum reaches the current skill's, and fails once
        even perfect scores on the rest could not reach it)."""
        metric = self.s.evaluation.gate_metric
        tasks = list(batch[: self.s.evaluation.screen_items])
        ids = {t.id for t in tasks}
        current = {k: v for k, v in per_item(results, metric).items() if k in ids}
        bar = math.fsum(current.values())
        margin = self.s.evaluation.screen_margin  # items the candidate may be behind and still pass

        def certain(partial: Mapping[str, float]) -> bool:
            got = math.fsum(partial.values())
            low = bar - margin - TIE_EPSILON
            if got >= low or got + (len(tasks) - len(partial)) < low:
                return True
            return self._screen_race(current, partial, len(tasks)) is not None

        stop_when = certain if self.s.evaluation.early_stop else None
        cand = per_item(await self._rollout(candidate, tasks, "screen", "screen candidate", stop_when=stop_when),
                        metric)
        got = math.fsum(cand.values())
        n = len(tasks)
        raced = self._screen_race(current, cand, n) if len(cand) < n else None
        passed = raced.verdict == "pass" if raced is not None else got >= bar - margin - TIE_EPSILON
        verdict = "passes to the val gate" if passed else "rejected before the val gate"
        sign = "≥" if passed else "<"
        less = f" − margin {margin:g}" if margin else ""
        early = f" (decided after {len(cand)} of {n})" if len(cand) < n and raced is None else ""
        if raced is not None:
            early = f" ({raced.describe()})"
            bar = math.fsum(current[k] for k in cand)
        reason = f"screen on {n} train items: candidate {got:g} {sign} current {bar:g}{less}{early}; {verdict}"
        return {"passed": passed, "items": n, "evaluated": len(cand), "current_sum": bar, "candidate_sum": got,
                "reason": reason}

    def _screen_race(self, current: Mapping[str, float], partial: Mapping[str, float], n: int) -> RaceCall | None:
        """The screen's raced answer (``evaluation.race_z``): ties pass, so the bar sits just below 0
        (below ``-evaluation.screen_margin``)."""
        if self.screen_race is None or len(partial) >= n:
            return None
        deltas = [partial[k] - current.get(k, 0.0) for k in partial]
        return race(self.screen_race, deltas, n - len(partial), -self.s.evaluation.screen_margin - TIE_EPSILON)

    def _offer_best(self, state: TrainState, skill_text: str, scores: dict[str, float], source: str,
                    beat_best: bool = False) -> None:
        """Make ``skill_text`` the best skill iff its full-val score beats the best
        so far, or (``beat_best``) it just passed the gate against the best
        skill itself on the same val items and samples (a re-measured score is
        a fresh draw, not comparable with the best's older one)."""
        assert len(scores) == len(self.val), "only fully evaluated skills may become the best"
        val, previous = _mean(scores), state.best_val
        if not beat_best and previous is not None and val <= previous + TIE_EPSILON:
            return
        if beat_best:
            reason = f"passed the gate against the best skill (paired); re-measured full val {val:.3f}"
        else:
            reason = (f"full val {val:.3f} > previous best {previous:.3f}" if previous is not None
                      else f"full val {val:.3f}")
        state.best_skill, state.best_val, state.best_source, state.best_reason = skill_text, val, source, reason
        self._emit(ev.BestChanged(self._step, source, val, previous, reason))

    def _batch(self, epoch: int, index: int) -> list[Task]:
        train = list(self.data.train)
        order = list(range(len(train)))
        random.Random(self.s.train.seed * 1_000_003 + epoch).shuffle(order)
        size = min(self.s.train.batch_size, len(train))
        start = (index * size) % len(train)
        return [train[order[(start + k) % len(train)]] for k in range(size)]

    def _save_state(self, state: TrainState) -> None:
        state.ledger = self.rt.ledger.snapshot()
        atomic_write_json(self.run_dir.state_path, state.to_dict())
        atomic_write_json(self.run_dir.history_path, state.history)
        atomic_write_text(self.run_dir.best_skill_path, state.best_skill)

    # --- the run -------------------------------------------------------------

    def preflight(self) -> dict[str, Any]:
        """The run's preflight estimate (:mod:`skillopt_core.run.estimate`) for the steps it has left."""
        state = self.state
        if state is None and self.run_dir.state_path.exists():
            state = TrainState.from_dict(read_json(self.run_dir.state_path))
        skill = state.current_skill if state is not None else initial_skill(self.s, self.rt.env).render()
        done = state.global_step if state is not None else 0
        return estimate_run(
            self.s, list(self.data.train), self.val, self.test if self.s.evaluation.eval_test else [], skill,
            self.rt.backends, steps=self.total_steps - done, steps_per_epoch=self.steps_per_epoch,
            baseline_done=state is not None and state.current_scores is not None, used=self.rt.ledger.totals())

    def load_or_create_state(self) -> tuple[TrainState, bool]:
        if self.run_dir.state_path.exists():
            # The ledger was restored from this state by whoever built the runtime (see api.py).
            return TrainState.from_dict(read_json(self.run_dir.state_path)), True
        skill = initial_skill(self.s, self.rt.env).render()
        atomic_write_text(self.run_dir.skill_path(0), skill)
        return TrainState(0, 0, skill, skill, skill, skill, None), False

    async def run(self) -> RunSummary:
        state, resumed = self.load_or_create_state()
        self.state = state
        self._emit(ev.RunStarted(
            self.s.env.name, str(self.run_dir.path), self.total_steps,
            {"train": len(self.data.train), "val": len(self.val), "test": len(self.test)},
            self.rt.describe_backends(), state.global_step if resumed else 0,
        ))
        for note in load_notices(self.rt.env, self.cache):
            self._emit(note)
        try:
            estimate = self._estimate = self.preflight()
        except Exception as exc:  # an estimate must not stop a run; say it is missing
            self._emit(ev.Notice("warning", f"no preflight estimate: {type(exc).__name__}: {exc}"))
        else:
            atomic_write_json(self.run_dir.path / "preflight.json", estimate)
            self._emit(ev.Notice("info", estimate["text"]))
            for warning in estimate["warnings"]:
                self._emit(ev.Notice("warning", warning))
        status, error, cancelled_from_outside, crash = "completed", "", False, None
        initial_test = best_test = None
        try:
            await self._train()
            if self.s.evaluation.eval_test and self.test:
                self._step = 0
                initial_test = mean_score(await self._rollout(Skill.parse(self.state.initial_skill), self.test, "test",
                                                              "test initial"), self.s.evaluation.gate_metric)
                best_test = mean_score(await self._rollout(Skill.parse(self.state.best_skill), self.test, "test",
                                                           "test best"), self.s.evaluation.gate_metric)
        except BudgetExceeded as exc:
            status, error = "budget_exhausted", str(exc)
        except BackendError as exc:
            status, error = "failed", str(exc)
        except asyncio.CancelledError:
            status, error = "cancelled", "the run was cancelled"
            cancelled_from_outside = self._is_external_cancel()
        except Exception as exc:  # a bug: record the failure like any other, then let it surface
            status, error, crash = "failed", f"{type(exc).__name__}: {exc}", exc
        summary = self._finish(status, error, initial_test, best_test)
        if crash is not None:
            raise crash
        if cancelled_from_outside:
            raise asyncio.CancelledError()
        # Kept for TrainingRun: a cancel requested after the run's last await
        # still marks this task cancelled, though the run ended and said so.
        self.returned = summary
        return summary

    def _finish(self, status: str, error: str, initial_test: float | None, best_test: float | None) -> RunSummary:
        state = self.state
        assert state is not None
        if status != "completed":
            where = f"after step {state.global_step}" if state.global_step else "before its first step finished"
            advice = {
                "budget_exhausted": "resume with a larger budget (--set budget.max_calls=N, budget.max_tokens=N or "
                                    "budget.max_usd=D)",
                "cancelled": "resume it",
                "failed": "fix the cause, then resume",
            }[status]
            self._emit(ev.RunStopped(state.global_step, status, (
                f"{error}. The run stopped cleanly {where}; {advice}: "
                f"`skillopt train --resume {self.run_dir.path}`.")))
        self._save_state(state)
        history = state.history
        summary = RunSummary(
            self.run_dir.run_id, str(self.run_dir.path), status, state.global_step, self.total_steps,
            state.initial_val, state.best_val, initial_test, best_test, self.rt.ledger.totals(),
            sum(1 for h in history if h["action"].startswith("accept")),
            sum(1 for h in history if h["action"] == "reject"),
            state.best_source, state.best_reason, error, self._failed_items, self._estimate,
        )
        atomic_write_json(self.run_dir.summary_path, summary.to_dict())
        if self.s.output.plot:
            try:
                from skillopt_core.run.plot import plot_history

                plot_history(history, self.run_dir.plot_path, state.initial_val)
            except Exception as exc:  # a picture must not fail a finished run
                self._emit(ev.Notice("warning", f"history.png was not written: {type(exc).__name__}: {exc}"))
        self._emit(ev.RunEnd(str(self.run_dir.path), status, state.best_val, initial_test, best_test,
                             state.global_step, state.best_source, error))
        return summary

    async def _train(self) -> None:
        state = self.state
        assert state is not None
        if state.current_scores is None:
            scores = await self._val_scores(Skill.parse(state.current_skill), "val baseline")
            state = state.copy()
            state.current_scores, state.initial_val, state.best_val = scores, _mean(scores), _mean(scores)
            self.state = state
            self._save_state(state)
        while True:
            state = self.state
            assert state is not None
            streak = self._non_accepting_streak(state, self.s.train.patience_counts == "clear_rejects")
            if self.s.train.patience and streak >= self.s.train.patience and state.global_step < self.total_steps:
                self._emit(ev.Notice("info", (
                    f"patience: {streak} step gates in a row did not accept (train.patience={self.s.train.patience}); "
                    f"training stops after step {state.global_step} of {self.total_steps}, the best skill stands")))
                return
            if state.epochs_done < state.global_step // self.steps_per_epoch:
                self.state = await self._epoch_boundary(state)
            elif state.global_step < self.total_steps:
                self.state = await self._train_step(state)
            else:
                return
            self._save_state(self.state)

    @staticmethod
    def _non_accepting_streak(state: TrainState, clear_only: bool = False) -> int:
        """Step gates in a row, at the end of the history, that kept the current skill.
        ``clear_only`` (``train.patience_counts: clear_rejects``): only clear rejects count
        (the screen's, a gate stopped early: certain or raced, an unchanged candidate); a
        reject decided on every val item, a close call, ends the streak like an accept."""
        streak = 0
        for record in reversed(state.history):
            if record["action"].startswith("accept"):
                break
            screened = bool(record.get("screen")) and not record["screen"].get("passed", True)
            if (clear_only and record["action"] == "reject" and not screened
                    and not record.get("gate_early_stopped")):
                break
            streak += 1
        return streak

    async def _halving(self, current: Skill, selected: list[Edit], applied, ranked: Sequence[Patch],
                       batch: Sequence[Task], results: Sequence[RolloutResult]):  # type: ignore[no-untyped-def]
        """Several candidates for one step, one survivor (GEPA-style minibatch screening).

        The candidates: the selected edits together (the classic candidate),
        then each ranked patch alone, distinct skills only, at most
        ``train.candidates_per_step``. Successive halving on the step's train
        items, paired with the current skill's rollouts of this step (same
        items, same seeds): every candidate runs on the first items, the better
        half (by the sum of scores minus the current skill's) goes on to twice
        as many, until one is left; the last rung has the screen's items
        (``evaluation.screen_items``, or the whole batch when the screen is
        off). Ties keep the earlier candidate. Returns the survivor's
        ``(edits, applied result, record)``."""
        options: list[tuple[list[Edit], Any]] = []
        seen = {current.hash}
        if applied.skill.hash not in seen:
            seen.add(applied.skill.hash)
            options.append((selected, applied))
        for patch in ranked:
            if len(options) >= self.s.train.candidates_per_step:
                break
            alone = apply_edits(current, [patch.edit])
            if alone.skill.hash not in seen:
                seen.add(alone.skill.hash)
                options.append(([patch.edit], alone))
        record: dict[str, Any] = {"candidates": [[e.to_dict() for e in edits] for edits, _ in options], "rungs": []}
        if len(options) < 2:
            record["winner"] = 1 if options else None
            return selected, applied, record
        metric = self.s.evaluation.gate_metric
        base = per_item(results, metric)
        final = min(len(batch), self.s.evaluation.screen_items or len(batch))
        rungs = math.ceil(math.log2(len(options)))
        alive = list(range(len(options)))
        for r in range(rungs):
            n = max(1, math.ceil(final / 2 ** (rungs - 1 - r)))
            tasks = list(batch[:n])
            margins = {}
            for k in alive:
                label = f"halving: candidate {k + 1}, {n} items"
                scores = per_item(await self._rollout(options[k][1].skill, tasks, "screen", label), metric)
                margins[k] = math.fsum(scores.values()) - math.fsum(
                    base.get(t.id, 0.0) for t in tasks if t.id in scores)
            keep = max(1, math.ceil(len(alive) / 2)) if r < rungs - 1 else 1
            alive = sorted(alive, key=lambda k: (-margins[k], k))[:keep]
            record["rungs"].append({"items": n, "margins": {str(k + 1): m for k, m in margins.items()},
                                    "kept": [k + 1 for k in alive]})
        record["winner"] = alive[0] + 1
        edits, result = options[alive[0]]
        return edits, result, record

    async def _train_step(self, committed: TrainState) -> TrainState:
        state = committed.copy()
        gs = state.global_step
        epoch, index = divmod(gs, self.steps_per_epoch)
        step = self._step = gs + 1
        total = self.total_steps
        sdir = self.run_dir.step_dir(step)
        ledger_before = self.rt.ledger.snapshot()
        failed_before = self._failed_items
        timings: dict[str, float] = {}
        t0 = time.perf_counter()
        self._emit(ev.StepStarted(step, total, epoch + 1))
        current = Skill.parse(state.current_skill)
        current_scores = dict(state.current_scores or {})

        batch = self._batch(epoch, index)
        results = await self._rollout(current, batch, "train")
        train_score = mean_score(results, "hard")
        atomic_write_json(sdir / "rollouts.json", [r.to_dict() for r in results])
        timings["rollout"] = time.perf_counter() - t0

        t1 = time.perf_counter()
        o = self.s.optimizer
        refl = await reflect(
            self.rt.optimizer, current, [(self.by_id[r.task_id], r) for r in results],
            minibatch_size=o.minibatch_size, include_successes=o.include_successes,
            show_reference=o.show_reference, seed=self.s.train.seed * 7919 + gs,
            rejected=[Edit.from_dict(e) for e in state.rejected], unapplied=state.unapplied,
            meta_notes=state.meta_notes, max_tokens=self.s.model.optimizer_max_tokens,
        )
        timings["reflect"] = time.perf_counter() - t1
        t2 = time.perf_counter()
        caller = self.caller_edits if gs == 0 else []
        # The caller's edits (a night's: the person's corrections) first, so they rank first on equal support.
        proposed, refused = caller + refl.edits, list[Refusal]()
        if self.guard is not None:
            proposed, refused = self.guard.split(proposed)
            for r in refused:
                self._emit(ev.Notice("info", f"step {step}: edit refused, it {r.reason}"))
        agg = await aggregate(self.rt.optimizer, proposed, use_model=o.merge_with_model,
                              max_tokens=self.s.model.optimizer_max_tokens)
        atomic_write_json(sdir / "patches.json", {
            "proposed": [e.to_dict() for e in caller + refl.edits], "merged": [p.to_dict() for p in agg.patches],
            "refused": [r.to_dict() for r in refused],
            "invalid_replies": refl.invalid_replies, "problems": refl.problems,
            "merge_used_model": agg.used_model, "merge_fallback": agg.fallback_reason, "merge_dropped": agg.dropped,
        })
        self._emit(ev.PatchesGenerated(step, total, len(agg.patches), refl.invalid_replies, refl.skipped_edits,
                                       len(caller)))
        timings["aggregate"] = time.perf_counter() - t2

        t3 = time.perf_counter()
        budget = edit_budget(gs, total, o.learning_rate, o.lr_scheduler, o.min_learning_rate)
        budget_text = describe_budget(gs, total, o.learning_rate, o.lr_scheduler, o.min_learning_rate)
        sel = await select(self.rt.optimizer, agg.patches, budget, use_model=o.rank_with_model,
                           skill_text=current.render())
        self._emit(ev.EditsSelected(step, total, len(sel.selected), len(agg.patches), budget, budget_text))
        selected = [p.edit for p in sel.selected]
        applied = apply_edits(current, selected)
        halving: dict[str, Any] | None = None
        if self.s.train.candidates_per_step > 1 and self.s.evaluation.use_gate:
            selected, applied, halving = await self._halving(current, selected, applied, sel.ranked, batch, results)
            atomic_write_json(sdir / "halving.json", halving)
        outcomes = Counter(oc.status for oc in applied.outcomes)
        self._emit(ev.EditsApplied(step, total, {str(status): n for status, n in outcomes.items()}))
        chosen = tuple(SelectedEdit(oc.edit, oc.status, oc.detail, _support(sel.selected, oc.edit))
                       for oc in applied.outcomes)
        atomic_write_json(sdir / "selected.json", {
            "budget": budget, "budget_text": budget_text, "ranked_by": sel.ranked_by, "note": sel.note,
            "edits": [e.to_dict() for e in chosen],
        })
        state.remember("unapplied", [{"edit": oc.edit.to_dict(), "status": oc.status, "detail": oc.detail}
                                     for oc in applied.outcomes if oc.status != "applied"])
        candidate = applied.skill
        atomic_write_text(sdir / "candidate.md", candidate.render())
        timings["select_update"] = time.perf_counter() - t3

        t4 = time.perf_counter()
        decision: GateDecision | None = None
        screen: dict[str, Any] | None = None
        cand_scores: dict[str, float] = {}
        round_seed = self._val_seeds(state)
        if candidate.hash == current.hash:
            action, reason = "no_change", "candidate identical to the current skill; 0 model calls"
        elif not self.s.evaluation.use_gate:
            cand_scores = await self._val_scores(candidate, "val candidate", seed=round_seed)
            action, reason = "accept_ungated", f"gate off; val score {_mean(cand_scores):.2f}"
        else:
            if self.s.evaluation.screen_items:
                screen = await self._screen(candidate, batch, results)
            if screen is not None and not screen["passed"]:
                action, reason = "reject", screen["reason"]
            else:
                decision, cand_scores = await self._gate(candidate, current, current_scores, "gate candidate",
                                                         round_seed)
                action, reason = ("accept" if decision.accept else "reject"), decision.reason
        if action == "accept" and self.stock:
            action, reason, candidate, selected, cand_scores, refused = await self._stock_check(
                sdir, reason, current, candidate, current_scores, cand_scores, selected, results, refused, round_seed)
            decision = replace(decision, accept=action == "accept", reason=reason) if decision else None
        gate_record = GateRecord.of(action, reason, decision, screen)
        atomic_write_json(sdir / "gate.json", gate_record.to_dict())
        self._emit(ev.GateDecided(
            step, total, action, reason,
            decision.current_mean if decision else _mean(current_scores),
            decision.candidate_mean if decision else (_mean(cand_scores) if cand_scores else None),
            decision.n_evaluated if decision else len(cand_scores), len(self.val),
        ))
        val_before = _mean(current_scores)
        if action.startswith("accept"):
            beat_best = action == "accept" and self.s.evaluation.remeasure and state.best_skill == state.current_skill
            cand_scores = await self._accepted_scores(state, candidate, cand_scores, "val accepted", action == "accept")
            current, current_scores = candidate, cand_scores
            state.current_skill, state.current_scores = candidate.render(), cand_scores
            self._offer_best(state, state.current_skill, cand_scores, f"step {step}", beat_best)
        elif action == "reject":
            state.remember("rejected", [e.to_dict() for e in selected])
        timings["gate"] = time.perf_counter() - t4
        timings["total"] = time.perf_counter() - t0
        atomic_write_text(self.run_dir.skill_path(step), current.render())

        record = StepRecord(
            step=step, epoch=epoch + 1, train_score=train_score,
            # Full-val means; a candidate rejected early is scored on the items the
            # gate evaluated (gate_evaluated_count of gate_item_count).
            current_val=val_before, candidate_val=_mean(cand_scores) if cand_scores else None,
            after_val=_mean(current_scores), best_val=state.best_val,
            best_source=state.best_source, best_reason=state.best_reason, action=action, gate_reason=reason,
            gate_item_count=len(self.val), gate_evaluated_count=decision.n_evaluated if decision else len(cand_scores),
            gate_stopped_early=bool(decision and decision.early_stopped), screen=screen,
            refused_count=len(refused), gate_round=state.gate_round, proposed_count=len(refl.edits),
            caller_edit_count=len(caller), patch_count=len(agg.patches), selected_count=len(selected),
            applied_count=applied.applied_count, outcomes={str(k): n for k, n in outcomes.items()},
            invalid_reply_count=refl.invalid_replies,
            skipped_edit_count=refl.skipped_edits, failed_item_count=self._failed_items - failed_before,
            edit_budget=budget, budget_text=budget_text,
            learning_rate=lr_value(gs, total, o.learning_rate, o.lr_scheduler, o.min_learning_rate),
            selected_edits=tuple(selected), skill_hash=current.hash,
            usage=self.rt.ledger.diff(ledger_before), timings=timings,
            extra={"halving": halving} if halving is not None else {})
        state.history.append(record.to_dict())
        self.steps[step] = StepDetail(record, gate_record, chosen, tuple((r.edit, r.reason) for r in refused))
        state.global_step += 1
        return state

    async def _epoch_boundary(self, committed: TrainState) -> TrainState:
        """Slow update and meta skill after epoch ``state.epochs_done`` (0-based)."""
        state = committed.copy()
        epoch = state.epochs_done
        last = epoch + 1 == self.s.train.num_epochs
        o = self.s.optimizer
        self._step = state.global_step
        su_summary: dict[str, Any] = {}
        if o.use_slow_update and (o.slow_update_gate or not last):
            su_summary = await self._slow_update(state, epoch)
        notes_written = False
        if o.use_meta_skill and not last:
            records = [h for h in state.history if h["epoch"] == epoch + 1]
            reply = await write_meta_notes(self.rt.optimizer, records, state.meta_notes,
                                           self.s.model.optimizer_max_tokens)
            mdir = self.run_dir.meta_skill_dir(epoch + 1)
            if reply.text:
                state.meta_notes = reply.text
                notes_written = True
            atomic_write_text(mdir / "notes.md", (state.meta_notes or "") + "\n")
            atomic_write_json(mdir / "meta.json", {"updated": notes_written, "error": reply.error})
        state.epochs_done += 1
        state.epoch_start_skill = state.current_skill
        self._emit(ev.EpochEnd(epoch + 1, self.s.train.num_epochs, su_summary, notes_written))
        return state

    async def _slow_update(self, state: TrainState, epoch: int) -> dict[str, Any]:
        previous, current = Skill.parse(state.epoch_start_skill), Skill.parse(state.current_skill)
        items = self._batch(epoch, 0)
        prev_res = await self._rollout(previous, items, "slow_update", "slow update: epoch start")
        cur_res = await self._rollout(current, items, "slow_update", "slow update: epoch end")
        groups = compare_items(per_item(prev_res), per_item(cur_res))
        reply = await write_slow_update_guidance(
            self.rt.optimizer, previous.render(), current.render(), groups, self.by_id,
            {r.task_id: r.response for r in cur_res}, current.protected_block(SLOW_UPDATE_BLOCK) or "",
            self.s.model.optimizer_max_tokens,
        )
        sdir = self.run_dir.slow_update_dir(epoch + 1)
        record: dict[str, Any] = {"groups": groups, "summary": summarize_comparison(groups), "guidance": reply.text,
                                  "error": reply.error}
        action, candidate = "none", None
        refusal = self.guard.reason(reply.text) if self.guard is not None and reply.text else None
        if refusal:
            record["refused"] = f"guidance addresses the judge, not the task ({refusal})"
        elif reply.text:
            try:
                candidate = current.set_protected_block(SLOW_UPDATE_BLOCK, reply.text)
            except ValueError as exc:  # e.g. the reply itself contains a protected-region marker
                record["error"] = f"guidance not usable: {exc}"
        if candidate is not None:
            scores: dict[str, float] = {}
            if candidate.hash == current.hash:
                action = "no_change"
            elif self.s.optimizer.slow_update_gate:
                decision, scores = await self._gate(candidate, current, dict(state.current_scores or {}),
                                                    "gate slow update",
                                                    self._val_seeds(state))
                record["gate"] = decision.to_dict()
                action = "accept" if decision.accept else "reject"
            else:
                action = "accept_ungated"
            if action.startswith("accept"):
                beat_best = (action == "accept" and self.s.evaluation.remeasure
                             and state.best_skill == state.current_skill)
                scores = await self._accepted_scores(state, candidate, scores, "val slow update", action == "accept")
                state.current_skill, state.current_scores = candidate.render(), scores
                self._offer_best(state, state.current_skill, scores, f"slow update after epoch {epoch + 1}", beat_best)
            atomic_write_text(sdir / "candidate.md", candidate.render())
        record["action"] = action
        atomic_write_json(sdir / "comparison.json", record)
        return {"summary": f"{record['summary']}; guidance {action}", "action": action}


def _support(patches: Sequence[Patch], edit: Edit) -> int:
    return next((p.support for p in patches if p.edit == edit), 1)
