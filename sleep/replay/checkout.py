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
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

from skillopt_core.replay import replay_root
from sleep.gitsafe import git_argv, protective_env

SKIP_DIRS = frozenset({".git", "node_modules", ".venv", "venv", "__pycache__", ".mypy_cache", ".pytest_cache",
                       "target", "dist", "build", ".tox", ".next"})
MAX_COPY_BYTES = 500 * 1024 * 1024


class CheckoutError(RuntimeError):
    """The project could not be checked out for replays; the message says why."""


TRUSTED_SUFFIX = ".trusted-git"


def _git(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """git with the protective settings (:mod:`sleep.gitsafe`): no hooks, monitor, pager or diff program."""
    return subprocess.run(git_argv(*args), cwd=cwd, capture_output=True, text=True, timeout=300,
                          env=protective_env())


def _head(project: Path) -> str | None:
    probe = _git("rev-parse", "--verify", "--quiet", "HEAD^{commit}", cwd=project)
    return probe.stdout.strip() if probe.returncode == 0 else None


@contextlib.contextmanager
def replay_checkout(project: Path) -> Iterator[Path]:
    """Yield a fresh directory holding the project at HEAD (or a copy of its files)."""
    project = project.resolve()
    target = replay_root() / f"checkout-{uuid.uuid4().hex[:12]}"
    trusted = trusted_gitdir_path(target)
    try:
        head = _head(project) if (project / ".git").exists() else None
        if head:
            clone = _git("clone", "--quiet", "--template=", "--shared", "--no-checkout", str(project), str(target))
            if clone.returncode != 0:
                raise CheckoutError(f"could not clone {project} for replays: {clone.stderr.strip()}")
            checkout = _git("-c", "advice.detachedHead=false", "checkout", "--quiet", "--detach", head, cwd=target)
            if checkout.returncode != 0:
                raise CheckoutError(f"could not check out {head[:12]} for replays: {checkout.stderr.strip()}")
            # No remotes: nothing a replay runs can fetch from or push to the person's repository by name.
            _git("remote", "remove", "origin", cwd=target)
            _seal(target, trusted)
        else:
            _copy_tree(project, target)
        yield target
    finally:
        shutil.rmtree(target, ignore_errors=True)
        shutil.rmtree(trusted, ignore_errors=True)


def trusted_gitdir_path(work: Path) -> Path:
    """Where :func:`replay_checkout` keeps the trusted copy of ``work``'s git metadata (beside it, never
    inside: the sandbox binds only the checkout writable)."""
    return work.parent / (work.name + TRUSTED_SUFFIX)


def trusted_gitdir(work: Path) -> Path | None:
    """The trusted git directory of a checkout :func:`replay_checkout` made (None: not a clone of ours)."""
    trusted = trusted_gitdir_path(Path(work))
    return trusted if (trusted / "HEAD").is_file() and not trusted.is_symlink() else None


def trusted_alternates(work: Path) -> list[Path]:
    """The object stores a checkout reads through, as they were right after the clone (before anything ran
    in it); never read again from the checkout, whose ``.git`` the rollout could rewrite."""
    gitdir = trusted_gitdir(work)
    if gitdir is None:
        return []
    listing = gitdir / "objects" / "info" / "alternates"
    return [Path(line) for line in listing.read_text(encoding="utf-8").splitlines() if line.strip()]


def _object_stores(objects: Path) -> list[Path]:
    """The alternates chain of a git object folder (absolute, resolved, each once)."""
    found: list[Path] = []
    todo = [objects]
    while todo:
        info = todo.pop() / "info" / "alternates"
        if not info.is_file():
            continue
        for line in info.read_text(encoding="utf-8", errors="replace").splitlines():
            line = line.strip()
            if line and not line.startswith("#"):
                target = (info.parent.parent / line).resolve()
                if target.is_dir() and target not in found:
                    found.append(target)
                    todo.append(target)
    return found


def _seal(target: Path, trusted: Path) -> None:
    """Copy what git needs to compare the checkout with HEAD (HEAD, the index, the configuration ``git
    clone`` wrote) beside the checkout, before anything runs in it, with the object stores the clone reads
    through named in full. The post-rollout status reads only this copy (:mod:`sleep.replay.gitview`)."""
    git_dir = target / ".git"
    trusted.mkdir(mode=0o700)
    for name in ("HEAD", "index", "config"):
        source = git_dir / name
        if source.is_file() and not source.is_symlink():
            shutil.copyfile(source, trusted / name)
    (trusted / "refs").mkdir()
    (trusted / "objects" / "info").mkdir(parents=True)
    stores = _object_stores(git_dir / "objects")
    (trusted / "objects" / "info" / "alternates").write_text("".join(f"{p}\n" for p in stores), encoding="utf-8")


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
