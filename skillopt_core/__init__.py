"""SkillOpt core: train a skill document (Markdown the agent follows) like weights.

Layers: this package never imports ``sleep``; it knows nothing of transcripts,
git or schedules (see ARCHITECTURE.md).

The public names below are the stable surface: ``from skillopt_core import X``
keeps working when modules move. They load on first use, so importing the
package stays cheap.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

# public name -> module (relative to this package) that defines it
_PUBLIC: dict[str, str] = {
    # the skill and its edits
    "Skill": ".skill.document", "SkillParseError": ".skill.document", "load_skill": ".skill.document",
    "Edit": ".skill.edits", "apply_edits": ".skill.edits",
    # tasks, judges and data
    "Task": ".tasks.task", "Score": ".tasks.task", "Judge": ".tasks.task",
    "build_judge": ".tasks.judges", "validate_judge_spec": ".tasks.judges", "JudgeError": ".tasks.judges",
    "register_judge": ".tasks.judges", "judge_types": ".tasks.judges", "JudgeType": ".tasks.judges",
    "Dataset": ".tasks.data", "split_tasks": ".tasks.data",
    # envs and backends
    "create_env": ".envs", "register_env": ".envs", "available_envs": ".envs",
    "EnvAdapter": ".envs", "PromptEnv": ".envs",
    "Backend": ".backends", "BackendSpec": ".backends", "BackendError": ".backends",
    "RequestRejected": ".backends", "RequestFailed": ".backends", "Completion": ".backends",
    "CompletionRequest": ".backends",
    "Message": ".backends", "Usage": ".backends", "create_backend": ".backends",
    "register_backend": ".backends", "available_backends": ".backends",
    # evaluation
    "GateSettings": ".evaluation.gate", "GateDecision": ".evaluation.gate", "decide": ".evaluation.gate",
    # the run
    "Settings": ".run.config", "ConfigError": ".run.config", "load_settings": ".run.config",
    "ConsoleRenderer": ".cli.console", "plain_console": ".cli.console",
    # for sandboxes that must let this interpreter run
    "interpreter_paths_under_tmp": ".interpreter_paths",
    "RunSummary": ".run.state", "TrainingRun": ".run.api", "TrainingResult": ".run.api", "prepare_training": ".run.api",
    "RunReader": ".run.reader", "StepRecord": ".run.record", "GateRecord": ".run.record", "SelectedEdit": ".run.record",
    "train": ".run.api", "evaluate": ".run.api",
}

# public module name -> module path
_MODULES: dict[str, str] = {"events": ".run.events"}

__all__ = sorted([*_PUBLIC, *_MODULES])


def __getattr__(name: str) -> Any:
    if name in _MODULES:
        value = importlib.import_module(_MODULES[name], __name__)
        globals()[name] = value
        return value
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'skillopt_core' has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(list(globals()) + __all__)
