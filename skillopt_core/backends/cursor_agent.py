"""The ``cursor-agent`` backend: one Cursor CLI run per call in print mode, in a
fresh replay directory or the caller's checkout (see :mod:`.cli_common` for the
shared contract).

Command (https://cursor.com/docs/cli/headless, https://cursor.com/docs/cli/reference/parameters,
https://cursor.com/docs/cli/reference/output-format)::

    cursor-agent -p --output-format stream-json --trust --mode ask [--model <model>] <prompt>

- The skill under training (``request.skill``) is installed at
  ``.cursor/skills/<name>/SKILL.md`` in the working directory, Cursor's
  project skill folder.
- Read-only by default: ``--mode ask`` (Cursor's read-only mode: it explores
  and answers, it makes no changes) and no ``--force``, so no command runs.
  ``--trust`` trusts the fresh replay directory, which print mode cannot ask
  about. Cursor has no per-tool allow list on its command line, so
  ``model.allowed_tools`` does not apply (a warning says so once).
  Acting (``CliBackend.act``, a target call with a working directory): no
  ``--mode ask`` and ``--force`` (edits and commands run without a prompt)
  inside the caller's launcher, its sandbox; Cursor's command line has no
  per-command allow list either, so commands outside
  ``request.allowed_commands`` are recorded, not prevented.
- Output: one JSON event a line: ``system`` (``subtype`` ``init``, ``model``),
  ``user``, ``assistant`` (``message.content`` text blocks), ``tool_call``
  (``subtype`` ``started``/``completed``, ``call_id``, ``tool_call`` holding one
  ``<kind>ToolCall`` object with ``args`` and, once completed, ``result`` with
  ``success`` or an error), and a terminal ``result`` (``subtype``,
  ``is_error``, ``result`` the whole answer, ``duration_ms``, ``session_id``,
  ``usage`` where the CLI reports it). The answer is the assistant messages
  after the last tool call (``result`` joins every message of the run, the
  agent's narration included), else ``result``. A failed run exits non-zero with its
  message on stderr and may print no ``result``.
- Failures: a non-zero exit, a ``result`` with ``is_error`` or no result fail
  this item unless the CLI's words say the cause is systemic
  (:func:`.cli_common.cli_failure`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillopt_core.backends import cli_common as cli
from skillopt_core.backends import register_backend
from skillopt_core.backends import trajectory as tj
from skillopt_core.backends.base import BackendError, CompletionRequest
from skillopt_core.backends.keys import redact

log = logging.getLogger(__name__)

COMMAND = "cursor-agent"
SKILL_DIR = ".cursor/skills"
_INSTALL_HINT = "Install the Cursor CLI (curl https://cursor.com/install -fsS | bash) and run `cursor-agent login`."
_LOGIN_HINT = "Check that `cursor-agent -p hello` works in a terminal (log in with `cursor-agent login`)."
_EDIT_KINDS: dict[str, tj.Change] = {"writeToolCall": "added", "editToolCall": "modified", "deleteToolCall": "deleted"}
_KNOWN = frozenset({"system", "user", "assistant", "tool_call", "result", "thinking"})


@dataclass
class CursorOutput(cli.CliOutput):
    final_text: str = ""  # the assistant messages after the last tool call


def _tool(event: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """(the ``<kind>ToolCall`` key, its object) of a ``tool_call`` event."""
    holder = cli.mapping(event.get("tool_call"))
    for key, value in holder.items():
        if key.endswith("ToolCall") and isinstance(value, dict):
            return key, value
    function = holder.get("function")
    if isinstance(function, dict):
        return str(function.get("name") or "function"), {"args": function.get("arguments") or {}}
    return "?", {}


def _outcome(call: dict[str, Any]) -> tuple[bool, dict[str, Any]]:
    """(succeeded, the result's payload) of a completed tool call."""
    result = cli.mapping(call.get("result"))
    if isinstance(result.get("success"), dict):
        return True, result["success"]
    for key in ("failure", "error", "rejected"):
        if key in result:
            payload = result[key]
            return False, payload if isinstance(payload, dict) else {"message": str(payload)}
    return not result, result


def _result_text(payload: dict[str, Any]) -> str:
    for key in ("stdout", "content", "output", "message"):
        if isinstance(payload.get(key), str) and payload[key]:
            text = payload[key]
            if key == "stdout" and isinstance(payload.get("stderr"), str) and payload["stderr"]:
                text += "\n" + payload["stderr"]
            return text
    return tj.bounded(payload) if payload else ""


class _Text:
    """The assistant text of the current turn. With partial output the CLI prints each
    delta as an ``assistant`` event and then the whole message once more (seen in a
    captured GPT-5.1 run); a message that equals the deltas before it replaces them."""

    def __init__(self, trace: tj.TrajectoryBuilder) -> None:
        self.trace = trace
        self.messages: list[str] = []
        self.deltas: list[str] = []

    def add(self, text: str) -> None:
        if self.deltas and "".join(self.deltas) == text:
            self.deltas = []
            self._done(text)
        elif text:
            self.deltas.append(text)

    def _done(self, text: str) -> None:
        self.messages.append(text)
        if text.strip():
            self.trace.add(tj.TextStep(tj.bounded(text)))

    def flush(self) -> None:
        if self.deltas:
            pending, self.deltas = "".join(self.deltas), []
            self._done(pending)

    def new_turn(self) -> None:
        self.flush()
        self.messages = []

    def text(self) -> str:
        self.flush()
        return "".join(self.messages)


def parse_stream(stdout: str, workdir: Path | None = None) -> CursorOutput:
    """What ``cursor-agent -p --output-format stream-json`` printed (see the module
    doc): the terminal ``result`` and the trajectory. ``shellToolCall`` becomes a
    command (its ``exitCode``), ``writeToolCall``/``editToolCall``/``deleteToolCall``
    a file change; other event types are kept as raw steps."""
    events, _ = cli.json_lines(stdout)
    found = CursorOutput()
    trace = tj.TrajectoryBuilder()
    turn = _Text(trace)
    for kind, event in cli.known_events(events, _KNOWN, trace):
        if kind == "system":
            found.model = str(event.get("model") or "") or found.model
        elif kind == "assistant":
            message = cli.mapping(event.get("message"))
            content = message.get("content")
            blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
            turn.add("".join(str(b.get("text") or "") for b in blocks
                             if isinstance(b, dict) and b.get("type") == "text"))
        elif kind == "tool_call":
            name, call = _tool(event)
            call_id = str(event.get("call_id") or "")
            args = cli.mapping(call.get("args"))
            if event.get("subtype") == "started":
                turn.new_turn()
                trace.add(tj.ToolCall(name, tj.bounded(args, tj.MAX_INPUT_CHARS), call_id))
                continue
            if event.get("subtype") != "completed":
                continue
            turn.flush()
            ok, payload = _outcome(call)
            output = _result_text(payload)
            trace.add(tj.ToolResult(call_id, tj.bounded(output), not ok, name))
            if name == "shellToolCall":
                code = payload.get("exitCode")
                exit_code = int(code) if isinstance(code, int) else (0 if ok else None)
                trace.add(tj.CommandRun(str(args.get("command") or payload.get("command") or ""), exit_code,
                                        tj.bounded(output), denied="rejected" in (call.get("result") or {})))
            elif name in _EDIT_KINDS and ok and isinstance(args.get("path"), str):
                trace.add(tj.FileChange(cli.relative_path(args["path"], workdir), _EDIT_KINDS[name]))
        elif kind == "result":
            found.result = event
    found.final_text = turn.text()
    found.trajectory = trace.build()
    if found.result is not None:
        _usage(found, found.result)
        found.text = found.final_text if found.final_text.strip() else str(found.result.get("result") or "")
        found.answered = not found.result.get("is_error")
    else:
        found.answered = False
    return found


def _usage(found: CursorOutput, result: dict[str, Any]) -> None:
    usage = cli.mapping(result.get("usage"))
    found.input_tokens = sum(int(usage.get(k) or 0) for k in ("inputTokens", "cacheReadTokens", "cacheWriteTokens"))
    found.output_tokens = int(usage.get("outputTokens") or 0)


class CursorAgentBackend(cli.CliBackend):
    name = "cursor-agent"
    env_keep = ("CURSOR_",)
    command = COMMAND
    skill_dir = SKILL_DIR
    install_hint = _INSTALL_HINT

    def __init__(self, *, model: str | None, role: str, options: dict[str, Any]) -> None:
        super().__init__(model=model, role=role, options=options)
        if options.get("allowed_tools") is not None:
            log.warning("cursor-agent: model.allowed_tools does not apply to the Cursor CLI; it runs in --mode ask")

    def describe(self) -> str:
        if self._launcher is not None:
            return f"cursor-agent:{self.model} (cursor-agent -p, --force inside {self._launcher.name})"
        return f"cursor-agent:{self.model} (cursor-agent -p, read-only ask mode)"

    def argv(self, prompt: str, acting: bool = False) -> list[str]:
        args = [self._exe, "-p", "--output-format", "stream-json", "--trust"]
        args += ["--force"] if acting else ["--mode", "ask"]
        if self._cli_model:
            args += ["--model", self._cli_model]
        return [*args, prompt]

    def command_line(self, request: CompletionRequest, where: cli.ReplayDir, prompt: str) -> cli.CliCall:
        return cli.CliCall(self.argv(prompt, self._acts_on(request)))

    def parse(self, result: cli.CliResult, where: cli.ReplayDir, request: CompletionRequest) -> cli.CliOutput:
        return parse_stream(result.stdout, where.work)

    def failure(self, out: cli.CliOutput, result: cli.CliResult) -> BackendError | None:
        if out.result is None:
            if result.returncode != 0:
                return cli.exit_error(self.name, COMMAND, result, _LOGIN_HINT)
            evidence = cli.tail(result.stderr) or cli.tail(result.stdout)
            return cli.cli_failure(self.name, "cursor-agent printed no result", evidence, _LOGIN_HINT)
        if out.result.get("is_error") or str(out.result.get("subtype") or "success") != "success":
            message = redact(str(out.result.get("result") or out.result.get("subtype") or "unknown error"))
            evidence = message + "\n" + cli.tail(result.stderr)
            return cli.cli_failure(self.name, "cursor-agent reported an error", evidence, _LOGIN_HINT, usage=out.usage)
        if result.returncode != 0:
            return cli.exit_error(self.name, COMMAND, result, _LOGIN_HINT)
        return None


register_backend("cursor-agent")(CursorAgentBackend.from_spec)
