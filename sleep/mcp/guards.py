"""Argument checks shared by the tools. Each raises :class:`ToolError` with a
message the agent can act on; nothing here changes process-wide state (the
server is long-lived and serves calls concurrently, so paths are resolved
against the directory it started in, never by changing directory).

What a call may reach is fixed when the server starts (:class:`ServerConfig`):

- the *projects* (``--project``; without one, the folder the server started
  in, unless that is the home directory or ``/``): the proposals, tasks and
  nights a call may see or decide, and the folders skill and config files may
  be read from;
- the *data directory* (``SKILLOPT_HOME``), also readable;
- the *output folders* (``--outputs``; default ``<data dir>/runs``): the only
  places runs are written to and read from.
"""

from __future__ import annotations

import functools
import inspect
import os
import re
import typing
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations

from sleep import paths
from sleep.mcp.launch import MAX_WAIT_S

OVERRIDE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+=[^\r\n]*$")
CONFIG_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*(/[A-Za-z0-9_][A-Za-z0-9_.-]*)*$")
NAME_MAX = 255  # bytes in one path component (ext4, APFS, NTFS)
PATH_MAX = 4096
SKILL_SUFFIXES = (".md",)
MAX_SKILL_BYTES = 1 << 20


@dataclass(frozen=True)
class ServerConfig:
    """What the person configured when starting the server.

    ``cwd``: the directory the server started in (relative paths in calls are
    read from there); ``projects``: what the sleep tools cover and where files
    may be read from (empty: every project, and files from ``cwd``);
    ``outputs``: the output folders of runs (default ``<data dir>/runs``, so a
    server started in a repository never writes ``outputs/`` into it);
    ``data_dir``: SkillOpt's data directory; ``origins``: extra browser
    ``Origin`` values the HTTP transport accepts besides its own loopback ones.
    """

    cwd: Path
    projects: tuple[Path, ...] = ()
    outputs: tuple[Path, ...] = ()
    data_dir: Path = Path(".")
    origins: tuple[str, ...] = ()

    @classmethod
    def create(cls, cwd: str | os.PathLike | None = None, projects: list[str] | None = None,
               outputs: list[str] | None = None, origins: list[str] | None = None) -> ServerConfig:
        base = Path(os.path.abspath(cwd or os.getcwd()))
        data = Path(os.path.abspath(paths.data_dir()))
        proj = tuple(Path(os.path.realpath(_abs(p, base))) for p in projects or ())
        outs = tuple(_abs(p, base) for p in outputs or ()) or (data / "runs",)
        return cls(cwd=base, projects=proj, outputs=outs, data_dir=data, origins=tuple(origins or ()))

    @property
    def default_output(self) -> Path:
        return self.outputs[0]

    def project_roots(self) -> tuple[Path, ...]:
        """The configured projects, or the start folder when none is (never the home folder or ``/``)."""
        if self.projects:
            return self.projects
        real = Path(os.path.realpath(self.cwd))
        if real == Path(real.anchor) or real == Path(os.path.realpath(paths.home())):
            return ()
        return (real,)

    def read_roots(self) -> tuple[Path, ...]:
        """Where skill, config and task files named in a call may be read from."""
        return (*self.project_roots(), self.data_dir, *self.outputs)


def _abs(path: str | os.PathLike, base: Path) -> Path:
    return Path(os.path.abspath(os.path.join(base, os.path.expanduser(os.fspath(path)))))


def in_cwd(config: ServerConfig, text: str, what: str = "path") -> Path:
    """``text`` as an absolute path (relative paths are read from the server's start directory)."""
    if not isinstance(text, str) or not text.strip():
        raise ToolError(f"{what}: an empty path was given.")
    if "\x00" in text:
        raise ToolError(f"{what}: a path may not contain NUL characters.")
    check_length(text.strip(), what)
    return _abs(text.strip(), config.cwd)


def check_length(text: str, what: str) -> None:
    """Refuse a path the file system cannot hold, naming the part that is too long."""
    if len(os.fsencode(text)) > PATH_MAX:
        raise ToolError(f"{what}: the path is longer than {PATH_MAX} bytes; give a shorter path.")
    for part in re.split(r"[/\\]", text):
        if len(os.fsencode(part)) > NAME_MAX:
            raise ToolError(f"{what}: the path component {part[:24]!r}... is {len(os.fsencode(part))} bytes long; "
                            f"a file or folder name holds at most {NAME_MAX}. Give a shorter path.")


def inside(path: Path, roots: Iterable[Path]) -> bool:
    """Whether ``path``'s real location is one of ``roots`` or below one (symlinks resolved)."""
    real = Path(os.path.realpath(path))
    for root in roots:
        r = Path(os.path.realpath(root))
        if real == r or r in real.parents:
            return True
    return False


def _roots_text(roots: Iterable[Path]) -> str:
    return ", ".join(str(r) for r in roots) or "none"


def readable_file(config: ServerConfig, text: str, what: str) -> Path:
    """An existing file inside the read roots (the projects, the data dir, the output folders)."""
    path = in_cwd(config, text, what)
    if not path.exists():
        raise ToolError(f"{what} {text!r}: no such file (relative paths are read from {config.cwd}).")
    if not path.is_file():
        raise ToolError(f"{what} {text!r} is not a file.")
    roots = config.read_roots()
    if not inside(path, roots):
        raise ToolError(f"{what} {text!r} is outside what this server may read ({_roots_text(roots)}); "
                        "give a file in the project or in SkillOpt's data directory, or start the server "
                        "with --project PATH.")
    return Path(os.path.realpath(path))


def skill_file(config: ServerConfig, text: str, what: str = "skill_path") -> Path:
    """A skill file (Markdown, at most 1 MiB) inside the project or the data directory."""
    path = readable_file(config, text, what)
    if path.suffix.lower() not in SKILL_SUFFIXES:
        raise ToolError(f"{what} {text!r} is not a skill file: skills are Markdown files (SKILL.md, "
                        "best_skill.md, ...).")
    if path.stat().st_size > MAX_SKILL_BYTES:
        raise ToolError(f"{what} {text!r} is larger than {MAX_SKILL_BYTES >> 20} MiB; a skill is a short document.")
    return path


def config_arg(config: ServerConfig, text: str) -> str:
    """A config file (made absolute, inside the read roots) or the name of a packaged config."""
    if not isinstance(text, str) or not text.strip():
        raise ToolError("config_path is empty: give a YAML file or a packaged config name such as 'searchqa/local'.")
    path = in_cwd(config, text, "config_path")
    if path.is_file():
        return str(readable_file(config, text, "config_path"))
    if text.startswith("-") or ".." in text or not CONFIG_NAME.match(text.strip()):
        raise ToolError(f"config {text!r}: no such file, and not a packaged config name "
                        "(names look like 'searchqa/local').")
    return text.strip()


def overrides(values: list[str]) -> list[str]:
    """The shape of each override (``section.key=value``); :mod:`sleep.mcp.overrides` checks the values."""
    for value in values:
        if not isinstance(value, str) or not OVERRIDE.match(value):
            raise ToolError(f"override {value!r} is not section.key=value (e.g. train.num_epochs=1).")
    return list(values)


def wait(seconds: float) -> float:
    if seconds < 0 or seconds > MAX_WAIT_S:
        raise ToolError(f"wait_seconds must be between 0 and {MAX_WAIT_S:.0f}.")
    return float(seconds)


def in_scope(config: ServerConfig, project: str | os.PathLike | None) -> bool:
    """Whether a record of ``project`` (a proposal's, a task's, a night's) is this server's to show or decide.

    Without ``--project`` every project is; with it, only those folders and what is below them
    (a record of no project, such as a skill outside any repository, is then out of scope)."""
    if not config.projects:
        return True
    if project is None or not str(project):
        return False
    return inside(Path(os.fspath(project)), config.projects)


def out_of_scope(config: ServerConfig, what: str, project: str | None) -> ToolError:
    """The refusal for a record of another project (which is not named: it is not this server's to show)."""
    return ToolError(f"{what} belongs to {'another project' if project else 'no project'}, outside this "
                     f"server's projects ({_roots_text(config.projects)}); start a server with --project for it.")


@typing.overload
def project(config: ServerConfig, text: str | None, *, required: typing.Literal[True] = True) -> Path: ...
@typing.overload
def project(config: ServerConfig, text: str | None, *, required: bool) -> Path | None: ...
def project(config: ServerConfig, text: str | None, *, required: bool = True) -> Path | None:
    """The project a call is about: the one named (an existing folder within the server's
    projects), else the only configured one."""
    if text is None or not text.strip():
        if len(config.projects) == 1:
            return config.projects[0]
        if not required:
            return None
        configured = ", ".join(str(p) for p in config.projects)
        raise ToolError("name the project (its folder) in the call"
                        + (f"; the configured projects are {configured}." if configured else
                           "; no project was configured (skillopt-sleep mcp --project PATH)."))
    path = in_cwd(config, text, "project")
    if not path.is_dir():
        raise ToolError(f"project {text!r} is not a folder (relative paths are read from {config.cwd}).")
    real = Path(os.path.realpath(path))
    if not in_scope(config, real):
        raise ToolError(f"project {text!r} is outside this server's projects ({_roots_text(config.projects)}); "
                        "start a server with --project for it.")
    return real


def lifespan(config: ServerConfig) -> Callable[[MCPServer], AbstractAsyncContextManager[ServerConfig]]:
    """The server's lifespan: every request's context carries ``config`` (:func:`server_config` reads it)."""
    @asynccontextmanager
    async def hold(app: MCPServer) -> AsyncIterator[ServerConfig]:
        yield config
    return hold


def server_config(ctx: Context) -> ServerConfig:
    """What the person configured when starting the server, from the lifespan context of the call."""
    config = ctx.request_context.lifespan_context
    if not isinstance(config, ServerConfig):
        raise ToolError("this server was started without its configuration (build it with build_server).")
    return config


def tool(app: MCPServer, annotations: ToolAnnotations, description: str | None = None,
         ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register a tool whose description is its docstring without the source indentation."""
    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        app.add_tool(fn, description=description or inspect.cleandoc(fn.__doc__ or ""), annotations=annotations)
        return fn
    return register


def register_tools(app: MCPServer, tools: Iterable[tuple[Callable[..., Any], ToolAnnotations]]) -> None:
    """Register module-level tool functions (each reads the configuration with :func:`server_config`)."""
    for fn, hints in tools:
        tool(app, hints)(fn)


def with_parameter_types(fn: Callable[..., Any], **types: Any) -> Callable[..., Any]:
    """``fn`` with some parameters' types replaced: for a choice known only when the server is built
    (the hosts registered by then), without rebinding a module global the annotations are read from."""
    hints = typing.get_type_hints(fn, include_extras=True)
    unknown = set(types) - set(hints)
    if unknown:
        raise TypeError(f"{fn.__name__} has no parameter {', '.join(sorted(unknown))}")
    hints.update(types)

    @functools.wraps(fn)
    async def typed(*args: Any, **kwargs: Any) -> Any:
        return await fn(*args, **kwargs)

    signature = inspect.signature(fn, eval_str=True)
    typed.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[p.replace(annotation=hints.get(p.name, p.annotation)) for p in signature.parameters.values()])
    typed.__annotations__ = hints
    return typed
