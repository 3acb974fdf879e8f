"""LiveMathematicianBench: multiple-choice questions on theorems of recent
arXiv papers, published as monthly ``qa_<YYYYMM>_final.json`` files.

Importing this package registers the ``livemathematicianbench`` env. With no
``env.data_path`` it reads the bundled sample (``data/``: two months of
questions written by the team in the published layout)."""

from skillopt_core.envs.livemathematicianbench.env import SAMPLE_DIR, LiveMathEnv
from skillopt_core.envs.livemathematicianbench.loader import parse_choice, read_tasks, shuffle_choices

__all__ = ["SAMPLE_DIR", "LiveMathEnv", "parse_choice", "read_tasks", "shuffle_choices"]
