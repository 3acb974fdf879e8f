"""The ``pi`` backend: one run of the Pi coding agent (npm ``@mariozechner/pi-coding-agent``)
per call in print mode, in a fresh replay directory or the caller's checkout (see
:mod:`.cli_common` for the shared contract).

Command (the package's ``docs/usage.md`` and ``docs/json.md``, pi 0.73.1)::

    pi -p <prompt> --mode json --no-session --no-extensions --tools <list> [--model <provider/id>]

- The skill under training (``request.skill``) is installed at ``.pi/skills/<name>/SKILL.md``
  in the working directory, where Pi discovers project skills.
- ``--no-session``: the replay writes no session file into the person's ``~/.pi/agent``.
- ``--no-extensions``: a checkout's ``.pi/extensions`` (TypeScript run inside Pi) is not
  loaded, nor are the person's; skills and context files still are.
- Tools: Pi has no permission prompts; what the agent may do is the set of tools it is
  given. Read-only by default: ``--tools read,grep,find,ls``; ``model.allowed_tools`` adds
  tools to that list for target calls (never ``bash``, which can write). Acting
  (``CliBackend.act``, a target call with a working directory): ``edit`` and ``write`` are
  added, and ``bash`` when ``request.allowed_commands`` names programs. Pi's shell tool cannot
  be limited to those programs, so, as with Codex and Cursor, other commands are recorded,
  not prevented, and the launcher's sandbox is the restriction.
- Endpoint and login: Pi's own ``~/.pi/agent`` (``auth.json`` from ``/login``, a custom
  provider's ``baseUrl``/``apiKey`` in ``models.json``) or a provider key variable.
- Output: one JSON event a line: ``session``, ``agent_start``, ``turn_start``,
  ``message_start``/``message_update``/``message_end`` (``message`` with ``role``
  ``user``/``assistant``/``toolResult``; an assistant's ``content`` holds ``text``,
  ``thinking`` and ``toolCall`` ``{id, name, arguments}`` items, its ``usage`` ``{input,
  output, cacheRead, cacheWrite, cost: {total}}``, ``stopReason`` and, when the provider
  failed, ``errorMessage``), ``tool_execution_start``/``tool_execution_end`` (``toolCallId``,
  ``toolName``, ``result``, ``isError``; a ``bash`` call that failed ends its text with
  "Command exited with code N", one that succeeded exited 0), ``turn_end``, ``agent_end``. The answer is the text
  of the last assistant message; tokens and cost are summed over the assistant messages.
- Failures: a non-zero exit, an assistant message with ``stopReason`` ``error`` and no
  answer, or no answer fail this item unless the CLI's words say the cause is systemic
  (:func:`.cli_common.cli_failure`).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from skillopt_core.backends import cli_common as cli
from skillopt_core.backends import register_backend
from skillopt_core.backends import trajectory as tj
from skillopt_core.backends.base import CompletionRequest

COMMAND = "pi"
SKILL_DIR = ".pi/skills"
READ_ONLY_TOOLS = ("read", "grep", "find", "ls")
EDIT_TOOLS = ("edit", "write")
_INSTALL_HINT = "Install Pi (npm i -g @mariozechner/pi-coding-agent) and run `pi` once to log in (/login)."
_LOGIN_HINT = "Check that `pi -p hello` works in a terminal (/login in `pi`, a provider in models.json, or a key)."
_EXIT_RX = re.compile(r"Command exited with code (\d+)\s*$")
_CHANGES: dict[str, tj.Change] = {"write": "added", "edit": "modified"}
_KNOWN = frozenset({"session", "agent_start", "agent_end", "turn_start", "turn_end", "message_start",
                    "message_update", "message_end", "tool_execution_start", "tool_execution_update",
                    "tool_execution_end"})


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _num(value: Any) -> int:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0


def _result_text(result: Any) -> str:
    content = result.get("content") if isinstance(result, dict) else None
    if isinstance(content, list):
        return "".join(c["text"] for c in content if isinstance(c, dict) and isinstance(c.get("text"), str))
    return result if isinstance(result, str) else ""


def parse_events(stdout: str, workdir: Path | None = None) -> cli.CliOutput:
    """What ``pi -p --mode json`` printed (see the module doc)."""
    events, _ = cli.json_lines(stdout)
    found = cli.CliOutput()
    trace = tj.TrajectoryBuilder()
    calls: dict[str, tuple[str, dict[str, Any]]] = {}
    cost, costed = 0.0, False
    for kind, event in cli.known_events(events, _KNOWN, trace):
        if kind == "message_end":
            msg = cli.mapping(event.get("message"))
            if msg.get("role") != "assistant":
                continue
            if isinstance(msg.get("model"), str):
                found.model = msg["model"]
            usage = cli.mapping(msg.get("usage"))
            found.input_tokens += sum(_num(usage.get(k)) for k in ("input", "cacheRead", "cacheWrite"))
            found.output_tokens += _num(usage.get("output"))
            money = cli.mapping(usage.get("cost"))
            if isinstance(money.get("total"), (int, float)):
                cost, costed = cost + float(money["total"]), True
            if msg.get("stopReason") == "error":
                found.errors.append(str(msg.get("errorMessage") or "error"))
            texts = []
            for item in _list(msg.get("content")):
                if not isinstance(item, dict):
                    continue
                if item.get("type") == "text" and isinstance(item.get("text"), str):
                    texts.append(item["text"])
                elif item.get("type") == "toolCall":
                    name = str(item.get("name") or "?")
                    args = cli.mapping(item.get("arguments"))
                    call_id = str(item.get("id") or "")
                    calls[call_id] = (name, args)
                    trace.add(tj.ToolCall(name, tj.bounded(args, tj.MAX_INPUT_CHARS), call_id))
            text = "".join(texts)
            if text.strip():
                trace.add(tj.TextStep(tj.bounded(text)))
                found.text = text
        elif kind == "tool_execution_end":
            call_id = str(event.get("toolCallId") or "")
            name, args = calls.get(call_id, (str(event.get("toolName") or "?"), {}))
            failed = bool(event.get("isError"))
            output = _result_text(event.get("result"))
            trace.add(tj.ToolResult(call_id, tj.bounded(output), failed, name))
            if name == "bash":
                code = _EXIT_RX.search(output) if failed else None
                exit_code = 0 if not failed else int(code.group(1)) if code else None
                trace.add(tj.CommandRun(str(args.get("command") or ""), exit_code, tj.bounded(output)))
            path = args.get("path")
            if name in _CHANGES and not failed and isinstance(path, str):
                trace.add(tj.FileChange(cli.relative_path(path, workdir), _CHANGES[name]))
    found.cost = cost if costed else None
    found.trajectory = trace.build()
    return found


class PiBackend(cli.CliBackend):
    name = "pi"
    # Pi reads its providers' keys from the environment (and its own folder's variables).
    env_keep = ("PI_", "*_API_KEY")
    command = COMMAND
    skill_dir = SKILL_DIR
    install_hint = _INSTALL_HINT
    login_hint = _LOGIN_HINT
    no_answer = "no assistant text"

    def describe(self) -> str:
        return f"pi:{self.model} (pi -p, read-only tools{cli.also_allowed(self._allowed)})"

    def tools(self, request: CompletionRequest | None = None) -> list[str]:
        """The tools the agent is given (see the module doc)."""
        tools = list(READ_ONLY_TOOLS)
        if request is not None and self._acts_on(request):
            return tools + list(EDIT_TOOLS) + (["bash"] if request.allowed_commands else [])
        if request is None or self._is_target(request):
            tools += [t for t in self._allowed if t not in tools and t != "bash"]
        return tools

    def argv(self, prompt: str, request: CompletionRequest | None = None) -> list[str]:
        args = [self._exe, "-p", prompt, "--mode", "json", "--no-session", "--no-extensions",
                "--tools", ",".join(self.tools(request))]
        if self._cli_model:
            args += ["--model", self._cli_model]
        return args

    def command_line(self, request: CompletionRequest, where: cli.ReplayDir, prompt: str) -> cli.CliCall:
        return cli.CliCall(self.argv(prompt, request))

    def parse(self, result: cli.CliResult, where: cli.ReplayDir, request: CompletionRequest) -> cli.CliOutput:
        return parse_events(result.stdout, where.work)


register_backend("pi")(PiBackend.from_spec)
