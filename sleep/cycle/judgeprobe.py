"""Before a night's gate trusts a model judge: can it tell a right answer from an unrelated one?

A mined task's judge is its rubric (a model judge) plus the rules read from the
person's corrections (:mod:`sleep.mine.rules`). On a weak judge model the
rubric's verdicts are noise (the embedded SmolLM2-135M scored 28 of 28 replies
10 of 10 while its ``pass`` was true for 17 and false for 11), and a gate that
moves on noise stages a proposal whose evidence is a coin toss.

So before a skill's replay, :func:`probe` asks the judge-role backend to grade,
on up to :data:`MAX_PROBED_TASKS` model-judged tasks (most recurring first), two
answers to one of the task's own requests: the answer the person accepted for
that very request (the session's final reply they did not correct, kept with
the mined request), and a fixed answer about something else entirely
(:data:`UNRELATED_ANSWER`). Two calls per probed task (plus a JSON repair when
a reply is not JSON), counted in the part's spend and taken from its budget
like the replay's own calls; the probe spends at most a tenth of the part's
``budget.max_calls`` (fewer tasks are probed on a small budget; none below 20
calls, and the night says the judge was not probed), and grades no further pair
once it has spent a tenth of ``budget.max_usd`` (the first pair always runs:
what a call costs is known only once it is made).

The judge tells a pair apart when its verdict and its score both put the
accepted answer first: it passes the accepted answer, fails the unrelated one,
and scores the accepted one higher (the gate reads the verdict, ``hard``, by
default and the score with ``evaluation.gate_metric: soft``; a judge whose
score says an answer about bread fully meets the rubric while its verdict fails
it is not telling anything apart). It is kept when it tells apart at least three
quarters of the probed pairs (rounded up: 3 of 4, 3 of 3, 2 of 2). A judge that
scores every answer alike cannot meet that; a coin-flip judge (each pair about
1 in 8: pass one, fail the other, score them in that order) meets it by chance
in fewer than 1 of 100 nights of 4 probes. Measured on the demo: SmolLM2-135M
scored the unrelated answer 10 of 10 on every probed task, with its verdict
right on 2 of 4.
Otherwise the model judge is left out of the whole part's gate, not only of
the probed tasks (a judge that cannot grade one task is no better on the
next): every task keeps its rule judges alone, a task with none is left out of
the replay, and when fewer than ``sleep.min_tasks`` tasks are left the part
stages nothing. Rule judges never call a model, so they are never probed.

A task no accepted answer is known for cannot be probed; when no task can,
the judge is kept and the night says it was not probed.

The pairs are graded by the tasks' model rules as written, not through the
substance judge the gate reads val with (``evaluation.substance_judge``): its
claim classifier removes facts from some accepted answers ("All 15 tests pass
(3 files); nothing is failing." whole), and a capable judge would then fail
them and look blind (docs/sleep-cycle.md).
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from skillopt_core import Task
from skillopt_core.backends import Backend
from skillopt_core.tasks.judges.spec import build_judge, judge_type
from skillopt_core.tasks.task import Score
from sleep.cycle.stepresult import Spent

__all__ = ["MAX_PROBED_TASKS", "UNRELATED_ANSWER", "JudgeProbe", "PairVerdict", "TooFewJudged", "apply",
           "model_rules", "probe"]

MAX_PROBED_TASKS = 4
CALLS_PER_TASK = 2
BUDGET_SHARE = 10  # the probe spends at most 1/BUDGET_SHARE of the part's budget.max_calls
KEEP_FRACTION = 0.75
# About nothing a project's agent is asked: no file, command, number or unit a rubric could reward.
UNRELATED_ANSWER = ("Banana bread keeps best wrapped in a cloth: mash three ripe bananas, fold them into the "
                    "flour, sugar and butter, and bake the loaf slowly until a skewer comes out clean.")


class TooFewJudged(RuntimeError):
    """The model judge was left out and too few tasks have a rule judge of their own to gate."""

    def __init__(self, reason: str, result: JudgeProbe) -> None:
        super().__init__(reason)
        self.reason = reason
        self.result = result


@dataclass(frozen=True)
class PairVerdict:
    """The judge's verdicts on one task's accepted answer and on the unrelated one."""

    task: str  # the task id (its mined task)
    item: str  # the instance whose request and accepted answer were graded
    good: Score
    unrelated: Score

    @property
    def told_apart(self) -> bool:
        """Verdict and score both put the accepted answer first (see the module docstring)."""
        return self.good.hard > self.unrelated.hard and self.good.soft > self.unrelated.soft

    def to_dict(self) -> dict[str, Any]:
        return {"task": self.task, "item": self.item, "told_apart": self.told_apart,
                "accepted": {"hard": self.good.hard, "soft": round(self.good.soft, 4)},
                "unrelated": {"hard": self.unrelated.hard, "soft": round(self.unrelated.soft, 4)}}


@dataclass(frozen=True)
class JudgeProbe:
    """What the probe found and what the part's gate does with it (the part's ``judge_probe``)."""

    verdict: Literal["kept", "left_out", "not_probed"]
    judge: str  # the model judge types probed, e.g. "rubric"
    pairs: tuple[PairVerdict, ...] = ()
    need: int = 0
    why: str = ""  # not_probed: why not
    spent: Spent = field(default_factory=Spent)
    rules_only: tuple[str, ...] = ()  # left_out: the tasks now judged by their rules alone
    dropped: tuple[str, ...] = ()  # left_out: the tasks with no rule judge, left out of the replay

    @property
    def told_apart(self) -> int:
        return sum(1 for p in self.pairs if p.told_apart)

    def sentence(self) -> str:
        """The one line the night's summary, history and the proposal's notes say."""
        name = f"the {self.judge} judge"
        if self.verdict == "not_probed":
            return f"{name} was not probed ({self.why}); its verdicts count in the gate unchecked"
        counted = f"{self.told_apart} of {len(self.pairs)} probed tasks"
        if self.verdict == "kept":
            return (f"{name} told an accepted answer from an unrelated one on {counted}: its verdicts count "
                    f"in the gate ({self.spent.model_calls} probe calls)")
        left = f"{len(self.rules_only)} task{'' if len(self.rules_only) == 1 else 's'} judged by their rules alone"
        if self.dropped:
            left += f", {len(self.dropped)} with no rule judge left out"
        return (f"{name} cannot tell a right answer from an unrelated one (told apart on {counted}, "
                f"{self.need} needed): its verdicts are left out of the gate; {left} "
                f"({self.spent.model_calls} probe calls)")

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"verdict": self.verdict, "judge": self.judge, "probed": len(self.pairs),
                               "told_apart": self.told_apart, "need": self.need,
                               "pairs": [p.to_dict() for p in self.pairs], "spent": self.spent.to_dict(),
                               "sentence": self.sentence()}
        if self.why:
            out["why"] = self.why
        if self.verdict == "left_out":
            out.update(rules_only=list(self.rules_only), dropped=list(self.dropped))
        return out


def _rules(spec: Any) -> list[Any]:
    return list(spec) if isinstance(spec, list) else [spec]


def _calls_model(rule: Any) -> bool:
    kind = judge_type(rule.get("type", "")) if isinstance(rule, dict) and isinstance(rule.get("type"), str) else None
    return bool(kind and kind.needs_backend)


def model_rules(spec: Any) -> list[dict[str, Any]]:
    """The rules of a judge spec that call the judge model (a rubric, or any type registered with
    ``needs_backend``)."""
    return [r for r in _rules(spec) if _calls_model(r)]


def _without_model(spec: Any) -> Any:
    """``spec`` without its model-judged rules; None when nothing is left."""
    kept = [r for r in _rules(spec) if not _calls_model(r)]
    if not kept:
        return None
    return kept if isinstance(spec, list) else kept[0]


def _accepted(task: Task, members: Mapping[str, Sequence[Any]]) -> str | None:
    """The answer the person accepted for this very request (its pool item's evidence), if known."""
    instance = task.metadata.get("instance")
    task_id = task.metadata.get("task_id", task.id)
    for item in members.get(task_id, ()):
        if instance is not None and [item.host, item.session_id, item.prompt_index] != list(instance):
            continue
        accepted = [a for a in (item.evidence or {}).get("accepted", []) if isinstance(a, str) and a.strip()]
        if accepted:
            return accepted[-1]  # the session's last accepted answer to it
    return None


def _candidates(tasks: Sequence[Task], members: Mapping[str, Sequence[Any]]) -> list[tuple[Task, str]]:
    """One (item, accepted answer) per model-judged task, most recurring first."""
    seen: set[str] = set()
    found: list[tuple[Task, str]] = []
    ordered = sorted(tasks, key=lambda t: -int(t.metadata.get("support") or 0))  # stable: the replay's order within
    for task in ordered:
        task_id = str(task.metadata.get("task_id", task.id))
        if task_id in seen or not model_rules(task.judge):
            continue
        good = _accepted(task, members)
        if good is not None:
            seen.add(task_id)
            found.append((task, good))
    return found


def probe(tasks: Sequence[Task], members: Mapping[str, Sequence[Any]], judge_backend: Backend | None,
          max_calls: int | None, calls_made: Any = None, max_usd: float | None = None
          ) -> JudgeProbe | None:
    """Probe the model judge of ``tasks`` (see the module docstring); None when no task has one.
    ``members``: task id -> its pool items (their evidence holds the accepted answers);
    ``max_calls`` / ``max_usd``: the part's ``budget.max_calls`` / ``budget.max_usd`` (no further pair
    is graded once a tenth of ``max_usd`` is spent); ``calls_made()``: the part's spend so far (a
    :class:`~sleep.cycle.stepresult.Spent`), read before and after to count the probe's calls."""
    judged = [t for t in tasks if model_rules(t.judge)]
    if not judged or judge_backend is None:
        return None
    kinds = sorted({str(judge_type(r["type"]).name) for t in judged for r in model_rules(t.judge)})  # type: ignore[union-attr]
    name = "/".join(kinds)
    found = _candidates(judged, members)
    if not found:
        return JudgeProbe("not_probed", name,
                          why="no model-judged task carries an answer the person accepted to grade it on")
    room = MAX_PROBED_TASKS if max_calls is None else (max_calls // BUDGET_SHARE) // CALLS_PER_TASK
    found = found[:max(0, min(MAX_PROBED_TASKS, room))]
    if not found:
        return JudgeProbe("not_probed", name,
                          why=f"a tenth of budget.max_calls={max_calls} is less than the {CALLS_PER_TASK} calls "
                              "a probed task takes")
    made = calls_made or Spent
    before = made()

    def spent_now() -> Spent:
        after = made()
        return Spent(after.model_calls - before.model_calls, after.input_tokens - before.input_tokens,
                     after.output_tokens - before.output_tokens, round(after.cost_usd - before.cost_usd, 6))

    def enough() -> bool:  # a tenth of the dollar cap is spent: no further pair
        return max_usd is not None and spent_now().cost_usd >= max_usd / BUDGET_SHARE

    pairs = asyncio.run(_grade(found, judge_backend, enough))
    spent = spent_now()
    need = math.ceil(KEEP_FRACTION * len(pairs))
    told = sum(1 for p in pairs if p.told_apart)
    return JudgeProbe("kept" if told >= need else "left_out", name, tuple(pairs), need, spent=spent)


async def _grade(found: list[tuple[Task, str]], backend: Backend, enough: Any) -> list[PairVerdict]:
    pairs: list[PairVerdict] = []
    for task, good in found:
        if pairs and enough():
            break
        judge = build_judge(model_rules(task.judge), backend)
        good_score = await judge.score(task, good)
        unrelated = await judge.score(task, UNRELATED_ANSWER)
        pairs.append(PairVerdict(str(task.metadata.get("task_id", task.id)), task.id, good_score, unrelated))
    return pairs


def apply(result: JudgeProbe | None, tasks: Sequence[Task]) -> tuple[list[Task], JudgeProbe | None]:
    """The tasks the gate uses after ``result``: unchanged unless the model judge was left out, then
    each with its rule judges alone (a task with none left out), and ``result`` naming them."""
    if result is None or result.verdict != "left_out":
        return list(tasks), result
    kept: list[Task] = []
    rules_only: dict[str, None] = {}
    dropped: dict[str, None] = {}
    for task in tasks:
        task_id = str(task.metadata.get("task_id", task.id))
        if not model_rules(task.judge):
            kept.append(task)
            continue
        spec = _without_model(task.judge)
        if spec is None:
            dropped[task_id] = None
            continue
        rules_only[task_id] = None
        kept.append(replace(task, judge=spec))
    return kept, replace(result, rules_only=tuple(rules_only), dropped=tuple(dropped))
