"""The SearchQA env: answer a question from search-result snippets.

Hard score = normalised exact match against any accepted answer, soft = best
token F1, both on the text after the response's last ``Answer:`` line.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from skillopt_core.envs import register_env
from skillopt_core.envs.base import PromptEnv, score_final_answer
from skillopt_core.envs.searchqa.loader import read_tasks
from skillopt_core.tasks.task import Score, Task

PACKAGE_DIR = Path(__file__).resolve().parent
SAMPLE_PATH = PACKAGE_DIR / "data" / "sample.jsonl"
SEED_SKILL_PATH = PACKAGE_DIR / "seed_skill.md"
DEFAULT_MAX_SNIPPETS = 10


def _max_snippets(options: Any) -> int | None:
    value = options.get("max_snippets", DEFAULT_MAX_SNIPPETS)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"env.options.max_snippets must be a positive whole number or null, got {value!r}.")
    return value


@register_env("searchqa")
class SearchQAEnv(PromptEnv):
    name = "searchqa"
    seed_skill = SEED_SKILL_PATH.read_text(encoding="utf-8")
    instruction = "End your reply with one final line of the form: Answer: <your answer>"
    OPTIONS: ClassVar[Mapping[str, str]] = {
        "max_snippets": f"show at most this many snippets per question (default {DEFAULT_MAX_SNIPPETS}; null = all)",
    }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.max_snippets = _max_snippets(self.options)  # fail at build time, not mid-run

    def read_tasks(self) -> list[Task]:
        path = self.inputs.data_path or SAMPLE_PATH
        tasks, problems = read_tasks(path, self.max_snippets, self.inputs.limit)
        self.load_problems.extend(problems)
        return tasks

    def user_message(self, task: Task) -> str:
        return f"{task.context}\n\nQuestion: {task.prompt}"

    async def score(self, task: Task, response: str) -> Score:
        return await score_final_answer(self.judge_for(task), task, response)
