"""ALFWorld: household tasks in TextWorld, played through the ``alfworld``
package's wrappers. Importing this package registers the ``alfworld`` env."""

from skillopt_core.envs.alfworld.env import TASK_TYPES, AlfWorldEnv, find_games

__all__ = ["TASK_TYPES", "AlfWorldEnv", "find_games"]
