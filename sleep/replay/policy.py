"""What an acting replay of a task may run: the programs of the person's own sessions of it,
and the commands its judge requires.

The harvester keeps per-turn shell signatures (:mod:`sleep.shell_signature`:
``pnpm install``, ``pytest -q``, ``git commit``). A task's replay may run the
programs those signatures name, plus :data:`READ_ONLY_BASICS`, plus the
commands its judge requires (:func:`skillopt_core.tasks.judges.outcome.required_commands`:
a ``ran`` pattern as written, ``pnpm`` or ``uv run pytest``; a ``check``
command whole): the person ran ``npm install`` and then corrected "use pnpm",
so the task's sessions name only ``npm``, but the gate asks whether a skill
makes the agent run ``pnpm``, and that must be possible. Programs that
act beyond the project (version control, cloud and container tools) are
allowed only with the subcommand the sessions used (``git commit``, never all
of ``git``); :data:`NEVER` are never allowed. Everything else the agent tries is
denied by the host (Claude Code's ``--allowedTools``, Copilot's
``--allow-tool``) and recorded; Codex has no per-command list, so there the
sandbox alone bounds what a command can do.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from skillopt_core.tasks.judges.outcome import required_commands

READ_ONLY_BASICS = ("ls", "cat", "head", "tail", "wc", "grep", "rg", "pwd", "git status", "git diff", "git log",
                    "git show")
# Programs whose subcommand decides whether they reach outside the checkout.
BY_SUBCOMMAND = frozenset({"git", "gh", "docker", "kubectl", "terraform", "aws", "gcloud", "az", "helm", "fly",
                           "vercel", "heroku"})
NEVER = frozenset({"sudo", "su", "doas", "ssh", "scp", "sftp"})
MAX_COMMANDS = 40


def _required_prefix(pattern: str) -> str | None:
    words = pattern.split()
    if not words or words[0] in NEVER or words[0].startswith("-"):
        return None
    if words[0] in BY_SUBCOMMAND and (len(words) < 2 or words[1].startswith("-")):
        return None  # never all of git: a judge that requires bare `git` gets what the sessions used
    return " ".join(words)


def allowed_commands(signatures: Iterable[str], judge: Any = None) -> list[str]:
    """The command prefixes a task's replay may run: :data:`READ_ONLY_BASICS`, the commands
    ``judge`` (the task's judge spec) requires, then its sessions' shell signatures'
    programs, at most :data:`MAX_COMMANDS` in all (the judge's first, so the cap never
    drops them)."""
    out: list[str] = list(READ_ONLY_BASICS)
    for pattern in required_commands(judge):
        prefix = _required_prefix(pattern)
        if prefix and prefix not in out and len(out) < MAX_COMMANDS:
            out.append(prefix)
    for signature in signatures:
        words = str(signature or "").split()
        if not words or words[0] in NEVER or words[0].startswith("-"):
            continue
        if words[0] in BY_SUBCOMMAND:
            prefix = " ".join(words[:2]) if len(words) > 1 and not words[1].startswith("-") else None
        else:
            prefix = words[0]
        if prefix and prefix not in out and len(out) < MAX_COMMANDS:
            out.append(prefix)
    return out
