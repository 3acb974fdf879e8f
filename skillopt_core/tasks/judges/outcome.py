"""Outcome judges: what the agent *did*, read from the rollout's trajectory.
Registered as the built-in types ``ran``, ``not_ran``, ``touched``,
``not_touched`` and ``check``.

=============  ===============================  =====================================
type           options                          passes when
=============  ===============================  =====================================
ran            command / commands               a command the agent ran matches one
                                                (it started: not denied, an exit code,
                                                not 126 or 127)
not_ran        command / commands               no command the agent ran *or tried*
                                                matches any (a denied attempt counts)
touched        path / paths (globs)             a file the agent changed matches one
not_touched    path / paths (globs)             no file the agent changed matches any
check          command (an allowed runner)      the command, run in the working
                                                directory after the agent finished
                                                (same sandbox), exited 0
=============  ===============================  =====================================

A command pattern is a command's leading words (``pnpm``, ``terraform apply``,
``npm install``); it matches a command whose program and first arguments are
those words, in any segment of a shell line (``cd app && pnpm install``), also
inside ``bash -lc '...'`` wrappers, after ``VAR=value`` assignments.

``ran`` counts only a command that really started: one the host or sandbox
denied, one without an exit code (never started, or the host did not say) and
one that exited 126 (not executable) or 127 (command not found) did not run.
``not_ran`` counts every attempt, denied ones included: the gate asks whether
a skill steers the agent away from what the person corrected, and an agent
that still reaches for ``npm`` was not steered, whether or not the sandbox
then refused it. A path glob matches the changed path
relative to the working directory or its file name (``*.lock``,
``package-lock.json``, ``migrations/**``).

``check`` commands must be a test, lint, type-check or build runner
(:func:`is_check_command`; ``pytest -q``, ``pnpm test``, ``cargo check``,
``make lint``), one command without shell operators. The acting backend runs
them (``CompletionRequest.checks``, filled from the task's judge by
:func:`check_commands`); the judge reads their exit codes.

The rollout makes the trajectory visible while it scores
(:func:`scoring_trajectory`); without one (a chat backend, a read-only replay)
every outcome judge scores 0 and says why. Feedback names what the agent ran or
changed, never the judge's patterns, globs or check command.
"""

from __future__ import annotations

import contextlib
import contextvars
import fnmatch
import re
import shlex
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from skillopt_core.backends.trajectory import CommandRun, Trajectory
from skillopt_core.tasks.judges.options import one_or_many
from skillopt_core.tasks.judges.rules import word_absent_pattern
from skillopt_core.tasks.judges.spec import JudgeError, register_judge
from skillopt_core.tasks.task import Score, Task
from skillopt_core.tasks.text_metrics import one_line

__all__ = ["CheckJudge", "CommandJudge", "PathJudge", "check_commands", "command_matches", "current_trajectory",
           "is_check_command", "required_commands", "scoring_trajectory", "started"]

_TRAJECTORY: contextvars.ContextVar[Trajectory | None] = contextvars.ContextVar("skillopt_trajectory", default=None)


def current_trajectory() -> Trajectory | None:
    """The trajectory of the rollout being scored, or None."""
    return _TRAJECTORY.get()


@contextlib.contextmanager
def scoring_trajectory(trajectory: Trajectory | None) -> Iterator[None]:
    """Make ``trajectory`` visible to the judges while a rollout is scored."""
    token = _TRAJECTORY.set(trajectory)
    try:
        yield
    finally:
        _TRAJECTORY.reset(token)


# --------------------------------------------------------------------------- #
# command patterns

_SEGMENT_SPLIT = re.compile(r"\s*(?:&&|\|\||;|\||\n)\s*")
_SHELLS = frozenset({"bash", "sh", "zsh", "dash"})
_ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_PREFIXES = frozenset({"sudo", "env", "time", "nice", "command", "exec"})


def command_words(command: str) -> list[list[str]]:
    """The word lists of each simple command in a shell line (wrappers unwrapped)."""
    out: list[list[str]] = []
    for segment in _SEGMENT_SPLIT.split(command.strip()):
        try:
            words = shlex.split(segment)
        except ValueError:
            words = segment.split()
        while words and (_ASSIGN.match(words[0]) or words[0] in _PREFIXES):
            words = words[1:]
        if words and words[0].rsplit("/", 1)[-1] in _SHELLS and len(words) >= 3 and words[1] in ("-c", "-lc", "-ic"):
            out += command_words(words[2])
            continue
        if words:
            words[0] = words[0].rsplit("/", 1)[-1]
            out.append(words)
    return out


def command_matches(command: str, pattern: str) -> bool:
    """Does any simple command of ``command`` start with the words of ``pattern``?"""
    want = pattern.split()
    if not want:
        return False
    return any(words[: len(want)] == want for words in command_words(command))


def _no_trajectory() -> Score:
    return Score(0.0, 0.0, "No record of the agent's actions came back (a read-only replay or a backend that "
                           "does not report them), so what it did could not be judged.")


NOT_STARTED_CODES = frozenset({126, 127})  # the shell's "cannot execute" and "command not found"


def started(run: CommandRun) -> bool:
    """Did the command really start? Not denied, with an exit code, and not 126/127."""
    return not run.denied and run.exit_code is not None and run.exit_code not in NOT_STARTED_CODES


def _why_not(run: CommandRun) -> str:
    if run.denied:
        return "denied"
    if run.exit_code is None:
        return "it never started"
    return f"exit {run.exit_code}: " + ("command not found" if run.exit_code == 127 else "could not execute")


@dataclass(frozen=True)
class CommandJudge:
    patterns: tuple[str, ...]
    must_run: bool

    async def score(self, task: Task, response: str) -> Score:
        trajectory = current_trajectory()
        if trajectory is None:
            return _no_trajectory()
        tried = trajectory.commands()
        hits = [c for c in tried if any(command_matches(c.command, p) for p in self.patterns)]
        if self.must_run:
            if any(started(c) for c in hits):
                return Score(1.0, 1.0, "The agent ran the kind of command this task needs.")
            if hits:
                return Score(0.0, 0.0, f"The agent tried `{one_line(hits[0].command, 120)}` but it did not run "
                                       f"({_why_not(hits[0])}).")
            ran = [c for c in tried if started(c)]
            seen = ", ".join(f"`{one_line(c.command, 120)}`" for c in ran[:4]) or "no commands"
            return Score(0.0, 0.0, f"The agent did not run the command the person uses for this task (it ran {seen}).")
        if not hits:
            return Score(1.0, 1.0, "The agent avoided the commands the person corrected before.")
        how = "tried" if not started(hits[0]) else "ran"
        return Score(0.0, 0.0, f"The agent {how} `{one_line(hits[0].command, 120)}`; the person corrected that before.")


def _commands(rule: dict[str, Any]) -> list[str]:
    return list(rule.get("commands") or ([rule["command"]] if "command" in rule else []))


def _ran_as_text(rule: dict[str, Any], siblings: Sequence[Any]) -> list[dict[str, Any]]:
    """``ran pnpm`` → the answer contains ``pnpm`` (the command named stands for the command run)."""
    values = _commands(rule)
    return [{"type": "contains", "values": values} if len(values) > 1 else {"type": "contains", "value": values[0]}]


def _inside(words: str, command: str) -> bool:
    w, c = words.split(), command.split()
    return any(c[i:i + len(w)] == w for i in range(len(c) - len(w) + 1))


def _not_ran_as_text(rule: dict[str, Any], siblings: Sequence[Any]) -> list[dict[str, Any]]:
    """``not_ran npm`` → the answer does not name ``npm`` as a word. A forbidden command inside a
    required one (``not_ran pytest`` beside ``ran uv run pytest``) cannot be told apart in text and is
    left to the ``contains`` rule."""
    required = [r.get("command", "") for r in siblings if isinstance(r, dict) and r.get("type") == "ran"]
    kept = [c for c in _commands(rule) if c and not any(_inside(c, r) for r in required)]
    return [{"type": "regex", "pattern": word_absent_pattern(kept)}] if kept else []


@register_judge("ran", {"command": "a command pattern (leading words, e.g. 'pnpm')", "commands": "a list of them"},
                reads_trajectory=True, as_text=_ran_as_text)
def _build_ran(opts: dict[str, Any], backend: Any) -> CommandJudge:
    return CommandJudge(one_or_many("ran", opts, "command", "commands", strip=True), True)


@register_judge("not_ran", {"command": "a command pattern (leading words, e.g. 'terraform apply')",
                            "commands": "a list of them"}, reads_trajectory=True, as_text=_not_ran_as_text)
def _build_not_ran(opts: dict[str, Any], backend: Any) -> CommandJudge:
    return CommandJudge(one_or_many("not_ran", opts, "command", "commands", strip=True), False)


# --------------------------------------------------------------------------- #
# path globs


def path_matches(path: str, glob: str) -> bool:
    path = path.replace("\\", "/").lstrip("./") if path.startswith("./") else path.replace("\\", "/")
    name = path.rsplit("/", 1)[-1]
    if fnmatch.fnmatchcase(path, glob) or fnmatch.fnmatchcase(name, glob):
        return True
    if glob.endswith("/**"):
        return path.startswith(glob[:-3].rstrip("/") + "/")
    return False


@dataclass(frozen=True)
class PathJudge:
    globs: tuple[str, ...]
    must_touch: bool

    async def score(self, task: Task, response: str) -> Score:
        trajectory = current_trajectory()
        if trajectory is None:
            return _no_trajectory()
        changed = trajectory.file_changes()
        hits = [c for c in changed if any(path_matches(c.path, g) for g in self.globs)]
        if self.must_touch:
            if hits:
                return Score(1.0, 1.0, "The agent changed the files this task is about.")
            seen = ", ".join(f"`{c.path}`" for c in changed[:5]) or "no files"
            return Score(0.0, 0.0, f"The agent did not change the files this task is about (it changed {seen}).")
        if not hits:
            return Score(1.0, 1.0, "The agent left alone the files the person wants unchanged.")
        return Score(0.0, 0.0, f"The agent changed `{hits[0].path}` ({hits[0].change}); the person does not want "
                               "that file changed.")


@register_judge("touched", {"path": "a path glob (e.g. 'CHANGELOG.md', 'src/**')", "paths": "a list of them"},
                reads_trajectory=True)
def _build_touched(opts: dict[str, Any], backend: Any) -> PathJudge:
    return PathJudge(one_or_many("touched", opts, "path", "paths", strip=True), True)


@register_judge("not_touched", {"path": "a path glob (e.g. 'package-lock.json', '*.lock')", "paths": "a list of them"},
                reads_trajectory=True)
def _build_not_touched(opts: dict[str, Any], backend: Any) -> PathJudge:
    return PathJudge(one_or_many("not_touched", opts, "path", "paths", strip=True), False)


# --------------------------------------------------------------------------- #
# check

# Leading words of the verification commands a check may run: test, lint, type-check and build runners.
CHECK_RUNNERS: tuple[tuple[str, ...], ...] = tuple(tuple(r.split()) for r in (
    "pytest", "python -m pytest", "python3 -m pytest", "uv run pytest", "poetry run pytest", "hatch test",
    "tox", "nox", "ruff check", "ruff format --check", "uv run ruff", "mypy", "uv run mypy", "pyright",
    "black --check", "flake8", "pylint", "python -m unittest", "python3 -m unittest",
    "npm test", "npm run test", "npm run lint", "npm run build", "npm run typecheck", "npm run check",
    "pnpm test", "pnpm run test", "pnpm lint", "pnpm run lint", "pnpm build", "pnpm run build", "pnpm typecheck",
    "pnpm run typecheck", "yarn test", "yarn lint", "yarn build", "bun test", "npx tsc", "npx eslint",
    "npx vitest", "npx jest", "tsc", "eslint", "vitest", "jest", "prettier --check",
    "cargo test", "cargo check", "cargo build", "cargo clippy", "cargo fmt --check", "go test", "go vet",
    "go build", "make test", "make check", "make lint", "make build", "gradle test", "./gradlew test",
    "mvn test", "mvn -q test", "bundle exec rspec", "rspec", "shellcheck", "dotnet test", "dotnet build",
    "swift test", "mix test", "ctest",
))
_SHELL_OPERATORS = re.compile(r"[;&|<>`$(){}]|\n")


def is_check_command(command: str) -> bool:
    """Is ``command`` one verification runner from :data:`CHECK_RUNNERS`, without shell operators?"""
    if not isinstance(command, str) or not command.strip() or _SHELL_OPERATORS.search(command):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    return any(tuple(words[: len(r)]) == r for r in CHECK_RUNNERS)


def check_commands(spec: Any) -> tuple[str, ...]:
    """The ``check`` commands of a judge spec (a dict, a list of them, or a type name)."""
    if isinstance(spec, dict):
        if str(spec.get("type", "")).strip().lower() == "check" and isinstance(spec.get("command"), str):
            return (spec["command"].strip(),)
        return ()
    if isinstance(spec, (list, tuple)):
        out: list[str] = []
        for part in spec:
            out += [c for c in check_commands(part) if c not in out]
        return tuple(out)
    return ()


def required_commands(spec: Any) -> tuple[str, ...]:
    """The commands a judge spec needs the agent to be able to run: its ``ran`` patterns and
    its ``check`` commands (a dict, a list of them, or anything else: none)."""
    if isinstance(spec, dict):
        kind = str(spec.get("type", "")).strip().lower()
        if kind == "ran":
            many = spec["commands"] if isinstance(spec.get("commands"), list) else []
            one = [spec["command"]] if isinstance(spec.get("command"), str) else []
            return tuple(" ".join(c.split()) for c in one + many if isinstance(c, str) and c.strip())
        return check_commands(spec)
    if isinstance(spec, (list, tuple)):
        out: list[str] = []
        for part in spec:
            out += [c for c in required_commands(part) if c not in out]
        return tuple(out)
    return ()


@dataclass(frozen=True)
class CheckJudge:
    command: str

    async def score(self, task: Task, response: str) -> Score:
        trajectory = current_trajectory()
        if trajectory is None:
            return _no_trajectory()
        runs = [c for c in trajectory.checks() if c.command == self.command]
        if not runs:
            return Score(0.0, 0.0, "The project's verification did not run after the agent finished (no sandboxed "
                                   "checkout), so the result could not be checked.")
        run = runs[-1]
        if run.passed:
            return Score(1.0, 1.0, "The project's verification passed after the agent's work.")
        code = "could not start" if run.exit_code is None else f"exit code {run.exit_code}"
        return Score(0.0, 0.0, f"The project's verification failed after the agent's work ({code}).")


@register_judge("check", {"command": "a test, lint, type-check or build command run in the checkout after the "
                                     "rollout (e.g. 'pytest -q'); passes on exit 0"}, reads_trajectory=True)
def _build_check(opts: dict[str, Any], backend: Any) -> CheckJudge:
    command = opts.get("command")
    if not isinstance(command, str) or not command.strip():
        raise JudgeError("Judge 'check' needs 'command', e.g. 'pytest -q'.")
    if not is_check_command(command):
        raise JudgeError(f"Judge 'check' command {command!r} is not an allowed verification runner (a test, "
                         "lint, type-check or build command such as 'pytest -q', 'pnpm test', 'cargo check', "
                         "one command without shell operators).")
    return CheckJudge(command.strip())
