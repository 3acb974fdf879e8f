"""SkillOpt-Sleep in Codex: the MCP server in ``$CODEX_HOME/config.toml`` and the skill
in ``~/.agents/skills/skillopt-sleep/SKILL.md``.

The server is registered with ``codex mcp add`` when ``codex`` is on PATH
(Codex's own writer), otherwise by editing the TOML with ``tomlkit``, which
keeps every other table, comment and blank line as it was. Either way the
table then gets what ``codex mcp add`` cannot write (by a TOML edit):

- ``env_vars``: the variables the server reads (:data:`sleep.mcp.launch.SERVER_ENV_VARS`).
  Codex gives a stdio server only a short default list (``HOME``, ``PATH``,
  ``USER``, ``LANG``, ``TERM``, ``TMPDIR``, ``TZ``, ...) plus the names in
  ``env_vars``, each forwarded from Codex's own environment when set
  (https://developers.openai.com/codex/mcp, "env_vars: environment variables to
  allow and forward"; the list is ``DEFAULT_ENV_VARS`` in
  codex-rs/rmcp-client/src/utils.rs). Without them a server started by Codex
  reads another data directory than the one Claude Code's reads.
- ``tool_timeout_sec``: above the longest wait a call can ask for
  (:data:`sleep.mcp.launch.TOOL_TIMEOUT_S`); Codex's default is 60 s.

Names the person added to ``env_vars`` are kept, and a longer timeout too. The
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
from tomlkit.items import InlineTable, Item, Table

from sleep import paths
from sleep.integrations.command import absolute_path_entries
from sleep.integrations.managed import ManagedFile, Outcome
from sleep.integrations.skillfile import install_skill, uninstall_skill
from sleep.mcp.launch import SERVER_ENV_VARS, TOOL_TIMEOUT_S

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
    return {"command": command, "args": ["mcp"], "env_vars": list(SERVER_ENV_VARS),
            "tool_timeout_sec": TOOL_TIMEOUT_S}


def _env_var_names(value: object) -> list[str]:
    """The names in an ``env_vars`` array (plain names, or ``{name, source}`` tables)."""
    names = []
    for item in value if isinstance(value, list) else []:
        name = item.get("name") if isinstance(item, dict) else item
        if isinstance(name, str):
            names.append(name)
    return names


def is_registered(text: str, where: Path, command: str) -> bool:
    """The table runs ``command mcp``, forwards every variable the server reads and waits long enough."""
    entry = server_entry(text, where) or {}
    timeout = entry.get("tool_timeout_sec")
    return ({k: entry.get(k) for k in ("command", "args")} == {"command": command, "args": ["mcp"]}
            and set(SERVER_ENV_VARS) <= set(_env_var_names(entry.get("env_vars")))
            and isinstance(timeout, (int, float)) and timeout >= TOOL_TIMEOUT_S)


def with_server(text: str, where: Path, command: str) -> str:
    """``text`` with ``[mcp_servers.skillopt]`` running ``command mcp``, forwarding the server's
    variables and waiting long enough; the table's other keys (and the person's own names) kept."""
    doc = _parse(text, where)
    servers = _servers(doc, where, create=True)
    assert servers is not None  # create=True made it
    entry = servers.get(SERVER)
    if not isinstance(entry, (Table, InlineTable)):
        entry = tomlkit.inline_table() if isinstance(servers, InlineTable) else tomlkit.table()
        servers[SERVER] = entry
    entry["command"] = command
    entry["args"] = ["mcp"]
    existing = entry.get("env_vars")
    theirs = existing.unwrap() if isinstance(existing, Item) else existing
    kept = list(theirs) if isinstance(theirs, list) else []
    names = set(_env_var_names(kept))
    env_vars = tomlkit.array()
    env_vars.extend(kept + [n for n in SERVER_ENV_VARS if n not in names])
    if isinstance(entry, Table):
        env_vars.multiline(True)  # one name a line (an inline table must stay on one line)
    entry["env_vars"] = env_vars
    timeout = entry.get("tool_timeout_sec")
    if not isinstance(timeout, (int, float)) or timeout < TOOL_TIMEOUT_S:
        entry["tool_timeout_sec"] = TOOL_TIMEOUT_S
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
        if codex and server_entry(text, config.path) is None:
            config.make_parents()  # `codex mcp add` wants its home to exist
            failed = _codex_add(codex, codex_home, command)
            after = server_entry((config.read() or b"").decode("utf-8"), config.path) or {}
            if failed is None and after.get("command") == command:
                how = f"`{Path(codex).name} mcp add` (env_vars and tool_timeout_sec by a TOML edit)"
            else:
                note = f"; `codex mcp add` did not register it ({failed or 'no entry written'})"
        current = (config.read() or b"").decode("utf-8")
        if not is_registered(current, config.path, command):
            config.write(with_server(current, config.path, command).encode("utf-8"), new_mode=0o600)
        config.finish()
        action = "created" if before is None else "updated"
        outcomes = [Outcome(config.path, action, f"[mcp_servers.{SERVER}] runs `{command} mcp` with SkillOpt's "
                                                 f"environment and a {TOOL_TIMEOUT_S} s tool timeout, by {how}{note}")]
    outcomes.append(install_skill(skill_source, skill_path(), SKILL_OWNER))
    return outcomes


def uninstall(skill_source: Path, codex_home: Path | None = None) -> list[Outcome]:
    """Give config.toml back as it was before the first install and remove the skill."""
    config = ManagedFile(config_path(codex_home or paths.codex_home()), CONFIG_OWNER)
    outcomes = [config.undo(lambda current: without_server(current.decode("utf-8"), config.path).encode("utf-8"))]
    outcomes.append(uninstall_skill(skill_path(), SKILL_OWNER, skill_source))
    return outcomes
