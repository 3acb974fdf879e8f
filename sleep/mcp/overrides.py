"""Which ``--set`` overrides a tool call may pass, and with which values.

A config file is the person's; an override in a tool call is whatever the
agent (or a prompt it read) asked for. So each key a call can set has a rule
for its value, and a key that reaches outside the data directory and the
project is either limited to safe values or left to the config file:

- ``output.run_id``: a plain name (no ``/``, no ``..``, not absolute);
  ``output.root``: only one of the server's output folders;
- ``model.base_url`` / ``model.endpoint``: a loopback URL, or the value the
  config itself has (a call cannot send the skill and tasks anywhere else);
- ``model.allowed_tools`` (what an agent CLI may do) and ``model.api_key_env``
  (which secret goes with the requests): config file only;
- file paths (``skill.init``, ``env.data_path``, ``model.scripted``,
  ``model.model_path``): files inside the project, the data directory or the
  output folders (``skill.init`` a Markdown skill file);
- ``env.options.*``: numbers, true/false or null only (string options name files);
- every other key: a number, true/false, null or a short name; the config
  model then checks the type and range and names the nearest key for a typo.

:func:`check` raises :class:`ToolError` naming the key, the value and what is
accepted.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Any
from urllib.parse import urlsplit

from mcp.server.mcpserver.exceptions import ToolError

from sleep.mcp import guards
from sleep.mcp.guards import ServerConfig
from sleep.mcp.runs import RUN_ID

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@+/-]{0,199}$")
CONFIG_ONLY = {
    "model.allowed_tools": "it widens what an agent CLI may do (its tools and commands)",
    "model.api_key_env": "it chooses which secret of the environment is sent with the model requests",
}
URL_KEYS = ("model.base_url", "model.endpoint")
FILE_KEYS = {"env.data_path": "a task file", "model.model_path": "a model file", "model.scripted": "a rules file"}
LOOPBACK_NAMES = ("localhost",)


def _parse(item: str) -> tuple[str, Any]:
    from skillopt_core.run.config import ConfigError, parse_override

    try:
        parts, value = parse_override(item)
    except ConfigError as exc:
        raise ToolError(str(exc)) from None
    return ".".join(parts), value


def is_loopback_url(value: str) -> bool:
    try:
        parts = urlsplit(value)
        host = parts.hostname
    except ValueError:
        return False
    if parts.scheme not in ("http", "https") or not host:
        return False
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check(config: ServerConfig, items: list[str], *, base: Any = None, resume: bool = False) -> list[str]:
    """``items`` if every value is allowed for its key (``base``: the settings the config itself gives)."""
    for item in guards.overrides(items):
        key, value = _parse(item)
        _check_one(config, item, key, value, base, resume)
    return list(items)


def _refuse(item: str, why: str) -> ToolError:
    return ToolError(f"override {item!r} is refused: {why}")


def _check_one(config: ServerConfig, item: str, key: str, value: Any, base: Any, resume: bool) -> None:
    if key in CONFIG_ONLY:
        raise _refuse(item, f"{key} can only be set in the config file, not by a tool call: {CONFIG_ONLY[key]}.")
    if key == "env.name":
        if not isinstance(value, str) or not RUN_ID.match(value) or ".." in value:
            raise _refuse(item, "env.name must be an env's name (letters, digits, '.', '_' and '-').")
        return
    if key == "output.run_id":
        if resume:
            raise _refuse(item, "a resumed run keeps its run directory; output.run_id cannot change.")
        if not isinstance(value, (str, int)) or not RUN_ID.match(str(value)) or ".." in str(value):
            raise _refuse(item, "output.run_id must be a plain name: letters, digits, '.', '_' and '-' (at most "
                                "128, no '/', no '..', not an absolute path).")
        return
    if key == "output.root":
        allowed = [str(p) for p in config.outputs]
        if resume:
            raise _refuse(item, "a resumed run keeps its run directory; output.root cannot change.")
        if not isinstance(value, str) or str(guards._abs(value, config.cwd)) not in allowed:
            raise _refuse(item, f"output.root must be one of this server's output folders ({', '.join(allowed)}); "
                                "runs are written nowhere else (start the server with --outputs DIR to add one).")
        return
    if key in URL_KEYS:
        own = getattr(getattr(base, "model", None), key.split(".")[1], None)
        if value is None or (isinstance(value, str) and (is_loopback_url(value) or value == own)):
            return
        raise _refuse(item, f"{key} from a tool call must be a loopback URL (http://127.0.0.1:PORT/..., "
                            f"http://localhost:PORT/..., http://[::1]:PORT/...) or the config's own value "
                            f"({own or 'none'}); set another server in the config file.")
    if key == "skill.init":
        if value is not None:
            guards.skill_file(config, _text(item, value), key)
        return
    if key in FILE_KEYS:
        if key == "model.scripted" and isinstance(value, (list, dict)):
            return  # inline rules
        if value is not None:
            guards.readable_file(config, _text(item, value), key)
        return
    if key.startswith("env.options."):
        if value is None or isinstance(value, (bool, int, float)):
            return
        raise _refuse(item, "env.options values from a tool call are numbers, true/false or null; options that "
                            "name files or folders are set in the config file.")
    if value is None or isinstance(value, (bool, int, float)):
        return
    if isinstance(value, str) and NAME.match(value):
        return
    raise _refuse(item, f"{key} takes a number, true/false, null or a name (letters, digits and ._:@+/-, at most "
                        "200); lists, mappings and free text are set in the config file.")


def _text(item: str, value: Any) -> str:
    if not isinstance(value, str):
        raise _refuse(item, "the value must be a file path.")
    return value


def check_effective(config: ServerConfig, settings: Any) -> None:
    """The skill files the settings will read (whichever file or override named them) are skill files
    inside the project, the data directory or the output folders."""
    if settings.skill.init:
        guards.skill_file(config, str(settings.skill.init), "skill.init")
    seed = (settings.env.options or {}).get("seed_skill")
    if isinstance(seed, str) and seed:
        guards.skill_file(config, seed, "env.options.seed_skill")
