"""What a rollout changed in its checkout, read by git on the host without trusting anything in the checkout.

The sandbox lets the rollout write its whole checkout, ``.git`` included: an
install or test script may set ``core.fsmonitor``, a ``filter.<x>.clean``
driver (named by ``.gitattributes``), an ``include.path``, hooks or
``objects/info/alternates`` there. git always reads a repository's own
configuration, so no ``-c`` switch neutralises every key. The status and diff
stat therefore never look at the checkout's ``.git``: ``GIT_DIR`` is the
trusted copy :func:`sleep.replay.checkout.replay_checkout` made before the
rollout (HEAD, the index, the configuration ``git clone`` wrote, the object
stores named in full) and ``GIT_WORK_TREE`` the checkout. With that
configuration the work tree's ``.gitattributes`` names only drivers that do not
exist, so they are inert. On top of that:

- no system or global configuration (``GIT_CONFIG_NOSYSTEM``,
  ``GIT_CONFIG_GLOBAL=/dev/null``, ``GIT_ATTR_NOSYSTEM``, ``HOME`` the trusted
  folder) and a scrubbed environment (``PATH`` and ``LC_ALL=C`` only: nothing
  of the person's keys reaches git or anything it might start);
- the protective settings of :mod:`sleep.gitsafe` plus
  ``core.attributesFile=/dev/null``, ``core.untrackedCache=false``, submodules
  ignored (a submodule's status would run git in the submodule's own,
  writable, repository), ``core.bigFileThreshold`` (larger files are diffed as
  binary, without being loaded) and ``--no-ext-diff --no-textconv``;
- no optional locks (the trusted index is not rewritten), a wall limit and
  an output cap (the output goes to a file; at most ``cap`` bytes are read).
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

from sleep.gitsafe import NO_DIFF_PROGRAMS, protective_args

GIT_TIMEOUT_S = 120.0
OUTPUT_CAP = 16 * 1024 * 1024
BIG_FILE = 16 * 1024 * 1024

EXTRA_CONFIG = {
    "core.attributesFile": os.devnull,
    "core.excludesFile": os.devnull,
    "core.untrackedCache": "false",
    "core.splitIndex": "false",
    "core.bigFileThreshold": str(BIG_FILE),
    "status.submoduleSummary": "false",
    "diff.ignoreSubmodules": "all",
    "gc.auto": "0",
}


class GitViewError(RuntimeError):
    """git could not report the checkout's changes (it failed, or ran over its limit)."""


def environment(trusted: Path, work: Path) -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", os.defpath), "LC_ALL": "C", "HOME": str(trusted),
            "GIT_DIR": str(trusted), "GIT_WORK_TREE": str(work), "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull, "GIT_ATTR_NOSYSTEM": "1", "GIT_OPTIONAL_LOCKS": "0",
            "GIT_TERMINAL_PROMPT": "0", "GIT_PAGER": "cat", "PAGER": "cat"}


def argv(*args: str) -> list[str]:
    out = ["git", *protective_args()]
    for key, value in EXTRA_CONFIG.items():
        out += ["-c", f"{key}={value}"]
    return [*out, *args]


def run(trusted: Path, work: Path, *args: str, timeout: float = GIT_TIMEOUT_S, cap: int = OUTPUT_CAP) -> bytes:
    """``git <args>`` over ``work`` with ``trusted`` as its repository; at most ``cap`` bytes of its output."""
    with tempfile.TemporaryFile(dir=trusted) as out:
        try:
            done = subprocess.run(argv(*args), cwd=trusted, env=environment(trusted, work), stdin=subprocess.DEVNULL,
                                  stdout=out, stderr=subprocess.PIPE, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise GitViewError(f"git {args[0]} in {work} did not finish within {timeout:g} s") from None
        if done.returncode != 0:
            raise GitViewError(f"git {args[0]} in {work} failed: {done.stderr[-500:].decode('utf-8', 'replace')}")
        out.seek(0)
        return out.read(cap)


def status(trusted: Path, work: Path, **limits) -> bytes:
    return run(trusted, work, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--ignore-submodules=all",
               **limits)


def numstat(trusted: Path, work: Path, **limits) -> bytes:
    return run(trusted, work, "diff", *NO_DIFF_PROGRAMS, "--ignore-submodules=all", "--numstat", "-z", "HEAD",
               **limits)
