"""The folders each host writes its transcripts into (what the watcher watches).

They are the ``watch`` entries of each source in ``sleep/hosts/`` and mirror what its
``discover`` lists (tests/sleep/test_sched_watcher.py
checks that every discovered file lies under one of these roots and is wanted by it):

- Claude Code: ``<home>/projects/**`` and ``<home>/history.jsonl``;
- Codex: ``<home>/sessions/**``, ``<home>/archived_sessions/**``, ``<home>/history.jsonl``;
- Copilot CLI: ``<home>/session-state/**`` and ``<home>/history-session-state/*.json``;
- VS Code Copilot Chat: ``<User>/workspaceStorage/*/chatSessions/*`` and
  ``<User>/globalStorage/emptyWindowChatSessions/*`` for every VS Code user folder;
- Gemini CLI: ``<home>/tmp/*/chats/*``; OpenCode: ``<data>/storage/**`` and ``<data>/opencode*.db``
  with its ``-wal``;
- Cursor: ``~/.cursor/chats/**/store.db`` and the IDE's ``<User>/globalStorage/state.vscdb`` and
  ``<User>/workspaceStorage/*/state.vscdb``, each with its ``-wal`` (a row file is noted
  through its database).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from fnmatch import fnmatchcase

SUFFIXES = (".jsonl", ".json")


@dataclass(frozen=True)
class Root:
    host: str
    path: str
    recursive: bool
    names: tuple[str, ...] = ()  # only these file names, or patterns (``opencode-*.db``); empty: any transcript suffix
    parent: str = ""  # only files whose folder has this name

    def wants(self, path: str) -> bool:
        """True if a file event at ``path`` may concern a transcript of this root."""
        name = os.path.basename(path)
        if self.names:
            if name not in self.names and not any(fnmatchcase(name, n) for n in self.names if "*" in n):
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
    """Every root for the current environment, existing or not (each source's ``watch``
    folders in :mod:`sleep.hosts`, below each of its home folders)."""
    from sleep import hosts

    return [Root(name, str(folder), w.recursive, names=w.names, parent=w.parent)
            for name, folder, w in hosts.watch_roots()]


def existing(roots: list[Root]) -> list[Root]:
    return [r for r in roots if os.path.isdir(r.path)]
