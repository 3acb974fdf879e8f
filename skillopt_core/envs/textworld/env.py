"""The ``textworld`` env: the multi-turn text-game loop (:mod:`.loop`) on
games generated locally with TextWorld's ``tw-make`` (:mod:`.games`), so the
ALFWorld-style harness runs and is tested offline.

``env.data_path``: a folder of ``.z8``/``.ulx`` games; none: games generated
from ``env.options.generate`` (``count``, ``seed``, ``world_size``,
``nb_objects``, ``quest_length``). Scoring: hard = won, soft = won or the
share of the game's points.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from skillopt_core.envs import register_env
from skillopt_core.envs.textworld.games import GameSpec, games_in, generate
from skillopt_core.envs.textworld.loop import TextGameEnv
from skillopt_core.tasks.task import Task

PACKAGE_DIR = Path(__file__).resolve().parent


def request_infos(full: bool) -> Any:
    import textworld

    if not full:  # what ALFWorld's AlfredTWEnv asks of its PDDL games
        return textworld.EnvInfos(won=True, admissible_commands=True, extras=["gamefile"])
    return textworld.EnvInfos(won=True, lost=True, admissible_commands=True, objective=True,
                              score=True, max_score=True)


def open_textworld_game(gamefile: str, max_steps: int, wrappers: list | None = None, full_infos: bool = True) -> Any:
    """A started ``textworld.gym`` environment for one game file."""
    try:
        import textworld.gym
    except ImportError:
        raise RuntimeError("The text-game envs need TextWorld: pip install 'skillopt[textworld]'.") from None
    env_id = textworld.gym.register_game(gamefile, request_infos(full_infos), max_episode_steps=max_steps + 1,
                                         wrappers=wrappers or [])
    return textworld.gym.make(env_id)


@register_env("textworld")
class TextWorldEnv(TextGameEnv):
    name = "textworld"
    seed_skill = (PACKAGE_DIR / "seed_skill.md").read_text(encoding="utf-8")
    OPTIONS: ClassVar[Mapping[str, str]] = {**TextGameEnv.GAME_OPTIONS,
               "generate": "tw-make settings when env.data_path is null: count, seed, world_size, nb_objects, "
                           "quest_length"}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        spec = self.options.get("generate") or {}
        if not isinstance(spec, dict):
            raise ValueError("env.options.generate must be a mapping (count, seed, world_size, nb_objects, "
                             "quest_length).")
        try:
            self.spec = GameSpec(**spec)
        except TypeError as exc:
            raise ValueError(f"env.options.generate: {exc}") from None

    def read_tasks(self) -> list[Task]:
        games = games_in(self.inputs.data_path) if self.inputs.data_path else generate(self.spec)
        return [Task(id=game.stem, prompt=f"Text game {game.stem}.", judge=None, tags=("textworld",),
                     metadata={"gamefile": str(game)}) for game in games]

    def open_game(self, task: Task) -> Any:
        return open_textworld_game(task.metadata["gamefile"], self.max_steps)
