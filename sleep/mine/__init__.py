"""sleep.mine: find the tasks a person repeats across sessions and make them replayable, judged tasks.

Public entry points (loaded on first use, so importing ``sleep.mine`` stays cheap):

- :func:`mine` with :class:`MineOptions` -> :class:`MineReport` (sleep.mine.miner)
- :func:`export_tasks_jsonl` (sleep.mine.export): a project's enabled tasks as a
  ``jsonl_tasks`` file for ``skillopt_core``
- :func:`load_tasks`, :func:`set_enabled` (sleep.mine.store)
- :class:`Assistant` (sleep.mine.assist): optional optimizer help
"""

from __future__ import annotations

import importlib
from typing import Any

_PUBLIC = {
    "mine": "sleep.mine.miner", "MineOptions": "sleep.mine.miner", "MineReport": "sleep.mine.miner",
    "export_tasks_jsonl": "sleep.mine.export", "ExportResult": "sleep.mine.export",
    "load_tasks": "sleep.mine.store", "set_enabled": "sleep.mine.store", "TaskRecord": "sleep.mine.store",
    "Assistant": "sleep.mine.assist",
}
__all__ = sorted(_PUBLIC)


def __getattr__(name: str) -> Any:
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'sleep.mine' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
