"""A backend that adds up the whole numbers in the last user message."""

from __future__ import annotations

import re

from skillopt_core import BackendSpec, Completion, CompletionRequest, Usage


class CalculatorBackend:
    name = "calculator"

    def __init__(self, model: str) -> None:
        self.model = model

    def describe(self) -> str:
        return f"calculator:{self.model}"

    async def complete(self, request: CompletionRequest) -> Completion:
        text = request.messages[-1].content
        total = sum(int(n) for n in re.findall(r"-?\d+", text))
        return Completion(text=str(total), usage=Usage(len(text.split()), 1), model=self.model)


def create(spec: BackendSpec) -> CalculatorBackend:
    return CalculatorBackend(spec.model or "sum-v1")
