"""The LiveMathematicianBench env: pick the one correct statement.

The answer is the label on the response's last ``Answer:`` line (``<answer>B
</answer>`` is read too); hard = soft = 1 when it is the correct label. A reply
that names no label scores 0 and the feedback says so; the feedback never
names the correct label.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from skillopt_core.envs import register_env
from skillopt_core.envs.base import PromptEnv
from skillopt_core.envs.livemathematicianbench.loader import parse_choice, read_tasks
from skillopt_core.tasks.task import Score, Task
from skillopt_core.tasks.text_metrics import extract_final_answer

PACKAGE_DIR = Path(__file__).resolve().parent
SAMPLE_DIR = PACKAGE_DIR / "data"
_ANSWER_TAG = re.compile(r"<answer>(.*?)</answer>", re.IGNORECASE | re.DOTALL)


def _bool(options: Any, key: str, default: bool) -> bool:
    value = options.get(key, default)
    if not isinstance(value, bool):
        raise ValueError(f"env.options.{key} must be true or false, got {value!r}.")
    return value


@register_env("livemathematicianbench")
class LiveMathEnv(PromptEnv):
    name = "livemathematicianbench"
    seed_skill = (PACKAGE_DIR / "seed_skill.md").read_text(encoding="utf-8")
    instruction = "End your reply with one final line of the form: Answer: <letter of the correct choice>"
    OPTIONS: ClassVar[Mapping[str, str]] = {
        "shuffle_choices": "shuffle each item's choices with a seeded RNG (default true)",
        "choice_seed": "seed of the shuffle (default 0); the order is fixed per (seed, item id)",
        "use_theorem": "show the paper's theorem statement as context (default false)",
        "use_sketch": "show the paper's proof sketch as context (default false)",
    }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        seed = self.options.get("choice_seed", 0)
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise ValueError(f"env.options.choice_seed must be a whole number, got {seed!r}.")
        self.choice_seed = seed if _bool(self.options, "shuffle_choices", True) else None
        self.use_theorem = _bool(self.options, "use_theorem", False)
        self.use_sketch = _bool(self.options, "use_sketch", False)

    def read_tasks(self) -> list[Task]:
        tasks, problems = read_tasks(self.inputs.data_path or SAMPLE_DIR, self.choice_seed,
                                     self.use_theorem, self.use_sketch)
        self.load_problems.extend(problems)
        return tasks

    async def score(self, task: Task, response: str) -> Score:
        labels = task.metadata.get("labels", "ABCD")
        tags = _ANSWER_TAG.findall(response)
        answer = tags[-1] if tags else extract_final_answer(response).text
        chosen = parse_choice(answer, labels)
        if chosen is None:
            return Score(0.0, 0.0, f"The reply named no choice; end with 'Answer: <one of {', '.join(labels)}>'.")
        if chosen == task.reference:
            return Score(1.0, 1.0, f"Choice {chosen} is correct.")
        return Score(0.0, 0.0, f"Choice {chosen} is not the correct statement.")
