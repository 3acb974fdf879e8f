"""What the agent-CLI backends (claude-code, codex, copilot, gemini-cli, opencode, cursor-agent, pi) share.

One :meth:`CliBackend.complete` drives every CLI; a backend gives its hooks:
:meth:`~CliBackend.command_line` (argv, stdin, extra variables),
:meth:`~CliBackend.parse` (the CLI's output as a :class:`CliOutput`) and, where its
failures read differently, :meth:`~CliBackend.failure`.

Contract:

- **Where a call runs.** Every call gets a fresh directory under
  :func:`skillopt_core.replay.replay_root` (``<tmp>/skillopt-replay`` unless
  ``SKILLOPT_REPLAY_ROOT`` says otherwise), removed when the call ends,
  whatever happened. Its ``meta`` folder holds side files the CLI writes for us
  (usage statistics). The agent runs in its ``work`` folder (empty but for the
  skill), or, when ``request.cwd`` is set, in that directory: a scratch
  checkout the caller prepared, which must be an existing directory under the
  replay root (else :class:`RequestRejected`), so the host's transcript of the
  session is recognised as a replay by its path too. The backend never creates,
  copies or deletes a checkout and knows nothing of git; it only installs the
  skill there for the call (:mod:`.cli_skill`). A call never runs in the
  person's own project directory.
- **How a replay is marked.** The prompt always starts with
  :data:`skillopt_core.replay.REPLAY_MARKER`; together with the working
  directory under the replay root this lets the transcript harvester
  recognise and skip the sessions these calls create (see replay.py).
- **The skill.** When ``request.skill`` is set (a target rollout), it is
  installed verbatim where the host reads skills (:mod:`.cli_skill`) and the
  prompt asks the agent to use it, followed by the env's instruction (the part
  of ``request.system`` that is not the skill) and the conversation. Without
  ``request.skill`` the system text is simply prepended to the prompt.
- **JSON output.** The schema is stated in the prompt and the reply is returned
  as it came; the engine (:func:`skillopt_core.backends.structured.complete_json`)
  extracts, validates and, once, repairs it.
- **Output lines.** :func:`json_lines` reads CLI output printed as one JSON
  object a line and counts the lines that are not, so a backend can say so.
- **The process.** Started without a shell in its own process group; stdin
  carries the prompt where the CLI reads it; on timeout the whole group is
  terminated (then killed).
- **Acting.** By default a target call gets read-only tools. After
  :meth:`CliBackend.act` (a :class:`Launcher` from the caller, e.g. the sleep
  layer's sandbox, and an output cap), a target call with a working directory
  may edit files and run the programs ``request.allowed_commands`` names; its
  process starts through the launcher, and ``request.checks`` run after it in
  the same directory and launcher. Every call returns the trajectory the
  host's stream reported (``Completion.trajectory``).
- **Failures** (:func:`cli_failure`): a timeout, a non-zero exit, an error the
  CLI reports and output without an answer are :class:`RequestFailed` (this
  item only), except when the CLI's own words say the cause is systemic: not
  logged in or a rejected key, credit or usage limit exhausted, or an unknown
  model (:class:`BackendConfigError`). A prompt too long for a command line
  (copilot takes it as an argument) is a :class:`RequestRejected`. A CLI that
  cannot be started at all is a :class:`BackendError`. Keys in error text are
  redacted. The engine stops a run after several consecutive per-item
  failures, so a systemic cause these words miss still stops it.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import json
import logging
import os
import re
import shlex
import shutil
import signal
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import Any, Protocol, TypeVar

from skillopt_core.backends.base import (
    BackendConfigError,
    BackendError,
    Completion,
    CompletionRequest,
    RequestFailed,
    RequestRejected,
    Usage,
)
from skillopt_core.backends.cli_skill import SkillDoc, instruction_of, shared_skill, skill_doc
from skillopt_core.backends.images import text_only
from skillopt_core.backends.json_output import schema_instruction
from skillopt_core.backends.keys import redact
from skillopt_core.backends.trajectory import CheckRun, Trajectory, TrajectoryBuilder, bounded
from skillopt_core.replay import REPLAY_MARKER, replay_root

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT = 120.0
# The roles whose calls an acting backend runs through its launcher (the night's sandbox): the
# replay's rollouts ("target", which also act) and the trigger step's runs of a request ("trigger",
# read-only). A night's CLI runs nowhere else on a person's request.
SANDBOXED_ROLES = ("target", "trigger")
CHECK_OUTPUT_CHARS = 4000  # of a check command's output kept before the trajectory bounds it
_KILL_GRACE_S = 2.0
# The most of each output stream a call without its own cap keeps (read while streaming; the rest is
# drained and dropped, so a runaway output never fills the night's memory).
OUTPUT_CEILING = 64 * 1024 * 1024
_CHUNK = 64 * 1024

# What a CLI says when the cause is not this one request (see the module doc).
_LOGIN_WORDS = re.compile(
    r"not logged in|please (?:run )?(?:/login|\S+ login)|log ?in (?:again|first|required)|unauthori[sz]ed|"
    r"(?:status|http)\W{0,3}40[13]\b|forbidden|authenticat|token (?:has )?expired|"
    r"invalid (?:api|x-api)[- ]key|api key is invalid|"
    r"credit balance|usage limit|insufficient[_ ]quota|exceeded your (?:current )?quota",
    re.IGNORECASE,
)
_MODEL_WORDS = re.compile(
    r"\bmodel\b[^\n]{0,80}?\b(?:not found|does not exist|may not exist|not available|not supported|is invalid)|"
    r"(?:unknown|invalid|unsupported) model",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class CliResult:
    stdout: str
    stderr: str
    returncode: int
    seconds: float
    cut: int = 0  # bytes of output dropped over the cap (both streams)


@dataclass(frozen=True)
class CliCall:
    """How one call starts the CLI: its command line, what it reads on stdin, variables on top."""

    argv: list[str]
    stdin: str | None = None
    env: dict[str, str] | None = None


@dataclass
class CliOutput:
    """What a CLI's output said (a backend's :meth:`CliBackend.parse`): the answer (None: none),
    usage, the model that answered, the errors it reported, the trajectory. ``result``: the
    CLI's final result object, where it prints one; ``answered``: the agent finished, so
    ``request.checks`` run (None: when there is an answer)."""

    text: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float | None = None
    model: str | None = None
    errors: list[str] = field(default_factory=list)
    trajectory: Trajectory = field(default_factory=Trajectory)
    result: dict[str, Any] | None = None
    answered: bool | None = None

    @property
    def usage(self) -> Usage:
        return Usage(self.input_tokens, self.output_tokens, self.cost)

    @property
    def finished(self) -> bool:
        return self.text is not None if self.answered is None else self.answered


def relative_path(path: str, workdir: Path | None) -> str:
    """``path`` relative to ``workdir`` when it lies inside it (the agent's tools report absolute paths)."""
    if workdir is not None and path.startswith("/"):
        try:
            return str(Path(path).resolve().relative_to(workdir.resolve()))
        except ValueError:
            return path
    return path


def allowed_tools(options: dict[str, Any], default: tuple[str, ...] = ()) -> tuple[str, ...]:
    """``model.allowed_tools`` as a tuple (``default`` when it is not set)."""
    tools = options.get("allowed_tools")
    return tuple(tools) if tools is not None else default


def also_allowed(tools: tuple[str, ...]) -> str:
    """The ``describe()`` suffix naming tools allowed on top of a CLI's read-only set."""
    return f", also {','.join(tools)}" if tools else ""


def conversation_text(request: CompletionRequest, backend: str = "agent CLI") -> str:
    """The conversation as one prompt; images become their text stand-ins or
    refuse the request (:func:`.images.text_only`)."""
    request = text_only(request, backend)
    if len(request.messages) == 1 and request.messages[0].role == "user":
        return request.messages[0].content
    turns = [f"{'User' if m.role == 'user' else 'Assistant'}: {m.content}" for m in request.messages]
    return "\n\n".join(turns)


def effective_role(request: CompletionRequest, spec_role: str) -> str:
    """The request's role label when the engine set one, else the spec's."""
    return request.role or spec_role


def render_prompt(request: CompletionRequest, *, skill: SkillDoc | None, skill_path: str | None,
                  acting: bool = False) -> str:
    """The marked prompt: marker; then the skill pointer and the env's
    instruction (skill installed) or the system text (no skill); the schema
    instruction; the conversation. ``acting``: the agent may run commands and
    edit files in its working directory, so it is asked to do the task there."""
    parts = [REPLAY_MARKER]
    if skill is not None and skill_path is not None:
        how = ("Do the task in this working directory with your tools, then say briefly what you did."
               if acting else "Answer directly; do not create or edit files.")
        parts.append(
            f'Use the skill "{skill.name}" (installed at {skill_path}): read it first and '
            f"follow it for this task. {how}"
        )
        instruction = instruction_of(request)
        if instruction:
            parts.append(instruction)
    elif request.system and request.system.strip():
        parts.append(request.system.strip())
    if request.json_schema is not None:
        parts.append(schema_instruction(request.json_schema))
    parts.append(conversation_text(request))
    return "\n\n".join(parts)


@dataclass(frozen=True)
class ReplayDir:
    """``base``: this call's fresh folder under the replay root; ``work``: where
    the CLI runs (``base/work``, or the caller's checkout)."""

    base: Path
    work: Path

    @property
    def meta(self) -> Path:
        return self.base / "meta"


def document_rel(path: str, backend: str) -> str:
    """``request.document_path`` checked: a relative path inside the working directory."""
    rel = PurePosixPath(path.replace("\\", "/"))
    if not path.strip() or rel.is_absolute() or ".." in rel.parts or rel.parts[:1] == ("~",):
        raise RequestRejected(f"{backend}: the document path {path!r} is not a relative path inside the working "
                              "directory; give the memory file's path relative to the project (CLAUDE.md).")
    return rel.as_posix()


def checkout_dir(cwd: str, backend: str) -> Path:
    """``request.cwd`` checked against the contract: an existing directory under
    the replay root."""
    path = Path(cwd).expanduser()
    if not path.is_dir():
        raise RequestRejected(
            f"{backend}: the working directory {cwd} does not exist or is not a folder. "
            "Prepare the checkout before the call (request.cwd)."
        )
    root = replay_root()
    if not path.resolve().is_relative_to(root.resolve()):
        raise RequestRejected(
            f"{backend}: the working directory {cwd} is not under the replay root {root}. Agent "
            "sessions there would not be recognised as replays; create the checkout under "
            "skillopt_core.replay.replay_root()."
        )
    return path


@contextlib.contextmanager
def replay_dir(backend: str, work: Path | None = None) -> Iterator[ReplayDir]:
    """A fresh folder under the replay root (``meta`` and, without ``work``, an
    empty ``work``), removed on exit."""
    root = replay_root()
    root.mkdir(parents=True, exist_ok=True, mode=0o700)
    base = Path(tempfile.mkdtemp(prefix=f"{backend}-", dir=root))
    layout = ReplayDir(base, work if work is not None else base / "work")
    try:
        layout.meta.mkdir()
        if work is None:
            layout.work.mkdir()
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


# Variable names that hold some service's credentials, and sockets that sign or log in for the person.
_SECRET_NAME = re.compile(r"TOKEN|SECRET|PASSW(?:OR)?D|CREDENTIAL|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|AUTH",
                          re.IGNORECASE)
_AGENT_SOCKETS = frozenset({"SSH_AUTH_SOCK", "SSH_AGENT_PID", "GPG_AGENT_INFO"})


def child_environment(keep: tuple[str, ...] | None = None) -> dict[str, str]:
    """The CLI's environment: the person's own (the CLI needs its login), plus
    plain output. Keys read from a ``.env`` file are not added (see keys.py).
    ``keep`` (names or ``PREFIX_`` prefixes: the CLI's own variables): when
    given, the environment is scrubbed of every other variable whose name says
    it holds a credential (``*_TOKEN``, ``*_SECRET``, ``*_API_KEY``,
    ``*PASSWORD``, ...) and of the SSH/GPG agent sockets, so a CLI that runs
    outside the sandbox (a read-only replay, an optimizer call) holds no other
    service's secret its agent could read (``/proc/self/environ``)."""
    env = dict(os.environ)
    if keep is not None:
        env = {k: v for k, v in env.items()
               if k not in _AGENT_SOCKETS and (not _SECRET_NAME.search(k) or _kept(k, keep))}
    env["NO_COLOR"] = "1"
    env["SKILLOPT_REPLAY"] = "1"
    return env


def _kept(name: str, keep: tuple[str, ...]) -> bool:
    """``name`` is one of ``keep``: a name, a ``PREFIX_`` or a ``*_SUFFIX``."""
    return any(name == k or (k.endswith("_") and name.startswith(k)) or (k.startswith("*") and name.endswith(k[1:]))
               for k in keep)


class Launcher(Protocol):
    """Wraps a CLI's command line before it starts: e.g. inside a sandbox that
    confines writes to ``cwd``, cuts the network and scrubs the environment. The
    caller that prepared the working directory supplies it (the core knows no
    sandbox); ``name`` is shown in ``describe()``."""

    name: str

    def wrap(self, argv: list[str], cwd: Path, env: dict[str, str],
             writable: tuple[Path, ...] = ()) -> tuple[list[str], dict[str, str]]:
        """(the command to start, its environment). ``writable``: folders besides
        ``cwd`` the CLI must write to (its side files)."""
        ...


def _stop_group(proc: asyncio.subprocess.Process, sig: int) -> None:
    try:
        if hasattr(os, "killpg"):
            os.killpg(proc.pid, sig)
        else:  # pragma: no cover - Windows has no process groups like this
            proc.kill()
    except ProcessLookupError:
        pass


async def _group_gone(pgid: int, within: float) -> None:
    """Wait (up to ``within`` s) until no process of group ``pgid`` is left to signal."""
    deadline = time.monotonic() + within
    while hasattr(os, "killpg") and time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except (ProcessLookupError, PermissionError):
            return
        await asyncio.sleep(0.02)


async def run_cli(
    argv: list[str],
    *,
    cwd: Path,
    timeout: float,
    backend: str,
    stdin_text: str | None = None,
    launcher: Launcher | None = None,
    output_cap: int | None = None,
    writable: tuple[Path, ...] = (),
    extra_env: dict[str, str] | None = None,
    keep_env: tuple[str, ...] | None = None,
) -> CliResult:
    """Run ``argv`` in ``cwd`` (through ``launcher`` when given); stop the whole
    process group after ``timeout`` s. ``output_cap``: keep at most this many
    bytes of each stream (default :data:`OUTPUT_CEILING`; the end is cut while
    reading, never held in memory; :attr:`CliResult.cut` counts what was dropped).
    ``extra_env``: variables the CLI is given on top of :func:`child_environment`
    (its own settings); ``keep_env``: scrub the environment but for these (see
    there) when no ``launcher`` does it."""
    started = time.monotonic()
    command = Path(argv[0]).name
    # PWD names the working directory too: opencode 1.18 takes its project folder from $PWD, not
    # from the process's cwd, and would act in the folder the night was started from.
    env = {**child_environment(keep_env if launcher is None else None), **(extra_env or {}), "PWD": str(cwd)}
    if launcher is not None:
        argv, env = launcher.wrap(list(argv), cwd, env, writable)
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            cwd=str(cwd),
            env=env,
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
    cap = OUTPUT_CEILING if output_cap is None else output_cap
    try:
        (out, cut_out), (err, cut_err) = await asyncio.wait_for(_talk(proc, data, cap), timeout=timeout)
    except asyncio.TimeoutError:
        _stop_group(proc, signal.SIGTERM)
        try:
            await asyncio.wait_for(proc.wait(), timeout=_KILL_GRACE_S)
        except asyncio.TimeoutError:
            _stop_group(proc, signal.SIGKILL)
            await proc.wait()
        raise RequestFailed(
            f"{backend}: `{command}` did not finish within {timeout:g} s and was stopped. "
            "Raise model.timeout, or lower model.max_turns."
        ) from None
    except BaseException:  # cancelled from outside: leave nothing of it running
        # The whole group, even when the CLI itself has exited: its children may not have.
        _stop_group(proc, signal.SIGKILL)
        with contextlib.suppress(BaseException):
            await asyncio.wait_for(proc.wait(), timeout=_KILL_GRACE_S)
            await _group_gone(proc.pid, _KILL_GRACE_S)
        raise
    return CliResult(
        stdout=out.decode("utf-8", errors="replace"),
        stderr=err.decode("utf-8", errors="replace"),
        returncode=proc.returncode if proc.returncode is not None else -1,
        seconds=time.monotonic() - started,
        cut=cut_out + cut_err,
    )


async def _read_capped(stream: asyncio.StreamReader | None, cap: int) -> tuple[bytes, int]:
    """(the first ``cap`` bytes of ``stream``, how many more were read and dropped)."""
    kept, dropped = bytearray(), 0
    if stream is None:
        return b"", 0
    while chunk := await stream.read(_CHUNK):
        room = cap - len(kept)
        if room > 0:
            kept += chunk[:room]
        dropped += max(0, len(chunk) - max(room, 0))
    return bytes(kept), dropped


async def _feed(stdin: asyncio.StreamWriter | None, data: bytes | None) -> None:
    if stdin is None:
        return
    try:
        if data:
            stdin.write(data)
            await stdin.drain()
    except (BrokenPipeError, ConnectionResetError):
        pass
    finally:
        stdin.close()


async def _talk(proc: asyncio.subprocess.Process, data: bytes | None,
                cap: int) -> tuple[tuple[bytes, int], tuple[bytes, int]]:
    """``proc.communicate`` with each stream capped while it is read."""
    out, err, _ = await asyncio.gather(_read_capped(proc.stdout, cap), _read_capped(proc.stderr, cap),
                                       _feed(proc.stdin, data))
    await proc.wait()
    return out, err


def tail(text: str, lines: int = 12, limit: int = 1500) -> str:
    """The end of a CLI's output, redacted, for an error message."""
    kept = "\n".join(text.strip().splitlines()[-lines:])
    return redact(kept[-limit:])


def cli_failure(backend: str, what: str, evidence: str, hint: str, usage: Usage | None = None) -> BackendError:
    """The error for a failed call: ``what`` happened, ``evidence`` is the CLI's
    own (redacted) words. Systemic when those words say so, else per-item
    (carrying ``usage``, what the failed call consumed, when known)."""
    if _LOGIN_WORDS.search(evidence):
        return BackendConfigError(
            f"{backend}: {what}; the CLI is not logged in or its account cannot be used. {hint}\n{evidence}"
        )
    if _MODEL_WORDS.search(evidence):
        return BackendConfigError(
            f"{backend}: {what}; the model is not available. Check the model name "
            f"(model.target / model.optimizer / model.judge).\n{evidence}"
        )
    return RequestFailed(f"{backend}: {what}. {hint}\n{evidence}".rstrip(), usage=usage)


def exit_error(backend: str, command: str, result: CliResult, hint: str) -> BackendError:
    detail = tail(result.stderr) or tail(result.stdout) or "(no output)"
    return cli_failure(backend, f"`{command}` exited with code {result.returncode}", detail, hint)


def timeout_from(options: dict[str, Any]) -> float:
    value = options.get("timeout")
    return float(value) if value else DEFAULT_TIMEOUT


def mapping(value: Any) -> dict[str, Any]:
    """``value`` when a CLI printed a JSON object there, else an empty one."""
    return value if isinstance(value, dict) else {}


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


def known_events(events: list[dict[str, Any]], known: frozenset[str],
                 trace: TrajectoryBuilder) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(type, event)`` for each event whose ``type`` the parser knows; any other is kept in
    ``trace`` as a raw step (and counted), so nothing a newer CLI prints is silently lost."""
    for event in events:
        kind = event.get("type")
        if isinstance(kind, str) and kind in known:
            yield kind, event
        else:
            trace.raw(event)


_B = TypeVar("_B", bound="CliBackend")


class CliBackend:
    """Base of the agent-CLI backends: the options they share, the executable, a
    prepared replay directory per call and the one :meth:`complete`. Subclasses set
    ``name``, ``command``, ``skill_dir`` (where the host reads skills, relative to the
    working directory), ``install_hint``, ``login_hint`` and ``no_answer`` (what is
    missing from output without an answer), and give :meth:`command_line` and
    :meth:`parse` (and :meth:`failure` where theirs differ)."""

    name: str
    command: str
    skill_dir: str
    install_hint: str
    login_hint: str = ""
    no_answer: str = "no answer in the output"
    # The CLI's own variables (names, ``PREFIX_`` prefixes) kept when a call outside the sandbox
    # scrubs credentials from the environment (:func:`child_environment`).
    env_keep: tuple[str, ...] = ()

    def __init__(self, *, model: str | None, role: str, options: dict[str, Any]) -> None:
        self.model = model or "default"
        self._cli_model = model
        self._role = role
        self._timeout = timeout_from(options)
        self._allowed: tuple[str, ...] = allowed_tools(options)  # model.allowed_tools, on top of the read-only set
        self._exe = find_executable(self.command, self.name, self.install_hint)
        self._launcher: Launcher | None = None
        self._output_cap: int | None = None

    @classmethod
    def from_spec(cls: type[_B], spec: Any) -> _B:
        """The registry's factory: ``register_backend(name)(Backend.from_spec)``."""
        return cls(model=spec.model, role=spec.role, options=spec.options)

    def act(self, launcher: Launcher, *, output_cap: int | None = None) -> None:
        """Let target calls act: run the commands ``request.allowed_commands`` names
        and edit files in the working directory, every process started through
        ``launcher`` (the caller's sandbox); then run ``request.checks`` there too.
        Trigger calls that name a working directory run through ``launcher`` as well,
        with the CLI's read-only permissions (:data:`SANDBOXED_ROLES`)."""
        self._launcher = launcher
        self._output_cap = output_cap

    @property
    def acting(self) -> bool:
        return self._launcher is not None

    @property
    def launcher(self) -> Launcher | None:
        return self._launcher

    @property
    def timeout(self) -> float:
        return self._timeout

    @property
    def output_cap(self) -> int | None:
        return self._output_cap

    def _acts_on(self, request: CompletionRequest) -> bool:
        return self._launcher is not None and self._is_target(request) and request.cwd is not None

    def _is_target(self, request: CompletionRequest) -> bool:
        return effective_role(request, self._role) == "target"

    def _in_sandbox(self, request: CompletionRequest) -> bool:
        """Does this call run through the launcher: an acting backend's call of a role that runs the
        agent on a person's request (:data:`SANDBOXED_ROLES`) in a working directory."""
        return (self._launcher is not None and request.cwd is not None
                and effective_role(request, self._role) in SANDBOXED_ROLES)

    async def _run_checks(self, request: CompletionRequest, where: ReplayDir) -> list[CheckRun]:
        """``request.checks`` run in the working directory through the launcher, after the agent."""
        return await self.run_checks(request.checks, where.work) if self._acts_on(request) else []

    async def run_checks(self, commands: tuple[str, ...] | list[str], work: Path) -> list[CheckRun]:
        """Each command (no shell) run in ``work`` through the launcher, with this backend's
        timeout and output cap; one :class:`CheckRun` each (exit code None: it could not run)."""
        done = []
        for command in commands:
            try:
                argv = shlex.split(command)
            except ValueError:
                done.append(CheckRun(command, None, "the command could not be parsed"))
                continue
            try:
                result = await run_cli(argv, cwd=work, timeout=self._timeout, backend=self.name,
                                       launcher=self._launcher, output_cap=self._output_cap)
            except BackendError as exc:  # RequestFailed included: a timeout, a program that cannot start
                done.append(CheckRun(command, None, bounded(str(exc))))
                continue
            cut = f"\n[{result.cut} bytes of output over the cap were dropped]" if result.cut else ""
            done.append(CheckRun(command, result.returncode,
                                 bounded(tail(result.stdout + "\n" + result.stderr, 40, CHECK_OUTPUT_CHARS) + cut)))
        return done

    @contextlib.asynccontextmanager
    async def _replay(self, request: CompletionRequest) -> AsyncIterator[tuple[ReplayDir, str]]:
        """(the call's replay directory, the marked prompt). ``request.skill``,
        when set, is installed in the working directory for the block."""
        if request.document_path and request.skill is not None:
            async with self._document(request) as found:
                yield found
            return
        skill = skill_doc(request.skill, self.name) if request.skill and request.skill.strip() else None
        checkout = checkout_dir(request.cwd, self.name) if request.cwd else None
        with replay_dir(self.name, checkout) as where:
            if skill is None:
                yield where, render_prompt(request, skill=None, skill_path=None)
                return
            async with shared_skill(where.work, self.skill_dir, skill, self.name) as rel:
                yield where, render_prompt(request, skill=skill, skill_path=rel, acting=self._acts_on(request))

    @contextlib.asynccontextmanager
    async def _document(self, request: CompletionRequest) -> AsyncIterator[tuple[ReplayDir, str]]:
        """``request.skill`` installed verbatim at ``request.document_path`` (a memory file the
        CLI loads by itself); the prompt carries the env's instruction without the document."""
        rel = document_rel(request.document_path or "", self.name)
        doc = SkillDoc(rel, request.skill or "")
        checkout = checkout_dir(request.cwd, self.name) if request.cwd else None
        with replay_dir(self.name, checkout) as where:
            async with shared_skill(where.work, "", doc, self.name, rel=rel):
                instruction = instruction_of(request)
                yield where, render_prompt(replace(request, system=instruction or None, skill=None),
                                           skill=None, skill_path=None)

    def command_line(self, request: CompletionRequest, where: ReplayDir, prompt: str) -> CliCall:
        """How this call starts the CLI (the backend's hook)."""
        raise NotImplementedError

    def parse(self, result: CliResult, where: ReplayDir, request: CompletionRequest) -> CliOutput:
        """What the CLI printed (the backend's hook)."""
        raise NotImplementedError

    def failure(self, out: CliOutput, result: CliResult) -> BackendError | None:
        """The error of a call that failed, or None. By default: no answer fails with the CLI's
        last error, else its exit code, else as output without an answer; a non-zero exit fails
        even with one (:func:`cli_failure` decides whether the cause is systemic)."""
        if out.text is None:
            if out.errors:
                return cli_failure(self.name, f"{self.command} reported an error", redact(out.errors[-1]),
                                   self.login_hint, usage=out.usage)
            if result.returncode != 0:
                return exit_error(self.name, self.command, result, self.login_hint)
            return cli_failure(self.name, f"{self.command} finished without an answer ({self.no_answer})",
                               tail(result.stderr), self.login_hint, usage=out.usage)
        if result.returncode != 0:
            return exit_error(self.name, self.command, result, self.login_hint)
        return None

    async def complete(self, request: CompletionRequest) -> Completion:
        """One run of the CLI in the call's replay directory, then ``request.checks`` when the agent
        finished; the answer, usage and trajectory, or the error :meth:`failure` names."""
        started = time.monotonic()
        async with self._replay(request) as (where, prompt):
            call = self.command_line(request, where, prompt)
            result = await self.run_in(call.argv, where, stdin_text=call.stdin, request=request, extra_env=call.env)
            out = self.parse(result, where, request)
            checks = await self._run_checks(request, where) if out.finished else []
        error = self.failure(out, result)
        if error is not None:
            raise error
        return Completion(text=out.text or "", usage=out.usage, model=out.model or self.model,
                          latency_s=time.monotonic() - started, trajectory=out.trajectory.with_steps(*checks))

    async def run_in(self, argv: list[str], where: ReplayDir, stdin_text: str | None = None,
                     request: CompletionRequest | None = None, extra_env: dict[str, str] | None = None) -> CliResult:
        """``argv`` run in ``where``'s working directory with this backend's timeout: through the launcher
        (its output cap, ``where.meta`` writable) when ``request`` is one the sandbox takes (:meth:`_in_sandbox`)."""
        sandboxed = request is not None and self._in_sandbox(request)
        return await run_cli(argv, cwd=where.work, timeout=self._timeout, backend=self.name, stdin_text=stdin_text,
                             launcher=self._launcher if sandboxed else None,
                             output_cap=self._output_cap if sandboxed else None,
                             writable=(where.meta,) if sandboxed else (), extra_env=extra_env,
                             keep_env=self.env_keep)
