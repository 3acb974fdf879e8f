"""SkillOpt-Sleep in GitHub Copilot: the ``skillopt`` MCP server in VS Code's user
``mcp.json`` (key ``servers``) and in the Copilot CLI's ``mcp-config.json``
(key ``mcpServers``, under ``$COPILOT_HOME``, default ``~/.copilot``).

Both files are JSON. The entry is added with the file's own indentation and
every other key kept in order; a file with comments or trailing commas (VS Code
tolerates them) is refused with the entry to add by hand, never rewritten.
The bytes before the first install are kept, so ``--uninstall`` gives them back.
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from sleep import paths
from sleep.integrations.command import absolute_path_entries
from sleep.integrations.managed import ManagedFile, Outcome, records

SERVER = "skillopt"
# VS Code flavours that run Copilot Chat (VSCodium has no Copilot), desktop and remote-server layouts.
_VSCODE_PRODUCTS = ("Code", "Code - Insiders")
_VSCODE_SERVERS = (".vscode-server", ".vscode-server-insiders")


class CopilotConfigError(ValueError):
    """A file cannot be edited safely; the message names it and says what to do."""


@dataclass(frozen=True)
class Target:
    """One configuration file: where, under which key, with which entry shape."""

    host: str  # "vscode" or "copilot-cli"
    path: Path
    key: str

    @property
    def owner(self) -> str:
        return f"copilot-{self.host}" if self.host == "vscode" else self.host

    def entry(self, command: str) -> dict:
        entry = {"type": "stdio", "command": command, "args": ["mcp"]}
        return entry if self.host == "vscode" else {**entry, "tools": ["*"]}


def vscode_user_dirs() -> list[Path]:
    """The existing VS Code ``User`` folders (stable and Insiders, desktop and server)."""
    found = [d for d in paths.vscode_user_dirs()
             if any(part in _VSCODE_PRODUCTS or part in _VSCODE_SERVERS for part in d.parts)]
    return found


def vscode_target(user_dir: Path) -> Target:
    return Target("vscode", Path(user_dir) / "mcp.json", "servers")


def cli_target() -> Target:
    return Target("copilot-cli", paths.copilot_cli_home() / "mcp-config.json", "mcpServers")


def cli_present() -> bool:
    return paths.copilot_cli_home().is_dir() or shutil.which("copilot", path=absolute_path_entries()) is not None


def _load(text: str, target: Target, command: str | None = None) -> dict:
    """The file's JSON; refused (with what to add by hand, naming ``command``) when it is not plain JSON."""
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise CopilotConfigError(
            f"{target.path} is not plain JSON ({exc.args[0]}; comments or trailing commas?), so SkillOpt will "
            f"not rewrite it. Add this under \"{target.key}\" by hand: "
            f"\"{SERVER}\": {json.dumps(target.entry(command or 'skillopt-sleep'))}. Nothing was changed.") from None
    if not isinstance(data, dict) or not isinstance(data.get(target.key, {}), dict):
        raise CopilotConfigError(f"{target.path}: expected a JSON object with an object \"{target.key}\"; "
                                 "nothing was changed.")
    return data


def _indent(text: str) -> str | int:
    match = re.search(r"\n([ \t]+)\S", text)
    return match.group(1) if match else 2


def _dump(data: dict, text: str) -> str:
    return json.dumps(data, indent=_indent(text), ensure_ascii=False) + "\n"


def is_registered(text: str, target: Target, command: str) -> bool:
    entry = _load(text, target, command).get(target.key, {}).get(SERVER)
    wanted = target.entry(command)
    return isinstance(entry, dict) and {k: entry.get(k) for k in wanted} == wanted


def with_server(text: str, target: Target, command: str) -> str:
    data = _load(text, target, command)
    servers = data.setdefault(target.key, {})
    old = servers.get(SERVER) if isinstance(servers.get(SERVER), dict) else {}
    servers[SERVER] = {**old, **target.entry(command)}
    return _dump(data, text)


def without_server(text: str, target: Target) -> str:
    data = _load(text, target)
    servers = data.get(target.key)
    if not isinstance(servers, dict) or SERVER not in servers:
        return text
    del servers[SERVER]
    if not servers:
        del data[target.key]
    return _dump(data, text) if data else ""


def check(target: Target, command: str | None = None) -> None:
    """Raise :class:`CopilotConfigError` if the target's file cannot be edited safely (its hint
    for a hand edit names ``command``, the executable the install would register)."""
    try:
        _load(target.path.read_text(encoding="utf-8"), target, command)
    except FileNotFoundError:
        pass


def install(target: Target, command: str) -> Outcome:
    managed = ManagedFile(target.path, target.owner)
    before = managed.read()
    text = (before or b"").decode("utf-8")
    if is_registered(text, target, command):
        managed.begin()
        managed.finish()
        return Outcome(managed.path, "unchanged", f"\"{SERVER}\" already runs `{command} mcp`")
    new = with_server(text, target, command)
    managed.begin()
    managed.write(new.encode("utf-8"), new_mode=0o600)
    managed.finish()
    return Outcome(managed.path, "created" if before is None else "updated",
                   f"\"{target.key}\".\"{SERVER}\" runs `{command} mcp`")


def uninstall(target: Target) -> Outcome:
    managed = ManagedFile(target.path, target.owner)
    return managed.undo(lambda current: without_server(current.decode("utf-8"), target).encode("utf-8"))


def installed_targets() -> list[Target]:
    """The files earlier installs changed (what ``--uninstall`` undoes by default)."""
    found = [vscode_target(m.path.parent) for m in records("copilot-vscode")]
    found += [Target("copilot-cli", m.path, "mcpServers") for m in records("copilot-cli")]
    return found
