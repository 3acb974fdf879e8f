"""The ``alfworld`` env: ALFWorld's text worlds through the ``alfworld``
package (``pip install 'skillopt[alfworld]'``), with the shared text-game
loop (:mod:`skillopt_core.envs.textworld.loop`): 50 steps, scored by ``won``.

Data: ``$ALFWORLD_DATA`` as ``alfworld-download`` leaves it (or
``env.data_path``): ``json_2.1.1/<split>/<task>/<trial>/game.tw-pddl`` with
``traj_data.json`` beside it, for the splits ``train``, ``valid_seen``
(in-distribution eval) and ``valid_unseen`` (out of distribution). Games are
chosen as the alfworld package chooses them: a ``traj_data.json`` whose
``task_type`` is one of the six task types, a ``game.tw-pddl`` marked
``solvable``, not under a ``movable`` or ``Sliced`` folder; others are skipped
and counted. Task ids are ``<split>/<task>/<trial>``; the task type is a tag.
Each game is played with alfworld's ``AlfredDemangler`` and ``AlfredInfos``
wrappers, as ``AlfredTWEnv`` does.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from skillopt_core.envs import register_env
from skillopt_core.envs.textworld.env import open_textworld_game
from skillopt_core.envs.textworld.loop import TextGameEnv
from skillopt_core.tasks.task import Task

PACKAGE_DIR = Path(__file__).resolve().parent
TASK_TYPES = ("pick_and_place_simple", "look_at_obj_in_light", "pick_clean_then_place_in_recep",
              "pick_heat_then_place_in_recep", "pick_cool_then_place_in_recep", "pick_two_obj_and_place")
SPLITS = ("train", "valid_seen", "valid_unseen")


def data_root(data_path: Path | None) -> Path:
    if data_path is not None:
        return data_path
    env = os.environ.get("ALFWORLD_DATA")
    if not env:
        raise FileNotFoundError(
            "ALFWorld data not found: set ALFWORLD_DATA (run `alfworld-download` after "
            "pip install 'skillopt[alfworld]') or env.data_path. Offline, the textworld env runs the same loop "
            "on generated games (--config alfworld/local)."
        )
    return Path(env).expanduser()


def find_games(root: Path, splits: tuple[str, ...]) -> tuple[list[Task], list[str]]:
    base = root / "json_2.1.1" if (root / "json_2.1.1").is_dir() else root
    tasks, problems = [], []
    for split in splits:
        folder = base / split
        if not folder.is_dir():
            problems.append(f"{folder}: no such split folder")
            continue
        for traj in sorted(folder.rglob("traj_data.json")):
            where = traj.parent.relative_to(base).as_posix()
            if "movable" in where or "Sliced" in where:
                problems.append(f"{where}: movable and sliced tasks are not supported (skipped, as alfworld does)")
                continue
            game = traj.parent / "game.tw-pddl"
            try:
                kind = json.loads(traj.read_text(encoding="utf-8")).get("task_type")
                solvable = json.loads(game.read_text(encoding="utf-8")).get("solvable") if game.is_file() else None
            except (OSError, json.JSONDecodeError, AttributeError) as exc:
                problems.append(f"{where}: unreadable ({type(exc).__name__})")
                continue
            if kind not in TASK_TYPES:
                problems.append(f"{where}: task type {kind!r} is not one of ALFWorld's six")
            elif not game.is_file():
                problems.append(f"{where}: no game.tw-pddl")
            elif not solvable:
                problems.append(f"{where}: the game is not marked solvable")
            else:
                tasks.append(Task(id=where, prompt=f"ALFWorld game {where}.", judge=None,
                                  tags=("alfworld", kind, split), metadata={"gamefile": str(game)}))
    return tasks, problems


@register_env("alfworld")
class AlfWorldEnv(TextGameEnv):
    name = "alfworld"
    seed_skill = (PACKAGE_DIR.parent / "textworld" / "seed_skill.md").read_text(encoding="utf-8")
    OPTIONS: ClassVar[Mapping[str, str]] = {**TextGameEnv.GAME_OPTIONS,
               "splits": "which of train, valid_seen, valid_unseen to load (default all three)"}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        splits = self.options.get("splits", list(SPLITS))
        if not isinstance(splits, list) or not splits or any(s not in SPLITS for s in splits):
            raise ValueError(f"env.options.splits must be a list of {', '.join(SPLITS)}, got {splits!r}.")
        self.splits = tuple(splits)

    def read_tasks(self) -> list[Task]:
        tasks, problems = find_games(data_root(self.inputs.data_path), self.splits)
        self.load_problems.extend(problems)
        if not tasks:
            raise FileNotFoundError(f"No playable ALFWorld games found ({len(problems)} skipped; first: "
                                    f"{problems[0] if problems else 'none'}).")
        return tasks

    def open_game(self, task: Task) -> Any:
        try:
            from alfworld.agents.environment.alfred_tw_env import AlfredDemangler, AlfredInfos
        except ImportError:
            raise RuntimeError(
                "The alfworld env needs the alfworld package: pip install 'skillopt[alfworld]'.") from None
        return open_textworld_game(task.metadata["gamefile"], self.max_steps, [AlfredDemangler(), AlfredInfos],
                                   full_infos=False)
