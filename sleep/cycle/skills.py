"""Which skill file a night evolves.

Each host reads skills from its own places (ARCHITECTURE.md, "Targets"). The
sessions record which skills the agent invoked (``Session.skills``); those
names are resolved to files, project first, then the person's home. The most
used skill that exists wins. When none fits, the night proposes a managed skill
``skillopt-learned`` for the project's main host (the host with most sessions),
created by the proposal itself with the front matter that host accepts.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

import yaml

from sleep.hosts import all_hosts, skills_of, source_family
from sleep.sessions import Session

MANAGED_NAME = "skillopt-learned"
MANAGED_DESCRIPTION = (
    "What SkillOpt-Sleep learned from your own sessions in this project: recurring tasks and the "
    "corrections you gave. Use it for tasks like the ones you repeat here."
)
# transcript source -> the family whose skill folders it reads (sleep/hosts/; a host with none: claude-code's)
HOST_OF_PREFIX = {src: fam for src, fam in source_family().items() if skills_of(fam) is not None}


@dataclass(frozen=True)
class SkillChoice:
    path: Path
    name: str
    host: str  # claude-code | codex | copilot
    managed: bool  # True: the night creates it (no file yet)
    sessions: int  # sessions that invoked it (0 for a managed skill)
    why: str

    def seed_text(self) -> str:
        """The text training starts from: the file, or a minimal managed skill."""
        if self.path.is_file():
            # Bytes as they are (newline=""): adopting a proposal compares their sha256.
            with open(self.path, encoding="utf-8", newline="") as fh:
                return fh.read()
        return managed_skill_text(self.name)


def managed_skill_text(name: str = MANAGED_NAME) -> str:
    front = yaml.safe_dump({"name": name, "description": MANAGED_DESCRIPTION}, sort_keys=False, width=1000)
    return (f"---\n{front}---\n\n"
            "# Lessons from your recurring tasks\n\n"
            "- Follow the conventions this project already uses.\n")


def candidate_paths(host: str, name: str, project: Path) -> list[Path]:
    """Where ``host`` looks for skill ``name``: project first, then home."""
    places = skills_of(host) or skills_of("claude-code")
    return places.candidates(name, project)


def managed_path(host: str, project: Path) -> Path:
    places = skills_of(host) or skills_of("claude-code")
    return project / places.project[0] / MANAGED_NAME / "SKILL.md"


def choose_skill(project: Path, sessions: Iterable[Session], override: Path | None = None) -> SkillChoice:
    """The skill to evolve for ``project`` (see the module docstring)."""
    sessions = list(sessions)
    if override is not None:
        override = override.expanduser().resolve()
        host = _host_of_path(override, project)
        return SkillChoice(override, _name_of(override), host, not override.is_file(), 0, "chosen with --skill")
    uses: Counter[tuple[str, str]] = Counter()
    for s in sessions:
        host = HOST_OF_PREFIX.get(s.host, "claude-code")
        for name in s.skills:
            uses[(host, name)] += 1
    for (host, name), count in uses.most_common():
        for path in candidate_paths(host, name, project):
            if path.is_file():
                return SkillChoice(path, name, host, False, count, f"invoked in {count} session(s)")
    instructions = project / ".github" / "copilot-instructions.md"
    hosts = Counter(HOST_OF_PREFIX.get(s.host, "claude-code") for s in sessions)
    main_host = hosts.most_common(1)[0][0] if hosts else "claude-code"
    if main_host == "copilot" and instructions.is_file():
        return SkillChoice(instructions, "copilot-instructions", "copilot", False, 0,
                           "the project's Copilot instructions (no invoked skill found)")
    why = "no invoked skill file found" if uses else "the sessions invoked no skill"
    return SkillChoice(managed_path(main_host, project), MANAGED_NAME, main_host, not managed_path(main_host, project).is_file(),
                       0, f"{why}; a managed skill for {main_host}, the project's main host")


def _name_of(path: Path) -> str:
    return path.parent.name if path.name == "SKILL.md" else path.stem


def _host_of_path(path: Path, project: Path) -> str:
    parts = path.parts
    for host in all_hosts():  # the host whose own (first) skill folder holds the file; else Claude Code
        if host.family != "claude-code" and host.skills is not None \
                and Path(host.skills.project[0]).parts[0] in parts:
            return host.family
    return "claude-code"
