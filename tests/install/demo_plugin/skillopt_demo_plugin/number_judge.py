"""A judge type: the response, read as a whole number, equals ``expected``."""

from __future__ import annotations

from dataclasses import dataclass

from skillopt_core import JudgeError, Score, Task, register_judge


@dataclass(frozen=True)
class NumberEquals:
    expected: int

    async def score(self, task: Task, response: str) -> Score:
        try:
            value = int(response.strip())
        except ValueError:
            return Score(0.0, 0.0, "The response is not a whole number.")
        if value == self.expected:
            return Score(1.0, 1.0, "The number is right.")
        return Score(0.0, 0.0, "The number is wrong.")


@register_judge("number_equals", {"expected": "the whole number the response must equal"})
def build(options: dict, backend: object) -> NumberEquals:
    expected = options.get("expected")
    if isinstance(expected, bool) or not isinstance(expected, int):
        raise JudgeError(f"Judge 'number_equals' needs 'expected', a whole number, got {expected!r}.")
    return NumberEquals(expected)
