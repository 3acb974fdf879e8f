"""Whether an agent CLI loaded a skill, read from what it did (issue 33 §3).

With a chat model as the night's target, :mod:`sleep.cycle.triggers` *asks*
the model which listed skills it would load. With an agent CLI as the target,
it does not ask: each trigger query runs the real CLI once on the request
alone, with the skill (its candidate description) installed where that CLI
finds skills, and whether the skill was loaded is read from the trajectory
the backend returns (:class:`skillopt_core.backends.trajectory.Trajectory`):

- **Claude Code** lists skills to its model in a system message ("The
  following skills are available for use with the Skill tool") and loads one
  with its ``Skill`` tool: a ``tool_use`` block ``{"name": "Skill", "input":
  {"skill": "<plugin>:<name>"}}`` in the ``assistant`` event of its
  ``stream-json`` output, which the backend turns into a :class:`ToolCall`.
  The night's Claude Code runs without project settings (no hooks of the
  checkout run), and then it lists no ``.claude/skills`` of the working
  directory; so, as the replay does, the skill goes into a plugin folder given
  with ``--plugin-dir`` (:func:`skillopt_core.backends.claude_code.skill_plugin`'s
  layout), here with the skill's sibling skills so the listing is the
  project's. The prompt is the request and nothing else: the replay's pointer
  ("Use the skill ... read it first") would decide for the agent.
- **Codex and the other CLIs** list skills by name, description and path and
  load one by reading its ``SKILL.md`` (Codex: a shell command such as ``cat
  .agents/skills/<name>/SKILL.md``; a ``read`` tool elsewhere). The candidate
  is installed at ``<skill_dir>/<name>/SKILL.md`` of the call's working
  directory (a scratch folder under the replay root holding the sibling
  skills there too) through the backend's ``document_path`` (installed
  verbatim, no pointer in the prompt), and a :class:`CommandRun` or :class:`ToolCall`
  naming ``<name>/SKILL.md`` counts as loading it.

When the night's replay acts in the sandbox, every trigger run does too (the
backend's launcher: bubblewrap, the egress proxy its only way out, writes only
in its scratch folder), with the CLI's read-only permissions: a request mined
from the person's transcripts never runs the agent on the host.

A query whose run failed for this item only (:class:`RequestFailed`) counts as
"not loaded" and as unread (``unread`` in the figures); a systemic failure (not
logged in) stops the step.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import shutil
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from skillopt_core.backends.base import Completion, CompletionRequest, Message, RequestFailed
from skillopt_core.backends.trajectory import CommandRun, ToolCall, Trajectory
from skillopt_core.replay import REPLAY_MARKER, replay_root

SKILL_TOOL = "Skill"  # Claude Code's tool that loads a listed skill


def loaded(trajectory: Trajectory | None, name: str) -> bool:
    """Did the agent load the skill ``name``: a ``Skill`` tool call for it (``name`` or
    ``<plugin>:<name>``), or a command or tool call that reads ``.../<name>/SKILL.md``?"""
    if trajectory is None:
        return False
    path = re.compile(rf"(?:^|[\s/'\"=:]){re.escape(name)}/SKILL\.md\b")
    for step in trajectory.steps:
        if isinstance(step, ToolCall):
            if step.name == SKILL_TOOL and _skill_arg(step.input).rsplit(":", 1)[-1] == name:
                return True
            if path.search(step.input):
                return True
        elif isinstance(step, CommandRun) and path.search(step.command):
            return True
    return False


def _skill_arg(raw: str) -> str:
    try:
        data = json.loads(raw)
    except ValueError:
        return ""
    value = data.get("skill") if isinstance(data, dict) else None
    return value.strip().lstrip("/") if isinstance(value, str) else ""


def _wrapped(backend: Any, kind: type) -> Any:
    """The first backend of ``kind`` in the night's wrapper chain (each wrapper keeps its inner
    backend as ``inner``), or None."""
    seen = 0
    while backend is not None and seen < 10:
        if isinstance(backend, kind):
            return backend
        backend, seen = getattr(backend, "inner", None), seen + 1
    return None


def cli_of(backend: Any) -> Any:
    """The agent-CLI backend under the night's wrappers, or None."""
    from skillopt_core.backends.cli_common import CliBackend

    return _wrapped(backend, CliBackend)


def recorder_of(backend: Any) -> Any:
    """The night's evidence recorder in the wrapper chain (:class:`sleep.cycle.backends.RecordingBackend`)."""
    from sleep.cycle.backends import RecordingBackend

    return _wrapped(backend, RecordingBackend)


class ListedClaude:
    """One trigger query through the real ``claude``: the skills only listed (a plugin folder),
    the request alone as the prompt; returns the completion with its trajectory. A run that used up
    its turns still returns what it did (it may have loaded the skill first)."""

    def __init__(self, cli: Any, siblings: Sequence[str]) -> None:
        self.inner, self.siblings = cli, list(siblings)
        self.name, self.model = cli.name, cli.model

    def describe(self) -> str:
        return f"{self.inner.describe()}, skills listed only (trigger queries)"

    def _plugin(self, meta: Path, texts: Sequence[str]) -> Path:
        from skillopt_core.backends.claude_code import PLUGIN_NAME
        from skillopt_core.backends.cli_skill import skill_doc

        root = meta / "skill-plugin"
        (root / ".claude-plugin").mkdir(parents=True, exist_ok=True)
        (root / ".claude-plugin" / "plugin.json").write_text(json.dumps({"name": PLUGIN_NAME}), encoding="utf-8")
        for text in texts:
            doc = skill_doc(text, self.name)
            folder = root / "skills" / doc.name
            if folder.exists():  # a sibling with the skill's own name: the candidate (first) wins
                continue
            folder.mkdir(parents=True)
            (folder / "SKILL.md").write_text(doc.text, encoding="utf-8")
        return root

    async def complete(self, request: CompletionRequest) -> Completion:
        from skillopt_core.backends.claude_code import (
            MEMORY_ENV,
            READ_ONLY_TOOLS,
            model_from_result,
            parse_stream,
            usage_from_result,
        )
        from skillopt_core.backends.cli_common import cli_failure, exit_error, replay_dir, tail

        started = time.monotonic()
        prompt = f"{REPLAY_MARKER}\n\n{request.messages[-1].content}"
        with replay_dir(self.name) as where:
            plugin = self._plugin(where.meta, [request.skill or "", *self.siblings])
            argv = self.inner.argv(READ_ONLY_TOOLS, None, plugin, memory_dir=where.work)
            # a trigger run in its folder: in the night's sandbox when the replay acts, as every run of a request
            result = await self.inner.run_in(argv, where, stdin_text=prompt, extra_env=MEMORY_ENV,
                                             request=replace(request, role="trigger", cwd=str(where.work)))
            parsed, trajectory = parse_stream(result.stdout, where.work)
        hint = "Check that `claude -p hello` works in a terminal (log in with `claude`)."
        if parsed is None:
            if result.returncode != 0:
                raise exit_error(self.name, "claude", result, hint)
            raise cli_failure(self.name, "`claude` printed no JSON result", tail(result.stdout), hint)
        subtype = str(parsed.get("subtype") or "")
        if (parsed.get("is_error") or subtype != "success") and subtype != "error_max_turns":
            raise cli_failure(self.name, f"claude reported an error ({subtype})", str(parsed.get("result") or ""),
                              hint, usage=usage_from_result(parsed))
        return Completion(text=str(parsed.get("result") or ""), usage=usage_from_result(parsed),
                          model=model_from_result(parsed, self.model), latency_s=time.monotonic() - started,
                          trajectory=trajectory)


class TraceDecider:
    """``decide(description, queries)`` for :func:`sleep.cycle.triggers.optimise` with an agent CLI
    as the target: each query run once with ``with_text(description)`` installed (see the module
    docstring); (query, loaded?, run read?) each."""

    def __init__(self, target: Any, name: str, with_text: Any, siblings: Sequence[str], workers: int = 2) -> None:
        cli = cli_of(target)
        if cli is None:
            raise ValueError("the target is not an agent CLI backend; ask the model instead (triggers.decide)")
        self.family, self.name, self.with_text = cli.name, name, with_text
        self.sem = asyncio.Semaphore(max(1, workers))
        if self.family == "claude-code":
            from sleep.cycle.backends import RecordingBackend

            runner: Any = ListedClaude(cli, siblings)
            rec = recorder_of(target)
            self.backend = RecordingBackend(runner, rec.log, rec.redactor) if rec is not None else runner
            self.document = None
        else:
            self.backend, self.document = target, f"{cli.skill_dir.rstrip('/')}/{name}/SKILL.md"
        self.skill_dir, self.siblings = cli.skill_dir.rstrip("/"), list(siblings)

    def how(self) -> str:
        if self.family == "claude-code":
            return "the real claude run per request; loaded when it called its Skill tool for the skill"
        return f"the real {self.family} run per request; loaded when it read the skill's SKILL.md"

    async def __call__(self, description: str, queries: Sequence[Any]) -> list[tuple[Any, bool, bool]]:
        text, backend = self.with_text(description), self.backend  # the caller may wrap it to count the calls
        with self._listing() as work:

            async def one(q: Any) -> tuple[Any, bool, bool]:
                # role "trigger": never an acting rollout (no checkout copy, no edits; the CLI's read-only mode)
                request = CompletionRequest(messages=(Message("user", q.text),), role="trigger", stage="trigger",
                                            max_tokens=400, skill=text, document_path=self.document,
                                            cwd=str(work) if work is not None else None)
                async with self.sem:
                    try:
                        done = await backend.complete(request)
                    except RequestFailed:
                        return q, False, False
                return q, loaded(done.trajectory, self.name), done.trajectory is not None

            return list(await asyncio.gather(*(one(q) for q in queries)))

    @contextlib.contextmanager
    def _listing(self) -> Iterator[Path | None]:
        """For a CLI that finds skills in its working directory: a scratch folder under the replay root
        holding the sibling skills where it looks (the candidate is installed per call); removed after."""
        if self.document is None:
            yield None
            return
        from skillopt_core.backends.cli_skill import skill_doc

        root = replay_root()
        root.mkdir(parents=True, exist_ok=True, mode=0o700)
        work = Path(tempfile.mkdtemp(prefix="trigger-", dir=root))
        try:
            for text in self.siblings:
                doc = skill_doc(text, self.family)
                if doc.name != self.name:
                    (work / self.skill_dir / doc.name).mkdir(parents=True, exist_ok=True)
                    (work / self.skill_dir / doc.name / "SKILL.md").write_text(doc.text, encoding="utf-8")
            yield work
        finally:
            shutil.rmtree(work, ignore_errors=True)
