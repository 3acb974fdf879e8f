"""The ``copilot`` backend: one GitHub Copilot CLI run per call in non-interactive
mode, in a fresh replay directory or the caller's checkout (see
:mod:`.cli_common` for the shared contract).

Command::

    copilot -p <prompt> --output-format json --no-ask-user --no-auto-update
            --disable-builtin-mcps --name skillopt-replay --add-dir=<workdir>
            --usage-output-file=<meta>/usage.json [--model <model>]
            --allow-all-tools --deny-tool=shell --deny-tool=write

- The skill under training (``request.skill``) is installed at
  ``.github/skills/<name>/SKILL.md`` in the working directory; ``--add-dir``
  on that directory loads its ``.github/skills`` as trusted configuration.
- Tools: prompt mode needs tools pre-approved, so by default every tool is
  allowed *except* the two write-capable kinds, ``shell`` and ``write``
  (Copilot applies denials before approvals). ``model.allowed_tools``
  replaces this with exactly ``--allow-tool=<each>`` and no blanket approval.
  ``--disable-builtin-mcps`` keeps the GitHub MCP server out.
- The session is named ``skillopt-replay`` (session metadata), on top of the
  replay marker and directory.
- Output: JSONL events; the text is the ``content`` of the last non-empty
  ``assistant.message`` event. A tool call the permission rules refused is marked
  denied (:func:`refused`). Output that is not JSONL (an older CLI) is
  taken as the answer text. Tokens come from the usage file
  (``modelMetrics.<model>.usage.inputTokens/outputTokens``); cost is None
  (Copilot bills premium requests, not dollars).
- Failures: a non-zero exit, a ``session.error`` event or no answer fail this
  item (:class:`RequestFailed`) unless the message or the error type says the
  cause is systemic (:func:`.cli_common.cli_failure`; ``errorType``
  ``authentication`` always is).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from skillopt_core.backends import cli_common as cli
from skillopt_core.backends import register_backend
from skillopt_core.backends import trajectory as tj
from skillopt_core.backends.base import BackendError, CompletionRequest
from skillopt_core.backends.keys import redact

log = logging.getLogger(__name__)

COMMAND = "copilot"
SKILL_DIR = ".github/skills"
DENIED_BY_DEFAULT = ("shell", "write")
SESSION_NAME = "skillopt-replay"
_INSTALL_HINT = "Install the Copilot CLI (npm i -g @github/copilot) and run `copilot login`."
_LOGIN_HINT = "Check that `copilot -p hello` works in a terminal (log in with `copilot login`)."


_SHELL_TOOLS = frozenset({"bash", "shell", "powershell"})
_WRITE_TOOLS = frozenset({"edit", "create", "write", "str_replace_editor", "apply_patch"})
# Event types that carry nothing for the trajectory (lifecycle, deltas, reasoning).
_QUIET_PREFIXES = ("session.", "assistant.turn_", "assistant.message_delta", "assistant.reasoning", "user.",
                   "tool.execution_partial_result", "result")
# tool.execution_complete error codes of a refused call (the SDK's ToolResultType: "denied", permission policy
# denied the request; "rejected", rejected before execution), and the CLI's own words when it names no code.
_REFUSED_CODES = frozenset({"denied", "rejected"})
_REFUSED_WORDS = ("permission denied and could not request permission", "the user rejected this tool call")


def refused(data: dict[str, Any], denied_calls: set[str]) -> bool:
    """Did the permission rules refuse the tool call of this ``tool.execution_complete``?
    Yes when a ``permission.completed`` for its ``toolCallId`` had a ``denied-*`` result
    (``denied_calls``), when ``error.code`` is ``denied`` or ``rejected``, or when the error is
    the CLI's refusal ("Permission denied and could not request permission from user")."""
    if data.get("success") is not False:
        return False
    if str(data.get("toolCallId") or "") in denied_calls:
        return True
    error = cli.mapping(data.get("error"))
    return str(error.get("code") or "").lower() in _REFUSED_CODES \
        or str(error.get("message") or "").lower().startswith(_REFUSED_WORDS)


def _change(name: str, args: dict[str, Any]) -> tj.FileChange | None:
    if name in _WRITE_TOOLS and isinstance(args.get("path"), str):
        return tj.FileChange(args["path"], "added" if name == "create" else "modified")
    return None


def _trajectory_step(kind: str, data: dict[str, Any], trace: tj.TrajectoryBuilder,
                     calls: dict[str, tuple[str, dict[str, Any]]], permissions: dict[str, str],
                     denied_calls: set[str]) -> None:
    if kind == "assistant.message":
        if isinstance(data.get("content"), str) and data["content"].strip():
            trace.add(tj.TextStep(tj.bounded(data["content"])))
    elif kind == "tool.execution_start":
        name, args = str(data.get("toolName") or "?"), data.get("arguments")
        args = args if isinstance(args, dict) else {}
        call_id = str(data.get("toolCallId") or "")
        calls[call_id] = (name, args)
        trace.add(tj.ToolCall(name, tj.bounded(args, tj.MAX_INPUT_CHARS), call_id))
        change = _change(name, args)
        if change is not None:
            trace.add(change)
    elif kind == "permission.requested":  # its request names the tool call; the completion may not
        request = cli.mapping(data.get("permissionRequest"))
        if request.get("toolCallId"):
            permissions[str(data.get("requestId") or "")] = str(request["toolCallId"])
    elif kind == "permission.completed":
        result = cli.mapping(data.get("result"))
        call_id = str(data.get("toolCallId") or permissions.get(str(data.get("requestId") or "")) or "")
        if str(result.get("kind") or "").startswith("denied") and call_id:
            denied_calls.add(str(call_id))
    elif kind == "tool.execution_complete":
        call_id = str(data.get("toolCallId") or "")
        name, args = calls.get(call_id, ("", {}))
        outcome, error = data.get("result"), data.get("error")
        output = outcome.get("content") if isinstance(outcome, dict) else outcome
        if not output and isinstance(error, dict):
            output = error.get("message")
        ok, denied = data.get("success") is not False, refused(data, denied_calls)
        trace.add(tj.ToolResult(call_id, tj.bounded(output or ""), not ok, name))
        change = _change(name, args)
        if denied and change is not None and change in trace.steps:  # a refused write changed nothing
            trace.steps.remove(change)
        if name in _SHELL_TOOLS:
            trace.add(tj.CommandRun(str(args.get("command") or ""), 0 if ok else None, tj.bounded(output or ""),
                                    denied=denied))
    elif not kind.startswith(_QUIET_PREFIXES):
        trace.raw({"type": kind, "data": data})


def parse_output(stdout: str) -> cli.CliOutput:
    """The answer (last non-empty ``assistant.message``), errors and the trajectory
    (``tool.execution_start``/``tool.execution_complete`` pairs by ``toolCallId``;
    shell tools become commands, write tools file changes, a refused call is denied
    (:func:`refused`); other event types kept as raw steps and counted)."""
    events, _ = cli.json_lines(stdout)
    found = cli.CliOutput()
    trace = tj.TrajectoryBuilder()
    calls: dict[str, tuple[str, dict[str, Any]]] = {}
    permissions: dict[str, str] = {}  # permission requestId -> toolCallId
    denied_calls: set[str] = set()  # toolCallIds a permission.completed refused
    for event in events:
        kind = str(event.get("type") or "")
        data = cli.mapping(event.get("data"))
        if kind != "session.error":
            _trajectory_step(kind, data, trace, calls, permissions, denied_calls)
        if kind == "assistant.message" and isinstance(data.get("content"), str) and data["content"].strip():
            found.text = data["content"]
        elif kind == "session.error":
            error_type = str(data.get("errorType") or "")
            message = str(data.get("message") or "session error")
            found.errors.append(f"{error_type} error: {message}" if error_type else message)
    if not events and stdout.strip():
        found.text = stdout.strip()
    found.trajectory = trace.build()
    return found


def parse_usage_file(path: Path) -> tuple[int, int, str | None]:
    """(input tokens, output tokens, model) from ``--usage-output-file``; zeros
    when the file is missing or unreadable (logged)."""
    try:
        metrics = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        log.warning("copilot: no usage statistics (%s); tokens recorded as 0", type(exc).__name__)
        return 0, 0, None
    per_model = metrics.get("modelMetrics") if isinstance(metrics, dict) else None
    if not isinstance(per_model, dict):
        log.warning("copilot: usage file has no modelMetrics; tokens recorded as 0")
        return 0, 0, None
    used_in = used_out = 0
    top_model, top_out = None, -1
    for name, entry in per_model.items():
        usage = (entry or {}).get("usage") or {}
        i, o = int(usage.get("inputTokens") or 0), int(usage.get("outputTokens") or 0)
        used_in, used_out = used_in + i, used_out + o
        if o > top_out:
            top_model, top_out = name, o
    return used_in, used_out, top_model


class CopilotBackend(cli.CliBackend):
    name = "copilot"
    env_keep = ("GH_TOKEN", "GITHUB_TOKEN", "COPILOT_")
    command = COMMAND
    skill_dir = SKILL_DIR
    install_hint = _INSTALL_HINT

    def __init__(self, *, model: str | None, role: str, options: dict[str, Any]) -> None:
        tools = options.get("allowed_tools")
        self._tools = tuple(tools) if tools is not None else None
        super().__init__(model=model, role=role, options=options)

    def describe(self) -> str:
        tools = ",".join(self._tools) if self._tools is not None else "all but " + ",".join(DENIED_BY_DEFAULT)
        return f"copilot:{self.model} (copilot -p, tools {tools})"

    def tool_flags(self, request: CompletionRequest | None = None) -> list[str]:
        if request is not None and self._acts_on(request):
            # Acting: reads and writes in the working directory, the shell only for the named programs.
            return ["--allow-tool=write"] + [f"--allow-tool=shell({c})" for c in request.allowed_commands or ()]
        if self._tools is not None:
            return [f"--allow-tool={t}" for t in self._tools]
        return ["--allow-all-tools"] + [f"--deny-tool={t}" for t in DENIED_BY_DEFAULT]

    def argv(self, prompt: str, workdir: Path, usage_file: Path, request: CompletionRequest | None = None) -> list[str]:
        args = [self._exe, "-p", prompt, "--output-format", "json", "--no-ask-user", "--no-auto-update"]
        args += ["--disable-builtin-mcps", "--name", SESSION_NAME, f"--add-dir={workdir}"]
        args += [f"--usage-output-file={usage_file}"]
        if self._cli_model:
            args += ["--model", self._cli_model]
        return args + self.tool_flags(request)

    def command_line(self, request: CompletionRequest, where: cli.ReplayDir, prompt: str) -> cli.CliCall:
        return cli.CliCall(self.argv(prompt, where.work, where.meta / "usage.json", request))

    def parse(self, result: cli.CliResult, where: cli.ReplayDir, request: CompletionRequest) -> cli.CliOutput:
        out = parse_output(result.stdout)
        if result.returncode == 0:
            out.input_tokens, out.output_tokens, out.model = parse_usage_file(where.meta / "usage.json")
        out.answered = out.text is not None and result.returncode == 0
        return out

    def failure(self, out: cli.CliOutput, result: cli.CliResult) -> BackendError | None:
        if result.returncode != 0:
            if out.errors:
                return cli.cli_failure(self.name, f"`{COMMAND}` exited with code {result.returncode}",
                                       redact(out.errors[-1]) + "\n" + cli.tail(result.stderr), _LOGIN_HINT)
            return cli.exit_error(self.name, COMMAND, result, _LOGIN_HINT)
        if out.text is None:
            reason = redact(out.errors[-1]) if out.errors else "no assistant message in the output"
            return cli.cli_failure(self.name, "copilot finished without an answer", reason, _LOGIN_HINT)
        return None


register_backend("copilot")(CopilotBackend.from_spec)
