"""What the three agent-CLI backends (claude-code, codex, copilot) share.

Contract:

- **Where a call runs.** Every call gets a fresh directory under
  :func:`skillopt_core.replay.replay_root` (``<tmp>/skillopt-replay`` unless
  ``SKILLOPT_REPLAY_ROOT`` says otherwise): ``<base>/work`` is the agent's
  working directory (holding only the installed skill) and ``<base>/meta``
  holds side files the CLI writes for us (usage statistics). The whole
  directory is removed when the call ends, whatever happened. A call never
  runs in the person's project directory.
- **How a replay is marked.** The prompt starts with
  :data:`skillopt_core.replay.REPLAY_MARKER`; together with the working
  directory under the replay root this lets the transcript harvester
  recognise and skip the sessions these calls create (see replay.py).
- **The skill.** For the *target* role, ``request.system`` is the skill under
  training (SKILL.md text; its front matter ``name`` names it, default
  :data:`DEFAULT_SKILL_NAME`). It is installed where the host reads skills and
  only the conversation is sent as the prompt, with a line asking the agent to
  use the skill. For other roles the system text is simply prepended to the
  prompt.
- **JSON output.** The schema is stated in the prompt; a valid JSON document in
  the reply is returned compactly, otherwise the reply as it is (the engine
  validates again).
- **Output lines.** :func:`json_lines` reads CLI output printed as one JSON
  object a line and counts the lines that are not, so a backend can say so.
- **The process.** Started without a shell in its own process group; stdin
  carries the prompt where the CLI reads it; on timeout the whole group is
  terminated (then killed) and a :class:`BackendError` says so; a non-zero exit
  becomes a :class:`BackendError` with the exit code and the end of stderr; a
  prompt too long for a command line (copilot takes it as an argument) is a
  :class:`RequestRejected`. Keys in error text are redacted.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import json
import logging
import os
import re
import shutil
import signal
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import yaml

from skillopt_core.replay import REPLAY_MARKER, replay_root
from skillopt_core.backends.base import BackendConfigError, BackendError, CompletionRequest, RequestRejected
from skillopt_core.backends.json_output import check, schema_instruction
from skillopt_core.backends.keys import redact

log = logging.getLogger(__name__)

DEFAULT_SKILL_NAME = "skillopt-skill"
DEFAULT_SKILL_DESCRIPTION = "Instructions for the task at hand. Read and follow them before answering."
DEFAULT_TIMEOUT = 120.0
_KILL_GRACE_S = 2.0
_NAME_BAD = re.compile(r"[^a-z0-9]+")


@dataclass(frozen=True)
class SkillDoc:
    """A skill ready to install: folder name and full SKILL.md text."""

    name: str
    text: str


@dataclass(frozen=True)
class CliResult:
    stdout: str
    stderr: str
    returncode: int
    seconds: float


def clean_skill_name(raw: Any) -> str:
    """A valid skill name (``a-z0-9-``, 1-64 chars, no edge or double hyphens)."""
    name = _NAME_BAD.sub("-", str(raw or "").lower()).strip("-")[:64].strip("-")
    return name or DEFAULT_SKILL_NAME


def split_front_matter(text: str) -> tuple[dict[str, Any] | None, str]:
    """(front matter mapping, body); (None, text) when there is none or it is unreadable."""
    if not text.startswith("---"):
        return None, text
    lines = text.splitlines(keepends=True)
    if lines[0].strip() != "---":
        return None, text
    for i in range(1, len(lines)):
        if lines[i].strip() == "---":
            try:
                meta = yaml.safe_load("".join(lines[1:i])) or {}
            except yaml.YAMLError:
                return None, text
            if not isinstance(meta, dict):
                return None, text
            return meta, "".join(lines[i + 1:])
    return None, text


def skill_from_system(system: str | None) -> SkillDoc | None:
    """The skill carried in ``system``, with front matter the hosts accept
    (``name`` equal to the folder name, a ``description``)."""
    if not system or not system.strip():
        return None
    meta, body = split_front_matter(system)
    if meta is None:
        name = DEFAULT_SKILL_NAME
        header = {"name": name, "description": DEFAULT_SKILL_DESCRIPTION}
        return SkillDoc(name, "---\n" + yaml.safe_dump(header, sort_keys=False) + "---\n\n" + system)
    name = clean_skill_name(meta.get("name"))
    fixed = dict(meta)
    fixed["name"] = name
    if not str(fixed.get("description") or "").strip():
        fixed["description"] = DEFAULT_SKILL_DESCRIPTION
    if fixed == meta:
        return SkillDoc(name, system)
    return SkillDoc(name, "---\n" + yaml.safe_dump(fixed, sort_keys=False, allow_unicode=True) + "---\n" + body)


def conversation_text(request: CompletionRequest) -> str:
    if len(request.messages) == 1 and request.messages[0].role == "user":
        return request.messages[0].content
    turns = [f"{'User' if m.role == 'user' else 'Assistant'}: {m.content}" for m in request.messages]
    return "\n\n".join(turns)


def effective_role(request: CompletionRequest, spec_role: str) -> str:
    """The request's role label when the engine set one, else the spec's."""
    return request.role or spec_role


def render_prompt(request: CompletionRequest, *, skill: SkillDoc | None, skill_path: str | None) -> str:
    """The marked prompt: marker, skill pointer (target) or system text
    (other roles), schema instruction, then the conversation."""
    parts = [REPLAY_MARKER]
    if skill is not None and skill_path is not None:
        parts.append(
            f'Use the skill "{skill.name}" (installed at {skill_path}): read it first and '
            "follow it for this task. Answer directly; do not create or edit files."
        )
    elif request.system:
        parts.append(request.system.strip())
    if request.json_schema is not None:
        parts.append(schema_instruction(request.json_schema))
    parts.append(conversation_text(request))
    return "\n\n".join(parts)


def finish_json(text: str, request: CompletionRequest) -> str:
    if request.json_schema is None:
        return text
    valid, _ = check(text, request.json_schema)
    return valid if valid is not None else text


@dataclass(frozen=True)
class ReplayDir:
    base: Path

    @property
    def work(self) -> Path:
        return self.base / "work"

    @property
    def meta(self) -> Path:
        return self.base / "meta"


@contextlib.contextmanager
def replay_dir(backend: str, skill: SkillDoc | None = None, skill_rel_dir: str | None = None) -> Iterator[ReplayDir]:
    """A fresh working directory under the replay root with the skill installed
    at ``<work>/<skill_rel_dir>/<name>/SKILL.md``; removed on exit."""
    root = replay_root()
    root.mkdir(parents=True, exist_ok=True, mode=0o700)
    base = Path(tempfile.mkdtemp(prefix=f"{backend}-", dir=root))
    layout = ReplayDir(base)
    try:
        layout.work.mkdir()
        layout.meta.mkdir()
        if skill is not None and skill_rel_dir is not None:
            target = layout.work / skill_rel_dir / skill.name / "SKILL.md"
            target.parent.mkdir(parents=True)
            target.write_text(skill.text, encoding="utf-8")
        yield layout
    finally:
        shutil.rmtree(base, ignore_errors=True)


def find_executable(command: str, backend: str, install_hint: str) -> str:
    path = shutil.which(command)
    if path is None:
        raise BackendConfigError(
            f"{backend} backend: the `{command}` command is not on PATH. {install_hint} "
            "Or choose another backend (model.backend)."
        )
    return path


def child_environment() -> dict[str, str]:
    """The CLI's environment: the person's own (the CLI needs its login), plus
    plain output. Keys read from a ``.env`` file are not added (see keys.py)."""
    env = dict(os.environ)
    env["NO_COLOR"] = "1"
    env["SKILLOPT_REPLAY"] = "1"
    return env


def _stop_group(proc: asyncio.subprocess.Process, sig: int) -> None:
    try:
        if hasattr(os, "killpg"):
            os.killpg(proc.pid, sig)
        else:  # pragma: no cover - Windows has no process groups like this
            proc.kill()
    except ProcessLookupError:
        pass


async def run_cli(
    argv: list[str],
    *,
    cwd: Path,
    timeout: float,
    backend: str,
    stdin_text: str | None = None,
) -> CliResult:
    """Run ``argv`` in ``cwd``; stop the whole process group after ``timeout`` s."""
    started = time.monotonic()
    command = Path(argv[0]).name
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            cwd=str(cwd),
            env=child_environment(),
            stdin=asyncio.subprocess.PIPE if stdin_text is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as exc:
        if exc.errno == errno.E2BIG:
            raise RequestRejected(
                f"{backend}: this prompt is too long to pass to `{command}` on its command line."
            ) from None
        raise BackendError(f"{backend}: could not start `{command}` ({exc.strerror or exc}).") from None
    data = stdin_text.encode("utf-8") if stdin_text is not None else None
    try:
        out, err = await asyncio.wait_for(proc.communicate(data), timeout=timeout)
    except asyncio.TimeoutError:
        _stop_group(proc, signal.SIGTERM)
        try:
            await asyncio.wait_for(proc.wait(), timeout=_KILL_GRACE_S)
        except asyncio.TimeoutError:
            _stop_group(proc, signal.SIGKILL)
            await proc.wait()
        raise BackendError(
            f"{backend}: `{command}` did not finish within {timeout:g} s and was stopped. "
            "Raise model.timeout, or lower model.max_turns."
        ) from None
    finally:
        if proc.returncode is None:  # cancelled from outside: do not leave it running
            _stop_group(proc, signal.SIGKILL)
    return CliResult(
        stdout=out.decode("utf-8", errors="replace"),
        stderr=err.decode("utf-8", errors="replace"),
        returncode=proc.returncode if proc.returncode is not None else -1,
        seconds=time.monotonic() - started,
    )


def tail(text: str, lines: int = 12, limit: int = 1500) -> str:
    """The end of a CLI's output, redacted, for an error message."""
    kept = "\n".join(text.strip().splitlines()[-lines:])
    return redact(kept[-limit:])


def exit_error(backend: str, command: str, result: CliResult, hint: str) -> BackendError:
    detail = tail(result.stderr) or tail(result.stdout) or "(no output)"
    return BackendError(f"{backend}: `{command}` exited with code {result.returncode}. {hint}\n{detail}")


def timeout_from(options: dict[str, Any]) -> float:
    value = options.get("timeout")
    return float(value) if value else DEFAULT_TIMEOUT


def json_lines(stdout: str) -> tuple[list[dict[str, Any]], int]:
    """(the JSON objects printed one a line, in order; how many other
    non-blank lines there were)."""
    objects: list[dict[str, Any]] = []
    other = 0
    for line in stdout.splitlines():
        line = line.strip()
        if not line:
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            other += 1
            continue
        if isinstance(obj, dict):
            objects.append(obj)
        else:
            other += 1
    return objects, other


class CliBackend:
    """Base of the three CLI backends: the options they share, the executable,
    and a prepared replay directory per call. Subclasses set ``name``,
    ``command``, ``skill_dir`` (where the host reads skills, relative to the
    working directory) and ``install_hint``."""

    name: str
    command: str
    skill_dir: str
    install_hint: str

    def __init__(self, *, model: str | None, role: str, options: dict[str, Any]) -> None:
        self.model = model or "default"
        self._cli_model = model
        self._role = role
        self._timeout = timeout_from(options)
        self._exe = find_executable(self.command, self.name, self.install_hint)

    def _is_target(self, request: CompletionRequest) -> bool:
        return effective_role(request, self._role) == "target"

    @contextlib.contextmanager
    def _replay(self, request: CompletionRequest) -> Iterator[tuple[ReplayDir, str]]:
        """(a fresh replay directory, the marked prompt); for the target role
        the skill in ``request.system`` is installed there and pointed to."""
        skill = skill_from_system(request.system) if self._is_target(request) else None
        with replay_dir(self.name, skill, self.skill_dir) as where:
            skill_path = f"{self.skill_dir}/{skill.name}/SKILL.md" if skill else None
            yield where, render_prompt(request, skill=skill, skill_path=skill_path)

    async def _run(self, argv: list[str], where: ReplayDir, stdin_text: str | None = None) -> CliResult:
        return await run_cli(argv, cwd=where.work, timeout=self._timeout, backend=self.name, stdin_text=stdin_text)
