"""The rollout cache keys completions on the whole request and the backend's
identity, and scores on the judge too: no stale hits, no needless calls."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from skillopt_core.backends import CompletionRequest, Message
from skillopt_core.backends.scripted import Rule, ScriptedBackend
from skillopt_core.envs import create_env
from skillopt_core.evaluation.cache import RolloutCache, completion_key
from skillopt_core.evaluation.rollout import run_rollouts
from skillopt_core.skill.document import Skill
from skillopt_core.tasks.task import Task

BASE = CompletionRequest(messages=(Message("user", "q"),), system="skill", max_tokens=256, temperature=0.0,
                         json_schema=None, seed=1, role="target", stage="rollout", skill="skill", cwd=None)
CHANGES = {
    "messages": (Message("user", "other"),), "system": "other skill", "max_tokens": 8, "temperature": 0.7,
    "json_schema": {"type": "object"}, "seed": 2, "skill": "other", "cwd": "/tmp/checkout",
    "allowed_commands": ("pnpm",), "checks": ("pytest -q",), "document_path": "CLAUDE.md",
}


def test_every_request_field_but_the_labels_is_part_of_the_key():
    assert {f.name for f in dataclasses.fields(CompletionRequest)} == set(CHANGES) | {"role", "stage"}
    backend = ScriptedBackend()
    base = completion_key(backend, BASE)
    for field, value in CHANGES.items():
        assert completion_key(backend, dataclasses.replace(BASE, **{field: value})) != base, field
    assert completion_key(backend, dataclasses.replace(BASE, role="judge", stage="x")) == base


@pytest.mark.parametrize("attr,value", [("name", "other"), ("model", "scripted:big")])
def test_the_backend_identity_is_part_of_the_key(attr, value):
    backend, other = ScriptedBackend(), ScriptedBackend()
    setattr(other, attr, value)
    assert completion_key(backend, BASE) != completion_key(other, BASE)


def test_the_backend_description_is_part_of_the_key():
    class Described(ScriptedBackend):
        def __init__(self, where):
            super().__init__()
            self.where = where

        def describe(self):
            return f"openai-compatible at {self.where}"

    assert completion_key(Described("http://a/v1"), BASE) != completion_key(Described("http://b/v1"), BASE)


def _env(tmp_path: Path, word: str):
    data = tmp_path / f"{word}.jsonl"
    data.write_text('{"id": "t1", "prompt": "Which fruit?", "judge": {"type": "contains", "value": "%s"}}\n' % word)
    return create_env("jsonl_tasks", {"data_path": str(data)})


async def test_changing_max_tokens_in_the_same_run_makes_new_calls(tmp_path):
    backend = ScriptedBackend(rules=[Rule(stage="rollout", response="banana")])
    env = _env(tmp_path, "banana")
    cache = RolloutCache(tmp_path / "cache.jsonl")
    skill, tasks = Skill.parse(env.seed_skill), env.load_tasks()
    await run_rollouts(env, backend, skill, tasks, cache=cache, max_tokens=256)
    again = await run_rollouts(env, backend, skill, tasks, cache=RolloutCache(tmp_path / "cache.jsonl"), max_tokens=8)
    assert len(backend.history) == 2 and not again[0].cached
    assert [r.max_tokens for r in backend.history] == [256, 8]


async def test_a_changed_judge_regrades_without_a_model_call(tmp_path):
    backend = ScriptedBackend(rules=[Rule(stage="rollout", response="banana")])
    cache = RolloutCache(tmp_path / "cache.jsonl")
    banana, apple = _env(tmp_path, "banana"), _env(tmp_path, "apple")
    first = await run_rollouts(banana, backend, Skill.parse(banana.seed_skill), banana.load_tasks(), cache=cache)
    second = await run_rollouts(apple, backend, Skill.parse(apple.seed_skill), apple.load_tasks(),
                                cache=RolloutCache(tmp_path / "cache.jsonl"))
    assert len(backend.history) == 1 and second[0].cached
    assert first[0].score.hard == 1.0 and second[0].score.hard == 0.0


async def test_a_torn_cache_line_is_skipped_and_counted(tmp_path):
    path = tmp_path / "cache.jsonl"
    path.write_text('{"key": "c:1", "response": "x"}\n{"key": "c:2", "resp')
    cache = RolloutCache(path)
    assert cache.skipped_lines == 1 and cache.completion("c:1") == "x"


async def test_failed_items_are_not_cached(tmp_path):
    from skillopt_core.backends import RequestFailed

    def flaky(request):
        raise RequestFailed("timeout")

    env = _env(tmp_path, "banana")
    backend = ScriptedBackend(rules=[Rule(stage="rollout", response=flaky)])
    cache = RolloutCache(tmp_path / "cache.jsonl")
    results = await run_rollouts(env, backend, Skill.parse(env.seed_skill), env.load_tasks(), cache=cache)
    assert results[0].failed and len(cache) == 0


def test_task_content_is_part_of_the_score_key():
    from skillopt_core.evaluation.cache import score_key

    a = Task(id="t", prompt="p", judge={"type": "exact"}, reference="x")
    assert score_key("c:1", "env", a) != score_key("c:1", "env", dataclasses.replace(a, reference="y"))
    assert score_key("c:1", "env", a) != score_key("c:1", "other-env", a)
