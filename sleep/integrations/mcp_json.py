"""SkillOpt-Sleep's MCP server in the JSON configuration of Gemini CLI, OpenCode and Cursor.

- Gemini CLI: ``settings.json`` in its home (``$GEMINI_CLI_HOME/.gemini``, default
  ``~/.gemini``), key ``mcpServers``, entry ``{"command": ..., "args": ["mcp"]}``
  (https://geminicli.com/docs/tools/mcp-server/, "Configure the MCP server in settings.json").
- OpenCode: ``opencode.json`` in its config folder (``$XDG_CONFIG_HOME/opencode``,
  default ``~/.config/opencode``), key ``mcp``, entry ``{"type": "local",
  "command": [..., "mcp"], "enabled": true}`` (https://opencode.ai/docs/mcp-servers/).
- Cursor (the IDE and ``cursor-agent``): ``~/.cursor/mcp.json``, key ``mcpServers``,
  entry ``{"command": ..., "args": ["mcp"]}`` (https://cursor.com/docs/context/mcp,
  "Configuration locations").

The edit itself is :mod:`sleep.integrations.copilot`'s (the same JSON rules: the file's
own indentation, every other key kept in order, a file with comments or trailing commas
refused with the entry to add by hand, never rewritten), on a :class:`Target` of this
module; :mod:`sleep.integrations.managed` keeps the bytes before the first install, so
``--uninstall`` gives them back.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from sleep import paths
from sleep.integrations import copilot
from sleep.integrations.managed import Outcome, records

HOSTS = ("gemini", "opencode", "cursor")


@dataclass(frozen=True)
class Target:
    """One configuration file of ``host``: where, under which key (the attributes
    :func:`sleep.integrations.copilot.install` reads)."""

    host: str
    path: Path

    @property
    def owner(self) -> str:
        return f"mcp-{self.host}"

    @property
    def key(self) -> str:
        return "mcp" if self.host == "opencode" else "mcpServers"

    def entry(self, command: str) -> dict:
        if self.host == "opencode":
            return {"type": "local", "command": [command, "mcp"], "enabled": True}
        return {"command": command, "args": ["mcp"]}


def default_path(host: str) -> Path:
    """The person's own (user-level) configuration file of ``host``."""
    if host == "gemini":
        base = os.environ.get("GEMINI_CLI_HOME")
        return (Path(base).expanduser() if base else paths.home()) / ".gemini" / "settings.json"
    if host == "opencode":
        base = os.environ.get("XDG_CONFIG_HOME")
        return (Path(base).expanduser() if base else paths.home() / ".config") / "opencode" / "opencode.json"
    if host == "cursor":
        return paths.home() / ".cursor" / "mcp.json"
    raise ValueError(f"no MCP configuration known for host {host!r} (known: {', '.join(HOSTS)})")


def target(host: str, config: Path | None = None) -> Target:
    return Target(host, Path(config).expanduser() if config else default_path(host))


def install(host: str, command: str, config: Path | None = None) -> Outcome:
    """Register ``command mcp`` as the ``skillopt`` server (refused, nothing changed, when the
    file is not plain JSON: :class:`sleep.integrations.copilot.CopilotConfigError`)."""
    where = target(host, config)
    copilot.check(where, command)  # type: ignore[arg-type]
    where.path.parent.mkdir(parents=True, exist_ok=True)
    return copilot.install(where, command)  # type: ignore[arg-type]


def uninstall(host: str, config: Path | None = None) -> list[Outcome]:
    """Undo the installs into ``config`` (default: every file an install for ``host`` touched)."""
    if config is not None:
        wanted = [target(host, config)]
    else:
        wanted = [Target(host, m.path) for m in records(f"mcp-{host}")]
    return [copilot.uninstall(t) for t in wanted]  # type: ignore[arg-type]
