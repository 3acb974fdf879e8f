"""Where each host keeps the memory file it loads for every request in a project.

Only files that exist are trained (a lesson creates no memory file). The user's
own ``~/.claude/CLAUDE.md`` (``$CLAUDE_CONFIG_DIR/CLAUDE.md``) is a target only with
``sleep.memory_user_files: true``, when the project has no ``CLAUDE.md``
(it is read by every project of theirs); without that consent it is never read for
training nor staged.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from skillopt_core.skill.document import SkillParseError, split_front_matter

# host -> the project paths it loads as memory, first found wins
PROJECT_FILES: dict[str, tuple[str, ...]] = {
    "claude-code": ("CLAUDE.md", ".claude/CLAUDE.md"),
    "codex": ("AGENTS.md",),
    "opencode": ("AGENTS.md",),
    "gemini": ("GEMINI.md",),
    "copilot": (".github/copilot-instructions.md",),
    "cursor": (".cursor/rules",),  # a folder of .mdc rules: the first with alwaysApply: true
}
LABELS = {"CLAUDE.md": "Claude Code memory", "AGENTS.md": "AGENTS.md memory (Codex, OpenCode)",
          "GEMINI.md": "Gemini CLI memory", "copilot-instructions.md": "Copilot instructions"}


@dataclass(frozen=True)
class MemoryFile:
    host: str
    path: Path  # absolute
    rel: str  # where the host loads it, relative to the project (the replay writes the candidate there)
    user: bool = False  # the person's own ~/.claude/CLAUDE.md (consent given)

    @property
    def label(self) -> str:
        return label_of(self.path) or "memory file"


def _always_rule(folder: Path) -> Path | None:
    """The first ``.mdc`` rule (by name) Cursor applies to every request (``alwaysApply: true``)."""
    if not folder.is_dir():
        return None
    for path in sorted(folder.glob("*.mdc")):
        try:
            meta, _ = split_front_matter(path.read_text(encoding="utf-8"), source=str(path))
        except (OSError, UnicodeDecodeError, SkillParseError):
            continue
        if isinstance(meta, dict) and meta.get("alwaysApply") is True:
            return path
    return None


def find(project: Path, host: str, user_files: bool = False, home: Path | None = None) -> MemoryFile | None:
    """``host``'s memory file in ``project`` (None: it has none)."""
    for rel in PROJECT_FILES.get(host, ()):
        path = project / rel
        if rel.endswith("rules"):
            rule = _always_rule(path)
            if rule is not None:
                return MemoryFile(host, rule, rule.relative_to(project).as_posix())
        elif path.is_file() and not path.is_symlink():
            return MemoryFile(host, path, rel)
    if host == "claude-code" and user_files:
        from sleep.paths import claude_home

        mine = (home / ".claude" if home else claude_home()) / "CLAUDE.md"
        if mine.is_file():
            return MemoryFile(host, mine, "CLAUDE.md", user=True)
    return None


def present(project: Path, user_files: bool = False) -> list[MemoryFile]:
    """Every host's memory file in ``project``, one per file (AGENTS.md once, for Codex)."""
    seen: dict[Path, MemoryFile] = {}
    for host in PROJECT_FILES:
        found = find(project, host, user_files)
        if found is not None and found.path not in seen:
            seen[found.path] = found
    return list(seen.values())


def label_of(path: str | Path) -> str | None:
    """A memory file's kind for the review pages ("Claude Code memory"), None for a skill."""
    p = Path(path)
    if p.suffix == ".mdc" and p.parent.name == "rules" and p.parent.parent.name == ".cursor":
        return "Cursor rule"
    return LABELS.get(p.name)
