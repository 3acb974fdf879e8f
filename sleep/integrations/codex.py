"""SkillOpt-Sleep in Codex: the MCP server in ``$CODEX_HOME/config.toml`` and the skill
in ``~/.agents/skills/skillopt-sleep/SKILL.md``.

The server is registered with ``codex mcp add`` when ``codex`` is on PATH
(Codex's own writer), otherwise by editing the TOML with ``tomlkit``, which
keeps every other table, comment and blank line as it was. Both ways, the
file's bytes before the first install are kept (:mod:`sleep.integrations.managed`),
so ``--uninstall`` gives them back exactly.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import tomlkit
from tomlkit.exceptions import TOMLKitError
from tomlkit.items import InlineTable, Table

from sleep import paths
from sleep.integrations.command import absolute_path_entries
from sleep.integrations.managed import ManagedFile, Outcome
from sleep.integrations.skillfile import install_skill, uninstall_skill

SERVER = "skillopt"
SKILL_NAME = "skillopt-sleep"
CONFIG_OWNER = "codex-config"
SKILL_OWNER = "codex-skill"


class CodexConfigError(ValueError):
    """config.toml cannot be edited safely; the message names the file and the problem."""


def config_path(codex_home: Path | None = None) -> Path:
    return (codex_home or paths.codex_home()) / "config.toml"


def skill_path() -> Path:
    """Where Codex reads the person's own skills (whatever CODEX_HOME says)."""
    return paths.home() / ".agents" / "skills" / SKILL_NAME / "SKILL.md"


def _parse(text: str, where: Path) -> tomlkit.TOMLDocument:
    try:
        return tomlkit.parse(text)
    except TOMLKitError as exc:
        raise CodexConfigError(f"{where} is not valid TOML ({exc}); fix it, then run the install again. "
                               "Nothing was changed.") from None


def _servers(doc: tomlkit.TOMLDocument, where: Path, create: bool) -> Table | InlineTable | None:
    servers = doc.get("mcp_servers")
    if servers is None and create:
        servers = tomlkit.table(is_super_table=True)
        doc["mcp_servers"] = servers
    if servers is not None and not isinstance(servers, (Table, InlineTable)):
        raise CodexConfigError(f"{where}: `mcp_servers` is not a table; nothing was changed.")
    return servers


def server_entry(text: str, where: Path) -> dict | None:
    """The ``[mcp_servers.skillopt]`` table as plain values, or None."""
    servers = _servers(_parse(text, where), where, create=False)
    entry = servers.get(SERVER) if servers is not None else None
    return entry.unwrap() if isinstance(entry, (Table, InlineTable)) else None


def wanted(command: str) -> dict:
    return {"command": command, "args": ["mcp"]}


def is_registered(text: str, where: Path, command: str) -> bool:
    entry = server_entry(text, where) or {}
    return {k: entry.get(k) for k in ("command", "args")} == wanted(command)


def with_server(text: str, where: Path, command: str) -> str:
    """``text`` with ``[mcp_servers.skillopt]`` running ``command mcp``; other keys of that table kept."""
    doc = _parse(text, where)
    servers = _servers(doc, where, create=True)
    entry = servers.get(SERVER)
    if isinstance(entry, (Table, InlineTable)):
        entry["command"] = command
        entry["args"] = ["mcp"]
    else:
        table = tomlkit.inline_table() if isinstance(servers, InlineTable) else tomlkit.table()
        table.update(wanted(command))
        servers[SERVER] = table
    return tomlkit.dumps(doc)


def without_server(text: str, where: Path) -> str:
    """``text`` without ``[mcp_servers.skillopt]`` (and without an ``mcp_servers`` left empty)."""
    doc = _parse(text, where)
    servers = _servers(doc, where, create=False)
    if servers is None or SERVER not in servers:
        return text
    del servers[SERVER]
    if len(servers) == 0:
        del doc["mcp_servers"]
    out = tomlkit.dumps(doc)
    return out.rstrip("\n") + "\n" if out.strip() else ""


def _codex_add(codex: str, codex_home: Path, command: str) -> str | None:
    """Run ``codex mcp add``; None when it worked, else why not."""
    env = {**os.environ, "CODEX_HOME": str(codex_home)}
    try:
        done = subprocess.run([codex, "mcp", "add", SERVER, "--", command, "mcp"], env=env, stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    return None if done.returncode == 0 else (done.stderr.strip() or f"exit {done.returncode}")[-500:]


def install(command: str, skill_source: Path, codex_home: Path | None = None,
            use_codex_cli: bool = True) -> list[Outcome]:
    """Register the server and install the skill; a second run changes nothing."""
    codex_home = codex_home or paths.codex_home()
    config = ManagedFile(config_path(codex_home), CONFIG_OWNER)
    before = config.read()
    text = (before or b"").decode("utf-8")
    if is_registered(text, config.path, command):
        config.begin()
        config.finish()
        outcomes = [Outcome(config.path, "unchanged", f"[mcp_servers.{SERVER}] already runs `{command} mcp`")]
    else:
        config.begin()
        codex = shutil.which("codex", path=absolute_path_entries()) if use_codex_cli else None
        how, note = "a TOML edit", ""
        if codex:
            config.make_parents()  # `codex mcp add` wants its home to exist
            failed = _codex_add(codex, codex_home, command)
            after = (config.read() or b"").decode("utf-8")
            if failed is None and is_registered(after, config.path, command):
                how = f"`{Path(codex).name} mcp add`"
            else:
                note = f"; `codex mcp add` did not register it ({failed or 'no entry written'})"
        if how == "a TOML edit":
            current = (config.read() or b"").decode("utf-8")
            config.write(with_server(current, config.path, command).encode("utf-8"), new_mode=0o600)
        config.finish()
        action = "created" if before is None else "updated"
        outcomes = [Outcome(config.path, action, f"[mcp_servers.{SERVER}] runs `{command} mcp`, by {how}{note}")]
    outcomes.append(install_skill(skill_source, skill_path(), SKILL_OWNER))
    return outcomes


def uninstall(skill_source: Path, codex_home: Path | None = None) -> list[Outcome]:
    """Give config.toml back as it was before the first install and remove the skill."""
    config = ManagedFile(config_path(codex_home or paths.codex_home()), CONFIG_OWNER)
    outcomes = [config.undo(lambda current: without_server(current.decode("utf-8"), config.path).encode("utf-8"))]
    outcomes.append(uninstall_skill(skill_path(), SKILL_OWNER, skill_source))
    return outcomes
