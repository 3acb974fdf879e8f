"""The ``claude-code`` backend: one ``claude -p`` run per call, in a fresh
replay directory or the caller's checkout (see :mod:`.cli_common` for the
shared contract).

Command (prompt on stdin)::

    claude -p --output-format json --no-session-persistence
           --tools Read,Grep,Glob,Skill --allowedTools Read,Grep,Glob,Skill
           --max-turns 10 [--model <model>]

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
- Output: the JSON result object. ``result`` is the text; usage counts input
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
import time
from typing import Any

from skillopt_core.backends import register_backend
from skillopt_core.backends.base import Completion, CompletionRequest, RequestFailed, Usage
from skillopt_core.backends.cli_common import CliBackend, cli_failure, exit_error, json_lines, tail
from skillopt_core.backends.keys import redact

log = logging.getLogger(__name__)

COMMAND = "claude"
READ_ONLY_TOOLS = ("Read", "Grep", "Glob", "Skill")
DEFAULT_MAX_TURNS = 10
SKILL_DIR = ".claude/skills"
_INSTALL_HINT = "Install Claude Code (npm i -g @anthropic-ai/claude-code) and run `claude` once to log in."
_LOGIN_HINT = "Check that `claude -p hello` works in a terminal (log in with `claude`)."


def parse_result(stdout: str) -> dict[str, Any] | None:
    """The ``type: result`` object from ``--output-format json`` output (the
    last one if several lines are printed), or None."""
    results = [obj for obj in json_lines(stdout)[0] if obj.get("type") == "result"]
    if results:
        return results[-1]
    # Not one object a line: the whole output may be one (pretty-printed) document.
    try:
        obj = json.loads(stdout)
    except ValueError:
        return None
    return obj if isinstance(obj, dict) and obj.get("type") == "result" else None


def usage_from_result(result: dict[str, Any]) -> Usage:
    usage = result.get("usage") or {}
    used_in = sum(
        int(usage.get(k) or 0) for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    )
    cost = result.get("total_cost_usd")
    return Usage(used_in, int(usage.get("output_tokens") or 0), float(cost) if cost is not None else None)


def model_from_result(result: dict[str, Any], fallback: str) -> str:
    per_model = result.get("modelUsage")
    if isinstance(per_model, dict) and per_model:
        # The model that wrote the most is the one that answered.
        return max(per_model, key=lambda m: (per_model[m] or {}).get("outputTokens", 0) or 0)
    return fallback


class ClaudeCodeBackend(CliBackend):
    name = "claude-code"
    command = COMMAND
    skill_dir = SKILL_DIR
    install_hint = _INSTALL_HINT

    def __init__(self, *, model: str | None, role: str, options: dict[str, Any]) -> None:
        tools = options.get("allowed_tools")
        self._tools = tuple(tools) if tools is not None else READ_ONLY_TOOLS
        self._max_turns = int(options.get("max_turns") or DEFAULT_MAX_TURNS)
        super().__init__(model=model, role=role, options=options)

    def describe(self) -> str:
        return f"claude-code:{self.model} (claude -p, tools {','.join(self._tools) or 'none'})"

    def argv(self, tools: tuple[str, ...]) -> list[str]:
        args = [self._exe, "-p", "--output-format", "json", "--no-session-persistence"]
        args += ["--tools", ",".join(tools)]
        if tools:
            args += ["--allowedTools", ",".join(tools)]
        args += ["--max-turns", str(self._max_turns)]
        if self._cli_model:
            args += ["--model", self._cli_model]
        return args

    async def complete(self, request: CompletionRequest) -> Completion:
        started = time.monotonic()
        tools = self._tools if self._is_target(request) else ()
        async with self._replay(request) as (where, prompt):
            result = await self._run(self.argv(tools), where, stdin_text=prompt)
        parsed = parse_result(result.stdout)
        if parsed is None:
            if result.returncode != 0:
                raise exit_error(self.name, COMMAND, result, _LOGIN_HINT)
            raise cli_failure(
                self.name, "`claude` printed no JSON result", tail(result.stdout) or tail(result.stderr), _LOGIN_HINT
            )
        subtype = str(parsed.get("subtype") or "")
        if parsed.get("is_error") or subtype != "success":
            if subtype == "error_max_turns":
                raise RequestFailed(
                    f"{self.name}: the agent used all {self._max_turns} turns without a final answer "
                    "(raise model.max_turns).",
                    usage=usage_from_result(parsed),
                )
            message = redact(str(parsed.get("result") or subtype or "unknown error"))
            kind = f" ({subtype})" if subtype not in ("", "success") else ""
            raise cli_failure(
                self.name, f"claude reported an error{kind}", message, _LOGIN_HINT, usage=usage_from_result(parsed)
            )
        return Completion(
            text=str(parsed.get("result") or ""),
            usage=usage_from_result(parsed),
            model=model_from_result(parsed, self.model),
            latency_s=time.monotonic() - started,
        )


@register_backend("claude-code")
def _create_claude_code(spec: Any) -> ClaudeCodeBackend:
    return ClaudeCodeBackend(model=spec.model, role=spec.role, options=spec.options)
