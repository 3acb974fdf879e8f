"""Generic env: tasks read from a JSONL file, each with its own judge spec.

One object per line: ``id``, ``prompt``, ``judge`` (required) and optional
``context``, ``reference``, ``tags``, ``metadata`` (see
:func:`skillopt_core.tasks.data.load_tasks_jsonl`). Bad lines are skipped and listed
in ``env.load_problems``. The nightly sleep cycle uses this env to replay the
tasks it mined.

Options: ``seed_skill`` (path of a Markdown skill to start from; default a
minimal generic skill) and ``workdir`` (a directory prepared by the caller,
e.g. a scratch checkout of the project, where agent-CLI targets run every
rollout; rollouts share it, so use read-only tools or one worker when tasks
write files).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar

from skillopt_core.backends import CompletionRequest
from skillopt_core.envs import register_env
from skillopt_core.envs.base import GENERIC_SEED_SKILL, PromptEnv
from skillopt_core.replay import replay_root
from skillopt_core.tasks.data import load_tasks_jsonl
from skillopt_core.tasks.task import Task


@register_env("jsonl_tasks")
class JsonlTasksEnv(PromptEnv):
    name = "jsonl_tasks"
    OPTIONS: ClassVar[Mapping[str, str]] = {
        "seed_skill": "path of the Markdown skill to start from (default: a minimal generic skill)",
        "workdir": "directory agent-CLI targets run in (a scratch checkout the caller prepared)",
    }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.inputs.data_path is None:
            raise ValueError(
                "The jsonl_tasks env needs env.data_path: a JSONL file with one task per line "
                "(id, prompt, judge; optional context, reference, tags, metadata)."
            )
        self.seed_skill = self._read_seed_skill(self.options.get("seed_skill"))
        self._check_workdir(self.options.get("workdir"))

    @staticmethod
    def _check_workdir(workdir: Any) -> None:
        """Agent-CLI backends only run in directories under the replay root (so the
        harvester knows their sessions are replays): say so now, not at every rollout."""
        if workdir is None:
            return
        path = Path(str(workdir)).expanduser().resolve()
        root = replay_root().resolve()
        if not path.is_dir() or not path.is_relative_to(root):
            raise ValueError(
                f"env.options.workdir {path} must be an existing directory under the replay root {root} "
                "(create the checkout there, e.g. with sleep's replay checkout, or set SKILLOPT_REPLAY_ROOT).")

    @staticmethod
    def _read_seed_skill(path: Any) -> str:
        if path is None:
            return GENERIC_SEED_SKILL
        if not isinstance(path, (str, Path)):
            raise ValueError(f"env.options.seed_skill must be a file path, got {path!r}.")
        file = Path(path).expanduser()
        if not file.is_file():
            raise FileNotFoundError(f"Seed skill not found: {file} (env.options.seed_skill).")
        return file.read_text(encoding="utf-8")

    def build_request(self, skill_text: str, task: Task, max_tokens: int) -> CompletionRequest:
        request = super().build_request(skill_text, task, max_tokens)
        workdir = self.options.get("workdir")
        return replace(request, cwd=str(workdir)) if workdir else request

    def read_tasks(self) -> list[Task]:
        assert self.inputs.data_path is not None  # checked in __init__
        tasks, problems = load_tasks_jsonl(self.inputs.data_path)
        self.load_problems.extend(problems)
        return tasks


__all__ = ["JsonlTasksEnv"]
