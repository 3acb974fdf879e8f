"""The folders each host writes its transcripts into (what the watcher watches).

They mirror what each source's ``discover`` lists (tests/sleep/test_sched_watcher.py
checks that every discovered file lies under one of these roots and is wanted by it):

- Claude Code: ``<home>/projects/**`` and ``<home>/history.jsonl``;
- Codex: ``<home>/sessions/**``, ``<home>/archived_sessions/**``, ``<home>/history.jsonl``;
- Copilot CLI: ``<home>/session-state/**`` and ``<home>/history-session-state/*.json``;
- VS Code Copilot Chat: ``<User>/workspaceStorage/*/chatSessions/*`` and
  ``<User>/globalStorage/emptyWindowChatSessions/*`` for every VS Code user folder.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from sleep import paths

SUFFIXES = (".jsonl", ".json")


@dataclass(frozen=True)
class Root:
    host: str
    path: str
    recursive: bool
    names: tuple[str, ...] = ()  # only these file names (empty: any transcript suffix)
    parent: str = ""  # only files whose folder has this name

    def wants(self, path: str) -> bool:
        """True if a file event at ``path`` may concern a transcript of this root."""
        name = os.path.basename(path)
        if self.names:
            if name not in self.names:
                return False
        elif not name.endswith(SUFFIXES):
            return False
        if self.parent and os.path.basename(os.path.dirname(path)) != self.parent:
            return False
        prefix = self.path.rstrip(os.sep) + os.sep
        if not path.startswith(prefix):
            return False
        return self.recursive or os.sep not in path[len(prefix):]

    def to_dict(self) -> dict:
        return {"host": self.host, "path": self.path, "recursive": self.recursive}


def transcript_roots() -> list[Root]:
    """Every root for the current environment, existing or not."""
    claude, codex, copilot = paths.claude_home(), paths.codex_home(), paths.copilot_cli_home()
    roots = [
        Root("claude-code", str(claude / "projects"), True),
        Root("claude-code", str(claude), False, names=("history.jsonl",)),
        Root("codex", str(codex / "sessions"), True),
        Root("codex", str(codex / "archived_sessions"), True),
        Root("codex", str(codex), False, names=("history.jsonl",)),
        Root("copilot-cli", str(copilot / "session-state"), True),
        Root("copilot-cli", str(copilot / "history-session-state"), False),
    ]
    for user in paths.vscode_user_dirs():
        roots.append(Root("copilot-vscode", str(Path(user) / "workspaceStorage"), True, parent="chatSessions"))
        roots.append(Root("copilot-vscode", str(Path(user) / "globalStorage" / "emptyWindowChatSessions"), False))
    return roots


def existing(roots: list[Root]) -> list[Root]:
    return [r for r in roots if os.path.isdir(r.path)]
