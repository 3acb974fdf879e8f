"""The unitqa env (issue 34 §4): its task set, its judge, its config, and the
study's pool-based proposer. No model here, except the one test marked
``local_model`` that runs a few items on the real embedded SmolLM2."""

from __future__ import annotations

import asyncio
import json
import re
import sys
from pathlib import Path

import pytest

from skillopt_core.backends import CompletionRequest, RequestFailed
from skillopt_core.envs import create_env
from skillopt_core.envs.unitqa import TASKS_PATH, generate_tasks
from skillopt_core.run.config import load_settings
from skillopt_core.tasks.data import split_tasks

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from bench import embedded_pool  # noqa: E402


def test_the_bundled_task_file_is_the_generators_output():
    rows = [json.loads(line) for line in TASKS_PATH.read_text(encoding="utf-8").splitlines()]
    assert rows == generate_tasks()
    assert len(rows) == 60 and len({r["id"] for r in rows}) == 60
    assert len({r["reference"] for r in rows}) == 60  # every distance differs, so no answer fits two items


def test_generation_is_a_function_of_its_seed():
    assert generate_tasks(seed=7, count=20) == generate_tasks(seed=7, count=20)
    assert generate_tasks(seed=7, count=20) != generate_tasks(seed=8, count=20)


def test_the_question_never_states_the_answer_form():
    env = create_env("unitqa", {})
    for task in env.load_tasks():
        message = env.user_message(task)
        number = task.reference.split()[0]
        assert number in task.context and re.search(r"kilomet(re|er)s", task.context)
        assert "km" not in message  # only a skill can ask for the symbol


def score(task, reply: str) -> float:
    return asyncio.run(create_env("unitqa", {}).score(task, reply)).hard


@pytest.mark.parametrize("reply, passed", [
    ("{n} km", 1.0),
    ("The answer is: {n} km.", 1.0),
    ("{n}km", 1.0),
    ("It is {n} KM long.", 0.0),            # the symbol is lower case
    ("{n} kilometres", 0.0),
    ("The answer is: {n}.", 0.0),
    ("1{n} km", 0.0),                        # a longer number
    ("0.{n} km", 0.0),
    ("{n} kmh", 0.0),
    ("5 km", 0.0),                           # another number
    ("", 0.0),
])
def test_the_judge_wants_the_right_number_followed_by_km(reply, passed):
    task = create_env("unitqa", {}).load_tasks()[0]
    n = task.reference.split()[0]
    assert score(task, reply.format(n=n)) == passed


def test_the_judges_feedback_gives_away_neither_number_nor_pattern():
    task = create_env("unitqa", {}).load_tasks()[0]
    feedback = asyncio.run(create_env("unitqa", {}).score(task, "no idea")).feedback
    assert task.reference.split()[0] not in feedback and "km" not in feedback


def test_the_local_config_uses_the_embedded_model_and_splits_20_15_25():
    settings = load_settings("unitqa/local")
    assert settings.env.name == "unitqa" and settings.model.backend == "local"
    assert settings.model.temperature == 0.0 and settings.model.n_threads == 1
    tasks = create_env("unitqa", {}).load_tasks()
    data = split_tasks(tasks, seed=settings.env.split_seed, ratio=tuple(settings.env.split_ratio))
    assert (len(data.train), len(data.val), len(data.test)) == (20, 15, 25)


# --------------------------------------------------------------------------- the study's pool proposer


def reflect(prompt: str) -> CompletionRequest:
    return CompletionRequest.single(prompt, role="optimizer", stage="reflect")


def proposals(skill: str, tried: list[str] = (), n: int = 120) -> list[str]:
    proposer = embedded_pool.PoolProposer(seed=3)
    listing = "\n".join(f"- {json.dumps({'op': 'add', 'content': t})[:300]}" for t in tried)
    out = []
    for k in range(n):
        reply = json.loads(proposer.answer(reflect(f"## Current skill\n{skill}\n<!-- {k} -->\n{listing}")))
        out += [e["content"] for e in reply["edits"]]
    return out


def test_the_pool_proposes_every_label_and_only_pool_lines():
    contents = proposals("# a skill")
    assert {embedded_pool.label_of(c) for c in contents} == {"helpful", "neutral", "harmful"}


def test_the_pool_skips_lines_in_the_skill_and_lines_already_tried():
    have, tried = embedded_pool.POOL[0].text, embedded_pool.POOL[1].text  # multi-line: tried shows escaped and cut
    contents = set(proposals(f"# a skill\n{have}", [tried]))
    assert contents and have not in contents and tried not in contents


def test_the_pool_answers_no_edit_when_every_line_was_tried():
    assert proposals("\n".join(line.text for line in embedded_pool.POOL), n=3) == []


def test_the_pool_is_repeatable_and_its_seed_matters():
    request = reflect("## Current skill\n# a skill")
    a = [embedded_pool.PoolProposer(seed=s).answer(request) for s in range(12)]
    assert a == [embedded_pool.PoolProposer(seed=s).answer(request) for s in range(12)]
    assert len(set(a)) > 1


def test_the_pool_refuses_stages_it_does_not_play():
    with pytest.raises(RequestFailed, match="merge"):
        embedded_pool.PoolProposer().answer(CompletionRequest.single("x", role="optimizer", stage="merge"))


# --------------------------------------------------------------------------- the real embedded model

REAL_ITEMS = ("unitqa-001", "unitqa-005", "unitqa-034")  # measured: 0 of 3 pass with the seed skill, 3 of 3 with the line


@pytest.mark.local_model
@pytest.mark.timeout(300)
def test_on_the_real_model_the_helpful_pool_line_makes_the_answers_pass():
    """The premise of the study, on SmolLM2-135M itself: under the seed skill it writes
    'kilometers', never 'km'; with the pool's first helpful line (an instruction and two
    examples) it writes '<number> km'. Greedy decoding, one thread, three items."""
    from skillopt_core.backends import BackendSpec, create_backend
    from skillopt_core.evaluation.rollout import sample_seed

    env = create_env("unitqa", {})
    tasks = {t.id: t for t in env.load_tasks()}
    backend = create_backend(BackendSpec(name="local", model=None, options={"n_threads": 1}))
    seed_skill = env.seed_skill
    with_line = seed_skill.rstrip() + "\n" + embedded_pool.POOL[0].text + "\n"
    assert embedded_pool.POOL[0].label == "helpful"

    async def passes(skill: str) -> int:
        n = 0
        for task_id in REAL_ITEMS:
            request = env.build_request(skill, tasks[task_id], max_tokens=24)
            request = request.__class__(**{**request.__dict__, "temperature": 0.0,
                                           "seed": sample_seed(0, task_id, 0)})
            reply = (await backend.complete(request)).text
            n += int((await env.score(tasks[task_id], reply)).hard)
        return n

    assert asyncio.run(passes(seed_skill)) == 0
    assert asyncio.run(passes(with_line)) >= 2
