"""Adapter: the EnvAdapter the engine talks to. Registers the env name.

Copy, rename the class and the ``@register_env`` name, then add your module to
the built-in module map of ``_ENVS`` in ``skillopt_core/envs/__init__.py``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from skillopt_core.backends import CompletionRequest
from skillopt_core.envs import register_env
from skillopt_core.envs._template.loader import load_items
from skillopt_core.envs._template.rollout import build_request, leading_number
from skillopt_core.envs.base import PromptEnv
from skillopt_core.tasks.task import Score, Task
from skillopt_core.tasks.text_metrics import extract_final_answer

SEED_SKILL = (Path(__file__).resolve().parent / "seed_skill.md").read_text(encoding="utf-8")


@register_env("_template")
class TemplateEnv(PromptEnv):
    name = "_template"
    seed_skill = SEED_SKILL
    # Every env-specific option, with one line each; create_env rejects others.
    OPTIONS: ClassVar[Mapping[str, str]] = {
        "number_only_hint": "append 'Give the number only' to each question (default false)"}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        hint = self.options.get("number_only_hint", False)
        if not isinstance(hint, bool):  # check options when the env is built, not mid-run
            raise ValueError(f"env.options.number_only_hint must be true or false, got {hint!r}.")
        self.number_only_hint = hint

    def read_tasks(self) -> list[Task]:
        tasks, problems = load_items(self.inputs.data_path)
        self.load_problems.extend(problems)  # counted and logged by PromptEnv.load_tasks
        return tasks

    def build_request(self, skill_text: str, task: Task, max_tokens: int) -> CompletionRequest:
        return build_request(skill_text, task, max_tokens, self.number_only_hint)

    async def score(self, task: Task, response: str) -> Score:
        # Never raise for a bad response: score 0 and say why in the feedback.
        extracted = extract_final_answer(response)
        if not extracted.found:
            return Score(0.0, 0.0, "No 'Answer:' line found; end with 'Answer: <number>'.")
        return await self.judge_for(task).score(task, leading_number(extracted.text))
