"""The template env works end to end: load -> build_request -> score."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from skillopt_core.envs import EnvAdapter, create_env
from skillopt_core.envs._template import ITEMS

TEMPLATE_DIR = Path(__file__).resolve().parents[2] / "skillopt_core" / "envs" / "_template"


@pytest.fixture
def env():
    return create_env("_template", {})


def test_template_env_satisfies_the_adapter_protocol(env):
    assert isinstance(env, EnvAdapter)
    assert env.name == "_template"


def test_load_returns_the_bundled_items(env):
    tasks = env.load_tasks()
    assert [t.id for t in tasks] == [item["id"] for item in ITEMS]
    assert env.load_problems == []


def test_build_request_sends_skill_format_line_and_question(env):
    task = env.load_tasks()[0]
    request = env.build_request(env.seed_skill, task, max_tokens=32)
    assert request.system.startswith("---\nname: unit-conversion")
    assert request.system.endswith("Answer: <number>")
    assert request.messages[0].content == task.prompt
    assert (request.role, request.stage) == ("target", "rollout")


def test_build_request_carries_the_skill_alone_for_agent_cli_backends(env):
    task = env.load_tasks()[0]
    request = env.build_request(env.seed_skill, task, max_tokens=32)
    assert request.skill == env.seed_skill
    assert request.system == env.seed_skill.strip() + "\n\nEnd your reply with one final line of the form: Answer: <number>"
    assert env.build_request("  \n", task, 32).skill is None


async def test_correct_answer_passes(env):
    task = env.load_tasks()[0]  # 3 m in cm
    result = await env.score(task, "1 m = 100 cm, so 3 m = 300 cm.\nAnswer: 300 cm")
    assert (result.hard, result.soft) == (1.0, 1.0)


async def test_wrong_answer_fails_without_revealing_it(env):
    task = env.load_tasks()[0]
    result = await env.score(task, "Answer: 30")
    assert result.hard == 0.0
    assert "300" not in result.feedback


async def test_missing_answer_line_fails_with_format_feedback(env):
    result = await env.score(env.load_tasks()[0], "300")
    assert result.hard == 0.0 and "No 'Answer:' line" in result.feedback


def test_number_only_hint_option_changes_the_prompt():
    env = create_env("_template", {"options": {"number_only_hint": True}})
    task = env.load_tasks()[0]
    assert "number only" in env.build_request("", task, 32).messages[0].content


def test_bad_option_value_is_rejected_at_build_time():
    with pytest.raises(ValueError, match="number_only_hint must be true or false"):
        create_env("_template", {"options": {"number_only_hint": "yes"}})


def test_data_path_jsonl_is_loaded_and_bad_lines_counted(tmp_path):
    path = tmp_path / "items.jsonl"
    path.write_text('{"id": "x1", "question": "How many mm in 1 cm?", "answer": "10"}\n{"id": "x2"}\n')
    env = create_env("_template", {"data_path": str(path)})
    assert [t.id for t in env.load_tasks()] == ["x1"]
    assert env.load_problems == ["line 2: 'question' must be a non-empty string"]


def test_example_config_env_section_builds_the_env():
    config = yaml.safe_load((TEMPLATE_DIR / "config.yaml").read_text(encoding="utf-8"))
    env = create_env(config["env"]["name"], config["env"])
    assert len(env.load_tasks()) == len(ITEMS)


def test_example_config_base_points_at_the_shipped_defaults():
    config = yaml.safe_load((TEMPLATE_DIR / "config.yaml").read_text(encoding="utf-8"))
    assert (TEMPLATE_DIR / config["_base_"]).resolve().is_file()
