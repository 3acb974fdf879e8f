"""What an acting replay of a task may run: the programs of the person's own sessions of it.

The harvester keeps per-turn shell signatures (:mod:`sleep.shell_signature`:
``pnpm install``, ``pytest -q``, ``git commit``). A task's replay may run the
programs those signatures name, plus :data:`READ_ONLY_BASICS`. Programs that
act beyond the project (version control, cloud and container tools) are
allowed only with the subcommand the sessions used (``git commit``, never all
of ``git``); :data:`NEVER` are never allowed. Everything else the agent tries is
denied by the host (Claude Code's ``--allowedTools``, Copilot's
``--allow-tool``) and recorded; Codex has no per-command list, so there the
sandbox alone bounds what a command can do.
"""

from __future__ import annotations

from typing import Iterable

READ_ONLY_BASICS = ("ls", "cat", "head", "tail", "wc", "grep", "rg", "pwd", "git status", "git diff", "git log",
                    "git show")
# Programs whose subcommand decides whether they reach outside the checkout.
BY_SUBCOMMAND = frozenset({"git", "gh", "docker", "kubectl", "terraform", "aws", "gcloud", "az", "helm", "fly",
                           "vercel", "heroku"})
NEVER = frozenset({"sudo", "su", "doas", "ssh", "scp", "sftp"})
MAX_COMMANDS = 40


def allowed_commands(signatures: Iterable[str]) -> list[str]:
    """The command prefixes a task's replay may run, from its sessions' shell signatures."""
    out: list[str] = list(READ_ONLY_BASICS)
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
