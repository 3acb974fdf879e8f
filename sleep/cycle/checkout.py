"""A disposable checkout of the project for replays.

Replays of coding tasks must see the project, but never the person's working
tree: the night clones the repository at HEAD into a fresh directory under the
replay root (``git clone --shared --no-checkout`` reads objects through
alternates and writes nothing into the source repository; the checkout then
happens in the clone), or copies the files when the project is not a
repository. The clone has no remotes. Everything under the replay root is recognised by the harvester
as a replay, so sessions the replays create are never mined. The directory is
removed when the night ends, whatever happened.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import uuid
from pathlib import Path
from typing import Iterator

from skillopt_core.replay import replay_root

SKIP_DIRS = frozenset({".git", "node_modules", ".venv", "venv", "__pycache__", ".mypy_cache", ".pytest_cache",
                       "target", "dist", "build", ".tox", ".next"})
MAX_COPY_BYTES = 500 * 1024 * 1024


class CheckoutError(RuntimeError):
    """The project could not be checked out for replays; the message says why."""


# Variables that would point git at another repository than the one named (set, e.g., inside a hook).
_RELOCATING = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_COMMON_DIR",
               "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE", "GIT_CEILING_DIRECTORIES")


def _git(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in _RELOCATING}
    env["GIT_TERMINAL_PROMPT"] = "0"
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=300, env=env)


def _head(project: Path) -> str | None:
    probe = _git("rev-parse", "--verify", "--quiet", "HEAD^{commit}", cwd=project)
    return probe.stdout.strip() if probe.returncode == 0 else None


@contextlib.contextmanager
def replay_checkout(project: Path) -> Iterator[Path]:
    """Yield a fresh directory holding the project at HEAD (or a copy of its files)."""
    project = project.resolve()
    target = replay_root() / f"checkout-{uuid.uuid4().hex[:12]}"
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        head = _head(project) if (project / ".git").exists() else None
        if head:
            clone = _git("clone", "--quiet", "--shared", "--no-checkout", str(project), str(target))
            if clone.returncode != 0:
                raise CheckoutError(f"could not clone {project} for replays: {clone.stderr.strip()}")
            checkout = _git("-c", "advice.detachedHead=false", "checkout", "--quiet", "--detach", head, cwd=target)
            if checkout.returncode != 0:
                raise CheckoutError(f"could not check out {head[:12]} for replays: {checkout.stderr.strip()}")
            # No remotes: nothing a replay runs can fetch from or push to the person's repository by name.
            _git("remote", "remove", "origin", cwd=target)
        else:
            _copy_tree(project, target)
        yield target
    finally:
        shutil.rmtree(target, ignore_errors=True)


def _copy_tree(source: Path, target: Path) -> None:
    total = 0

    def ignore(folder: str, names: list[str]) -> set[str]:
        nonlocal total
        skipped = {n for n in names if n in SKIP_DIRS}
        for name in names:
            if name in skipped:
                continue
            item = Path(folder) / name
            if item.is_file() and not item.is_symlink():
                total += item.stat().st_size
        if total > MAX_COPY_BYTES:
            raise CheckoutError(
                f"{source} is not a git repository and holds over {MAX_COPY_BYTES // 2**20} MB; "
                "replays need a copy of it. Make it a git repository (the night then clones HEAD) "
                "or pass --skill to train without replaying in the project.")
        return skipped

    shutil.copytree(source, target, ignore=ignore, symlinks=True)
