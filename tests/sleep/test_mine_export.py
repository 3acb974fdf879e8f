"""The jsonl_tasks export loads in skillopt_core, and each judge tells a good answer from a bad one."""

from __future__ import annotations

import asyncio
import json

import pytest
from mine_testutil import PROJECT, run, session, store, turn

from skillopt_core import BackendSpec, Task, build_judge, create_backend, create_env
from sleep.index import Index
from sleep.mine import store as mine_store
from sleep.mine.export import export_tasks_jsonl

GOOD = "Ran pnpm test: 2 specs fail, cart.test.ts and price.test.ts."
BAD = "Ran npm test and npm install: 2 specs fail."


def _mine_tasks(homes) -> None:
    store(session("a", turn("run the unit tests and list what fails", ["npm test", "npm install"]),
                  turn("no, use pnpm not npm", ["pnpm test"], final="Switched to pnpm: 2 specs fail.")),
          session("b", turn("run the unit tests and list what fails", ["pnpm test"], final="pnpm test: all green.")),
          session("c", turn("terraform plan for staging and summarise", ["terraform plan"])),
          session("d", turn("terraform plan for staging and summarise", ["terraform plan", "terraform apply"]),
                  turn("never run terraform apply, only plan", [], final="Only planned: 2 to add.")))
    run()


def _judge_backend():
    # The rubric part asks the judge role; a scripted judge passes answers that mention pnpm.
    def grade(request) -> str:
        answer = request.prompt_text.rsplit("## Response to grade", 1)[-1]
        ok = "pnpm" in answer or "planned" in answer.lower()
        return json.dumps({"score": 9 if ok else 2, "pass": ok, "feedback": "ok" if ok else "wrong tool"})
    return create_backend(BackendSpec(name="scripted", model=None,
                                      options={"scripted": {"rules": [{"response": grade}]}}))


def test_the_export_loads_as_a_jsonl_tasks_env(homes, tmp_path) -> None:
    _mine_tasks(homes)
    out = tmp_path / "tasks.jsonl"
    result = export_tasks_jsonl(PROJECT, out)
    env = create_env("jsonl_tasks", {"data_path": str(out), "options": {}}, judge_backend=_judge_backend())
    tasks = env.read_tasks()
    assert result.tasks == 2 and len(tasks) == 2 and env.load_problems == []
    assert {tuple(sorted(json.loads(line))) for line in out.read_text().splitlines()} == \
        {("context", "id", "judge", "metadata", "prompt", "tags")}


@pytest.mark.parametrize("answer,passes", [(GOOD, True), (BAD, False)])
def test_each_exported_judge_scores_a_good_and_a_bad_answer(homes, tmp_path, answer: str, passes: bool) -> None:
    _mine_tasks(homes)
    out = tmp_path / "tasks.jsonl"
    export_tasks_jsonl(PROJECT, out)
    line = next(json.loads(x) for x in out.read_text().splitlines() if "unit tests" in json.loads(x)["prompt"])
    task = Task(id=line["id"], prompt=line["prompt"], judge=line["judge"])
    score = asyncio.run(build_judge(line["judge"], _judge_backend()).score(task, answer))
    assert score.passed is passes


def test_the_terraform_judge_fails_an_answer_that_applied(homes, tmp_path) -> None:
    _mine_tasks(homes)
    out = tmp_path / "tasks.jsonl"
    export_tasks_jsonl(PROJECT, out)
    line = next(json.loads(x) for x in out.read_text().splitlines() if "terraform" in json.loads(x)["prompt"])
    task = Task(id=line["id"], prompt=line["prompt"], judge=line["judge"])
    judge = build_judge(line["judge"], _judge_backend())
    good = asyncio.run(judge.score(task, "Only planned: 2 to add, 0 to destroy."))
    bad = asyncio.run(judge.score(task, "Planned, then ran terraform apply: done."))
    assert good.passed and not bad.passed


def test_disabled_tasks_are_left_out_of_the_export(homes, tmp_path) -> None:
    _mine_tasks(homes)
    with Index.open() as index, index.transaction():
        tid = mine_store.load_tasks(index.conn, PROJECT)[0].id
        mine_store.set_enabled(index.conn, tid, False)
    result = export_tasks_jsonl(PROJECT, tmp_path / "t.jsonl")
    assert (result.tasks, result.skipped_disabled) == (1, 1)
    assert tid not in (tmp_path / "t.jsonl").read_text()


def test_a_project_without_tasks_exports_an_empty_file(homes, tmp_path) -> None:
    result = export_tasks_jsonl("/nowhere", tmp_path / "t.jsonl")
    assert result.tasks == 0 and (tmp_path / "t.jsonl").read_text() == ""
