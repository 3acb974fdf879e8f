"""DocVQA: questions about document page images, scored by ANLS.

Importing this package registers the ``docvqa`` env. With no
``env.data_path`` it reads the bundled sample (``data/``: pages and questions
written by the team, in the CSV layout of SkillOpt's DocVQA materialisation)."""

from skillopt_core.envs.docvqa.env import SAMPLE_PATH, DocVQAEnv, anls
from skillopt_core.envs.docvqa.loader import ocr_text, parse_answers, read_tasks

__all__ = ["SAMPLE_PATH", "DocVQAEnv", "anls", "ocr_text", "parse_answers", "read_tasks"]
