"""Argument checks shared by the tools. Each raises :class:`ToolError` with a
message the agent can act on; nothing here changes process-wide state (the
server is long-lived and serves calls concurrently, so paths are resolved
against the directory it started in, never by changing directory)."""

from __future__ import annotations

import inspect
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations

OVERRIDE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+=[^\r\n]*$")
CONFIG_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*(/[A-Za-z0-9_][A-Za-z0-9_.-]*)*$")
MAX_WAIT_S = 1800.0


@dataclass(frozen=True)
class ServerConfig:
    """What the person configured when starting the server.

    ``cwd``: the directory the server started in (relative paths in calls are
    read from there); ``projects``: the projects the sleep tools cover when a
    call names none; ``outputs``: the output folders of training runs
    (default ``<cwd>/outputs``, the engine's default ``output.root``).
    """

    cwd: Path
    projects: tuple[Path, ...] = ()
    outputs: tuple[Path, ...] = field(default=())

    @classmethod
    def create(cls, cwd: str | os.PathLike | None = None, projects: list[str] | None = None,
               outputs: list[str] | None = None) -> "ServerConfig":
        base = Path(os.path.abspath(cwd or os.getcwd()))
        proj = tuple(_abs(p, base) for p in projects or ())
        outs = tuple(_abs(p, base) for p in outputs or ()) or (base / "outputs",)
        return cls(cwd=base, projects=proj, outputs=outs)


def _abs(path: str | os.PathLike, base: Path) -> Path:
    return Path(os.path.abspath(os.path.join(base, os.path.expanduser(os.fspath(path)))))


def in_cwd(config: ServerConfig, text: str) -> Path:
    """``text`` as an absolute path (relative paths are read from the server's start directory)."""
    if not isinstance(text, str) or not text.strip():
        raise ToolError("an empty path was given.")
    if "\x00" in text:
        raise ToolError("a path may not contain NUL characters.")
    return _abs(text.strip(), config.cwd)


def existing_file(config: ServerConfig, text: str, what: str) -> Path:
    path = in_cwd(config, text)
    if not path.exists():
        raise ToolError(f"{what} {text!r}: no such file (relative paths are read from {config.cwd}).")
    if not path.is_file():
        raise ToolError(f"{what} {text!r} is not a file.")
    return path


def config_arg(config: ServerConfig, text: str) -> str:
    """A config file (made absolute) or the name of a packaged config (``searchqa/local``)."""
    if not isinstance(text, str) or not text.strip():
        raise ToolError("config is empty: give a YAML file or a packaged config name such as 'searchqa/local'.")
    path = in_cwd(config, text)
    if path.is_file():
        return str(path)
    if text.startswith("-") or ".." in text or not CONFIG_NAME.match(text.strip()):
        raise ToolError(f"config {text!r}: no such file, and not a packaged config name "
                        "(names look like 'searchqa/local').")
    return text.strip()


def overrides(values: list[str]) -> list[str]:
    for value in values:
        if not isinstance(value, str) or not OVERRIDE.match(value):
            raise ToolError(f"override {value!r} is not section.key=value (e.g. train.num_epochs=1).")
    return list(values)


def wait(seconds: float) -> float:
    if seconds < 0 or seconds > MAX_WAIT_S:
        raise ToolError(f"wait_seconds must be between 0 and {MAX_WAIT_S:.0f}.")
    return float(seconds)


def project(config: ServerConfig, text: str | None, *, required: bool = True) -> Path | None:
    """The project a call is about: the one named (an existing folder), else the only configured one."""
    if text is None or not text.strip():
        if len(config.projects) == 1:
            return config.projects[0]
        if not required:
            return None
        configured = ", ".join(str(p) for p in config.projects)
        raise ToolError("name the project (its folder) in the call"
                        + (f"; the configured projects are {configured}." if configured else
                           "; no project was configured (skillopt-sleep mcp --project PATH)."))
    path = in_cwd(config, text)
    if not path.is_dir():
        raise ToolError(f"project {text!r} is not a folder (relative paths are read from {config.cwd}).")
    return Path(os.path.realpath(path))


def tool(app: MCPServer, annotations: ToolAnnotations) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register a tool whose description is its docstring without the source indentation."""
    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        app.add_tool(fn, description=inspect.cleandoc(fn.__doc__ or ""), annotations=annotations)
        return fn
    return register
