"""The ``claude-code`` backend: one ``claude -p`` run per call, in a fresh
replay directory or the caller's checkout (see :mod:`.cli_common` for the
shared contract).

Command (prompt on stdin)::

    claude -p --output-format stream-json --verbose --no-session-persistence
           --setting-sources user --strict-mcp-config --mcp-config '{"mcpServers":{}}'
           --add-dir <work> [--plugin-dir <meta>/skill-plugin]
           --tools Read,Grep,Glob,Skill --allowedTools Read,Grep,Glob,Skill
           --max-turns 10 [--model <model>]

- No project code (:data:`NO_PROJECT_SETTINGS`): only the person's user
  settings load, never the checkout's ``.claude/settings.json`` /
  ``settings.local.json`` (their hooks, ``apiKeyHelper``, ``env``, permission
  grants) and no MCP server at all (``.mcp.json`` included), in every call, in
  the sandbox or not: a read-only replay runs ``claude`` on the host in a
  checkout of the project, and a committed ``SessionStart`` hook would run
  there as the person. The project's CLAUDE.md is still read (text, not code):
  the working directory is also given as ``--add-dir`` with
  ``CLAUDE_CODE_ADDITIONAL_DIRECTORIES_CLAUDE_MD=1`` (:data:`MEMORY_ENV`), the
  one way Claude Code reads a folder's CLAUDE.md without its settings.
  With project settings off, Claude Code no longer finds skills under
  ``.claude/skills``, so the skill under training is also offered as a plugin
  in the call's side folder (``--plugin-dir``; the Skill tool finds it by its
  name) besides the copy in the working directory the prompt points to.

- Acting (``CliBackend.act``, a target call with a working directory): the
  tools are the read-only ones plus ``Edit,Write`` and ``Bash``, and
  ``--allowedTools`` lets Bash run only the programs of
  ``request.allowed_commands`` (``Bash(pnpm:*)``); the process runs through
  the caller's launcher (its sandbox), and ``request.checks`` run after it.

- The skill under training (``request.skill``) is installed at
  ``.claude/skills/<name>/SKILL.md`` in the working directory, where Claude
  Code discovers project skills.
- Tools: ``--tools`` limits which built-in tools exist at all and
  ``--allowedTools`` lets them run without a prompt. The default,
  :data:`READ_ONLY_TOOLS`, can read the skill and files but not write, edit or
  run commands. ``model.allowed_tools`` replaces the list (for the target
  role). Optimizer and judge calls get no tools: they are plain completions.
- ``--max-turns`` from ``model.max_turns`` (default :data:`DEFAULT_MAX_TURNS`).
- ``--no-session-persistence``: no transcript is written at all, on top of
  the replay marker and directory that would let the harvester skip it.
- Output: one JSON event a line (:func:`parse_stream`): the trajectory from
  the ``assistant``/``user`` messages' ``text``, ``tool_use`` and
  ``tool_result`` blocks; the final ``result`` object: ``result`` is the text; usage counts input
  including cache writes and reads, plus output tokens; ``total_cost_usd`` is
  the cost. A result with ``is_error`` or a non-success subtype is an error of
  this item (:class:`RequestFailed`: max turns used up, an API error, an error
  during execution), unless its message says the cause is systemic (not logged
  in, credit or usage limit, unknown model: :class:`BackendConfigError`), as
  :func:`.cli_common.cli_failure` decides. So is output without a result
  object.
"""

from __future__ import annotations

import json
import logging
import os
import re
from pathlib import Path
from typing import Any

from skillopt_core.backends import cli_common as cli
from skillopt_core.backends import register_backend
from skillopt_core.backends import trajectory as tj
from skillopt_core.backends.base import BackendError, CompletionRequest, RequestFailed, Usage
from skillopt_core.backends.cli_skill import skill_doc
from skillopt_core.backends.keys import redact

log = logging.getLogger(__name__)

COMMAND = "claude"
READ_ONLY_TOOLS = ("Read", "Grep", "Glob", "Skill")
EDIT_TOOLS = ("Edit", "Write")
DEFAULT_MAX_TURNS = 10
SKILL_DIR = ".claude/skills"
# With project settings off (NO_PROJECT_SETTINGS) Claude Code 2.1 no longer reads the working directory's
# CLAUDE.md; the working directory given again as ``--add-dir`` with this variable set makes it read that
# folder's CLAUDE.md (and its @imports) as project memory, without its settings, hooks or MCP servers
# (checked with the real binary: tests/sleep/test_memory_real.py).
MEMORY_ENV = {"CLAUDE_CODE_ADDITIONAL_DIRECTORIES_CLAUDE_MD": "1"}
NO_PROJECT_SETTINGS = ("--setting-sources", "user", "--strict-mcp-config", "--mcp-config", '{"mcpServers":{}}')
PLUGIN_NAME = "skillopt"
_INSTALL_HINT = "Install Claude Code (npm i -g @anthropic-ai/claude-code) and run `claude` once to log in."
_LOGIN_HINT = "Check that `claude -p hello` works in a terminal (log in with `claude`)."


def parse_result(stdout: str) -> dict[str, Any] | None:
    """The ``type: result`` object from ``--output-format json`` output (the
    last one if several lines are printed), or None."""
    results = [obj for obj in cli.json_lines(stdout)[0] if obj.get("type") == "result"]
    if results:
        return results[-1]
    # Not one object a line: the whole output may be one (pretty-printed) document.
    try:
        obj = json.loads(stdout)
    except ValueError:
        return None
    return obj if isinstance(obj, dict) and obj.get("type") == "result" else None


# The tools that change files. ``MultiEdit`` is gone from current Claude Code (2.1.x drops it from
# ``--tools`` without a word; the init event's tool list shows it missing); older streams may still hold it.
_EDIT_TOOLS = frozenset({"Edit", "MultiEdit", "Write", "NotebookEdit"})
# ``tool_use_result.type`` of a successful Write: a new file, or one overwritten.
_WRITE_KINDS: dict[str, tj.Change] = {"create": "added", "update": "modified"}
_EXIT_CODE = re.compile(r"^\s*Exit code:?\s*(-?\d+)", re.I)
_KNOWN_TYPES = frozenset({"system", "assistant", "user", "result", "stream_event"})


def _result_text(content: Any) -> str:
    if isinstance(content, list):
        return "\n".join(str(b.get("text") or "") for b in content if isinstance(b, dict))
    return content if isinstance(content, str) else tj.bounded(content)


def _change_kind(event: dict[str, Any], name: str, results: int) -> tj.Change:
    """added or modified, from the ``user`` event's ``tool_use_result`` (one result in the event)."""
    extra = event.get("tool_use_result") if results == 1 else None
    kind = extra.get("type") if isinstance(extra, dict) else None
    return _WRITE_KINDS.get(str(kind), "modified") if name == "Write" else "modified"


def parse_stream(stdout: str, workdir: Path | None = None) -> tuple[dict[str, Any] | None, tj.Trajectory]:
    """(the final ``result`` object, the trajectory) from ``--output-format
    stream-json --verbose`` output: one JSON object a line, ``system`` (init,
    hook events), ``assistant`` and ``user`` messages whose ``content`` holds
    ``text``, ``tool_use`` and ``tool_result`` blocks, and the ``result`` last.
    A ``Bash`` tool use becomes a :class:`CommandRun` once its result arrives
    (exit code from an ``Exit code N`` first line, else 0 unless the result is
    an error, when it is unknown); tool uses listed in the result's
    ``permission_denials`` are marked denied (their result says "This command
    requires approval"). An ``Edit``/``Write`` becomes a :class:`FileChange`
    only when its result is not an error (Claude Code refuses an edit of a file
    it has not read, "File has not been read yet"): ``added`` when the event's
    ``tool_use_result.type`` is ``create``, else ``modified``. Other event
    types are kept as raw steps and counted."""
    events, _ = cli.json_lines(stdout)
    trace = tj.TrajectoryBuilder()
    pending: dict[str, tuple[str, dict[str, Any]]] = {}
    commands: dict[str, int] = {}
    result: dict[str, Any] | None = None
    for kind, event in cli.known_events(events, _KNOWN_TYPES, trace):
        if kind == "result":
            result = event
            continue
        message = cli.mapping(event.get("message"))
        content = message.get("content")
        if kind not in ("assistant", "user") or not isinstance(content, list):
            continue
        results = sum(1 for b in content if isinstance(b, dict) and b.get("type") == "tool_result")
        for block in content:
            if not isinstance(block, dict):
                continue
            btype = block.get("type")
            if btype == "text":
                # A user text block is what the CLI adds itself (a skill's body after the Skill tool).
                if kind == "assistant" and str(block.get("text") or "").strip():
                    trace.add(tj.TextStep(tj.bounded(block["text"])))
            elif btype == "tool_use":
                name, tool_input = str(block.get("name") or "?"), block.get("input") or {}
                tool_id = str(block.get("id") or "")
                pending[tool_id] = (name, tool_input if isinstance(tool_input, dict) else {})
                trace.add(tj.ToolCall(name, tj.bounded(tool_input, tj.MAX_INPUT_CHARS), tool_id))
            elif btype == "tool_result":
                tool_id = str(block.get("tool_use_id") or "")
                output, is_error = _result_text(block.get("content")), bool(block.get("is_error"))
                name, tool_input = pending.get(tool_id, ("", {}))
                trace.add(tj.ToolResult(tool_id, tj.bounded(output), is_error, name))
                if name == "Bash":
                    code = _EXIT_CODE.match(output)
                    exit_code = int(code.group(1)) if code else (None if is_error else 0)
                    commands[tool_id] = len(trace.steps)
                    trace.add(tj.CommandRun(str(tool_input.get("command") or ""), exit_code, tj.bounded(output)))
                path = tool_input.get("file_path") or tool_input.get("notebook_path")
                if name in _EDIT_TOOLS and isinstance(path, str) and not is_error:
                    trace.add(tj.FileChange(cli.relative_path(path, workdir), _change_kind(event, name, results)))
            elif btype != "thinking":
                trace.raw({"type": f"{kind}.{btype}"})
    if result is not None:
        for denial in result.get("permission_denials") or []:
            if not isinstance(denial, dict):
                continue
            tool_id = str(denial.get("tool_use_id") or "")
            where = commands.get(tool_id)
            if where is not None and where < len(trace.steps):
                step = trace.steps[where]
                trace.steps[where] = tj.CommandRun(step.command, None, step.output, denied=True)  # type: ignore[union-attr]
            elif str(denial.get("tool_name")) == "Bash" and tool_id not in commands:
                command = (denial.get("tool_input") or {}).get("command", "")
                trace.add(tj.CommandRun(str(command), None, "", denied=True))
    return result, trace.build()


def usage_from_result(result: dict[str, Any]) -> Usage:
    usage = result.get("usage") or {}
    used_in = sum(
        int(usage.get(k) or 0) for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    )
    cost = result.get("total_cost_usd")
    return Usage(used_in, int(usage.get("output_tokens") or 0), float(cost) if cost is not None else None)


_CONTEXT_SUFFIX = re.compile(r"\[[^\[\]]*\]$")  # "claude-sonnet-4-5[1m]": the 1M-token context variant


def model_name(name: str) -> str:
    """A model name without Claude Code's context-window suffix (``[1m]``)."""
    return _CONTEXT_SUFFIX.sub("", name.strip())


def model_from_result(result: dict[str, Any], fallback: str) -> str:
    per_model = result.get("modelUsage")
    if isinstance(per_model, dict) and per_model:
        # The model that wrote the most is the one that answered.
        return model_name(max(per_model, key=lambda m: (per_model[m] or {}).get("outputTokens", 0) or 0))
    return model_name(fallback)


def skill_plugin(meta: Path, skill_text: str, backend: str) -> Path:
    """A plugin folder in ``meta`` holding the skill under training (``skills/<name>/SKILL.md``),
    for ``--plugin-dir``: how Claude Code finds it while project settings are off."""
    skill = skill_doc(skill_text, backend)
    root = meta / "skill-plugin"
    (root / ".claude-plugin").mkdir(parents=True, exist_ok=True)
    (root / ".claude-plugin" / "plugin.json").write_text(json.dumps({"name": PLUGIN_NAME}), encoding="utf-8")
    folder = root / "skills" / skill.name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(skill.text, encoding="utf-8")
    return root


class ClaudeCodeBackend(cli.CliBackend):
    name = "claude-code"
    env_keep: tuple[str, ...] = ("ANTHROPIC_", "CLAUDE_")
    command = COMMAND
    skill_dir = SKILL_DIR
    install_hint = _INSTALL_HINT

    def __init__(self, *, model: str | None, role: str, options: dict[str, Any]) -> None:
        self._tools = cli.allowed_tools(options, READ_ONLY_TOOLS)
        # Cloud credentials only with the switch that makes Claude Code use them.
        self.env_keep = type(self).env_keep + (("AWS_",) if os.environ.get("CLAUDE_CODE_USE_BEDROCK") else ()) + (
            ("GOOGLE_APPLICATION_CREDENTIALS", "CLOUD_ML_", "VERTEX_")
            if os.environ.get("CLAUDE_CODE_USE_VERTEX") else ())
        self._max_turns = int(options.get("max_turns") or DEFAULT_MAX_TURNS)
        super().__init__(model=model, role=role, options=options)

    def describe(self) -> str:
        return f"claude-code:{self.model} (claude -p, tools {','.join(self._tools) or 'none'})"

    def action_tools(self, request: CompletionRequest) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(tools that exist, tools allowed without a prompt) for an acting target:
        the read-only tools, the edit tools and ``Bash`` limited to the programs of
        ``request.allowed_commands`` (``Bash(pnpm:*)``); any other command is denied
        (print mode cannot ask) and reported in the result's ``permission_denials``."""
        commands = tuple(request.allowed_commands or ())
        exist = self._tools + tuple(t for t in EDIT_TOOLS if t not in self._tools) + (("Bash",) if commands else ())
        allowed = tuple(t for t in exist if t != "Bash") + tuple(f"Bash({c}:*)" for c in commands)
        return exist, allowed

    def argv(self, tools: tuple[str, ...], allowed: tuple[str, ...] | None = None,
             plugin_dir: Path | None = None, memory_dir: Path | None = None) -> list[str]:
        args = [self._exe, "-p", "--output-format", "stream-json", "--verbose", "--no-session-persistence"]
        args += NO_PROJECT_SETTINGS
        if memory_dir is not None:  # its CLAUDE.md (and @imports) load as project memory; no settings (MEMORY_ENV)
            args += ["--add-dir", str(memory_dir)]
        if plugin_dir is not None:
            args += ["--plugin-dir", str(plugin_dir)]
        args += ["--tools", ",".join(tools)]
        allowed = tools if allowed is None else allowed
        if allowed:
            args += ["--allowedTools", ",".join(allowed)]
        args += ["--max-turns", str(self._max_turns)]
        if self._cli_model:
            args += ["--model", self._cli_model]
        return args

    def command_line(self, request: CompletionRequest, where: cli.ReplayDir, prompt: str) -> cli.CliCall:
        tools, allowed = (self._tools, None) if self._is_target(request) else ((), None)
        if self._acts_on(request):
            tools, allowed = self.action_tools(request)
        has_skill = bool(request.skill and request.skill.strip()) and not request.document_path
        plugin = skill_plugin(where.meta, request.skill or "", self.name) if has_skill else None
        return cli.CliCall(self.argv(tools, allowed, plugin, memory_dir=where.work), stdin=prompt, env=MEMORY_ENV)

    def parse(self, result: cli.CliResult, where: cli.ReplayDir, request: CompletionRequest) -> cli.CliOutput:
        parsed, trajectory = parse_stream(result.stdout, where.work)
        out = cli.CliOutput(trajectory=trajectory, answered=parsed is not None)
        out.result = parsed if parsed is not None else parse_result(result.stdout)
        if out.result is not None:
            out.text = str(out.result.get("result") or "")
            usage = usage_from_result(out.result)
            out.input_tokens, out.output_tokens, out.cost = usage.input_tokens, usage.output_tokens, usage.cost_usd
            out.model = model_from_result(out.result, self.model)
        return out

    def failure(self, out: cli.CliOutput, result: cli.CliResult) -> BackendError | None:
        parsed = out.result
        if parsed is None:
            if result.returncode != 0:
                return cli.exit_error(self.name, COMMAND, result, _LOGIN_HINT)
            return cli.cli_failure(
                self.name, "`claude` printed no JSON result", cli.tail(result.stdout) or cli.tail(result.stderr),
                _LOGIN_HINT
            )
        subtype = str(parsed.get("subtype") or "")
        if parsed.get("is_error") or subtype != "success":
            if subtype == "error_max_turns":
                return RequestFailed(
                    f"{self.name}: the agent used all {self._max_turns} turns without a final answer "
                    "(raise model.max_turns).",
                    usage=out.usage,
                )
            message = redact(str(parsed.get("result") or subtype or "unknown error"))
            kind = f" ({subtype})" if subtype not in ("", "success") else ""
            return cli.cli_failure(self.name, f"claude reported an error{kind}", message, _LOGIN_HINT, usage=out.usage)
        return None


register_backend("claude-code")(ClaudeCodeBackend.from_spec)
