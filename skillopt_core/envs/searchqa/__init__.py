"""SearchQA: short-answer questions over search-result snippets.

Importing this package registers the ``searchqa`` env. With no
``env.data_path`` it uses the bundled ``data/sample.jsonl`` (60 original
trivia items); see :mod:`.loader` for the full-dataset layouts it reads.
"""

from skillopt_core.envs.searchqa.env import SAMPLE_PATH, SearchQAEnv
from skillopt_core.envs.searchqa.loader import format_snippets, read_tasks, record_to_task

__all__ = ["SAMPLE_PATH", "SearchQAEnv", "format_snippets", "read_tasks", "record_to_task"]
