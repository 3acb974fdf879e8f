"""An acting replay: each target rollout in its own disposable checkout, inside the sandbox.

:class:`ActionReplayBackend` wraps an agent-CLI backend that was told to act
(:meth:`skillopt_core.backends.cli_common.CliBackend.act` with the sandbox's
launcher). For every target call that names a working directory (the night's
template checkout) it

1. clones the template into a fresh checkout for this rollout alone (no
   remotes; rollouts never see each other's changes and may run side by side);
2. lets the agent work there (max turns, wall timeout and output cap are the
   inner backend's; the whole process group is ended on timeout);
3. records the files that really changed (``git status`` of the rollout's
   checkout, which replaces what the host reported, less the installed skill),
   read on the host from the trusted copy of the clone's metadata made before
   the rollout, never from the checkout's own ``.git`` (:mod:`sleep.replay.gitview`);
   each host-side step is bounded (a wall limit, line counts of at most
   :data:`LINE_COUNT_BYTES`, no link followed, no special file opened) and a
   checkout over :data:`DISK_BUDGET` on disk fails the rollout;
4. runs the task's ``check`` commands there, through the same sandbox;
5. removes the checkout.

The core never learns any of this: it sees a completion whose trajectory says
what happened. Calls of other roles pass straight through.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import stat
import time
from dataclasses import replace
from pathlib import Path

from skillopt_core import Completion, CompletionRequest
from skillopt_core.backends.base import RequestFailed
from skillopt_core.backends.cli_common import CliBackend
from skillopt_core.backends.trajectory import Change, CheckRun, FileChange, Trajectory
from skillopt_core.tasks.judges.outcome import is_check_command
from sleep.replay import gitview
from sleep.replay.checkout import replay_checkout, trusted_gitdir

NOT_A_RUNNER = "not an allowed verification runner; not run"


# Bounds of the host-side work after a rollout (the checkout is the rollout's: its content may be hostile).
LINE_COUNT_BYTES = 8 * 1024 * 1024  # an added file longer than this gets no line count
SNAPSHOT_FILES = 200_000  # a copied (non-git) checkout with more files is compared by name and size only
HASH_BYTES = 64 * 1024 * 1024  # a larger file is compared by size and modification time
HOST_STEP_S = 180.0  # the wall limit of each host-side step of a rollout
DISK_BUDGET = 2 * 1024**3  # the most a rollout's checkout may hold on disk after the rollout
DISK_ENTRIES = 500_000  # the most entries the disk measure walks


class HostStepFailed(RequestFailed):
    """A host-side step of a rollout ran over its limits; the rollout fails, the night goes on."""


def _open_regular(path: Path, root: Path) -> int | None:
    """A read-only descriptor of ``path`` if it is a regular file inside ``root`` reached without symlinks
    (never a FIFO, device or socket, never a link's target), else None."""
    try:
        if not os.path.realpath(path.parent).startswith(os.path.realpath(root)):
            return None
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        return None
    return fd


def _walk(root: Path, deadline: float):
    """(relative path, lstat) of every entry under ``root`` but ``.git`` folders, links never followed;
    stops at ``deadline`` (time.monotonic())."""
    for folder, dirs, files in os.walk(root):
        if time.monotonic() > deadline:
            raise HostStepFailed(f"walking {root} took over {HOST_STEP_S:g} s; the rollout's checkout is "
                                 "too large to compare")
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in [*dirs, *files]:
            path = Path(folder) / name
            try:
                yield path.relative_to(root).as_posix(), os.lstat(path)
            except OSError:
                continue


def _snapshot(root: Path, deadline: float | None = None) -> dict[str, str]:
    """A fingerprint of each regular file under ``root`` (no ``.git``, no links, no special files)."""
    deadline = deadline if deadline is not None else time.monotonic() + HOST_STEP_S
    out: dict[str, str] = {}
    for rel, st in _walk(root, deadline):
        if not stat.S_ISREG(st.st_mode):
            continue
        if len(out) >= SNAPSHOT_FILES or st.st_size > HASH_BYTES:
            out[rel] = f"size:{st.st_size}:{st.st_mtime_ns}"
            continue
        fd = _open_regular(root / rel, root)
        if fd is None:
            continue
        digest = hashlib.sha1()
        with os.fdopen(fd, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
        out[rel] = digest.hexdigest()
    return out


def disk_usage(root: Path, limit: int = DISK_BUDGET, deadline: float | None = None) -> int:
    """Bytes ``root`` holds on disk (allocated blocks, links not followed), counted until over ``limit``."""
    deadline = deadline if deadline is not None else time.monotonic() + HOST_STEP_S
    total = 0
    for n, (_, st) in enumerate(_walk(root, deadline)):
        total += getattr(st, "st_blocks", 0) * 512 or st.st_size
        if total > limit or n > DISK_ENTRIES:
            return max(total, limit + 1)
    return total


def _numstat(work: Path) -> dict[str, tuple[int, int]]:
    """Lines added and removed per tracked file against HEAD (binary files left out)."""
    trusted = trusted_gitdir(work)
    if trusted is None:
        return {}
    out = {}
    for entry in gitview.numstat(trusted, work).decode("utf-8", "replace").split("\0"):
        parts = entry.split("\t")
        if len(parts) == 3 and parts[0].isdigit() and parts[1].isdigit():
            out[parts[2]] = (int(parts[0]), int(parts[1]))
    return out


def _line_count(path: Path, root: Path | None = None, limit: int = LINE_COUNT_BYTES) -> int | None:
    """Lines of a regular text file of at most ``limit`` bytes (None: binary, larger, a link, a FIFO...)."""
    fd = _open_regular(path, root if root is not None else path.parent)
    if fd is None:
        return None
    with os.fdopen(fd, "rb") as fh:
        data = fh.read(limit + 1)
    if len(data) > limit:
        return None
    return None if b"\0" in data[:8192] else data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)


def with_diff_stat(work: Path, changes: list[FileChange]) -> list[FileChange]:
    """``changes`` with lines added and removed (the rubric judge and the reviewer see the diff stat)."""
    stat_ = _numstat(work)
    out = []
    for c in changes:
        if c.path in stat_:
            out.append(replace(c, lines_added=stat_[c.path][0], lines_removed=stat_[c.path][1]))
        elif c.change == "added":
            count = _line_count(work / c.path, work)
            out.append(replace(c, lines_added=count, lines_removed=0 if count is not None else None))
        else:
            out.append(c)
    return out


def observed_changes(work: Path, before: dict[str, str] | None) -> list[FileChange]:
    """The files changed in ``work``: from ``git status`` against the trusted copy of the clone's metadata
    (:mod:`sleep.replay.gitview`), else by content against ``before``."""
    trusted = trusted_gitdir(work)
    if trusted is not None:
        changes = []
        entries = gitview.status(trusted, work).decode("utf-8", "replace").split("\0")
        i = 0
        while i < len(entries):
            entry = entries[i]
            i += 1
            if len(entry) < 4:
                continue
            code, path = entry[:2], entry[3:]
            if "R" in code or "C" in code:
                i += 1  # the rename's source path follows
            kind: Change = "added" if code == "??" or "A" in code else "deleted" if "D" in code else "modified"
            changes.append(FileChange(path, kind))
        return changes
    after = _snapshot(work)
    before = before or {}
    changes = [FileChange(p, "added") for p in after if p not in before]
    changes += [FileChange(p, "modified") for p in after if p in before and after[p] != before[p]]
    changes += [FileChange(p, "deleted") for p in before if p not in after]
    return sorted(changes, key=lambda c: c.path)


async def host_step(what: str, func, *args, limit: float | None = None):
    """``func(*args)`` in a thread, failing the rollout cleanly past ``limit`` s (each step is also bounded
    on its own: git runs with a timeout, walks stop at a deadline)."""
    limit = HOST_STEP_S if limit is None else limit
    try:
        return await asyncio.wait_for(asyncio.to_thread(func, *args), timeout=limit)
    except asyncio.TimeoutError:
        raise HostStepFailed(f"the rollout's {what} took over {limit:g} s and was abandoned") from None
    except gitview.GitViewError as exc:
        raise HostStepFailed(f"the rollout's {what} failed: {exc}") from None


class ActionReplayBackend:
    """See the module docstring. ``inner`` must already act (``inner.act(launcher)``)."""

    def __init__(self, inner: CliBackend, disk_budget: int = DISK_BUDGET) -> None:
        if not inner.acting:
            raise ValueError("ActionReplayBackend needs an agent-CLI backend set to act (inner.act(launcher)).")
        self.inner = inner
        self.name = inner.name
        self.model = inner.model
        self.disk_budget = disk_budget

    def describe(self) -> str:
        return f"{self.inner.describe()}, acting in a sandboxed checkout per rollout"

    async def complete(self, request: CompletionRequest) -> Completion:
        if request.cwd is None or (request.role or "target") != "target":
            return await self.inner.complete(request)
        template = Path(request.cwd)
        with replay_checkout(template) as work:
            before = None if trusted_gitdir(work) is not None else await host_step("snapshot", _snapshot, work)
            completion = await self.inner.complete(replace(request, cwd=str(work), checks=()))
            used = await host_step("disk measure", disk_usage, work, self.disk_budget)
            if used > self.disk_budget:
                raise HostStepFailed(
                    f"the rollout's checkout holds over its disk budget ({self.disk_budget // 2**20} MB, or "
                    f"{DISK_ENTRIES} files): the rollout fails and its files are removed")
            changes = await host_step("git status", observed_changes, work, before)
            skill_dir = self.inner.skill_dir.rstrip("/") + "/"
            changes = await host_step("diff stat", with_diff_stat, work,
                                      [c for c in changes if not c.path.startswith(skill_dir)])
            runnable = [c for c in request.checks if is_check_command(c)]
            ran = iter(await self.inner.run_checks(runnable, work))
            checks = [next(ran) if is_check_command(c) else CheckRun(c, None, NOT_A_RUNNER) for c in request.checks]
        host = completion.trajectory or Trajectory()
        steps = tuple(s for s in host.steps if not isinstance(s, FileChange))
        trajectory = replace(host, steps=steps).with_steps(*changes, *checks)
        return replace(completion, trajectory=trajectory)
