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
from pathlib import Path
from typing import Any

from skillopt_core.backends import cli_common as cli
from skillopt_core.backends import register_backend
from skillopt_core.backends import trajectory as tj
from skillopt_core.backends.base import BackendError, CompletionRequest
from skillopt_core.backends.cli_skill import skill_doc

log = logging.getLogger(__name__)

COMMAND = "opencode"
SKILL_DIR = ".opencode/skills"
CONFIG_ENV = "OPENCODE_CONFIG_CONTENT"
READ_ONLY = {"edit": "deny", "bash": "deny", "webfetch": "deny"}
_INSTALL_HINT = "Install OpenCode (npm i -g opencode-ai) and run `opencode auth login`."
_LOGIN_HINT = "Check that `opencode run hello` works in a terminal (log in with `opencode auth login`)."
_EDIT_TOOLS: dict[str, tj.Change] = {"write": "added", "edit": "modified", "patch": "modified", "multiedit": "modified"}
# What opencode 1.18 answers a tool call its permission rules deny (the call's ``state.error``).
_DENIED = ("The user has specified a rule which prevents you from using this specific tool call",
           "The user rejected permission to use this specific tool call")
NO_PROJECT_CONFIG = {"OPENCODE_DISABLE_PROJECT_CONFIG": "1"}
CONFIG_DIR_ENV = "OPENCODE_CONFIG_DIR"
_KNOWN = frozenset({"step_start", "step_finish", "text", "tool_use", "error", "reasoning"})


def _num(value: Any) -> int:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0


def _tool_step(part: dict[str, Any], trace: tj.TrajectoryBuilder, workdir: Path | None) -> None:
    name = str(part.get("tool") or "?")
    call_id = str(part.get("callID") or part.get("id") or "")
    state = cli.mapping(part.get("state"))
    tool_input = cli.mapping(state.get("input"))
    ok = state.get("status") != "error"
    output = str(state["output"]) if isinstance(state.get("output"), str) else str(state.get("error") or "")
    meta = cli.mapping(state.get("metadata"))
    trace.add(tj.ToolCall(name, tj.bounded(tool_input, tj.MAX_INPUT_CHARS), call_id))
    trace.add(tj.ToolResult(call_id, tj.bounded(output), not ok, name))
    if name == "bash":
        code = meta.get("exit")
        denied = not ok and output.startswith(_DENIED)
        exit_code = int(code) if isinstance(code, int) else (0 if ok else None)
        trace.add(tj.CommandRun(str(tool_input.get("command") or ""), exit_code, tj.bounded(output), denied=denied))
    elif name in _EDIT_TOOLS and ok and isinstance(tool_input.get("filePath"), str):
        kind: tj.Change = _EDIT_TOOLS[name]
        if name == "write" and meta.get("exists") is True:  # opencode says whether the file was there before
            kind = "modified"
        trace.add(tj.FileChange(cli.relative_path(tool_input["filePath"], workdir), kind))


def parse_events(stdout: str, workdir: Path | None = None) -> cli.CliOutput:
    """What ``opencode run --format json`` printed (see the module doc)."""
    events, _ = cli.json_lines(stdout)
    found = cli.CliOutput()
    trace = tj.TrajectoryBuilder()
    step_text: list[str] = []
    cost = 0.0
    costed = False
    for kind, event in cli.known_events(events, _KNOWN, trace):
        part = cli.mapping(event.get("part"))
        if kind == "step_start":
            step_text = []
        elif kind == "text" and isinstance(part.get("text"), str):
            step_text.append(part["text"])
            if part["text"].strip():
                trace.add(tj.TextStep(tj.bounded(part["text"])))
            if "".join(step_text).strip():
                found.text = "".join(step_text)
        elif kind == "tool_use":
            state = cli.mapping(part.get("state"))
            if state.get("status") in ("pending", "running"):
                continue  # the same callID comes again once it finished
            _tool_step(part, trace, workdir)
        elif kind == "step_finish":
            tokens = cli.mapping(part.get("tokens"))
            cache = cli.mapping(tokens.get("cache"))
            found.input_tokens += _num(tokens.get("input")) + _num(cache.get("read")) + _num(cache.get("write"))
            found.output_tokens += _num(tokens.get("output")) + _num(tokens.get("reasoning"))
            if isinstance(part.get("cost"), (int, float)):
                cost, costed = cost + float(part["cost"]), True
        elif kind == "error":
            error = cli.mapping(event.get("error"))
            data = cli.mapping(error.get("data"))
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


class OpenCodeBackend(cli.CliBackend):
    name = "opencode"
    # OpenCode reads many providers' keys from the environment (and {env:VAR} in its config).
    env_keep = ("OPENCODE_", "*_API_KEY", "AWS_", "AZURE_", "GOOGLE_APPLICATION_CREDENTIALS")
    command = COMMAND
    skill_dir = SKILL_DIR
    install_hint = _INSTALL_HINT
    login_hint = _LOGIN_HINT
    no_answer = "no text part"

    def describe(self) -> str:
        extra = cli.also_allowed(self._allowed)
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

    def command_line(self, request: CompletionRequest, where: cli.ReplayDir, prompt: str) -> cli.CliCall:
        skills = skill_config_dir(where.meta, request.skill, self.name) if request.skill else None
        return cli.CliCall(self.argv(), stdin=prompt, env=self.config_env(request, skills))

    def parse(self, result: cli.CliResult, where: cli.ReplayDir, request: CompletionRequest) -> cli.CliOutput:
        return parse_events(result.stdout, where.work)

    def failure(self, out: cli.CliOutput, result: cli.CliResult) -> BackendError | None:
        if out.text is None and out.errors and out.errors[-1].startswith("ProviderAuthError"):
            out.errors[-1] += " (not logged in)"
        return super().failure(out, result)


register_backend("opencode")(OpenCodeBackend.from_spec)
