"""An env of arithmetic questions, each graded by the number_equals judge
(which this module does not import: it comes through its own entry point)."""

from __future__ import annotations

from skillopt_core import PromptEnv, Task, register_env

QUESTIONS = [
    ("add-1", "Add 2 and 3.", 5),
    ("add-2", "Add 10 and 32.", 42),
    ("add-3", "Add 7 and 8.", 15),
    ("add-4", "Add 100 and 1.", 101),
    ("mul-1", "Multiply 4 by 5.", 20),
    ("mul-2", "Multiply 3 by 3.", 9),
]


@register_env("sums")
class SumsEnv(PromptEnv):
    name = "sums"
    seed_skill = "---\nname: sums\ndescription: Answer arithmetic questions.\n---\n\nReply with the number only.\n"

    def read_tasks(self) -> list[Task]:
        return [Task(id=i, prompt=q, judge={"type": "number_equals", "expected": a}) for i, q, a in QUESTIONS]
