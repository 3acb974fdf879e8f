"""The skill reaches the real local model and changes what it answers.

SearchQA requests are built exactly as a rollout builds them (the skill is the
system prompt, the snippets and question the user message) and answered by
SmolLM2-135M with the backend's fixed seed. A skill that demands one exact
answer line, shown with two examples (a 135M model follows examples, rarely
bare instructions), must make most replies take that form, which almost no
reply takes without it. The thresholds leave a margin either way: measured on
the bundled sample, 7 of 12 with the skill and 0 of 12 without.
"""

from __future__ import annotations

import re

import pytest

from skillopt_core.backends import BackendSpec, create_backend
from skillopt_core.envs.searchqa.env import SearchQAEnv

pytestmark = [pytest.mark.local_model, pytest.mark.timeout(600)]

FORMAT_SKILL = """\
Reply with exactly one line, 'The answer is: <answer>', and nothing else.

Q: What is the capital of France?
A: The answer is: Paris

Q: Who painted the Mona Lisa?
A: The answer is: Leonardo da Vinci
"""
ONE_ANSWER_LINE = re.compile(r"The answer is: [^\n]{1,60}")
N_TASKS = 12


async def _replies(skill: str) -> list[str]:
    env = SearchQAEnv()
    backend = create_backend(BackendSpec(name="local", model=None, options={"n_threads": 2}))
    replies = []
    for task in env.load_tasks()[:N_TASKS]:
        completion = await backend.complete(env.build_request(skill, task, max_tokens=48))
        replies.append(completion.text.strip())
    return replies


async def test_a_format_skill_changes_the_local_models_answers():
    without = await _replies("")
    with_skill = await _replies(FORMAT_SKILL)
    follows = lambda replies: sum(bool(ONE_ANSWER_LINE.fullmatch(r)) for r in replies)  # noqa: E731
    assert follows(without) <= 2, without
    assert follows(with_skill) >= 5, with_skill
    assert follows(with_skill) - follows(without) >= 4
