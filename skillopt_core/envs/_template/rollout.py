"""Rollout helper: how a task is shown to the target model and how its reply
is read back. Pure functions, so they are easy to test and to change.
"""

from __future__ import annotations

import re

from skillopt_core.backends import CompletionRequest, Message
from skillopt_core.tasks.task import Task

INSTRUCTION = "End your reply with one final line of the form: Answer: <number>"
_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")


def build_request(skill_text: str, task: Task, max_tokens: int, number_only_hint: bool = False) -> CompletionRequest:
    """System = the skill, then the fixed answer-format line; skill = the skill
    alone (agent-CLI backends install it as a file); user = the question."""
    system = "\n\n".join(p for p in (skill_text.strip(), INSTRUCTION) if p)
    prompt = task.prompt + ("\nGive the number only, without units." if number_only_hint else "")
    return CompletionRequest(
        messages=(Message("user", prompt),),
        system=system,
        max_tokens=max_tokens,
        role="target",
        stage="rollout",
        skill=skill_text if skill_text.strip() else None,
    )


def leading_number(answer: str) -> str:
    """The first number in an answer, digits only ("1,500 mL" -> "1500"), or
    the answer unchanged when it holds no number (the judge then fails it)."""
    match = _NUMBER.search(answer)
    return match.group(0).replace(",", "") if match else answer
