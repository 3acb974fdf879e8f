"""The ``codex`` backend: one ``codex exec`` run per call, in a fresh replay
directory or the caller's checkout (see :mod:`.cli_common` for the shared
contract).

Command (prompt on stdin, ``-`` as the prompt argument)::

    codex exec --json --skip-git-repo-check --sandbox read-only --ephemeral
               -C <workdir> [-m <model>] -

- The skill under training (``request.skill``) is installed at
  ``.agents/skills/<name>/SKILL.md`` in the working directory, where Codex
  discovers skills.
- ``--sandbox read-only``: commands the agent runs cannot write anywhere.
  Acting (``CliBackend.act``, a target call with a working directory):
  ``--sandbox danger-full-access`` *inside the caller's launcher*, which is the
  sandbox (bubblewrap: writable checkout only, no network but the model
  endpoint). Codex's own sandbox cannot work there: its ``codex-linux-sandbox``
  helper is refused under a temporary CODEX_HOME and nests a second bubblewrap,
  and under ``workspace-write`` every command then fails *and is left out of the
  ``--json`` stream* (an empty trajectory). Codex has no per-command allow list,
  so commands outside ``request.allowed_commands`` are recorded, not prevented.
  Codex has no per-tool allow list, so ``model.allowed_tools`` does not apply
  (a warning says so once); ``model.max_turns`` has no Codex flag either.
  A trigger call of an acting backend (the night's trigger step) runs inside the
  launcher too, the same way, in its scratch folder: it can write only there.
- Acting, ``--disable plugins -c analytics.enabled=false``: Codex 0.171 otherwise
  syncs plugins (``github.com``, ``api.github.com``, ``chatgpt.com``) and sends
  analytics (``ab.chatgpt.com``) at start, which the sandbox would refuse.
- ``-c allow_login_shell=false``: commands run with ``bash -c``, not ``bash -lc``
  (a login shell's ``/etc/profile`` resets ``PATH``, and the project's programs
  are then "command not found").
- ``--ephemeral``: no rollout file is written, on top of the replay marker and
  directory. ``--skip-git-repo-check``: a fresh replay directory is not a repository.
- Output: JSONL events. The text is the last ``item.completed`` item of type
  ``agent_message``; usage is summed over ``turn.completed`` events
  (``input_tokens`` already includes cached input); cost from
  :mod:`.pricing` when the model is known. ``turn.failed`` or ``error`` events
  without an answer, no answer at all, or a non-zero exit fail this item
  (:class:`RequestFailed`) unless the message says the cause is systemic
  (:func:`.cli_common.cli_failure`, e.g. ``401 Unauthorized``).
"""

from __future__ import annotations

import logging
import os
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillopt_core.backends import cli_common as cli
from skillopt_core.backends import register_backend
from skillopt_core.backends import trajectory as tj
from skillopt_core.backends.base import BackendError, CompletionRequest
from skillopt_core.backends.pricing import estimate_cost

log = logging.getLogger(__name__)

COMMAND = "codex"
SKILL_DIR = ".agents/skills"
_INSTALL_HINT = "Install Codex (npm i -g @openai/codex) and run `codex login`."
_LOGIN_HINT = "Check that `codex exec hello` works in a terminal (log in with `codex login`)."


@dataclass
class CodexEvents(cli.CliOutput):
    """What a ``codex exec --json`` event stream said."""

    skipped_lines: int = 0
    failed_changes: int = 0  # file changes of patches that did not apply (left out of the trajectory)


_CHANGE_KINDS: dict[str, tj.Change] = {"add": "added", "delete": "deleted", "update": "modified"}
_KNOWN_EVENTS = frozenset({"thread.started", "turn.started", "turn.completed", "turn.failed", "item.started",
                           "item.updated", "item.completed", "error"})
_QUIET_ITEMS = frozenset({"reasoning", "todo_list", "web_search"})
_SHELLS = frozenset({"bash", "sh", "zsh", "dash"})


def unwrap_shell(command: str) -> str:
    """The command inside Codex's shell wrapper: ``/bin/bash -lc 'pnpm install'`` → ``pnpm install``."""
    try:
        words = shlex.split(command)
    except ValueError:
        return command
    if len(words) == 3 and words[0].rsplit("/", 1)[-1] in _SHELLS and words[1] in ("-lc", "-c"):
        return words[2]
    return command


def _item_step(item: dict[str, Any], trace: tj.TrajectoryBuilder, workdir: Path | None, found: CodexEvents) -> None:
    kind = item.get("type")
    if kind == "agent_message" and isinstance(item.get("text"), str):
        trace.add(tj.TextStep(tj.bounded(item["text"])))
    elif kind == "command_execution":
        code = item.get("exit_code")
        declined = item.get("status") == "declined"
        trace.add(tj.CommandRun(unwrap_shell(str(item.get("command") or "")),
                                int(code) if isinstance(code, int) else None,
                                tj.bounded(item.get("aggregated_output") or ""), denied=declined))
    elif kind == "file_change":
        if item.get("status") == "failed":  # the patch did not apply: nothing changed
            found.failed_changes += len(item.get("changes") or [])
            return
        for change in item.get("changes") or []:
            if isinstance(change, dict) and change.get("path"):
                trace.add(tj.FileChange(cli.relative_path(str(change["path"]), workdir),
                                        _CHANGE_KINDS.get(str(change.get("kind")), "modified")))
    elif kind == "mcp_tool_call":
        name = f"{item.get('server') or '?'}.{item.get('tool') or '?'}"
        arguments = tj.bounded(item.get("arguments") or {}, tj.MAX_INPUT_CHARS)
        trace.add(tj.ToolCall(name, arguments, str(item.get("id") or "")))
        error = item.get("error")
        trace.add(tj.ToolResult(str(item.get("id") or ""), tj.bounded(error or item.get("result") or ""),
                                bool(error) or item.get("status") == "failed", name))
    elif kind == "error":
        # A non-fatal error Codex reports as an item (the turn goes on): kept, and said if no answer comes.
        message = str(item.get("message") or "error")
        found.errors.append(message)
        trace.add(tj.RawStep("error", tj.bounded(message, 500)))
    elif kind in _QUIET_ITEMS:
        return
    else:
        trace.raw({"type": f"item.{kind}", "item": item})


def parse_events(stdout: str, workdir: Path | None = None) -> CodexEvents:
    """What ``codex exec --json`` printed: the last ``agent_message`` text, usage
    summed over ``turn.completed``, errors, and the trajectory from the
    ``item.completed`` items (``agent_message``; ``command_execution`` with
    ``exit_code`` and ``aggregated_output``, its ``/bin/bash -lc '...'`` wrapper
    unwrapped to the command; ``file_change`` with its ``changes``, paths
    relative to ``workdir``, left out when its ``status`` is ``failed``;
    ``mcp_tool_call``; ``error``, kept as an ``error`` step and in the errors);
    unknown event or item types are kept as raw steps and counted."""
    events, skipped = cli.json_lines(stdout)
    found = CodexEvents(skipped_lines=skipped)
    trace = tj.TrajectoryBuilder()
    for kind, event in cli.known_events(events, _KNOWN_EVENTS, trace):
        if kind == "item.completed":
            item = event.get("item") or {}
            if item.get("type") == "agent_message" and isinstance(item.get("text"), str):
                found.text = item["text"]
            if isinstance(item, dict):
                _item_step(item, trace, workdir, found)
        elif kind == "turn.completed":
            usage = event.get("usage") or {}
            found.input_tokens += int(usage.get("input_tokens") or 0)
            found.output_tokens += int(usage.get("output_tokens") or 0)
        elif kind == "turn.failed":
            error = event.get("error") or {}
            found.errors.append(str(error.get("message") or error or "turn failed"))
        elif kind == "error":
            found.errors.append(str(event.get("message") or "error"))
    found.trajectory = trace.build()
    return found


BLIND_SPOT = "codex.blind_spot"


def _blind_spot(events: CodexEvents) -> str | None:
    """Codex leaves a command it could not start out of its ``--json`` stream: a failed turn
    (an error) with no command or file change is such a blind spot, named so it is not read as
    "the agent did nothing"."""
    if not events.errors or events.trajectory.commands() or events.trajectory.file_changes():
        return None
    return ("the turn failed with no command or file change in Codex's stream; a command Codex could not "
            "start is left out of it, so what the agent tried is unknown")


def provider_env_keys() -> tuple[str, ...]:
    """The variables the custom model providers of the person's Codex ``config.toml`` read their
    key from (``[model_providers.x] env_key``): kept when the environment is scrubbed."""
    home = Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")
    try:
        import tomllib  # Python 3.11+; on 3.10 a custom provider's key variable must not look like a secret

        with open(home / "config.toml", "rb") as fh:
            providers = tomllib.load(fh).get("model_providers") or {}
    except (ImportError, OSError, ValueError):
        return ()
    if not isinstance(providers, dict):
        return ()
    return tuple(str(p["env_key"]) for p in providers.values() if isinstance(p, dict) and p.get("env_key"))


class CodexBackend(cli.CliBackend):
    name = "codex"
    env_keep: tuple[str, ...] = ("OPENAI_", "CODEX_", "AZURE_OPENAI_")
    command = COMMAND
    skill_dir = SKILL_DIR
    install_hint = _INSTALL_HINT
    login_hint = _LOGIN_HINT

    def __init__(self, *, model: str | None, role: str, options: dict[str, Any]) -> None:
        super().__init__(model=model, role=role, options=options)
        self.env_keep = type(self).env_keep + provider_env_keys()
        if options.get("allowed_tools") is not None:
            log.warning("codex: model.allowed_tools does not apply to Codex; it runs with --sandbox read-only")

    def describe(self) -> str:
        if self._launcher is not None:
            return f"codex:{self.model} (codex exec, acting inside {self._launcher.name})"
        return f"codex:{self.model} (codex exec, read-only sandbox)"

    def argv(self, workdir: str, in_launcher: bool = False) -> list[str]:
        # Inside the launcher's sandbox Codex's own cannot start (see the module doc): that one is the sandbox.
        sandbox = "danger-full-access" if in_launcher and self._launcher is not None else "read-only"
        args = [self._exe, "exec", "--json", "--skip-git-repo-check", "--sandbox", sandbox, "--ephemeral",
                "-c", "allow_login_shell=false"]
        if sandbox == "danger-full-access":  # no traffic beyond the model endpoint (the sandbox would refuse it)
            args += ["--disable", "plugins", "-c", "analytics.enabled=false"]
        args += ["-C", workdir]
        if self._cli_model:
            args += ["-m", self._cli_model]
        return [*args, "-"]

    def command_line(self, request: CompletionRequest, where: cli.ReplayDir, prompt: str) -> cli.CliCall:
        return cli.CliCall(self.argv(str(where.work), self._in_sandbox(request)), stdin=prompt)

    def parse(self, result: cli.CliResult, where: cli.ReplayDir, request: CompletionRequest) -> cli.CliOutput:
        events = parse_events(result.stdout, where.work)
        events.cost = estimate_cost(self._cli_model, events.input_tokens, events.output_tokens)
        if events.skipped_lines:
            log.debug("codex: skipped %d non-JSON output line(s)", events.skipped_lines)
        blind = _blind_spot(events) if self._acts_on(request) else None
        if blind:
            log.warning("codex: %s", blind)
            events.trajectory = events.trajectory.with_steps(tj.RawStep(BLIND_SPOT, blind))
            events.errors[-1] += f" ({blind})"
        return events

    def failure(self, out: cli.CliOutput, result: cli.CliResult) -> BackendError | None:
        if out.text is None and not out.errors and result.returncode == 0:
            return cli.cli_failure(self.name, "codex finished without an answer (no agent_message event)",
                                   cli.tail(result.stderr), _LOGIN_HINT)
        return super().failure(out, result)


register_backend("codex")(CodexBackend.from_spec)
