"""Reading run directories (``<root>/<env>/<run_id>/``) for the MCP tools.

Only the run directory's files are read (``summary.json``, ``history.json``,
``best_skill.md``, ``events.jsonl``, ``state.json``), through the engine's run
reader (:class:`skillopt_core.run.reader.RunReader`). A run is named by its id
(``20261130-173752``), by ``env/run_id``, or by its path; every form must land inside one of the known output roots, and
files are read only when their real path stays inside the run directory, so no
name or symlink reaches anything else.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from skillopt_core.run.reader import RunFileError, RunReader, is_run_dir

RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


class RunError(Exception):
    """A run reference that is malformed, unknown, ambiguous or outside the known roots."""


@dataclass(frozen=True)
class RunRef:
    run_id: str
    env: str
    path: Path  # real path, inside ``root``
    root: Path

    @property
    def kind(self) -> str:
        return "evaluate" if self.run_id.startswith("eval-") else "train"

    @property
    def reader(self) -> RunReader:
        return RunReader(self.path)


def iter_runs(roots: Iterable[Path]) -> Iterator[RunRef]:
    """Every run directory under the roots (``root/<env>/<run_id>``), each once."""
    seen: set[Path] = set()
    for root in roots:
        real_root = _real(root)
        if real_root is None or not real_root.is_dir():
            continue
        for env_dir in _children(real_root):
            for run_dir in _children(env_dir):
                real = _real(run_dir)
                if real is None or real in seen or not _inside(real, real_root) or not is_run_dir(real):
                    continue
                seen.add(real)
                yield RunRef(run_dir.name, env_dir.name, real, real_root)


def resolve(ref: str, roots: list[Path]) -> RunRef:
    """The run named by ``ref`` (id, ``env/id`` or a path) inside one of ``roots``."""
    ref = (ref or "").strip()
    if not ref:
        raise RunError("no run given; list_runs shows the run ids.")
    if os.path.isabs(ref):
        return _by_path(Path(ref), roots)
    parts = ref.split("/")
    if len(parts) > 2:
        raise RunError(f"{ref!r} is neither a run id, env/run_id nor an absolute path; list_runs shows the runs.")
    for i, part in enumerate(parts):
        _check_id(part, "run id" if i == len(parts) - 1 else "env name")
    if len(parts) == 2:
        matches = [r for r in iter_runs(roots) if (r.env, r.run_id) == (parts[0], parts[1])]
    else:
        matches = [r for r in iter_runs(roots) if r.run_id == ref]
    if not matches:
        raise RunError(f"no run {ref!r} under {_names(roots)}; list_runs shows the runs "
                       "(start the server with --outputs DIR to add an output folder).")
    if len(matches) > 1:
        names = ", ".join(f"{m.env}/{m.run_id}" for m in matches[:5])
        raise RunError(f"{ref!r} names {len(matches)} runs ({names}); pass env/run_id.")
    return matches[0]


def _by_path(path: Path, roots: list[Path]) -> RunRef:
    real = _real(path)
    if real is None or not real.is_dir():
        raise RunError(f"{path} is not a folder; list_runs shows the runs.")
    for root in roots:
        real_root = _real(root)
        if real_root is not None and _inside(real, real_root) and real.parent.parent == real_root:
            if not is_run_dir(real):
                raise RunError(f"{path} is not a run directory (no config.yaml and events.jsonl).")
            return RunRef(real.name, real.parent.name, real, real_root)
    raise RunError(f"{path} is outside the known output folders ({_names(roots)}); "
                   "runs are read only there (start the server with --outputs DIR to add one).")


def _check_id(value: str, what: str) -> None:
    if not RUN_ID.match(value) or ".." in value:
        raise RunError(f"{value!r} is not a valid {what} (letters, digits, '.', '_' and '-'; no '..').")


def read_text(run: RunRef, name: str) -> str | None:
    """A file of the run, or None when missing or when the file opened leaves the run directory."""
    try:
        return run.reader.read_text(name)
    except RunFileError:
        return None


def _children(folder: Path) -> list[Path]:
    try:
        return sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith("."))
    except OSError:
        return []


def _real(path: Path) -> Path | None:
    try:
        return Path(os.path.realpath(path))
    except (OSError, ValueError):
        return None


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _names(roots: list[Path]) -> str:
    return ", ".join(str(r) for r in roots) or "no output folder"
