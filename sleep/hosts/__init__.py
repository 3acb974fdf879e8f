"""The registry of hosts, and every list derived from it.

One :class:`~sleep.hosts.host.Host` per host, each in its own module here
(``claude_code``, ``codex``, ``copilot``, ``gemini``, ``opencode``), in harvest
order. A third-party package adds a host with an entry point in the group
``skillopt.hosts`` whose value names a module defining ``HOST`` or a ``Host``
object itself (``module:attr``); in-process code (and tests) call
:func:`register`. Built-in names win; a plugin host that cannot be loaded is
reported once on stderr and left out, so one broken package never stops a
harvest.

Derived here: :func:`source_groups` (``harvest --source``, the MCP tool's
``source``), :func:`source_names` (``sessions --host``), :func:`source_family`
(``sleep.cycle.backends.HOST_FAMILY``), :func:`replay_backends`
(``CLI_BACKENDS``), :func:`replaying` (a replay CLI's host: its ready check
:func:`cli_ready`, sandbox and API hosts), :func:`home_flags` (``harvest --claude-home``...),
:func:`home_env_vars` (what a scheduled night and the MCP server carry),
:func:`watch_roots` (the watcher) and :func:`skills_of` (skill folders).
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

from sleep.hosts.host import Home, Host, Mcp, Sandbox, Skills, Source, Watch, load_ref

__all__ = [
    "ENTRY_POINT_GROUP",
    "Home",
    "Host",
    "Mcp",
    "Sandbox",
    "Skills",
    "Source",
    "Watch",
    "all_hosts",
    "cli_ready",
    "get",
    "home_env_vars",
    "home_flags",
    "ready_check",
    "register",
    "replay_backends",
    "replaying",
    "skills_of",
    "source",
    "source_family",
    "source_groups",
    "source_names",
    "unregister",
    "watch_roots",
]

ENTRY_POINT_GROUP = "skillopt.hosts"
BUILTIN_MODULES = (
    "claude_code", "codex", "copilot", "gemini", "opencode", "cursor", "pi", "dsh", "goose", "amp", "hermes",
)

_builtin: list[Host] | None = None
_registered: dict[str, Host] = {}
_plugins: list[Host] | None = None


def _builtins() -> list[Host]:
    global _builtin
    if _builtin is None:
        _builtin = [importlib.import_module(f"sleep.hosts.{m}").HOST for m in BUILTIN_MODULES]
    return _builtin


def register(host: Host) -> Host:
    """Add ``host`` for this process (after the built-ins); returns it. A name or
    source name already taken is refused (ValueError), so no host hides another."""
    if not isinstance(host, Host):
        raise TypeError(f"register() takes a sleep.hosts.Host, not {type(host).__name__}")
    taken = {h.name for h in all_hosts()}
    sources = {s.name for h in all_hosts() for s in h.sources}
    if host.name in taken or host.name == "all":
        raise ValueError(f"a host named {host.name!r} is already registered")
    clash = sources & {s.name for s in host.sources}
    if clash:
        raise ValueError(f"host {host.name!r}: source {sorted(clash)[0]!r} belongs to another host")
    _registered[host.name] = host
    return host


def unregister(name: str) -> None:
    """Forget a host added with :func:`register` (tests)."""
    _registered.pop(name, None)


def reload_plugins() -> None:
    """Read the ``skillopt.hosts`` entry points again on next use (after installing a package)."""
    global _plugins
    _plugins = None


def _load_plugins() -> list[Host]:
    global _plugins
    if _plugins is None:
        # The standard library's reader, not skillopt_core.registry: this runs on the SessionEnd
        # hook's and the MCP launcher's import paths, which must stay free of the core.
        from sleep.entry_point_probe import may_declare

        _plugins = []
        names = {h.name for h in _builtins()}
        try:
            if may_declare(ENTRY_POINT_GROUP):  # importlib.metadata costs ~30 ms to import: only if needed
                from importlib.metadata import entry_points

                found = list(entry_points(group=ENTRY_POINT_GROUP))
            else:
                found = []
        except Exception as exc:  # unreadable package metadata: no plugins rather than no harvest
            print(f"skillopt-sleep: host plugins not read: {type(exc).__name__}: {exc}", file=sys.stderr)
            found = []
        for ep in found:
            dist = getattr(getattr(ep, "dist", None), "name", None) or "an installed package"
            try:
                obj = ep.load()
                host = getattr(obj, "HOST", obj)
                if not isinstance(host, Host):
                    raise TypeError(f"{ep.value} is a {type(host).__name__}, not a sleep.hosts.Host")
            except Exception as exc:  # a broken plugin: say which, carry on without it
                print(f"skillopt-sleep: host plugin left out (entry point '{ep.name} = {ep.value}' in group "
                      f"'{ENTRY_POINT_GROUP}' of {dist}): {type(exc).__name__}: {exc}", file=sys.stderr)
                continue
            if host.name in names:
                continue  # built-in names win
            names.add(host.name)
            _plugins.append(host)
    return _plugins


def all_hosts() -> list[Host]:
    """Every host: built-ins in harvest order, then registered ones, then plugins."""
    found = list(_builtins()) + list(_registered.values())
    names = {h.name for h in found}
    found += [h for h in _load_plugins() if h.name not in names]
    return found


def get(name: str) -> Host:
    for host in all_hosts():
        if host.name == name:
            return host
    raise KeyError(f"no host named {name!r} (known: {', '.join(h.name for h in all_hosts())})")


def source(name: str) -> Source:
    """The transcript source named ``name`` (a ``Session.host`` value)."""
    for host in _builtins():  # the common case without reading package metadata
        for s in host.sources:
            if s.name == name:
                return s
    for host in all_hosts():
        for s in host.sources:
            if s.name == name:
                return s
    raise KeyError(f"no transcript source named {name!r}")


# ----- derived lists ---------------------------------------------------------------------

def source_names() -> list[str]:
    """Every source in harvest order (the values ``Session.host`` takes)."""
    return [s.name for h in all_hosts() for s in h.sources]


def source_groups() -> dict[str, tuple[str, ...]]:
    """``--source`` choices and the sources each selects: one per host, and ``all``."""
    groups = {h.name: tuple(s.name for s in h.sources) for h in all_hosts()}
    groups["all"] = tuple(source_names())
    return groups


def source_family() -> dict[str, str]:
    """Source name → its host's family (whose replay CLI and skills it uses)."""
    return {s.name: h.family for h in all_hosts() for s in h.sources}


def replay_backends() -> dict[str, str]:
    """Family → the backend that replays through the host's CLI (hosts with one)."""
    return {h.family: h.replay for h in all_hosts() if h.replay}


def home_flags() -> list[tuple[str, str, Home]]:
    """``(flag, argparse dest, home)`` for every home that has a ``harvest`` flag."""
    seen: set[str] = set()
    out = []
    for h in all_hosts():
        for s in h.sources:
            flag = s.home.flag
            if flag and flag not in seen:
                seen.add(flag)
                out.append((flag, flag.lstrip("-").replace("-", "_"), s.home))
    return out


def home_env_vars(carried_only: bool = True) -> list[str]:
    """The variables that move the hosts' homes, in host order, once each."""
    out: list[str] = []
    for h in all_hosts():
        for s in h.sources:
            env = s.home.env
            if env and env not in out and (s.home.carry or not carried_only):
                out.append(env)
    return out


def watch_roots() -> list[tuple[str, Path, Watch]]:
    """``(source name, folder, watch)`` for every watched folder of every source."""
    out = []
    for h in all_hosts():
        for s in h.sources:
            if not s.watch:
                continue
            for folder in s.home.paths():
                for w in s.watch:
                    out.append((s.name, folder / w.sub if w.sub else folder, w))
    return out


def replaying(name: str) -> Host | None:
    """The host whose replay CLI ``name`` is: a replay backend's name (``gemini-cli``) or
    the family of a host that replays (``gemini``); None for a model backend."""
    name = name.replace("_", "-")
    return next((h for h in all_hosts() if h.replay and name in (h.replay, h.family)), None)


def ready_check(family: str):
    """The ``(ready, why)`` check of the replay CLI of ``family`` (None: not described)."""
    host = replaying(family)
    return load_ref(host.ready) if host is not None and host.ready else None


def cli_ready(family: str) -> tuple[bool, str]:
    """Is the replay CLI of ``family`` (or of the replay backend of that name) installed and,
    by its files and variables, logged in? (:attr:`Host.ready`; nothing is started.)"""
    check = ready_check(family)
    if check is None:
        return False, f"{family} has no agent CLI that replays its tasks"
    return check()


def skills_of(family: str) -> Skills | None:
    """Where the hosts of ``family`` read skills (None: unknown)."""
    for h in all_hosts():
        if h.family == family and h.skills is not None:
            return h.skills
    return None
