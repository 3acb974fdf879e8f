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
  Codex has no per-tool allow list, so ``model.allowed_tools`` does not apply
  (a warning says so once); ``model.max_turns`` has no Codex flag either.
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
import time
from dataclasses import dataclass, field
from typing import Any

from skillopt_core.backends import register_backend
from skillopt_core.backends.base import Completion, CompletionRequest, Usage
from skillopt_core.backends.cli_common import CliBackend, cli_failure, exit_error, json_lines, tail
from skillopt_core.backends.keys import redact
from skillopt_core.backends.pricing import estimate_cost

log = logging.getLogger(__name__)

COMMAND = "codex"
SKILL_DIR = ".agents/skills"
_INSTALL_HINT = "Install Codex (npm i -g @openai/codex) and run `codex login`."
_LOGIN_HINT = "Check that `codex exec hello` works in a terminal (log in with `codex login`)."


@dataclass
class CodexEvents:
    """What a ``codex exec --json`` event stream said."""

    text: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    errors: list[str] = field(default_factory=list)
    skipped_lines: int = 0


def parse_events(stdout: str) -> CodexEvents:
    events, skipped = json_lines(stdout)
    found = CodexEvents(skipped_lines=skipped)
    for event in events:
        kind = event.get("type")
        if kind == "item.completed":
            item = event.get("item") or {}
            if item.get("type") == "agent_message" and isinstance(item.get("text"), str):
                found.text = item["text"]
        elif kind == "turn.completed":
            usage = event.get("usage") or {}
            found.input_tokens += int(usage.get("input_tokens") or 0)
            found.output_tokens += int(usage.get("output_tokens") or 0)
        elif kind == "turn.failed":
            error = event.get("error") or {}
            found.errors.append(str(error.get("message") or error or "turn failed"))
        elif kind == "error":
            found.errors.append(str(event.get("message") or "error"))
    return found


class CodexBackend(CliBackend):
    name = "codex"
    command = COMMAND
    skill_dir = SKILL_DIR
    install_hint = _INSTALL_HINT

    def __init__(self, *, model: str | None, role: str, options: dict[str, Any]) -> None:
        super().__init__(model=model, role=role, options=options)
        if options.get("allowed_tools") is not None:
            log.warning("codex: model.allowed_tools does not apply to Codex; it runs with --sandbox read-only")

    def describe(self) -> str:
        return f"codex:{self.model} (codex exec, read-only sandbox)"

    def argv(self, workdir: str) -> list[str]:
        args = [self._exe, "exec", "--json", "--skip-git-repo-check", "--sandbox", "read-only", "--ephemeral"]
        args += ["-C", workdir]
        if self._cli_model:
            args += ["-m", self._cli_model]
        return args + ["-"]

    async def complete(self, request: CompletionRequest) -> Completion:
        started = time.monotonic()
        async with self._replay(request) as (where, prompt):
            result = await self._run(self.argv(str(where.work)), where, stdin_text=prompt)
        events = parse_events(result.stdout)
        if events.skipped_lines:
            log.debug("codex: skipped %d non-JSON output line(s)", events.skipped_lines)
        if events.text is None:
            if events.errors:
                raise cli_failure(self.name, "codex reported an error", redact(events.errors[-1]), _LOGIN_HINT)
            if result.returncode != 0:
                raise exit_error(self.name, COMMAND, result, _LOGIN_HINT)
            raise cli_failure(
                self.name, "codex finished without an answer (no agent_message event)", tail(result.stderr), _LOGIN_HINT
            )
        if result.returncode != 0:
            raise exit_error(self.name, COMMAND, result, _LOGIN_HINT)
        return Completion(
            text=events.text,
            usage=Usage(events.input_tokens, events.output_tokens,
                        estimate_cost(self._cli_model, events.input_tokens, events.output_tokens)),
            model=self.model,
            latency_s=time.monotonic() - started,
        )


@register_backend("codex")
def _create_codex(spec: Any) -> CodexBackend:
    return CodexBackend(model=spec.model, role=spec.role, options=spec.options)
