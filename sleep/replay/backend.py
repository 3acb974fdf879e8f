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
   checkout, which replaces what the host reported, less the installed skill);
4. runs the task's ``check`` commands there, through the same sandbox;
5. removes the checkout.

The core never learns any of this: it sees a completion whose trajectory says
what happened. Calls of other roles pass straight through.
"""

from __future__ import annotations

import asyncio
import hashlib
import subprocess
from dataclasses import replace
from pathlib import Path

from skillopt_core import Completion, CompletionRequest
from skillopt_core.backends.cli_common import CliBackend
from skillopt_core.backends.trajectory import CheckRun, FileChange, Trajectory
from skillopt_core.tasks.judges.outcome import is_check_command
from sleep.cycle.checkout import replay_checkout

NOT_A_RUNNER = "not an allowed verification runner; not run"


def _snapshot(root: Path) -> dict[str, str]:
    out = {}
    for path in root.rglob("*"):
        if path.is_file() and not path.is_symlink() and ".git" not in path.relative_to(root).parts:
            out[path.relative_to(root).as_posix()] = hashlib.sha1(path.read_bytes()).hexdigest()
    return out


def _numstat(work: Path) -> dict[str, tuple[int, int]]:
    """Lines added and removed per tracked file against HEAD (binary files left out)."""
    done = subprocess.run(["git", "-C", str(work), "diff", "--numstat", "-z", "HEAD"], capture_output=True, timeout=120)
    out = {}
    for entry in done.stdout.decode("utf-8", "replace").split("\0"):
        parts = entry.split("\t")
        if len(parts) == 3 and parts[0].isdigit() and parts[1].isdigit():
            out[parts[2]] = (int(parts[0]), int(parts[1]))
    return out


def _line_count(path: Path) -> int | None:
    try:
        data = path.read_bytes()
    except OSError:
        return None
    return None if b"\0" in data[:8192] else data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)


def with_diff_stat(work: Path, changes: list[FileChange]) -> list[FileChange]:
    """``changes`` with lines added and removed (the rubric judge and the reviewer see the diff stat)."""
    stat = _numstat(work) if (work / ".git").exists() else {}
    out = []
    for c in changes:
        if c.path in stat:
            out.append(replace(c, lines_added=stat[c.path][0], lines_removed=stat[c.path][1]))
        elif c.change == "added":
            count = _line_count(work / c.path)
            out.append(replace(c, lines_added=count, lines_removed=0 if count is not None else None))
        else:
            out.append(c)
    return out


def observed_changes(work: Path, before: dict[str, str] | None) -> list[FileChange]:
    """The files changed in ``work``: from ``git status`` in a clone, else by content against ``before``."""
    if (work / ".git").exists():
        done = subprocess.run(["git", "-C", str(work), "status", "--porcelain=v1", "-z", "--untracked-files=all"],
                              capture_output=True, timeout=120)
        changes = []
        entries = done.stdout.decode("utf-8", "replace").split("\0")
        i = 0
        while i < len(entries):
            entry = entries[i]
            i += 1
            if len(entry) < 4:
                continue
            code, path = entry[:2], entry[3:]
            if "R" in code or "C" in code:
                i += 1  # the rename's source path follows
            kind = "added" if code == "??" or "A" in code else "deleted" if "D" in code else "modified"
            changes.append(FileChange(path, kind))
        return changes
    after = _snapshot(work)
    before = before or {}
    changes = [FileChange(p, "added") for p in after if p not in before]
    changes += [FileChange(p, "modified") for p in after if p in before and after[p] != before[p]]
    changes += [FileChange(p, "deleted") for p in before if p not in after]
    return sorted(changes, key=lambda c: c.path)


class ActionReplayBackend:
    """See the module docstring. ``inner`` must already act (``inner.act(launcher)``)."""

    def __init__(self, inner: CliBackend) -> None:
        if not inner.acting:
            raise ValueError("ActionReplayBackend needs an agent-CLI backend set to act (inner.act(launcher)).")
        self.inner = inner
        self.name = inner.name
        self.model = inner.model

    def describe(self) -> str:
        return f"{self.inner.describe()}, acting in a sandboxed checkout per rollout"

    async def complete(self, request: CompletionRequest) -> Completion:
        if request.cwd is None or (request.role or "target") != "target":
            return await self.inner.complete(request)
        template = Path(request.cwd)
        with replay_checkout(template) as work:
            before = None if (work / ".git").exists() else await asyncio.to_thread(_snapshot, work)
            completion = await self.inner.complete(replace(request, cwd=str(work), checks=()))
            changes = await asyncio.to_thread(observed_changes, work, before)
            skill_dir = self.inner.skill_dir.rstrip("/") + "/"
            changes = await asyncio.to_thread(with_diff_stat, work,
                                              [c for c in changes if not c.path.startswith(skill_dir)])
            runnable = [c for c in request.checks if is_check_command(c)]
            ran = iter(await self.inner.run_checks(runnable, work))
            checks = [next(ran) if is_check_command(c) else CheckRun(c, None, NOT_A_RUNNER) for c in request.checks]
        host = completion.trajectory or Trajectory()
        steps = tuple(s for s in host.steps if not isinstance(s, FileChange))
        trajectory = replace(host, steps=steps).with_steps(*changes, *checks)
        return replace(completion, trajectory=trajectory)
