"""How SkillOpt marks the agent sessions it starts itself (replays).

The CLI backends (claude-code, codex, copilot) run every call in a fresh
directory under :func:`replay_root`, or in a checkout the caller prepared
(``CompletionRequest.cwd``), which must also lie under :func:`replay_root` (the
backends refuse any other), and put :data:`REPLAY_MARKER` at the top of the
prompt. Those hosts then write transcripts whose working directory (and, for
Claude Code, project slug) contains :data:`REPLAY_DIR_NAME`, and whose first
user prompt starts with the marker. The harvester skips such sessions, so the
product's own replays are never mined as the person's work.

This module is deliberately tiny and dependency-free: both the backends and the
harvester import it, and it is the single source of truth for the mechanism.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

REPLAY_DIR_NAME = "skillopt-replay"
REPLAY_MARKER = "<!-- skillopt-replay: this session was started by SkillOpt; do not mine -->"
REPLAY_ROOT_ENV = "SKILLOPT_REPLAY_ROOT"

# Claude Code turns the cwd into a slug by replacing non-alphanumerics with '-'.
_SLUG_RE = re.compile(r"(^|-)skillopt-replay(-|$)")


def replay_root() -> Path:
    """The directory under which every replay working directory is created."""
    override = os.environ.get(REPLAY_ROOT_ENV)
    root = Path(override) if override else Path(tempfile.gettempdir()) / REPLAY_DIR_NAME
    return root


def is_replay_path(path: str | os.PathLike[str] | None) -> bool:
    """True if a working directory or Claude Code project slug belongs to a replay."""
    if not path:
        return False
    text = str(path)
    if REPLAY_DIR_NAME in Path(text).parts:
        return True
    root = os.environ.get(REPLAY_ROOT_ENV)
    if root and text.startswith(root):
        return True
    return bool(_SLUG_RE.search(text))


def is_replay_prompt(text: str | None) -> bool:
    """True if a user prompt carries the replay marker."""
    return bool(text) and REPLAY_MARKER in text[:2000]
