"""The memory candidate placed where the host loads it, for every target rollout of its replay.

An agent CLI target gets ``request.document_path`` (the memory file's path in the
project): the CLI backend writes the candidate there in the rollout's checkout
and the real CLI loads it by itself, as it loads the person's own (Claude Code's
``CLAUDE.md`` and its ``@imports``, Codex's ``AGENTS.md``, Gemini CLI's
``GEMINI.md``). A chat backend (the configured model, the scripted backend) gets
the document in its context the way that host puts it there (Claude Code's
"Contents of .../CLAUDE.md (project instructions, checked into the codebase)"
block with each import after it; Codex's "# AGENTS.md instructions for ..."
block; Gemini CLI's "--- Context from: GEMINI.md ---"), in place of the skill
the prompt would otherwise carry. The person's text never leaves the replay.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from skillopt_core import Backend, CompletionRequest
from skillopt_core.backends.cli_common import CliBackend
from skillopt_core.backends.cli_skill import instruction_of
from sleep.memory import imports as imp
from sleep.memory.files import MemoryFile


def framed(memory: MemoryFile, text: str, project: Path) -> str:
    """``text`` as ``memory.host`` puts its memory file in the model's context."""
    where = project / memory.rel
    if memory.host == "claude-code":
        blocks = [f"Contents of {where} (project instructions, checked into the codebase):\n\n{text.rstrip()}"]
        blocks += [f"Contents of {i.path} (project instructions, checked into the codebase):\n\n{i.text.rstrip()}"
                   for i in imp.follow(where if where.is_file() else memory.path, project, text)]
        return ("# claudeMd\nCodebase and user instructions are shown below. Be sure to adhere to these "
                "instructions. IMPORTANT: These instructions OVERRIDE any default behavior and you MUST follow "
                "them exactly as written.\n\n" + "\n\n".join(blocks))
    if memory.host in ("codex", "opencode"):
        return f"# AGENTS.md instructions for {project}\n\n<INSTRUCTIONS>\n{text.rstrip()}\n</INSTRUCTIONS>"
    if memory.host == "gemini":
        return f"--- Context from: {memory.rel} ---\n{text.rstrip()}\n--- End of Context from: {memory.rel} ---"
    return f"Instructions from {memory.rel}:\n\n{text.rstrip()}"


def is_cli(backend: Any) -> bool:
    """Whether ``backend`` (through its wrappers' ``inner``) is an agent CLI."""
    for _ in range(8):
        if isinstance(backend, CliBackend):
            return True
        backend = getattr(backend, "inner", None)
        if backend is None:
            return False
    return False


class MemoryPlacement:
    """Wraps the target backend of a memory replay (see the module docstring)."""

    def __init__(self, inner: Backend, memory: MemoryFile, project: Path) -> None:
        self.inner = inner
        self.memory = memory
        self.project = project
        self.name = inner.name
        self.model = inner.model
        self._cli = is_cli(inner)

    def describe(self) -> str:
        return f"{self.inner.describe()}, with the candidate as {self.memory.rel}"

    async def complete(self, request: CompletionRequest):
        if request.skill is None or (request.role or "target") != "target":
            return await self.inner.complete(request)
        if self._cli:
            return await self.inner.complete(replace(request, document_path=self.memory.rel))
        instruction = instruction_of(request)
        system = "\n\n".join(p for p in (framed(self.memory, request.skill, self.project), instruction) if p)
        return await self.inner.complete(replace(request, system=system))


def place(backends: dict[str, Backend], memory: MemoryFile, project: Path) -> dict[str, Backend]:
    """``backends`` with the target wrapped in :class:`MemoryPlacement`."""
    return {**backends, "target": MemoryPlacement(backends["target"], memory, project)}
