"""unitqa: distance questions answered as ``<number> km`` (the embedded-model evidence env).

Importing this package registers the ``unitqa`` env. With no ``env.data_path``
it reads the bundled ``data/tasks.jsonl`` (60 generated items, see :mod:`.tasks`).
"""

from skillopt_core.envs.unitqa.env import UnitQAEnv
from skillopt_core.envs.unitqa.tasks import TASKS_PATH, answer_pattern, generate_tasks

__all__ = ["TASKS_PATH", "UnitQAEnv", "answer_pattern", "generate_tasks"]
