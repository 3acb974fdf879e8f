"""Collecting tasks from records: every skipped record becomes one problem
line (why it could not be read, or that it repeats an id), never a silent drop."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from skillopt_core.tasks.task import Task

__all__ = ["TaskCollector"]


class TaskCollector:
    """Tasks in load order (the first of a repeated id wins) and the problems met."""

    def __init__(self, id_name: str = "id") -> None:
        self.tasks: list[Task] = []
        self.problems: list[str] = []
        self._seen: set[str] = set()
        self._id_name = id_name

    def add(self, where: str, build: Callable[..., Task], *args: Any) -> Task | None:
        """``build(*args)`` and keep its task; a ``ValueError`` (or a repeated id) is a
        problem line ``"<where>: <why>"`` and returns None."""
        try:
            task = build(*args)
        except ValueError as exc:
            self.problems.append(f"{where}: {exc}")
            return None
        if task.id in self._seen:
            self.problems.append(f"{where}: repeats {self._id_name} '{task.id}' (kept the first)")
            return None
        self._seen.add(task.id)
        self.tasks.append(task)
        return task

    def result(self) -> tuple[list[Task], list[str]]:
        return self.tasks, self.problems
