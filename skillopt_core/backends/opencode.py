"""The ``opencode`` backend: one ``opencode run`` per call, in a fresh replay
directory or the caller's checkout (see :mod:`.cli_common` for the shared
contract).

Command (prompt on stdin; https://opencode.ai/docs/cli/ ``run``)::

    opencode run --format json [-m <provider/model>]

with the permissions in ``OPENCODE_CONFIG_CONTENT`` (inline JSON config
applied over the person's own, https://opencode.ai/docs/config/; permission
rules https://opencode.ai/docs/permissions/; a person's own
``OPENCODE_CONFIG_CONTENT``, e.g. their provider, is kept and the rules put in
its ``permission``; in the sandbox that is the only way a custom provider
reaches OpenCode, since its scratch HOME holds the login, not the config file):

- The skill under training (``request.skill``) is installed at
  ``.opencode/skills/<name>/SKILL.md`` in the working directory, where
  OpenCode discovers project skills.
- No project code (:data:`NO_PROJECT_CONFIG`, ``OPENCODE_DISABLE_PROJECT_CONFIG=1``):
  the checkout's ``opencode.json`` and ``.opencode/`` (its plugins, which are
  JavaScript run in OpenCode's process, MCP servers, agents, permission rules)
  are not loaded, in the sandbox or not; the person's own config still is.
  With project config off OpenCode no longer finds ``.opencode/skills``, so the
  skill under training is also offered from a config folder in the call's side
  folder (``OPENCODE_CONFIG_DIR``), besides the copy the prompt points to.
  opencode 1.18.33 ran a committed ``.opencode/plugin`` and a local MCP server
  without it.
- Read-only by default: ``{"permission": {"edit": "deny", "bash": "deny",
  "webfetch": "deny"}}`` (reads, searches and listings stay allowed).
  ``model.allowed_tools`` names permissions set to ``allow`` on top (e.g.
  ``webfetch``). Acting (``CliBackend.act``, a target call with a working
  directory): ``edit`` allowed, ``bash`` denied except ``<program>`` and
  ``<program> *`` for each of ``request.allowed_commands`` (the last matching
  rule wins, so the blanket ``*: deny`` comes first).
- Output: one JSON event a line, each with ``type``, ``timestamp``,
  ``sessionID`` and a ``part``: ``step_start``; ``text`` (``part.text``);
  ``tool_use`` (``part.tool``, ``part.callID``, ``part.state`` with
  ``status``, ``input``, ``output`` or ``error``, ``metadata.exit`` for
  ``bash`` where reported, ``metadata.exists`` for ``write``: a file that was
  there is modified, else added; a call its permission rules denied is a
  ``state.status`` ``error`` whose error says "The user has specified a rule
  which prevents you from using this specific tool call", recorded as denied;
  a call may come once per state, only the finished one counts); ``step_finish``
  (``part.tokens`` input/output/reasoning/cache, ``part.cost``); ``error`` (``error.name``, ``error.data.message``). The
  answer is the text of the last step; tokens are summed over ``step_finish``
  (input plus cache reads and writes; output plus reasoning), cost likewise.
  A run may end without its last ``step_finish`` (anomalyco/opencode#26855):
  the text still counts, the tokens are what was reported.
- Failures: a non-zero exit, an ``error`` event without an answer, or no
  answer fail this item unless the CLI's words say the cause is systemic
  (:func:`.cli_common.cli_failure`; ``ProviderAuthError`` always is).
"""

from __future__ import annotations

import json
import logging
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillopt_core.backends import register_backend
from skillopt_core.backends.base import Completion, CompletionRequest, Usage
from skillopt_core.backends.claude_code import relative_path
from skillopt_core.backends.cli_common import (
    CliBackend,
    allowed_tools,
    also_allowed,
    cli_failure,
    exit_error,
    json_lines,
    mapping,
    tail,
)
from skillopt_core.backends.cli_skill import skill_doc
from skillopt_core.backends.keys import redact
from skillopt_core.backends.trajectory import (
    MAX_INPUT_CHARS,
    Change,
    CommandRun,
    FileChange,
    TextStep,
    ToolCall,
    ToolResult,
    Trajectory,
    TrajectoryBuilder,
    bounded,
)

log = logging.getLogger(__name__)

COMMAND = "opencode"
SKILL_DIR = ".opencode/skills"
CONFIG_ENV = "OPENCODE_CONFIG_CONTENT"
READ_ONLY = {"edit": "deny", "bash": "deny", "webfetch": "deny"}
_INSTALL_HINT = "Install OpenCode (npm i -g opencode-ai) and run `opencode auth login`."
_LOGIN_HINT = "Check that `opencode run hello` works in a terminal (log in with `opencode auth login`)."
_EDIT_TOOLS: dict[str, Change] = {"write": "added", "edit": "modified", "patch": "modified", "multiedit": "modified"}
# What opencode 1.18 answers a tool call its permission rules deny (the call's ``state.error``).
_DENIED = ("The user has specified a rule which prevents you from using this specific tool call",
           "The user rejected permission to use this specific tool call")
NO_PROJECT_CONFIG = {"OPENCODE_DISABLE_PROJECT_CONFIG": "1"}
CONFIG_DIR_ENV = "OPENCODE_CONFIG_DIR"
_KNOWN = frozenset({"step_start", "step_finish", "text", "tool_use", "error", "reasoning"})


@dataclass
class OpenCodeOutput:
    text: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float | None = None
    errors: list[str] = field(default_factory=list)
    trajectory: Trajectory = field(default_factory=Trajectory)


def _num(value: Any) -> int:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0


def _tool_step(part: dict[str, Any], trace: TrajectoryBuilder, workdir: Path | None) -> None:
    name = str(part.get("tool") or "?")
    call_id = str(part.get("callID") or part.get("id") or "")
    state = mapping(part.get("state"))
    tool_input = mapping(state.get("input"))
    ok = state.get("status") != "error"
    output = str(state["output"]) if isinstance(state.get("output"), str) else str(state.get("error") or "")
    meta = mapping(state.get("metadata"))
    trace.add(ToolCall(name, bounded(tool_input, MAX_INPUT_CHARS), call_id))
    trace.add(ToolResult(call_id, bounded(output), not ok, name))
    if name == "bash":
        code = meta.get("exit")
        denied = not ok and output.startswith(_DENIED)
        exit_code = int(code) if isinstance(code, int) else (0 if ok else None)
        trace.add(CommandRun(str(tool_input.get("command") or ""), exit_code, bounded(output), denied=denied))
    elif name in _EDIT_TOOLS and ok and isinstance(tool_input.get("filePath"), str):
        kind: Change = _EDIT_TOOLS[name]
        if name == "write" and meta.get("exists") is True:  # opencode says whether the file was there before
            kind = "modified"
        trace.add(FileChange(relative_path(tool_input["filePath"], workdir), kind))


def parse_events(stdout: str, workdir: Path | None = None) -> OpenCodeOutput:
    """What ``opencode run --format json`` printed (see the module doc)."""
    events, _ = json_lines(stdout)
    found = OpenCodeOutput()
    trace = TrajectoryBuilder()
    step_text: list[str] = []
    cost = 0.0
    costed = False
    for event in events:
        kind = event.get("type")
        part = mapping(event.get("part"))
        if kind not in _KNOWN:
            trace.raw(event)
        elif kind == "step_start":
            step_text = []
        elif kind == "text" and isinstance(part.get("text"), str):
            step_text.append(part["text"])
            if part["text"].strip():
                trace.add(TextStep(bounded(part["text"])))
            if "".join(step_text).strip():
                found.text = "".join(step_text)
        elif kind == "tool_use":
            state = mapping(part.get("state"))
            if state.get("status") in ("pending", "running"):
                continue  # the same callID comes again once it finished
            _tool_step(part, trace, workdir)
        elif kind == "step_finish":
            tokens = mapping(part.get("tokens"))
            cache = mapping(tokens.get("cache"))
            found.input_tokens += _num(tokens.get("input")) + _num(cache.get("read")) + _num(cache.get("write"))
            found.output_tokens += _num(tokens.get("output")) + _num(tokens.get("reasoning"))
            if isinstance(part.get("cost"), (int, float)):
                cost, costed = cost + float(part["cost"]), True
        elif kind == "error":
            error = mapping(event.get("error"))
            data = mapping(error.get("data"))
            name = str(error.get("name") or "")
            message = str(data.get("message") or error.get("message") or "error")
            found.errors.append(f"{name}: {message}" if name else message)
    found.cost = cost if costed else None
    found.trajectory = trace.build()
    return found


def _own_inline_config() -> dict[str, Any]:
    """The person's own ``OPENCODE_CONFIG_CONTENT`` (e.g. their provider), which the replay's
    permission rules are added to rather than replace; {} when unset or not a JSON object."""
    try:
        found = json.loads(os.environ.get(CONFIG_ENV) or "{}")
    except ValueError:
        log.warning("opencode: %s is not JSON; the replay ignores it", CONFIG_ENV)
        return {}
    return found if isinstance(found, dict) else {}


def skill_config_dir(meta: Path, skill_text: str, backend: str) -> Path | None:
    """A config folder in ``meta`` holding only the skill under training (``skills/<name>/SKILL.md``),
    for ``OPENCODE_CONFIG_DIR``: how OpenCode finds it while project config is off."""
    if not skill_text.strip():
        return None
    skill = skill_doc(skill_text, backend)
    folder = meta / "opencode-config" / "skills" / skill.name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(skill.text, encoding="utf-8")
    return folder.parent.parent


class OpenCodeBackend(CliBackend):
    name = "opencode"
    # OpenCode reads many providers' keys from the environment (and {env:VAR} in its config).
    env_keep = ("OPENCODE_", "*_API_KEY", "AWS_", "AZURE_", "GOOGLE_APPLICATION_CREDENTIALS")
    command = COMMAND
    skill_dir = SKILL_DIR
    install_hint = _INSTALL_HINT

    def __init__(self, *, model: str | None, role: str, options: dict[str, Any]) -> None:
        self._allowed = allowed_tools(options)
        super().__init__(model=model, role=role, options=options)

    def describe(self) -> str:
        extra = also_allowed(self._allowed)
        return f"opencode:{self.model} (opencode run, read-only permissions{extra})"

    def permissions(self, request: CompletionRequest | None = None) -> dict[str, Any]:
        """The ``permission`` section of the inline config (see the module doc)."""
        if request is not None and self._acts_on(request):
            bash: dict[str, str] = {"*": "deny"}
            for command in request.allowed_commands or ():
                bash[command] = "allow"
                bash[f"{command} *"] = "allow"
            return {"edit": "allow", "bash": bash, "webfetch": "deny"}
        rules = dict(READ_ONLY)
        if request is None or self._is_target(request):
            rules.update({tool: "allow" for tool in self._allowed})
        return rules

    def config_env(self, request: CompletionRequest | None = None, config_dir: Path | None = None) -> dict[str, str]:
        env = {CONFIG_ENV: json.dumps({**_own_inline_config(), "permission": self.permissions(request)}),
               **NO_PROJECT_CONFIG}
        if config_dir is not None:
            env[CONFIG_DIR_ENV] = str(config_dir)
        return env

    def argv(self) -> list[str]:
        args = [self._exe, "run", "--format", "json"]
        if self._cli_model:
            args += ["-m", self._cli_model]
        return args

    async def complete(self, request: CompletionRequest) -> Completion:
        started = time.monotonic()
        async with self._replay(request) as (where, prompt):
            skills = skill_config_dir(where.meta, request.skill, self.name) if request.skill else None
            result = await self._run(self.argv(), where, stdin_text=prompt, request=request,
                                     extra_env=self.config_env(request, skills))
            out = parse_events(result.stdout, where.work)
            checks = await self._run_checks(request, where) if out.text is not None else []
        usage = Usage(out.input_tokens, out.output_tokens, out.cost)
        if out.text is None:
            if out.errors:
                evidence = redact(out.errors[-1])
                if evidence.startswith("ProviderAuthError"):
                    evidence += " (not logged in)"
                raise cli_failure(self.name, "opencode reported an error", evidence, _LOGIN_HINT, usage=usage)
            if result.returncode != 0:
                raise exit_error(self.name, COMMAND, result, _LOGIN_HINT)
            raise cli_failure(self.name, "opencode finished without an answer (no text part)",
                              tail(result.stderr), _LOGIN_HINT, usage=usage)
        if result.returncode != 0:
            raise exit_error(self.name, COMMAND, result, _LOGIN_HINT)
        return Completion(
            text=out.text,
            usage=usage,
            model=self.model,
            latency_s=time.monotonic() - started,
            trajectory=out.trajectory.with_steps(*checks),
        )


@register_backend("opencode")
def _create_opencode(spec: Any) -> OpenCodeBackend:
    return OpenCodeBackend(model=spec.model, role=spec.role, options=spec.options)
