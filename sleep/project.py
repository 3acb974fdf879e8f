"""Which project a night is for, given the folder it was started in.

A night is for one project: the root of the git repository the folder is in
(a night started in ``ledgerline-api/app`` is the night of ``ledgerline-api``).
Outside a repository it is the folder the sessions ran in: the folder itself
or the nearest folder above it that sessions name as their working directory,
or, when the folder holds the sessions of exactly one project below it, that
project. A folder that holds the sessions of several projects (``~/code``) is
refused with their names: pooling their tasks into one skill helps none.
The listing commands (``history``, ``review``) show the same project by default
(:func:`listing_project`), or the projects below a folder that holds several.
"""

from __future__ import annotations

import os
import subprocess
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from sleep.gitsafe import git_argv, protective_env


class SeveralProjects(ValueError):
    """The folder holds the sessions of several projects; the message names them."""


@dataclass(frozen=True)
class ProjectChoice:
    path: Path
    why: str  # "" when the folder itself is the project

    @property
    def moved(self) -> bool:
        return bool(self.why)


def repository_root(folder: Path) -> Path | None:
    """The work tree root of the git repository ``folder`` is in (None outside one, or without git)."""
    here = folder
    while not here.is_dir():  # a session's folder may be gone
        if here.parent == here:
            return None
        here = here.parent
    try:  # no relocating variables (set, e.g., inside a hook), no hooks or programs (sleep.gitsafe)
        probe = subprocess.run(git_argv("rev-parse", "--show-toplevel"), cwd=here, capture_output=True, text=True,
                               timeout=30, env=protective_env())
    except (OSError, subprocess.SubprocessError):
        return None
    top = probe.stdout.strip()
    return Path(top).resolve() if probe.returncode == 0 and top else None


def resolve_project(folder: Path, session_dirs: Iterable[str | None]) -> ProjectChoice:
    """The project of ``folder`` (see the module docstring). ``session_dirs``: the working
    directory of every known session (one entry per session, repeats count).
    Raises :class:`SeveralProjects` for a folder holding several projects."""
    folder = folder.expanduser().resolve()
    root = repository_root(folder)
    if root is not None:
        return ProjectChoice(root, "" if root == folder else f"the root of the git repository {folder} is in")
    counts = Counter(Path(os.path.normpath(d)) for d in session_dirs if d)
    if folder in counts:
        return ProjectChoice(folder, "")
    above = [d for d in counts if folder.is_relative_to(d)]
    if above:
        nearest = max(above, key=lambda d: len(d.parts))
        return ProjectChoice(nearest, f"the folder your sessions ran in ({counts[nearest]} "
                                      f"session{'s' if counts[nearest] != 1 else ''})")
    projects: Counter[Path] = Counter()
    for d, n in counts.items():
        if d.is_relative_to(folder):
            projects[repository_root(d) or d] += n
    outer = {p: n for p, n in projects.items() if not any(p != q and p.is_relative_to(q) for q in projects)}
    for p, n in projects.items():  # a session in a subfolder of another project counts for that project
        if p not in outer:
            outer[next(q for q in outer if p.is_relative_to(q))] += n
    if len(outer) > 1:
        named = ", ".join(f"{p.relative_to(folder)} ({n} session{'s' if n != 1 else ''})"
                          for p, n in sorted(outer.items(), key=lambda item: (-item[1], str(item[0]))))
        raise SeveralProjects(
            f"{folder} holds {len(outer)} projects with sessions: {named}. A night learns one project's "
            f"skill: run it in one of them (cd {folder}/<project>) or pass --project PATH.")
    if len(outer) == 1:
        (only, n), = outer.items()
        return ProjectChoice(only, f"the only project with sessions under {folder} ({n} "
                                   f"session{'s' if n != 1 else ''})")
    return ProjectChoice(folder, "")


def listing_project(folder: Path, index) -> Path:
    """The project whose records a listing command (``history``, ``review``) shows by default:
    the project a night started in ``folder`` would be for (:func:`resolve_project`, with the
    working directories of the sessions ``index`` already holds; nothing is harvested), or
    ``folder`` itself when it holds several projects (the listing then covers those below it)."""
    dirs = (row[0] for row in index.conn.execute("SELECT project_dir FROM sessions WHERE is_subagent = 0"))
    try:
        return resolve_project(folder, dirs).path
    except SeveralProjects:
        return folder.expanduser().resolve()
