"""The rollout cache: content-addressed, append-only JSONL in the run directory.

Two kinds of entry, so a change of judge never reuses a stale score and never
repeats a model call either:

- a **completion** is keyed on everything that can change the answer: the
  backend's identity (name, model and its ``describe()`` line, which names the
  endpoint, model file or CLI tools) and the whole request (system text,
  skill, messages, max tokens, temperature, JSON schema, seed, working
  directory);
- a **score** is keyed on the completion key plus everything that can change
  the grade: the env's name, the task's judge spec and reference.

A torn last line (a crash mid-write) is skipped and counted; it is re-run.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import asdict
from pathlib import Path
from typing import Any

from skillopt_core.backends import Backend, CompletionRequest
from skillopt_core.backends.trajectory import Trajectory
from skillopt_core.tasks.task import Score, Task

CACHE_VERSION = 2


def _digest(payload: Any) -> str:
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def backend_identity(backend: Backend) -> dict[str, str]:
    return {"name": backend.name, "model": backend.model, "describe": backend.describe()}


def completion_key(backend: Backend, request: CompletionRequest) -> str:
    """Key of one completion: the backend's identity and every request field
    except the accounting labels (role, stage)."""
    fields = asdict(request)
    fields.pop("role", None)
    fields.pop("stage", None)
    # Fields added later stay out of the key at their defaults, so earlier caches still hit.
    if fields.get("allowed_commands") is None:
        fields.pop("allowed_commands", None)
    if not fields.get("checks"):
        fields.pop("checks", None)
    if fields.get("document_path") is None:
        fields.pop("document_path", None)
    return "c:" + _digest({"v": CACHE_VERSION, "backend": backend_identity(backend), "request": fields})


def skill_digest(skill_text: str) -> str:
    """A short digest of the skill text a rollout ran under (``about["skill"]`` of cache rows)."""
    return hashlib.sha256(skill_text.encode("utf-8")).hexdigest()[:16]


def score_key(completion: str, env_name: str, task: Task) -> str:
    """Key of one score: the completion it grades and the env's judge for the task."""
    return "s:" + _digest({"v": CACHE_VERSION, "completion": completion, "env": env_name,
                           "judge": task.judge, "reference": task.reference})


class RolloutCache:
    """Completions and scores of a run, read once at start and appended to as
    they are made. Without a path it lives in memory only."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self._entries: dict[str, dict] = {}
        self.skipped_lines = 0
        if path is not None and path.exists():
            with path.open("r", encoding="utf-8", errors="replace") as fh:
                for line in fh:
                    try:
                        row = json.loads(line)
                        self._entries[row["key"]] = row
                    except (json.JSONDecodeError, KeyError, TypeError):
                        self.skipped_lines += 1

    @classmethod
    def from_rows(cls, rows: Iterable[Mapping[str, Any]], path: Path | None = None) -> RolloutCache:
        """A cache holding ``rows`` (a run's :meth:`rows`, held in memory), without reading ``path``;
        new rows are appended to ``path`` when given."""
        cache = cls()
        cache.path = path
        for row in rows:
            cache._entries[row["key"]] = dict(row)
        return cache

    def _put(self, row: dict) -> None:
        self._entries[row["key"]] = row
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")

    def completion(self, key: str) -> str | None:
        row = self._entries.get(key)
        return row.get("response") if row is not None and "response" in row else None

    def trajectory(self, key: str) -> Trajectory | None:
        """The trajectory stored with a completion (None for chat backends and older caches)."""
        row = self._entries.get(key)
        data = row.get("trajectory") if row is not None else None
        if not isinstance(data, dict):
            return None
        try:
            return Trajectory.from_dict(data)
        except (TypeError, ValueError):
            return None

    def put_completion(self, key: str, response: str, trajectory: Trajectory | None = None,
                       about: dict[str, Any] | None = None) -> None:
        """``about``: what the row is for (``task``, ``sample``, ``skill`` digest), so a reader of
        the run directory can find an item's completions per skill; not part of the key."""
        row: dict[str, Any] = {"key": key, "response": response, **(about or {})}
        if trajectory is not None:
            row["trajectory"] = trajectory.to_dict()
        self._put(row)

    def score(self, key: str) -> Score | None:
        row = self._entries.get(key)
        if row is None or "hard" not in row:
            return None
        try:
            return Score(row["hard"], row["soft"], row.get("feedback", ""))
        except (TypeError, ValueError):
            return None

    def put_score(self, key: str, score: Score, about: dict[str, Any] | None = None) -> None:
        self._put({"key": key, "hard": score.hard, "soft": score.soft, "feedback": score.feedback, **(about or {})})

    def rows(self) -> list[dict]:
        """Every row held (completions and scores), in the order first written."""
        return list(self._entries.values())

    def __len__(self) -> int:
        return len(self._entries)
