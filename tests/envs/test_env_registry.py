"""create_env: names, options and the generic jsonl_tasks env."""

from __future__ import annotations

import json

import pytest

from skillopt_core.backends.scripted import ScriptedBackend
from skillopt_core.envs import available_envs, create_env
from skillopt_core.envs.base import GENERIC_SEED_SKILL


def test_builtin_envs_are_listed():
    assert {"searchqa", "jsonl_tasks", "_template"} <= set(available_envs())


def test_unknown_env_suggests_nearest_name():
    with pytest.raises(ValueError, match="Did you mean 'searchqa'"):
        create_env("serchqa", {})


def test_env_name_is_normalised():
    assert create_env("JSONL-Tasks", {"data_path": "x.jsonl"}).name == "jsonl_tasks"


def test_engine_keys_of_env_section_are_accepted():
    env = create_env("_template", {"name": "_template", "split_ratio": [2, 1, 7], "split_seed": 0, "limit": 3})
    assert len(env.load_tasks()) == 3


def test_env_section_for_another_env_is_rejected():
    with pytest.raises(ValueError, match="for 'searchqa'"):
        create_env("_template", {"name": "searchqa"})


def test_misspelled_common_key_suggests_it():
    with pytest.raises(ValueError, match="Did you mean 'data_path'"):
        create_env("_template", {"data_pth": "x"})


def test_limit_must_be_positive():
    with pytest.raises(ValueError, match="env.limit"):
        create_env("_template", {"limit": 0})


# --------------------------------------------------------------------------- jsonl_tasks


def write_tasks(path, records):
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    return str(path)


def test_jsonl_tasks_needs_data_path():
    with pytest.raises(ValueError, match="needs env.data_path"):
        create_env("jsonl_tasks", {})


def test_jsonl_tasks_loads_and_scores_with_each_tasks_judge(tmp_path):
    path = write_tasks(tmp_path / "t.jsonl", [
        {"id": "a", "prompt": "Install deps", "judge": [{"type": "contains", "value": "pnpm"},
                                                         {"type": "not_contains", "value": "npm install"}]},
        {"id": "b", "prompt": "oops"},
    ])
    env = create_env("jsonl_tasks", {"data_path": path})
    tasks = env.load_tasks()
    assert [t.id for t in tasks] == ["a"] and len(env.load_problems) == 1
    assert env.seed_skill == GENERIC_SEED_SKILL


async def test_jsonl_tasks_scores_pass_and_fail(tmp_path):
    path = write_tasks(tmp_path / "t.jsonl", [{"id": "a", "prompt": "p", "judge": {"type": "contains", "value": "pnpm"}}])
    env = create_env("jsonl_tasks", {"data_path": path})
    [task] = env.load_tasks()
    assert (await env.score(task, "use pnpm")).passed
    assert not (await env.score(task, "use yarn")).passed


async def test_jsonl_tasks_rubric_uses_judge_backend(tmp_path):
    path = write_tasks(tmp_path / "t.jsonl", [{"id": "a", "prompt": "p", "judge": {"type": "rubric", "rubric": "polite?"}}])
    backend = ScriptedBackend(queue=[json.dumps({"score": 7, "pass": True, "feedback": "Polite."})])
    env = create_env("jsonl_tasks", {"data_path": path}, judge_backend=backend)
    [task] = env.load_tasks()
    result = await env.score(task, "Thank you!")
    assert (result.hard, result.soft) == (1.0, 0.7)


def test_jsonl_tasks_seed_skill_option_reads_file(tmp_path):
    skill = tmp_path / "SKILL.md"
    skill.write_text("---\nname: mine\ndescription: d\n---\nbody\n", encoding="utf-8")
    env = create_env("jsonl_tasks", {"data_path": "x.jsonl", "options": {"seed_skill": str(skill)}})
    assert env.seed_skill.startswith("---\nname: mine")


def test_jsonl_tasks_missing_seed_skill_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="seed_skill"):
        create_env("jsonl_tasks", {"data_path": "x.jsonl", "options": {"seed_skill": str(tmp_path / "no.md")}})


def test_tasks_with_a_judge_spec_that_cannot_be_built_are_skipped_and_counted():
    from skillopt_core.envs.base import PromptEnv
    from skillopt_core.tasks.task import Task

    class Env(PromptEnv):
        def read_tasks(self):
            return [Task("ok", "p", judge={"type": "contains", "value": "x"}),
                    Task("bad", "p", judge={"type": "no_such_judge"})]

    env = Env()
    assert [t.id for t in env.load_tasks()] == ["ok"]
    assert len(env.load_problems) == 1 and "task bad" in env.load_problems[0] and "no_such_judge" in env.load_problems[0]
