"""TextWorld text games generated locally with ``tw-make``: the offline
stand-in for ALFWorld's multi-turn loop. Importing this package registers the
``textworld`` env."""

from skillopt_core.envs.textworld.env import TextWorldEnv, open_textworld_game
from skillopt_core.envs.textworld.games import GameSpec, generate
from skillopt_core.envs.textworld.loop import TextGameEnv, clean_observation, parse_action

__all__ = ["GameSpec", "TextGameEnv", "TextWorldEnv", "clean_observation", "generate", "open_textworld_game",
           "parse_action"]
