"""Which skill file a night evolves.

Each host reads skills from its own places (ARCHITECTURE.md, "Targets"). The
sessions record which skills the agent invoked (``Session.skills``); those
names are resolved to files, project first, then the person's home. The most
used skill that exists wins. Else a project skill no session invoked is chosen
when its description fits the recurring tasks (:mod:`sleep.cycle.skillfit`, which
says why). When none fits, the night proposes a managed skill
``skillopt-learned`` for the project's main host (the host with most sessions),
created by the proposal itself with the front matter that host accepts.

That is the choice for tasks whose sessions invoked no skill; a night trains
every invoked skill with its own tasks (:mod:`sleep.cycle.multiskill`).
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import yaml

from sleep.cycle.skillfit import fitting_skill
from sleep.hosts import Skills, all_hosts, skills_of, source_family
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
    description: str = ""  # a new skill's description (sleep.cycle.newskills); the managed one's when empty

    def seed_text(self) -> str:
        """The text training starts from: the file, or a minimal managed skill."""
        if self.path.is_file():
            # Bytes as they are (newline=""): adopting a proposal compares their sha256.
            try:
                with open(self.path, encoding="utf-8", newline="") as fh:
                    text = fh.read()
            except UnicodeDecodeError as exc:
                raise SkillPathError(f"the skill {self.path} is not UTF-8 text (byte {exc.start}); save it as "
                                     "UTF-8, or pass another with --skill.") from None
            from skillopt_core.skill.document import Skill, SkillParseError

            try:
                Skill.parse(text, source=str(self.path))
            except SkillParseError as exc:
                raise SkillPathError(f"{exc} Fix the skill file, or pass another with --skill.") from None
            return text
        return managed_skill_text(self.name, self.description or MANAGED_DESCRIPTION)


def managed_skill_text(name: str = MANAGED_NAME, description: str = MANAGED_DESCRIPTION) -> str:
    front = yaml.safe_dump({"name": name, "description": description}, sort_keys=False, width=1000)
    return (f"---\n{front}---\n\n"
            "# Lessons from your recurring tasks\n\n"
            "- Follow the conventions this project already uses.\n")


def _places(host: str) -> Skills:
    """Where ``host`` reads skills; Claude Code's places for a host that declares none."""
    places = skills_of(host) or skills_of("claude-code")
    if places is None:
        raise RuntimeError("no host declares where it reads skills (the claude-code host file is missing)")
    return places


def candidate_paths(host: str, name: str, project: Path) -> list[Path]:
    """Where ``host`` looks for skill ``name``: project first, then home."""
    return _places(host).candidates(name, project)


def managed_path(host: str, project: Path) -> Path:
    return project / _places(host).project[0] / MANAGED_NAME / "SKILL.md"


class SkillPathError(ValueError):
    """A ``--skill`` path that is no skill file; the message says what to pass instead."""


def project_skill_folders(project: Path) -> list[Path]:
    """The project's skill folders, of every host (the registry's ``Skills.project``), in host order."""
    found: list[Path] = []
    for host in all_hosts():
        for folder in host.skills.project if host.skills else ():
            if project / folder not in found:
                found.append(project / folder)
    return found


def skill_folders(project: Path) -> list[Path]:
    """The folders hosts read skills from: the project's (and its Copilot instructions), then the person's."""
    found = [*project_skill_folders(project), project / ".github" / "instructions"]
    for host in all_hosts():
        for home, sub in host.skills.user if host.skills else ():
            folder = home.path() / sub if sub else home.path()
            if folder not in found:
                found.append(folder)
    return found


def project_skills(project: Path) -> list[Path]:
    """The skill files of the project (``<folder>/<name>/SKILL.md`` in its skill folders)."""
    found: list[Path] = []
    for folder in project_skill_folders(project):
        if folder.is_dir():
            found += sorted(p for p in folder.glob("*/SKILL.md") if p.is_file() and p not in found)
    return found


def check_skill_path(path: Path, project: Path, new_skill: bool = False) -> Path:
    """``path`` if it may be evolved with ``--skill``: a Markdown skill file in a project or user
    skill folder (or the project's Copilot instructions), or, confirmed with ``new_skill``, a
    Markdown file elsewhere or one to create. Raises :class:`SkillPathError` otherwise: its
    text would be sent to a model and adopting would overwrite it."""
    given = path
    path = Path(os.path.abspath(path.expanduser()))
    real = path.resolve()
    if path.suffix.lower() != ".md" or real.suffix.lower() != ".md":
        raise SkillPathError(f"--skill {given}: not a skill file (a skill is a Markdown file, such as "
                             f".claude/skills/<name>/SKILL.md){_nearby(project)}.")
    if path.exists() and not path.is_file():
        inner = path / "SKILL.md"
        hint = f" Did you mean {inner}?" if inner.is_file() else ""
        raise SkillPathError(f"--skill {given} is a folder; pass the skill's Markdown file.{hint}")
    folders = [*skill_folders(project), project / ".github" / "copilot-instructions.md"]
    # The file and what it links to both in a skill folder: a link there to /etc/passwd is no skill.
    in_folder = any(path.is_relative_to(f) for f in folders) and any(real.is_relative_to(f.resolve()) for f in folders)
    if not path.is_file():
        if new_skill:
            return path
        raise SkillPathError(f"--skill {given}: no such file{_nearby(project)}. To start a new skill "
                             "there, confirm it with --new-skill.")
    if not in_folder and not new_skill:
        raise SkillPathError(f"--skill {given} is not in a skill folder (the project's .claude/skills, "
                             ".agents/skills, .github/skills or another host's, or yours such as ~/.claude/skills or "
                             "~/.agents/skills). Its text would be sent to the model and adopting would overwrite "
                             "it: if that is what you want, confirm with --new-skill.")
    try:
        with open(path, encoding="utf-8") as fh:
            fh.read()
    except UnicodeDecodeError as exc:
        raise SkillPathError(f"--skill {given}: not UTF-8 text (byte {exc.start}); save the skill as UTF-8.") from None
    return path


def _nearby(project: Path) -> str:
    skills = project_skills(project)
    if not skills:
        return ""
    return "; the project's skills: " + ", ".join(str(p.relative_to(project)) for p in skills[:5])


def choose_skill(project: Path, sessions: Iterable[Session], override: Path | None = None,
                 tasks: Iterable[str] = ()) -> SkillChoice:
    """The skill to evolve for ``project`` (see the module docstring). ``tasks``: the
    texts (intent and prompt) of the project's recurring tasks, matched against the
    descriptions of project skills no session invoked."""
    sessions = list(sessions)
    if override is not None:
        override = Path(os.path.abspath(override.expanduser()))
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
                return SkillChoice(path, name, host, False, count,
                                   f"invoked in {count} session{'' if count == 1 else 's'}")
    instructions = project / ".github" / "copilot-instructions.md"
    hosts = Counter(HOST_OF_PREFIX.get(s.host, "claude-code") for s in sessions)
    main_host = hosts.most_common(1)[0][0] if hosts else "claude-code"
    if main_host == "copilot" and instructions.is_file():
        return SkillChoice(instructions, "copilot-instructions", "copilot", False, 0,
                           "the project's Copilot instructions (no invoked skill found)")
    why = "no invoked skill file found" if uses else "the sessions invoked no skill"
    fit = fitting_skill(project_skills(project), list(tasks))
    if fit.path is not None:
        return SkillChoice(fit.path, _name_of(fit.path), _host_of_path(fit.path, project), False, 0,
                           f"{why}; {fit.why}" if uses else fit.why)  # fit.why says no session invoked it
    if fit.why:
        why = f"{why}; {fit.why}"
    managed = managed_path(main_host, project)
    return SkillChoice(managed, MANAGED_NAME, main_host, not managed.is_file(),
                       0, f"{why}; a managed skill for {main_host}, the project's main host")


def _name_of(path: Path) -> str:
    return path.parent.name if path.name == "SKILL.md" else path.stem


def skill_hosts(path: Path, project: Path) -> list[str]:
    """The host families whose skill folders (``sleep/hosts/``; Copilot's instructions too) hold
    ``path``: the hosts that list that folder first (its owner: ``.agents/skills`` is Codex's)
    before those that also read it, each in registry order. Empty for a file elsewhere."""
    path = Path(os.path.abspath(path.expanduser()))
    owners: list[str] = []
    readers: list[str] = []
    for host in all_hosts():
        if host.skills is None:
            continue
        folders = [project / f for f in host.skills.project]
        users = [home.path() / sub if sub else home.path() for home, sub in host.skills.user]
        own = folders[:1] + users[:1] + (_copilot_instructions(project) if host.family == "copilot" else [])
        hits = [f for f in own + folders + users if path.is_relative_to(f)]
        if hits and host.family not in owners + readers:
            (owners if hits[0] in own else readers).append(host.family)
    return owners + [f for f in readers if f not in owners]


def _copilot_instructions(project: Path) -> list[Path]:
    return [project / ".github" / "instructions", project / ".github" / "copilot-instructions.md"]


def _host_of_path(path: Path, project: Path) -> str:
    parts = path.parts
    for host in all_hosts():  # the host whose own (first) skill folder holds the file; else Claude Code
        if host.family != "claude-code" and host.skills is not None \
                and Path(host.skills.project[0]).parts[0] in parts:
            return host.family
    return "claude-code"
