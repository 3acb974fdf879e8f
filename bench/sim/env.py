"""The simulated world as an ordinary env (registered as ``sim``).

``env.options.world`` is a :class:`WorldSpec` as a mapping. Each item becomes
a task whose prompt names the item (``[sim item 17]``) and whose judge looks
for the item's pass token, which the simulated target writes only when its
rollout passes. The judge's token is never shown to the optimizer.
"""

from __future__ import annotations

import re
from typing import Any

from bench.sim.world import WorldSpec, register_world, world_named
from skillopt_core.envs import PromptEnv, register_env
from skillopt_core.tasks.judges import register_judge
from skillopt_core.tasks.task import Score, Task

SEED_SKILL = """\
---
name: sim-tasks
description: Guidance for the simulated tasks.
---

# Solving the task

- Read the whole task before answering.
- Answer exactly what is asked.
"""


def pass_token(index: int) -> str:
    return f"solved-{index:04d}"


@register_judge("sim_judge", {"value": "the item's pass token", "world": "the world's key (WorldSpec.key)"},
                needs_backend=True)
def _build_sim_judge(opts: dict[str, Any], backend: Any) -> SimModelJudge:
    return SimModelJudge(str(opts.get("value", "")), str(opts.get("world", "")))


class SimModelJudge:
    """The fallible world's judge: a model that reads the answer (declared as one: it needs the
    judge backend, as a rubric does, so the engine treats it as a model judge). Its verdicts are
    drawn by the simulated target (bench/sim/world.py): the pass token is the verdict of this
    judge unswayed by claims (its own errors and verbose bias included); ``[swayed]`` marks a
    failing answer it passes when it *reads* one of the answer's claim sentences -- so a claim
    removed before judging no longer sways it, and an answer line removed is a fail."""

    def __init__(self, token: str, world: str) -> None:
        self.token, self.world = token, world

    async def score(self, task: Task, response: str) -> Score:
        claims = world_named(self.world).all_claim_sentences()
        ok = self.token in response or ("[swayed]" in response and any(c in response for c in claims))
        grade = re.search(r"\[grade (\d+)/10\]", response)
        soft = int(grade.group(1)) / 10 if grade else float(ok)
        return Score(float(ok), soft, "" if ok else "The judge did not pass this answer.")


@register_env("sim")
class SimEnv(PromptEnv):
    name = "sim"
    seed_skill = SEED_SKILL
    OPTIONS = {"world": "the WorldSpec of the simulated world, as a mapping (default: WorldSpec())"}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        raw = self.options.get("world") or {}
        if not isinstance(raw, dict):
            raise ValueError(f"env.options.world must be a mapping of WorldSpec fields, got {raw!r}.")
        self.world = register_world(WorldSpec.from_dict(raw))

    async def score(self, task: Task, response: str) -> Score:
        """The contains judge; with a graded fallible judge the soft score is its
        0-10 grade (only for the task's own judge: a held-out judge does not see it)."""
        score = await super().score(task, response)
        grade = re.search(r"\[grade (\d+)/10\]", response)
        own = isinstance(task.judge, dict) and task.judge.get("type") == "contains"
        if grade is None or not own:
            return score
        return Score(score.hard, int(grade.group(1)) / 10, score.feedback)

    def read_tasks(self) -> list[Task]:
        def judge(index: int) -> dict:
            if self.world.spec.judge is None:  # the exact judge: a rule check of the pass token
                return {"type": "contains", "value": pass_token(index)}
            return {"type": "sim_judge", "value": pass_token(index), "world": self.world.spec.key}

        return [
            Task(id=item.id, prompt=f"[sim item {item.index}] A {item.category} task. Give the answer.",
                 judge=judge(item.index), tags=(item.category,))
            for item in self.world.items
        ]
