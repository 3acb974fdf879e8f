"""The ``claude-code`` backend: one ``claude -p`` run per call, in a fresh
replay directory (see :mod:`.cli_common` for the shared contract).

Command (prompt on stdin)::

    claude -p --output-format json --no-session-persistence
           --tools Read,Grep,Glob,Skill --allowedTools Read,Grep,Glob,Skill
           --max-turns 10 [--model <model>]

- The skill under training (target role) is installed at
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
  the cost. A result with ``is_error`` or a non-success subtype is an error:
  hitting max turns is :class:`RequestRejected` (this item only); anything else
  (not logged in, API errors) is a :class:`BackendError`.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

from . import register_backend
from .base import BackendError, Completion, CompletionRequest, RequestRejected, Usage
from .cli_common import (
    effective_role,
    exit_error,
    find_executable,
    finish_json,
    render_prompt,
    replay_dir,
    run_cli,
    skill_from_system,
    tail,
    timeout_from,
)
from .keys import redact

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
    found = None
    for line in stdout.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if isinstance(obj, dict) and obj.get("type") == "result":
            found = obj
    if found is None:
        try:
            obj = json.loads(stdout)
        except ValueError:
            return None
        found = obj if isinstance(obj, dict) and obj.get("type") == "result" else None
    return found


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


class ClaudeCodeBackend:
    name = "claude-code"

    def __init__(self, *, model: str | None, role: str, options: dict[str, Any]) -> None:
        self.model = model or "default"
        self._cli_model = model
        self._role = role
        tools = options.get("allowed_tools")
        self._tools = tuple(tools) if tools is not None else READ_ONLY_TOOLS
        self._max_turns = int(options.get("max_turns") or DEFAULT_MAX_TURNS)
        self._timeout = timeout_from(options)
        self._exe = find_executable(COMMAND, self.name, _INSTALL_HINT)

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
        is_target = effective_role(request, self._role) == "target"
        skill = skill_from_system(request.system) if is_target else None
        tools = self._tools if is_target else ()
        with replay_dir(self.name, skill, SKILL_DIR) as where:
            skill_path = f"{SKILL_DIR}/{skill.name}/SKILL.md" if skill else None
            prompt = render_prompt(request, skill=skill, skill_path=skill_path)
            result = await run_cli(
                self.argv(tools), cwd=where.work, timeout=self._timeout, backend=self.name, stdin_text=prompt
            )
        parsed = parse_result(result.stdout)
        if parsed is None:
            if result.returncode != 0:
                raise exit_error(self.name, COMMAND, result, _LOGIN_HINT)
            raise BackendError(
                f"{self.name}: `claude` printed no JSON result (is it Claude Code?). {_LOGIN_HINT}\n"
                + (tail(result.stdout) or tail(result.stderr))
            )
        subtype = str(parsed.get("subtype") or "")
        if parsed.get("is_error") or subtype != "success":
            message = redact(str(parsed.get("result") or subtype or "unknown error"))
            if subtype == "error_max_turns":
                raise RequestRejected(
                    f"{self.name}: the agent used all {self._max_turns} turns without a final answer "
                    "(raise model.max_turns)."
                )
            kind = f" ({subtype})" if subtype not in ("", "success") else ""
            raise BackendError(f"{self.name}: claude reported an error{kind}: {message}. {_LOGIN_HINT}")
        text = str(parsed.get("result") or "")
        return Completion(
            text=finish_json(text, request),
            usage=usage_from_result(parsed),
            model=model_from_result(parsed, self.model),
            latency_s=time.monotonic() - started,
        )


@register_backend("claude-code")
def _create_claude_code(spec: Any) -> ClaudeCodeBackend:
    return ClaudeCodeBackend(model=spec.model, role=spec.role, options=spec.options)
