"""The rubric judge: asks the judge-role backend to grade a response against
a rubric, as JSON (score, pass, feedback). Registered as the built-in type
``rubric``.

The judge model's feedback is what the optimizer reads, so the task's
reference answers are withheld from it even if the judge quotes them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from skillopt_core.backends import Backend, CompletionRequest
from skillopt_core.backends.structured import complete_json
from skillopt_core.tasks.judges.options import positive_int, string_list
from skillopt_core.tasks.judges.outcome import current_trajectory
from skillopt_core.tasks.judges.spec import JudgeError, register_judge
from skillopt_core.tasks.task import Score, Task

__all__ = ["RubricJudge"]

TRAJECTORY_SUMMARY_CHARS = 1500

_RUBRIC_SYSTEM = (
    "You grade one response to a task against a rubric. Be strict and consistent. "
    "Reply with one JSON object: score (a number from 0 to {scale}), pass (true only if the "
    "response meets the rubric), feedback (one sentence saying what to improve). "
    "The feedback must not quote the reference answer or the rubric's hidden criteria."
)


@register_judge(
    "rubric",
    {
        "rubric": "the grading instructions, as text",
        "scale": "10 (score 0..10, default) or 1 (score 0..1)",
        "max_tokens": "max tokens of the judge's reply (default 400)",
    },
    needs_backend=True,
)
def _build_rubric(opts: dict[str, Any], backend: Backend | None) -> RubricJudge:
    rubric = opts.get("rubric")
    if not isinstance(rubric, str) or not rubric.strip():
        raise JudgeError("Judge 'rubric' needs 'rubric', the grading instructions as text.")
    scale = opts.get("scale", 10)
    if isinstance(scale, bool) or scale not in (1, 10):
        raise JudgeError(f"Judge 'rubric' option 'scale' must be 10 (score 0..10) or 1 (score 0..1), got {scale!r}.")
    max_tokens = positive_int("rubric", opts, "max_tokens", required=False, default=400)
    # backend None: built for validation only (the registry refuses it for scoring).
    return RubricJudge(rubric, int(scale), max_tokens, backend=backend)


def _secrets(reference: Any) -> list[str]:
    answers = string_list(reference) if reference is not None else None
    return [a for a in answers or () if len(a.strip()) >= 3]


def _redact(text: str, secrets: list[str]) -> str:
    for secret in secrets:
        text = re.sub(re.escape(secret.strip()), "[withheld]", text, flags=re.IGNORECASE)
    return text


FEEDBACK_MAX_CHARS = 300


def bounded_feedback(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with its ``feedback`` string limited to :data:`FEEDBACK_MAX_CHARS`."""
    props = dict(schema["properties"])
    props["feedback"] = {**props["feedback"], "maxLength": FEEDBACK_MAX_CHARS}
    return {**schema, "properties": props}


@dataclass(frozen=True)
class RubricJudge:
    rubric: str
    scale: int
    max_tokens: int
    backend: Backend | None

    def schema(self) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {
                "score": {"type": "number", "minimum": 0, "maximum": self.scale},
                "pass": {"type": "boolean"},
                "feedback": {"type": "string"},
            },
            "required": ["score", "pass", "feedback"],
        }

    def request(self, task: Task, response: str) -> CompletionRequest:
        parts = [f"## Task\n{task.prompt}"]
        if task.context:
            parts.append(f"## Context given with the task\n{task.context}")
        if task.reference is not None:
            reference = task.reference
            if isinstance(reference, (list, tuple)):
                reference = "\n".join(f"- {item}" for item in reference)
            parts.append(f"## Reference (for grading only; do not quote it)\n{reference}")
        parts.append(f"## Rubric\n{self.rubric}")
        trajectory = current_trajectory()
        if trajectory is not None:
            parts.append("## What the agent did in the project (commands with exit codes, files changed)\n"
                         + trajectory.summary(TRAJECTORY_SUMMARY_CHARS))
        parts.append(f"## Response to grade\n{response}")
        return CompletionRequest.single(
            "\n\n".join(parts),
            system=_RUBRIC_SYSTEM.format(scale=self.scale),
            max_tokens=self.max_tokens,
            temperature=0.0,
            role="judge",
            stage="judge",
        )

    async def score(self, task: Task, response: str) -> Score:
        if self.backend is None:
            raise JudgeError("This rubric judge was built for validation only; build it with a judge backend.")
        schema = self.schema()
        # Asked for with a bounded feedback (a grammar-constrained small model otherwise loops in it up to
        # max_tokens), accepted at any length (a larger model's longer feedback is still an answer).
        reply = await complete_json(self.backend, self.request(task, response), bounded_feedback(schema), accept=schema)
        if reply.failure is not None:
            return Score(0.0, 0.0, f"The judge call failed ({reply.failure}), so this response scored 0.")
        if not reply.ok:
            return Score(
                0.0, 0.0, f"The judge's output was invalid after {reply.attempts} attempts, so this response scored 0."
            )
        data = reply.data or {}
        soft = min(1.0, max(0.0, float(data["score"]) / self.scale))
        feedback = " ".join(str(data["feedback"]).split()) or "The judge gave no feedback."
        return Score(1.0 if data["pass"] else 0.0, soft, _redact(feedback, _secrets(task.reference)))
