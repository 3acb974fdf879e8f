"""Run the agent's ``solution.py`` on one test case: in a scratch directory,
time-limited, without network, with nothing of this process's environment
(no keys) but ``PATH``.

The sandbox is one small seam, a *launcher*: a picklable callable that takes
the command and the scratch directory and returns the command to run. The
default wraps it in bubblewrap (``bwrap --unshare-net``; the file system is
read-only except the scratch directory) when ``bwrap`` is on PATH; without
it, :data:`NO_SANDBOX` runs the command as is and :func:`sandbox_note` says so.
A caller with a stronger sandbox passes its own launcher (the env's
``launcher`` attribute), e.g. one built by the sleep layer's replay sandbox.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from skillopt_core.envs.spreadsheetbench.compare import Mismatch, compare_workbooks
from skillopt_core.interpreter_paths import interpreter_paths_under_tmp

OUTPUT_NAME = "output.xlsx"


class Launcher(Protocol):
    def __call__(self, argv: list[str], workdir: Path) -> list[str]: ...


@dataclass(frozen=True)
class NoSandbox:
    """Run the command as is (still time-limited, with a scrubbed environment)."""

    name: str = "none"

    def __call__(self, argv: list[str], workdir: Path) -> list[str]:
        return list(argv)


@dataclass(frozen=True)
class BwrapSandbox:
    """bubblewrap: no network, no other processes, read-only system, writable scratch dir."""

    bwrap: str = "bwrap"
    name: str = "bwrap"

    def __call__(self, argv: list[str], workdir: Path) -> list[str]:
        work = str(workdir)
        # /tmp is a fresh tmpfs inside, so an interpreter or a checkout that lives
        # under /tmp (a CI virtualenv, say) is bound back, read-only.
        back = [arg for path in interpreter_paths_under_tmp() for arg in ("--ro-bind", path, path)]
        return [self.bwrap, "--unshare-net", "--unshare-pid", "--die-with-parent", "--new-session",
                "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", *back,
                "--bind", work, work, "--chdir", work, "--", *argv]


NO_SANDBOX = NoSandbox()


def default_launcher(mode: str = "auto") -> Launcher:
    """``auto``: bwrap when it is on PATH, else no sandbox; ``bwrap``: bwrap or
    an error; ``none``: no sandbox."""
    found = shutil.which("bwrap")
    if mode == "none":
        return NO_SANDBOX
    if found:
        return BwrapSandbox(found)
    if mode == "bwrap":
        raise ValueError("env.options.sandbox is 'bwrap' but bwrap is not on PATH (apt-get install bubblewrap).")
    return NO_SANDBOX


def sandbox_note(launcher: Launcher) -> str:
    if getattr(launcher, "name", "") == "none":
        return ("SpreadsheetBench: solutions run without a network sandbox (bwrap not found or "
                "env.options.sandbox: none); they are still time-limited and get no keys.")
    return ""


@dataclass(frozen=True)
class CaseResult:
    passed: bool
    mismatches: tuple[Mismatch, ...] = ()
    problem: str = ""  # why the case failed other than by its cells (timeout, crash, no output)


def _scrubbed_env(workdir: Path) -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(workdir), "LANG": "C.UTF-8",
            "PYTHONDONTWRITEBYTECODE": "1", "PYTHONIOENCODING": "utf-8"}


def run_case(code: str, input_path: Path, answer_path: Path, position: str, timeout: float,
             launcher: Launcher) -> CaseResult:
    """Run ``code`` as ``solution.py INPUT OUTPUT`` on a copy of ``input_path`` and compare."""
    with tempfile.TemporaryDirectory(prefix="skillopt-ssb-") as scratch:
        work = Path(scratch)
        (work / "solution.py").write_text(code, encoding="utf-8")
        shutil.copyfile(input_path, work / input_path.name)
        argv = launcher([sys.executable, "solution.py", input_path.name, OUTPUT_NAME], work)
        proc = subprocess.Popen(argv, cwd=work, env=_scrubbed_env(work), stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        try:
            _, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            return CaseResult(False, problem=f"solution.py did not finish within {timeout:g} s")
        if proc.returncode != 0:
            last = (err.decode("utf-8", "replace").strip().splitlines() or ["(no message)"])[-1]
            return CaseResult(False, problem=f"solution.py exited with {proc.returncode}: {last[:300]}")
        ok, mismatches, problem = compare_workbooks(answer_path, work / OUTPUT_NAME, position)
        return CaseResult(ok, tuple(mismatches), problem)


def check_solution(code: str, cases: list[tuple[str, str]], position: str, timeout: float,
                   launcher: Launcher) -> list[CaseResult]:
    """Every test case ``(input, answer)`` of one task; the unit an executor runs
    (in a thread, or as one Ray task)."""
    return [run_case(code, Path(i), Path(a), position, timeout, launcher) for i, a in cases]


