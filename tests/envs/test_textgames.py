"""The multi-turn text-game loop: the textworld env on games generated here
with TextWorld's tw-make (PyPI ``textworld``), and the alfworld env's game
discovery in ALFWorld's data layout (``json_2.1.1/<split>/<task>/<trial>/``
with ``traj_data.json`` and ``game.tw-pddl``, chosen as alfworld's
``AlfredTWEnv.collect_game_files`` chooses them).

The scripted target answers the game's own walkthrough (``textworld.Game``
metadata) to win, or ``look`` to lose: control flow, not a measure of skill."""

from __future__ import annotations

import json
import os

import pytest

from skillopt_core.backends import BackendSpec, create_backend
from skillopt_core.envs import create_env
from skillopt_core.envs.alfworld import find_games
from skillopt_core.envs.textworld import clean_observation, parse_action

from bench_run import train_offline
from extras import require_extra

TINY = {"count": 2, "seed": 0, "world_size": 1, "nb_objects": 2, "quest_length": 1}


@pytest.mark.parametrize("reply, action", [
    ("I should open it.\nAction: open the box", "open the box"), ("take key", "take key"),
    ("Action: `Go North`.", "go north"), ("", ""),
])
def test_parse_action(reply, action) -> None:
    assert parse_action(reply) == action


def test_clean_observation_drops_the_banner_and_prompts() -> None:
    raw = "\n\n  ___ big banner ___\n\n-= Kitchen =-\nYou are in a kitchen.\n\n>  "
    assert clean_observation(raw) == "-= Kitchen =-\nYou are in a kitchen."


@pytest.fixture(scope="session")
def tiny_games(session_cache_dir):
    """Two tiny generated games, made once per test session (about 10-30 s)."""
    require_extra("textworld", "textworld", "SKILLOPT_REQUIRE_TEXTWORLD")
    os.environ["SKILLOPT_CACHE_DIR"] = str(session_cache_dir)
    env = create_env("textworld", {"options": {"generate": TINY, "max_steps": 4}})
    return env.load_tasks()


def walkthrough(task) -> list[str]:
    import textworld

    return list(textworld.Game.load(task.metadata["gamefile"].replace(".z8", ".json")).walkthrough)


def test_generated_games_are_tasks_with_stable_ids(tiny_games) -> None:
    assert [t.id for t in tiny_games] == ["tw-s0", "tw-s1"]
    assert all(os.path.isfile(t.metadata["gamefile"]) for t in tiny_games)


async def test_playing_the_walkthrough_wins_and_scores_one(tiny_games) -> None:
    env = create_env("textworld", {"options": {"generate": TINY, "max_steps": 4}})
    task = tiny_games[0]
    target = create_backend(BackendSpec("scripted", None, "target", {}))
    target.enqueue(*[f"Action: {c}" for c in walkthrough(task)])
    completion = await env.run_episode(target, env.build_request("skill", task, 16), task)
    assert completion.text.splitlines()[-1].startswith("Result: won in")
    score = await env.score(task, completion.text)
    assert (score.hard, score.soft) == (1.0, 1.0)
    first = target.history[0].messages[0].content
    assert "Goal:" in first and "Commands you can use now:" in first


async def test_an_episode_stops_after_max_steps_and_scores_zero(tiny_games) -> None:
    env = create_env("textworld", {"options": {"generate": TINY, "max_steps": 3, "history": 1}})
    task = tiny_games[1]
    target = create_backend(BackendSpec("scripted", None, "target", {"scripted": {"rules": [{"response": "Action: look"}]}}))
    completion = await env.run_episode(target, env.build_request("skill", task, 16), task)
    assert len(target.history) == 3 and completion.text.count("Action: look") == 3
    assert len(target.history[2].messages) == 3  # the opening plus one kept turn (history 1)
    score = await env.score(task, completion.text)
    assert score.hard == 0.0 and score.feedback.startswith("Did not win within 3 steps")


async def test_a_transcript_without_a_result_scores_zero() -> None:
    env = create_env("textworld", {"options": {"generate": TINY}})
    assert (await env.score(None, "Observation: hi")).feedback == "The episode did not finish (no result recorded)."


def test_local_config_trains_offline_on_generated_games(tiny_games, tmp_path, capsys) -> None:
    summary, _ = train_offline("alfworld/local", tmp_path, capsys, [{"stage": "rollout", "response": "Action: look"}],
                               f"env.options.generate={json.dumps(TINY)}", "env.options.max_steps=2",
                               "env.split_ratio=[1,1,0]", "evaluation.eval_test=false",
                               "optimizer.use_slow_update=false")
    assert summary["status"] == "completed" and summary["steps_done"] == 2


def write_trial(root, split, task, trial, task_type="pick_and_place_simple", solvable=True, game=True):
    folder = root / "json_2.1.1" / split / task / trial
    folder.mkdir(parents=True)
    (folder / "traj_data.json").write_text(json.dumps({"task_type": task_type}), encoding="utf-8")
    if game:
        (folder / "game.tw-pddl").write_text(json.dumps({"solvable": solvable, "pddl_domain": "..."}), encoding="utf-8")


def test_alfworld_games_are_chosen_as_the_alfworld_package_chooses(tmp_path) -> None:
    write_trial(tmp_path, "train", "pick_and_place_simple-Mug-None-Shelf-1", "trial_T1")
    write_trial(tmp_path, "valid_seen", "look_at_obj_in_light-CD-None-DeskLamp-2", "trial_T2",
                task_type="look_at_obj_in_light")
    write_trial(tmp_path, "train", "pick_and_place_simple-Apple-Sliced-3", "trial_T3")
    write_trial(tmp_path, "train", "pick_two_obj_and_place-Pen-None-Desk-4", "trial_T4", solvable=False)
    write_trial(tmp_path, "train", "pick_and_place_simple-Cup-None-Sink-5", "trial_T5", game=False)
    tasks, problems = find_games(tmp_path, ("train", "valid_seen", "valid_unseen"))
    assert [t.id for t in tasks] == ["train/pick_and_place_simple-Mug-None-Shelf-1/trial_T1",
                                     "valid_seen/look_at_obj_in_light-CD-None-DeskLamp-2/trial_T2"]
    assert tasks[1].tags == ("alfworld", "look_at_obj_in_light", "valid_seen")
    assert len(problems) == 4 and any("valid_unseen" in p and "no such split" in p for p in problems)


def test_alfworld_without_its_data_says_where_to_get_it(monkeypatch) -> None:
    monkeypatch.delenv("ALFWORLD_DATA", raising=False)
    env = create_env("alfworld", {})
    with pytest.raises(FileNotFoundError, match="ALFWORLD_DATA.*alfworld-download"):
        env.load_tasks()
