"""The ``gemini-cli`` backend: one Gemini CLI run per call in headless mode, in a
fresh replay directory or the caller's checkout (see :mod:`.cli_common` for the
shared contract).

Command (https://geminicli.com/docs/cli/headless/, the CLI's ``--help``)::

    gemini -p <prompt> --output-format stream-json --skip-trust --approval-mode default
           [-m <model>] [--allowed-tools <tool> ...]

- The skill under training (``request.skill``) is installed at
  ``.gemini/skills/<name>/SKILL.md`` in the working directory, Gemini CLI's
  workspace skill folder.
- ``--skip-trust``: trusts the replay directory for this session only; current
  versions refuse to run headless in an untrusted folder (Trusted Folders,
  https://geminicli.com/docs/cli/trusted-folders/), older ones do not know the
  flag and need an update (``npm i -g @google/gemini-cli``).
- Tools: in headless mode nothing can be confirmed, so with
  ``--approval-mode default`` the tools that need a confirmation (file edits,
  ``run_shell_command``) cannot run: the agent reads, searches and lists only.
  ``model.allowed_tools`` names tools that run without a confirmation
  (``--allowed-tools``, e.g. ``run_shell_command(git status)``).
  Acting (``CliBackend.act``, a target call with a working directory):
  ``--approval-mode auto_edit`` (file edits approved) and ``--allowed-tools
  run_shell_command(<program>),...`` (one comma-separated value: 0.61 takes
  one value per flag and reads a second as a positional prompt, which it
  refuses beside ``-p``) for each of ``request.allowed_commands``;
  other commands still need a confirmation headless mode cannot give.
- Project code: ``--skip-trust`` trusts the checkout for this session only;
  with it Gemini CLI 0.61 still reads the workspace's ``.gemini/skills`` but
  ran none of a committed ``.gemini/settings.json``'s hooks, MCP servers or
  tool-discovery command (it runs them only in a folder trusted for good,
  which a fresh checkout path never is).
- Endpoint: ``GOOGLE_GEMINI_BASE_URL`` with ``GEMINI_API_KEY`` and
  ``security.auth.selectedType: gemini-api-key`` in the person's settings.
- Output: JSONL events (``init``, ``message`` with ``role`` and ``content``,
  assistant chunks marked ``delta``; ``tool_use`` with ``tool_name``,
  ``tool_id``, ``parameters``; ``tool_result`` with ``tool_id``, ``status``,
  ``output`` or ``error``: Gemini CLI 0.61 reports no exit code, and a
  command that failed is ``success`` too, so a shell command counts as exit 0
  unless its output is the shell's "command not found" (127); a command the
  policy refused is ``error`` with ``error.type`` ``policy_violation``,
  recorded as denied; ``error`` with ``severity``; ``result`` with
  ``status``, ``stats`` and an optional ``error``). The text is the assistant
  message chunks after the last tool result, joined (or the ``result``'s
  ``response`` where a version prints one); tokens from
  ``stats.input_tokens``/``output_tokens``; cost None (not reported).
- Failures: exit codes 1 (API failure), 42 (bad input) and 53 (turn limit), a
  ``result`` whose ``status`` is ``error``, or no answer fail this item
  unless the CLI's words say the cause is systemic (:func:`.cli_common.cli_failure`).
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillopt_core.backends import cli_common as cli
from skillopt_core.backends import register_backend
from skillopt_core.backends import trajectory as tj
from skillopt_core.backends.base import BackendError, CompletionRequest, RequestFailed
from skillopt_core.backends.keys import redact

log = logging.getLogger(__name__)

COMMAND = "gemini"
SKILL_DIR = ".gemini/skills"
SHELL_TOOL = "run_shell_command"
TURN_LIMIT_EXIT = 53
_INSTALL_HINT = "Install Gemini CLI (npm i -g @google/gemini-cli) and run `gemini` once to log in."
_LOGIN_HINT = "Check that `gemini -p hello` works in a terminal (log in with `gemini`, or set GEMINI_API_KEY)."
_WRITE_TOOLS: dict[str, tj.Change] = {"write_file": "added", "replace": "modified", "edit": "modified"}
_KNOWN = frozenset({"init", "message", "tool_use", "tool_result", "error", "result"})


@dataclass
class GeminiOutput(cli.CliOutput):
    result_status: str | None = None


_NOT_FOUND = re.compile(r"^\S*(?:bash|sh)(?::| -c:)? (?:line \d+: |\d+: )?\S+: (?:command )?not found$", re.M)


def _exit_code(ok: bool, output: str) -> int | None:
    """Gemini CLI's stream carries no exit code (a failing command is ``status: success`` too):
    0 stands for "it ran", the shell's "command not found" line for 127, an error for unknown."""
    if not ok:
        return None
    return 127 if _NOT_FOUND.search(output) else 0


def _file_change(name: str, params: dict[str, Any], workdir: Path | None) -> tj.FileChange | None:
    path = params.get("file_path") or params.get("absolute_path") or params.get("path")
    if name in _WRITE_TOOLS and isinstance(path, str):
        return tj.FileChange(cli.relative_path(path, workdir), _WRITE_TOOLS[name])
    return None


def parse_stream(stdout: str, workdir: Path | None = None) -> GeminiOutput:
    """What ``gemini -p --output-format stream-json`` printed (see the module doc).
    Assistant ``message`` chunks are joined per turn (a tool call ends a turn);
    the answer is the last turn's text. ``run_shell_command`` calls become
    commands, ``write_file``/``replace`` file changes; unknown event types are
    kept as raw steps."""
    events, _ = cli.json_lines(stdout)
    found = GeminiOutput()
    trace = tj.TrajectoryBuilder()
    calls: dict[str, tuple[str, dict[str, Any]]] = {}
    open_calls: list[str] = []
    chunks: list[str] = []

    def flush() -> None:
        if chunks and "".join(chunks).strip():
            trace.add(tj.TextStep(tj.bounded("".join(chunks))))
            found.text = "".join(chunks)
        chunks.clear()

    for kind, event in cli.known_events(events, _KNOWN, trace):
        if kind == "init":
            found.model = str(event.get("model") or "") or None
        elif kind == "message":
            if event.get("role") == "assistant" and isinstance(event.get("content"), str):
                if not event.get("delta"):
                    flush()
                chunks.append(event["content"])
        elif kind == "tool_use":
            flush()
            name = str(event.get("tool_name") or "?")
            params = cli.mapping(event.get("parameters"))
            call_id = str(event.get("tool_id") or "")
            calls[call_id] = (name, params)
            open_calls.append(call_id)
            trace.add(tj.ToolCall(name, tj.bounded(params, tj.MAX_INPUT_CHARS), call_id))
        elif kind == "tool_result":
            call_id = str(event.get("tool_id") or "")
            if not call_id and open_calls:  # a stream without tool ids: results follow their calls
                call_id = open_calls[0]
            if call_id in open_calls:
                open_calls.remove(call_id)
            name, params = calls.get(call_id, ("", {}))
            error = cli.mapping(event.get("error")) or None
            ok = event.get("status") != "error"
            output = str(event["output"]) if isinstance(event.get("output"), str) else ""
            if error and not output:
                output = str(error.get("message") or "")
            trace.add(tj.ToolResult(call_id, tj.bounded(output), not ok, name))
            if name == SHELL_TOOL:
                denied = error is not None and error.get("type") == "policy_violation"
                trace.add(tj.CommandRun(str(params.get("command") or ""), _exit_code(ok, output), tj.bounded(output),
                                        denied=denied))
            elif ok:
                change = _file_change(name, params, workdir)
                if change is not None:
                    trace.add(change)
        elif kind == "error":
            if event.get("severity") == "error":
                found.errors.append(str(event.get("message") or "error"))
        elif kind == "result":
            flush()
            found.result_status = str(event.get("status") or "")
            if isinstance(event.get("response"), str) and event["response"].strip():
                found.text = event["response"]  # a result that carries the whole answer itself wins
            stats = cli.mapping(event.get("stats"))
            found.input_tokens = int(stats.get("input_tokens") or 0)
            found.output_tokens = int(stats.get("output_tokens") or 0)
            error = event.get("error") if isinstance(event.get("error"), dict) else None
            if error:
                kind_of = str(error.get("type") or "")
                message = str(error.get("message") or "error")
                found.errors.append(f"{kind_of}: {message}" if kind_of else message)
    flush()
    found.trajectory = trace.build()
    return found


class GeminiCliBackend(cli.CliBackend):
    name = "gemini-cli"
    env_keep = ("GEMINI_", "GOOGLE_")
    command = COMMAND
    skill_dir = SKILL_DIR
    install_hint = _INSTALL_HINT

    def describe(self) -> str:
        extra = cli.also_allowed(self._allowed)
        return f"gemini-cli:{self.model} (gemini -p, read-only tools{extra})"

    def tool_flags(self, request: CompletionRequest | None = None) -> list[str]:
        if request is not None and self._acts_on(request):
            allowed = [f"{SHELL_TOOL}({c})" for c in request.allowed_commands or ()]
            return ["--approval-mode", "auto_edit"] + (["--allowed-tools", ",".join(allowed)] if allowed else [])
        if request is not None and not self._is_target(request):
            return ["--approval-mode", "default"]
        return ["--approval-mode", "default"] + (["--allowed-tools", ",".join(self._allowed)] if self._allowed else [])

    def argv(self, prompt: str, request: CompletionRequest | None = None) -> list[str]:
        args = [self._exe, "-p", prompt, "--output-format", "stream-json", "--skip-trust"]
        if self._cli_model:
            args += ["-m", self._cli_model]
        return args + self.tool_flags(request)

    def command_line(self, request: CompletionRequest, where: cli.ReplayDir, prompt: str) -> cli.CliCall:
        return cli.CliCall(self.argv(prompt, request))

    def parse(self, result: cli.CliResult, where: cli.ReplayDir, request: CompletionRequest) -> cli.CliOutput:
        return parse_stream(result.stdout, where.work)

    def failure(self, out: cli.CliOutput, result: cli.CliResult) -> BackendError | None:
        if result.returncode == TURN_LIMIT_EXIT:
            return RequestFailed(f"{self.name}: the agent reached Gemini CLI's turn limit without a final answer "
                                 "(maxSessionTurns in its settings).", usage=out.usage)
        if result.returncode != 0 or getattr(out, "result_status", None) == "error":
            if out.errors:
                return cli.cli_failure(self.name, f"gemini reported an error (exit code {result.returncode})",
                                       redact(out.errors[-1]) + "\n" + cli.tail(result.stderr), _LOGIN_HINT,
                                       usage=out.usage)
            return cli.exit_error(self.name, COMMAND, result, _LOGIN_HINT)
        if out.text is None:
            return cli.cli_failure(self.name, "gemini finished without an answer (no assistant message)",
                                   cli.tail(result.stderr), _LOGIN_HINT, usage=out.usage)
        return None


register_backend("gemini-cli")(GeminiCliBackend.from_spec)
