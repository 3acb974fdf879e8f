"""The environment (benchmark) contract and the default prompt-based env.

An env turns a skill and a task into a model request, and a response into a
score. Everything else (splitting, rollout concurrency, caching, training) is
the engine's job.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Protocol, runtime_checkable

from skillopt_core.backends import Backend, CompletionRequest, Message
from skillopt_core.evaluation.executor import LocalExecutor, RolloutExecutor
from skillopt_core.tasks.judges import JudgeError, build_judge, validate_judge_spec
from skillopt_core.tasks.judges.outcome import check_commands
from skillopt_core.tasks.task import Judge, Score, Task
from skillopt_core.tasks.text_metrics import extract_final_answer

log = logging.getLogger(__name__)

__all__ = ["EnvAdapter", "EnvInputs", "PromptEnv", "score_final_answer"]


@runtime_checkable
class EnvAdapter(Protocol):
    """What the engine needs from a benchmark.

    Contract (like gepa's adapter):

    - ``load_tasks()`` returns every task, in a stable order; splitting into
      train / val / test is the engine's job (:func:`skillopt_core.tasks.data.split_tasks`).
      Bad records are skipped and counted, never silently dropped.
    - ``build_request(skill_text, task, max_tokens)`` never raises for one
      task; the request has ``role="target"``, ``stage="rollout"`` and
      ``skill=skill_text`` (agent-CLI backends install exactly that text as
      the host's skill file; chat backends read the skill in ``system``).
    - ``score(task, response)`` never raises for one bad response: it scores
      it 0 and says why in ``Score.feedback``. Higher is better; ``hard`` and
      ``soft`` are within 0..1.
    - Raise only for systemic failure (dataset missing, judge backend down).
    """

    name: str
    seed_skill: str

    def load_tasks(self) -> list[Task]: ...

    def build_request(self, skill_text: str, task: Task, max_tokens: int) -> CompletionRequest: ...

    async def score(self, task: Task, response: str) -> Score: ...


@dataclass(frozen=True)
class EnvInputs:
    """What an env is built from (the config's ``env`` section, already checked
    by :func:`skillopt_core.envs.create_env`): ``data_path`` (None = the env's
    bundled sample), ``limit`` (load at most this many tasks, in load order;
    None = all) and the env-specific ``options``."""

    data_path: Path | None = None
    limit: int | None = None
    options: Mapping[str, Any] = field(default_factory=dict)


GENERIC_SEED_SKILL = """\
---
name: task-solving
description: General guidance for answering a task carefully and completely.
---

# Solving the task

- Read the whole task and any context before answering.
- Answer exactly what is asked, in the form the task asks for.
- Keep the answer focused; leave out material the task did not ask for.
"""


class PromptEnv:
    """Default env: one user message per task, scored by the task's judge spec.

    Request: ``system`` = the skill text followed by :attr:`instruction` (one
    fixed line the skill cannot remove, e.g. the answer format), ``skill`` =
    the skill text alone, ``user`` = context then prompt. Score:
    ``build_judge(task.judge, judge_backend)``.

    Subclasses set :attr:`name`, :attr:`seed_skill`, :attr:`OPTIONS` (the
    env-specific option names with a one-line description each; anything else
    is rejected by ``create_env``) and implement :meth:`read_tasks`. Problems
    met while reading (skipped records) go to :attr:`load_problems`.

    :attr:`executor` runs the env's heavy checks (code it executes to score an
    answer) as :class:`~skillopt_core.evaluation.executor.Job` objects: in a
    thread here, or as Ray tasks when the run sets ``execution.executor: ray``.
    """

    name: str = "prompt"
    seed_skill: str = GENERIC_SEED_SKILL
    instruction: str = ""
    OPTIONS: ClassVar[Mapping[str, str]] = {}

    def __init__(self, inputs: EnvInputs | None = None, judge_backend: Backend | None = None) -> None:
        self.executor: RolloutExecutor = LocalExecutor()
        self.inputs = inputs or EnvInputs()
        self.judge_backend = judge_backend
        self.load_problems: list[str] = []
        self._judges: dict[str, Judge] = {}

    @property
    def options(self) -> Mapping[str, Any]:
        return self.inputs.options

    # -- loading ----------------------------------------------------------- #

    def read_tasks(self) -> list[Task]:
        """Every task of the dataset (subclasses implement). Append one line per
        skipped record to ``self.load_problems``."""
        raise NotImplementedError(f"{type(self).__name__} must implement read_tasks()")

    def load_tasks(self) -> list[Task]:
        """Every task from :meth:`read_tasks` (up to ``limit``) whose judge spec
        can be built; the others are skipped and counted in ``load_problems``,
        so a bad spec or a broken judge plugin is reported once, at load time,
        instead of scoring every answer 0."""
        self.load_problems = []
        tasks = []
        for task in self.read_tasks():
            if task.judge is not None:
                try:
                    validate_judge_spec(task.judge)
                except JudgeError as exc:
                    self.load_problems.append(f"task {task.id}: bad judge spec: {exc}")
                    continue
            tasks.append(task)
        if self.inputs.limit is not None:
            tasks = tasks[: self.inputs.limit]
        if self.load_problems:
            log.warning(
                "%s: loaded %d tasks, skipped %d record(s); first: %s",
                self.name, len(tasks), len(self.load_problems), self.load_problems[0],
            )
        return tasks

    # -- rollout ----------------------------------------------------------- #

    def system_prompt(self, skill_text: str) -> str:
        parts = [p for p in (skill_text.strip(), self.instruction.strip()) if p]
        return "\n\n".join(parts)

    def user_message(self, task: Task) -> str:
        if task.context:
            return f"{task.context.rstrip()}\n\n{task.prompt}"
        return task.prompt

    def build_request(self, skill_text: str, task: Task, max_tokens: int) -> CompletionRequest:
        """The target request. A task whose ``metadata["allowed_commands"]`` lists
        programs (``["pnpm", "git status"]``) lets an acting agent-CLI backend run
        them; the ``check`` commands of its judge run after the agent (see
        :mod:`skillopt_core.tasks.judges.outcome`)."""
        allowed = task.metadata.get("allowed_commands") if isinstance(task.metadata, dict) else None
        return CompletionRequest(
            messages=(Message("user", self.user_message(task)),),
            system=self.system_prompt(skill_text) or None,
            max_tokens=max_tokens,
            role="target",
            stage="rollout",
            skill=skill_text if skill_text.strip() else None,
            allowed_commands=tuple(str(c) for c in allowed) if isinstance(allowed, (list, tuple)) else None,
            checks=check_commands(task.judge),
        )

    # -- scoring ----------------------------------------------------------- #

    def judge_for(self, task: Task) -> Judge:
        """The task's judge, built once per distinct spec. An invalid spec is a
        systemic failure (``JudgeError``): loaders validate specs up front."""
        key = json.dumps(task.judge, sort_keys=True, default=str)
        judge = self._judges.get(key)
        if judge is None:
            judge = build_judge(task.judge, self.judge_backend)
            self._judges[key] = judge
        return judge

    async def score(self, task: Task, response: str) -> Score:
        return await self.judge_for(task).score(task, response)


async def score_final_answer(judge: Judge, task: Task, response: str) -> Score:
    """Score only the final answer of ``response`` (the text after its last
    ``Answer:``). Without an ``Answer:`` line the first non-empty line is
    scored instead and the feedback says so, so the optimizer learns the format."""
    extracted = extract_final_answer(response)
    if not response.strip():
        return Score(0.0, 0.0, "The response was empty; no 'Answer:' line found.")
    if extracted.found and not extracted.text:
        return Score(0.0, 0.0, "The 'Answer:' line was empty.")
    result = await judge.score(task, extracted.text)
    if extracted.found:
        return result
    note = "No 'Answer:' line found, so the first line was scored instead."
    return Score(result.hard, result.soft, f"{note} {result.feedback}".strip())
