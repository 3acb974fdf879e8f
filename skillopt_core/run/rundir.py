"""The run directory: ``outputs/<env>/<run_id>/``. Every file is written
atomically (temp file + rename), so an interrupted run leaves only whole files
and resumes from the last finished step (``state.json``)."""

from __future__ import annotations

import json
import os
import tempfile
from datetime import datetime, timezone
from pathlib import Path
from typing import Any


def atomic_write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def atomic_write_json(path: Path, data: Any) -> None:
    atomic_write_text(path, json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")


def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def new_run_id() -> str:
    return datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")


class RunDir:
    """Paths of one run. Creating it does not write anything."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    @classmethod
    def create(cls, root: str | Path, env: str, run_id: str | None) -> RunDir:
        run_id = run_id or new_run_id()
        path = Path(root) / env / run_id
        if (path / "state.json").exists():
            raise FileExistsError(
                f"Run directory {path} already holds a run. Resume it with `skillopt train --resume {path}` "
                "or choose another output.run_id."
            )
        path.mkdir(parents=True, exist_ok=True)
        return cls(path)

    @property
    def run_id(self) -> str:
        return self.path.name

    def step_dir(self, step: int) -> Path:
        return self.path / "steps" / f"step_{step:04d}"

    def skill_path(self, step: int) -> Path:
        return self.path / "skills" / f"step_{step:04d}.md"

    def slow_update_dir(self, epoch: int) -> Path:
        return self.path / "slow_update" / f"epoch_{epoch:02d}"

    def meta_skill_dir(self, epoch: int) -> Path:
        return self.path / "meta_skill" / f"epoch_{epoch:02d}"

    @property
    def state_path(self) -> Path:
        return self.path / "state.json"

    @property
    def history_path(self) -> Path:
        return self.path / "history.json"

    @property
    def events_path(self) -> Path:
        return self.path / "events.jsonl"

    @property
    def best_skill_path(self) -> Path:
        return self.path / "best_skill.md"

    @property
    def config_path(self) -> Path:
        return self.path / "config.yaml"

    @property
    def cache_path(self) -> Path:
        return self.path / "rollout_cache.jsonl"

    @property
    def plot_path(self) -> Path:
        return self.path / "history.png"

    @property
    def summary_path(self) -> Path:
        return self.path / "summary.json"
