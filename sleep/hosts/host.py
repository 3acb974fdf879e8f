"""What SkillOpt-Sleep knows about one host: the :class:`Host` description.

A host is an agent people work in (Claude Code, Codex, Copilot, ...). Its
description says where its transcripts live and how they are read, which
agent CLI replays its tasks, where it reads skills and how SkillOpt's MCP
server is registered with it. Every list the rest of the package keeps about
hosts (harvest sources and ``--source`` groups, homes and their flags, the
watcher's roots, the environment a scheduled night carries, the replay
backends, skill folders, the MCP tool's accepted sources) is derived from
these descriptions (:mod:`sleep.hosts`), so adding a host is one module.

Nothing here reads a file or imports a reader: a description is plain data,
and callables are named as ``"module:attr"`` strings imported when used.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


def load_ref(ref: str | Callable[..., Any]) -> Callable[..., Any]:
    """A callable from a ``"module:attr"`` string (or the callable itself)."""
    if callable(ref):
        return ref
    module, _, attr = ref.partition(":")
    obj: Any = importlib.import_module(module)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


def _platform() -> str:
    return "win32" if sys.platform.startswith("win") else "darwin" if sys.platform == "darwin" else "linux"


@dataclass(frozen=True)
class Home:
    """A folder a host writes into, movable by an environment variable.

    With ``env`` set the folder is ``$env/<under_env>``; otherwise it is
    ``~/<default>``, where ``default`` maps a platform (``linux``, ``darwin``,
    ``win32``) or ``*`` to a path relative to the home directory (``/``
    separated). ``locate`` (``"module:function"`` returning a list of paths)
    replaces both for hosts with several folders at once (VS Code's ``User``
    folders). ``flag``: the ``harvest`` option that sets ``env`` (e.g.
    ``--claude-home``); ``carry``: a scheduled night keeps ``env`` when set
    where ``schedule`` ran.
    """

    env: str | None
    default: dict[str, str] = field(default_factory=dict)
    under_env: str = ""
    locate: str | None = None
    flag: str | None = None
    label: str = ""  # what the flag's help calls the folder ("Claude Code home")
    carry: bool = True

    def paths(self) -> list[Path]:
        """Every folder this home stands for now (one, unless ``locate`` lists several)."""
        if self.locate:
            return [Path(p) for p in load_ref(self.locate)()]
        return [self.path()]

    def path(self) -> Path:
        override = os.environ.get(self.env) if self.env else None
        if override:
            base = Path(override).expanduser()
            return base / self.under_env if self.under_env else base
        from sleep import paths

        rel = self.default.get(_platform(), self.default.get("*", ""))
        return paths.home() / rel if rel else paths.home()

    def describe_default(self) -> str:
        rel = self.default.get("*") or next(iter(self.default.values()), "")
        return f"${self.env} or ~/{rel}" if self.env else f"~/{rel}"


@dataclass(frozen=True)
class Watch:
    """One folder the watcher watches for a source: ``sub`` below each of the
    source's home folders; ``names`` only these file names or ``*`` patterns
    (empty: any transcript suffix); ``parent`` only files whose folder has this name."""

    sub: str = ""
    recursive: bool = True
    names: tuple[str, ...] = ()
    parent: str = ""


@dataclass(frozen=True)
class Source:
    """One transcript store of a host. ``name`` is what sessions record as their
    host (``Session.host``); ``reader`` names the :class:`sleep.harvest.sources.Source`
    class (``"module:Class"``), built with no arguments."""

    name: str
    reader: str | Callable[[], Any]
    home: Home
    watch: tuple[Watch, ...] = ()

    def make_reader(self) -> Any:
        return load_ref(self.reader)()


@dataclass(frozen=True)
class Skills:
    """Where a host reads skills (``<folder>/<name>/SKILL.md``), in its own order:
    ``project`` folders relative to the project, ``user`` folders as
    ``(home, sub)`` pairs (``sub`` below the home's folder). The first project
    folder is where a managed skill is created. ``rules``: project folders of rule
    files ``<folder>/<name>.mdc`` the host also reads as instructions (Cursor's
    ``.cursor/rules``), looked up after the project's skill folders."""

    project: tuple[str, ...]
    user: tuple[tuple[Home, str], ...] = ()
    rules: tuple[str, ...] = ()

    def candidates(self, name: str, project: Path) -> list[Path]:
        found = [project / folder / name / "SKILL.md" for folder in self.project]
        found += [project / folder / f"{name}.mdc" for folder in self.rules]
        for home, sub in self.user:
            found.append((home.path() / sub if sub else home.path()) / name / "SKILL.md")
        return found


@dataclass(frozen=True)
class Mcp:
    """How SkillOpt's MCP server is registered with the host: ``integrate`` is the
    ``skillopt-sleep integrate <host>`` subcommand (None: registered by the
    host's plugin, or not yet); ``configs`` the files it edits (for people)."""

    integrate: str | None = None
    configs: tuple[str, ...] = ()
    plugin: str | None = None  # the folder under plugins/


@dataclass(frozen=True)
class Sandbox:
    """What a host's replay CLI is given in the sandbox (:mod:`sleep.replay.sandbox`,
    :mod:`sleep.replay.egress`).

    ``folder``: where the CLI keeps its login under HOME (``/`` separated); ``folder_env``:
    the variable that moves it (read for the person's copy, set to the scratch copy inside);
    ``auth_files``: the files in ``folder`` copied (0600) into the scratch HOME;
    ``home_files``: other files under HOME copied too. ``key_vars``: the only variables
    besides the basics that reach the CLI (its keys and endpoints); ``switched_vars``:
    ``(switch, names)`` pairs, the names passing only when the switch is set and is a key
    variable; ``extra_env``: settings it is given inside (no telemetry, no update checks).
    ``env_keys`` and ``endpoints``: ``"module:function"`` taking ``(env, home)`` and returning
    more key variables (those its configuration names) and the URLs of the model endpoints
    its environment and configuration name (let through by the egress proxy)."""

    folder: str = ""
    folder_env: str = ""
    auth_files: tuple[str, ...] = ()
    home_files: tuple[str, ...] = ()
    key_vars: tuple[str, ...] = ()
    switched_vars: tuple[tuple[str, tuple[str, ...]], ...] = ()
    extra_env: tuple[tuple[str, str], ...] = ()
    env_keys: str | None = None
    endpoints: str | None = None


@dataclass(frozen=True)
class Host:
    """One host (see the module docstring).

    ``name``: the ``--source`` group name. ``family``: the host whose replay CLI
    and skill conventions this one shares (its own name unless it is a variant).
    ``replay``: the skillopt backend that replays its tasks through its own CLI
    (None: no CLI replay yet; the night uses the configured model backend).
    ``ready``: ``"module:function"`` returning ``(ready, why)``: is that CLI
    installed and logged in (:mod:`sleep.hosts.ready`); ``probe_ready``: a looser check
    ``doctor --probe`` uses instead (the CLI may run without a login file; a night does
    not count that). ``sandbox``: its login files, key variables and
    endpoints (:class:`Sandbox`); ``api_hosts``: the hosts (``*`` patterns) of its
    vendors' model APIs the sandbox lets it reach on port 443.
    """

    name: str
    label: str
    sources: tuple[Source, ...]
    family: str = ""
    replay: str | None = None
    ready: str | None = None
    probe_ready: str | None = None
    sandbox: Sandbox = field(default_factory=Sandbox)
    api_hosts: tuple[str, ...] = ()
    skills: Skills | None = None
    mcp: Mcp = field(default_factory=Mcp)

    def __post_init__(self) -> None:
        if not self.family:
            object.__setattr__(self, "family", self.name)
        if not self.sources:
            raise ValueError(f"host {self.name!r} has no transcript source")
        if self.replay and not self.ready:
            raise ValueError(f"host {self.name!r} replays through {self.replay!r} but names no ready check")
