"""The in-process API: caller tasks and seed skill, caller edits, typed and
stamped events, cancellation, and resume refusals."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest
import yaml
from toy_world import GOOD, backends, comparable, events_of, make_backend, settings_for

from skillopt_core import Edit, Task, events
from skillopt_core.backends.scripted import Rule
from skillopt_core.cli.main import main
from skillopt_core.run.api import prepare_training, train
from skillopt_core.run.config import ConfigError, load_settings
from skillopt_core.tasks.data import Dataset

SEED = "---\nname: fruit\ndescription: Answers fruit questions.\n---\n\n# Fruit\n\n- Answer briefly.\n"
RULES = {"rules": [
    {"stage": "reflect", "response": json.dumps({"edits": [GOOD]})},
    {"stage": "slow_update", "response": json.dumps({"guidance": "- Keep it short."})},
    {"stage": "meta_skill", "response": json.dumps({"notes": "- ok"})},
    {"stage": "rollout", "regex": "Always say banana", "response": "banana"},
    {"stage": "rollout", "response": "apple"},
]}


def caller_tasks(n: int = 30) -> list[Task]:
    return [Task(id=f"c{i}", prompt=f"Question {i}: which fruit?", judge={"type": "contains", "value": "banana"})
            for i in range(n)]


def api_settings(tmp_path: Path, *extra: str):
    rules = tmp_path / "rules.yaml"
    rules.write_text(yaml.safe_dump(RULES))
    return load_settings(None, [
        "model.backend=scripted", f"model.scripted={rules}", "train.num_epochs=1", "train.steps_per_epoch=2",
        "train.batch_size=4", "train.workers=2", "env.split_ratio=[3,3,4]", f"output.root={tmp_path / 'out'}",
        "output.run_id=r", *extra])


async def test_caller_tasks_and_seed_skill_are_kept_in_the_run_directory(tmp_path):
    run = prepare_training(api_settings(tmp_path), tasks=caller_tasks(), seed_skill=SEED)
    summary = await run.run()
    assert summary.status == "completed" and summary.best_val == 1.0 and summary.initial_val == 0.0
    run_dir = Path(summary.run_dir)
    assert run_dir == tmp_path / "out" / "jsonl_tasks" / "r"
    config = yaml.safe_load((run_dir / "config.yaml").read_text())
    assert config["env"]["name"] == "jsonl_tasks" and Path(config["env"]["data_path"]).parent == run_dir
    assert (run_dir / "seed_skill.md").read_text() == SEED and (run_dir / "skills" / "step_0000.md").read_text() == SEED
    splits = json.loads((run_dir / "dataset.json").read_text())["splits"]
    assert sorted(i for ids in splits.values() for i in ids) == sorted(t.id for t in caller_tasks())


def test_a_caller_task_run_resumes_from_the_command_line(tmp_path):
    stopped = asyncio.run(train(api_settings(tmp_path, "budget.max_calls=12"), tasks=caller_tasks(), seed_skill=SEED))
    assert stopped.status == "budget_exhausted"
    code = main(["train", "--resume", stopped.run_dir, "--set", "budget.max_calls=100000", "--json"])
    assert code == 0
    assert json.loads(Path(stopped.run_dir, "summary.json").read_text())["status"] == "completed"


async def test_a_given_dataset_is_used_as_split(tmp_path):
    tasks = caller_tasks(9)
    dataset = Dataset(tuple(tasks[:3]), tuple(tasks[3:6]), tuple(tasks[6:]))
    summary = await train(api_settings(tmp_path), tasks=dataset)
    splits = json.loads(Path(summary.run_dir, "dataset.json").read_text())["splits"]
    assert splits == {"train": ["c0", "c1", "c2"], "val": ["c3", "c4", "c5"], "test": ["c6", "c7", "c8"]}


async def test_a_splitter_decides_the_split(tmp_path):
    def by_number(tasks):
        return Dataset(tuple(tasks[:10]), tuple(tasks[10:20]), tuple(tasks[20:]))

    summary = await train(api_settings(tmp_path), tasks=caller_tasks(), splitter=by_number)
    assert json.loads(Path(summary.run_dir, "dataset.json").read_text())["splits"]["val"][0] == "c10"


def test_a_task_without_a_judge_is_refused_before_any_call(tmp_path):
    with pytest.raises(ValueError, match="no judge spec"):
        prepare_training(api_settings(tmp_path), tasks=[Task(id="x", prompt="hi"), *caller_tasks(5)])


async def test_caller_edits_join_the_first_step_marked_with_their_origin(tmp_path):
    backend = make_backend()
    backend.rules[0] = Rule(stage="reflect", response=json.dumps({"edits": []}))
    correction = Edit(op="add", content="Always say banana.", rationale="the person said so", origin="correction")
    summary = await train(settings_for(tmp_path), backends=backends(backend), candidate_edits=[correction])
    history = json.loads(Path(summary.run_dir, "history.json").read_text())
    assert history[0]["action"] == "accept" and history[0]["n_caller_edits"] == 1
    assert history[0]["selected_edits"][0]["origin"] == "correction"
    assert [h["n_caller_edits"] for h in history[1:]] == [0] * (len(history) - 1)
    patches = json.loads(Path(summary.run_dir, "steps", "step_0001", "patches.json").read_text())
    assert patches["proposed"][0]["origin"] == "correction"


async def test_events_carry_the_run_id_and_a_utc_time_and_stream_to_the_end(tmp_path):
    run = prepare_training(settings_for(tmp_path), backends=backends(make_backend()))
    stream = run.events()
    collected = []

    async def consume():
        async for event in stream:
            collected.append(event)

    consumer = asyncio.ensure_future(consume())
    await run.run()
    await asyncio.wait_for(consumer, 5)
    assert isinstance(collected[0], events.RunStarted) and isinstance(collected[-1], events.RunEnd)
    assert {e.run_id for e in collected} == {run.run_id}
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", e.at) for e in collected)
    logged = events_of(run.run_dir)
    assert logged[0]["run_id"] == run.run_id and logged[0]["at"]


async def test_gate_rollouts_report_progress_like_train_rollouts(tmp_path):
    seen = []
    await train(settings_for(tmp_path), backends=backends(make_backend()), subscribers=[seen.append])
    gate = [e for e in seen if isinstance(e, events.RolloutProgress) and e.label == "gate candidate"]
    assert gate and all(e.phase == "val" for e in gate)


async def test_a_subscriber_that_raises_is_detached_and_the_run_goes_on(tmp_path):
    calls = []

    def broken(event):
        calls.append(event)
        raise RuntimeError("renderer bug")

    seen = []
    summary = await train(settings_for(tmp_path), backends=backends(make_backend()), subscribers=[broken, seen.append])
    assert summary.status == "completed" and len(calls) == 1
    notices = [e for e in seen if isinstance(e, events.Notice) and "renderer bug" in e.text]
    assert len(notices) == 1


async def test_cancel_stops_cleanly_and_the_run_resumes_to_the_same_history(tmp_path):
    full = await train(settings_for(tmp_path / "a"), backends=backends(make_backend()))
    run = prepare_training(settings_for(tmp_path / "b"), backends=backends(make_backend()))
    run.subscribe(lambda e: run.cancel() if isinstance(e, events.StepStarted) and e.step == 3 else None)
    summary = await run.run()
    assert summary.status == "cancelled" and summary.steps_done == 2
    assert events_of(run.run_dir)[-1]["status"] == "cancelled"
    resumed = await train(settings_for(tmp_path / "b"), resume=run.run_dir, backends=backends(make_backend()))
    assert resumed.status == "completed"
    assert comparable(json.loads(Path(run.run_dir, "history.json").read_text())) == comparable(
        json.loads(Path(full.run_dir, "history.json").read_text()))


async def test_cancelling_the_caller_stops_the_run_and_passes_the_cancellation_on(tmp_path):
    run = prepare_training(settings_for(tmp_path), backends=backends(make_backend()))
    started = asyncio.Event()
    run.subscribe(lambda e: started.set() if isinstance(e, events.StepStarted) else None)
    task = asyncio.ensure_future(run.run())
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert json.loads(Path(run.run_dir, "summary.json").read_text())["status"] == "cancelled"


async def test_a_cancel_pending_when_the_last_step_finishes_returns_the_completed_summary(tmp_path):
    # A cancel requested during the last step, after the last await of the run
    # (here: when its gate has decided, with no test evaluation after it), left
    # the trainer's task cancelled although it returned: run() raised
    # CancelledError while summary.json said "completed" (issue 34, item 3).
    settings = settings_for(tmp_path, "evaluation.eval_test=false", "optimizer.use_slow_update=false",
                            "optimizer.use_meta_skill=false", "evaluation.use_gate=false")
    run = prepare_training(settings, backends=backends(make_backend()))
    last = run._trainer.total_steps
    run.subscribe(lambda e: run.cancel() if isinstance(e, events.GateDecided) and e.step == last else None)
    summary = await run.run()
    written = json.loads(Path(run.run_dir, "summary.json").read_text())
    assert summary.status == written["status"] == "completed"
    assert summary.steps_done == last


async def test_resume_that_changes_the_experiment_is_refused_unless_forced(tmp_path):
    stopped = await train(settings_for(tmp_path, "budget.max_calls=40"), backends=backends(make_backend()))
    changed = settings_for(tmp_path, "env.split_seed=7")
    with pytest.raises(ConfigError, match=r"env\.split_seed: 0 → 7.*--force"):
        prepare_training(changed, resume=stopped.run_dir, backends=backends(make_backend()))
    forced = await train(changed, resume=stopped.run_dir, force=True, backends=backends(make_backend()))
    assert forced.status == "completed"


def test_cli_resume_with_an_experiment_changing_override_exits_2(tmp_path, capsys):
    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump(api_settings(tmp_path).to_dict() | {"env": {
        "name": "jsonl_tasks", "data_path": str(_write(tmp_path / "t.jsonl", caller_tasks())), "split_ratio": [3, 3, 4]}}))
    assert main(["train", "--config", str(config), "--set", "budget.max_calls=5"]) == 3
    run_dir = tmp_path / "out" / "jsonl_tasks" / "r"
    assert main(["train", "--resume", str(run_dir), "--set", "env.limit=5"]) == 2
    assert "would change the experiment" in capsys.readouterr().err


async def test_resume_refuses_when_the_tasks_changed(tmp_path):
    settings = settings_for(tmp_path, "budget.max_calls=40")
    stopped = await train(settings, backends=backends(make_backend()))
    tasks_file = Path(settings.env.data_path)
    lines = tasks_file.read_text().splitlines()
    tasks_file.write_text("\n".join(lines[:-3]) + "\n")
    with pytest.raises(ConfigError, match="tasks changed"):
        prepare_training(settings_for_existing(settings), resume=stopped.run_dir, backends=backends(make_backend()))


def settings_for_existing(settings):
    return settings.model_copy(update={"budget": settings.budget.model_copy(update={"max_calls": None})})


async def test_workdir_reaches_every_target_request(tmp_path):
    backend = make_backend()
    backend.rules[-1] = Rule(stage="rollout", response="apple")
    from skillopt_core.replay import replay_root

    workdir = replay_root() / "checkout-test"
    workdir.mkdir(parents=True)
    await train(api_settings(tmp_path, "evaluation.eval_test=false"), tasks=caller_tasks(), backends=backends(backend),
                workdir=workdir)
    rollouts = [r for r in backend.history if r.stage == "rollout"]
    assert rollouts and {r.cwd for r in rollouts} == {str(workdir.resolve())}


def _write(path: Path, tasks: list[Task]) -> Path:
    path.write_text("".join(json.dumps({"id": t.id, "prompt": t.prompt, "judge": t.judge}) + "\n" for t in tasks))
    return path


def test_overrides_apply_on_top_of_given_settings(tmp_path):
    run = prepare_training(settings_for(tmp_path), overrides=["train.num_epochs=2"], backends=backends(make_backend()))
    assert run.settings.train.num_epochs == 2 and run.settings.env.name == "jsonl_tasks"


def test_a_workdir_outside_the_replay_root_is_refused_up_front(tmp_path):
    with pytest.raises(ValueError, match="under the replay root"):
        prepare_training(api_settings(tmp_path), tasks=caller_tasks(), workdir=tmp_path)


def test_a_seed_skill_given_as_a_path_is_read_from_the_file(tmp_path):
    path = tmp_path / "SKILL.md"
    path.write_text(SEED)
    run = prepare_training(api_settings(tmp_path), tasks=caller_tasks(), seed_skill=path)
    assert (run.run_dir / "seed_skill.md").read_text() == SEED


async def test_the_result_holds_the_runs_tasks_and_its_cache_rows_in_memory(tmp_path):
    """What a caller needs to evaluate again without reading the run directory (sleep.cycle.paired)."""
    from skillopt_core.evaluation.cache import RolloutCache

    run = prepare_training(api_settings(tmp_path), tasks=caller_tasks(), seed_skill=SEED)
    result = await run.run()
    assert sorted(t.id for t in result.tasks) == sorted(t.id for t in caller_tasks())
    assert [t.id for t in result.tasks] == [i for name in ("train", "val", "test") for i in result.splits[name]]
    path = Path(result.summary.run_dir) / "rollout_cache.jsonl"
    on_disk = path.read_text()
    cache = RolloutCache.from_rows(result.rollout_rows, path)
    assert len(cache) == len(result.rollout_rows) > 0 and cache.rows() == [dict(r) for r in result.rollout_rows]
    cache.put_completion("k-new", "pear")
    assert path.read_text().startswith(on_disk) and path.read_text().count("\n") == on_disk.count("\n") + 1
