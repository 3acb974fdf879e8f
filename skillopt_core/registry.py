"""A name → object registry. Backends, envs and judges each keep one.

An entry comes from one of three places, looked up in this order:

1. registered in this process (``@register_backend("name")`` and friends);
2. a built-in module, imported the first time one of its names is used (so a
   heavy SDK loads only when its backend is chosen);
3. a plugin: an entry point in the registry's group (``skillopt.backends``,
   ``skillopt.envs``, ``skillopt.judges``) of an installed distribution. The
   entry point's name is the registry name; its value names a module whose
   import registers that name, or the object itself (``module:attr``).

Plugins are loaded lazily, one entry point at a time, only when a name is not
found among the built-ins: a broken plugin fails only the command that asks
for it, with a message naming its distribution. Listing names reads package
metadata only and never imports a plugin. Built-in names win over plugins.
"""

from __future__ import annotations

import difflib
import importlib
import importlib.metadata as metadata
import re
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Generic, TypeVar

T = TypeVar("T")

__all__ = ["LazyRegistry", "PluginEntry", "plugin_entry_points"]


@dataclass(frozen=True)
class PluginEntry:
    """One entry point of an installed distribution."""

    name: str  # the entry point's name as written by the plugin
    value: str  # "module" or "module:attr"
    group: str
    distribution: str
    entry_point: metadata.EntryPoint

    def describe(self) -> str:
        return f"entry point '{self.name} = {self.value}' in group '{self.group}' of the package '{self.distribution}'"


def _dist_key(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def plugin_entry_points(group: str) -> tuple[list[PluginEntry], list[str]]:
    """Every entry point in ``group`` of the installed distributions, and one
    line per distribution whose metadata could not be read (skipped, not fatal).

    A distribution found twice on ``sys.path`` counts once: the first one, the
    one Python would import."""
    found: list[PluginEntry] = []
    problems: list[str] = []
    seen: set[str] = set()
    for dist in metadata.distributions():
        try:
            dist_name = dist.metadata["Name"]
            if not dist_name:
                continue
            key = _dist_key(dist_name)
            if key in seen:
                continue
            seen.add(key)
            entry_points = list(dist.entry_points.select(group=group))
        except Exception as exc:  # a malformed dist-info of some unrelated package
            where = getattr(dist, "_path", "an installed package")
            problems.append(f"could not read the entry points of {where}: {type(exc).__name__}: {exc}")
            continue
        for ep in entry_points:
            found.append(PluginEntry(ep.name, ep.value, group, dist_name, ep))
    return found, problems


def _adopt_callable(kind: str) -> Callable[[str, Any], Any]:
    def adopt(name: str, obj: Any) -> Any:
        if not callable(obj):
            raise TypeError(f"it names a {type(obj).__name__}, not a {kind} factory or class")
        return obj

    return adopt


class LazyRegistry(Generic[T]):
    """Names → entries for one kind of thing (``kind`` is used in messages).

    ``normalise`` maps a name as written to its registry key; ``error`` is the
    exception type for unknown names and broken plugins; ``group`` is the
    entry-point group plugins use (None: no plugins); ``adopt(name, obj)``
    turns the object an entry point names into an entry (default: any
    callable, e.g. a factory or a class), raising ``TypeError`` saying why not;
    ``register_hint`` names the decorator a plugin module calls.
    """

    def __init__(
        self,
        kind: str,
        builtin_modules: dict[str, str],
        normalise: Callable[[str], str],
        error: type[Exception] = ValueError,
        group: str | None = None,
        adopt: Callable[[str, Any], T] | None = None,
        register_hint: str = "",
    ) -> None:
        self.kind = kind
        self.builtin_modules = builtin_modules
        self.normalise = normalise
        self.error = error
        self.group = group
        self.adopt = adopt or _adopt_callable(kind)
        self.register_hint = register_hint or f"register_{kind}"
        self._entries: dict[str, T] = {}
        self._plugins: dict[str, list[PluginEntry]] | None = None
        self._plugin_problems: list[str] = []
        self._failed: dict[str, str] = {}

    def register(self, name: str) -> Callable[[T], T]:
        def deco(obj: T) -> T:
            self._entries[self.normalise(name)] = obj
            return obj

        return deco

    # -- plugins ------------------------------------------------------------ #

    def plugins(self) -> dict[str, list[PluginEntry]]:
        """Registry key → the entry points offering it (read once per process)."""
        if self._plugins is None:
            index: dict[str, list[PluginEntry]] = {}
            if self.group:
                entries, self._plugin_problems = plugin_entry_points(self.group)
                for entry in entries:
                    index.setdefault(self.normalise(entry.name), []).append(entry)
            self._plugins = index
        return self._plugins

    def forget_plugins(self) -> None:
        """Read the installed plugins again on next use (after installing one
        into the running process; loaded entries stay)."""
        self._plugins = None
        self._failed.clear()

    def _load_plugin(self, key: str) -> T | None:
        offers = self.plugins().get(key)
        if not offers:
            return None
        if key in self._failed:
            raise self.error(self._failed[key])
        try:
            return self._load_entry(key, offers)
        except self.error as exc:
            self._failed[key] = str(exc)
            raise

    def _load_entry(self, key: str, offers: list[PluginEntry]) -> T:
        dists = sorted({offer.distribution for offer in offers})
        if len(dists) > 1:
            raise self.error(
                f"The {self.kind} '{key}' is offered by {len(dists)} installed packages ({', '.join(dists)}), "
                f"in entry-point group '{self.group}'. Uninstall all but one of them "
                f"(pip uninstall {dists[-1]})."
            )
        entry = offers[0]
        try:
            obj = entry.entry_point.load()
        except Exception as exc:
            raise self.error(
                f"The {self.kind} '{key}' comes from a plugin that failed to load: {entry.describe()} raised "
                f"{type(exc).__name__}: {exc}. Upgrade or reinstall '{entry.distribution}', "
                f"or remove it with `pip uninstall {entry.distribution}`."
            ) from exc
        if key in self._entries:  # the import registered it (module or decorated object)
            return self._entries[key]
        if isinstance(obj, ModuleType):
            raise self.error(
                f"The plugin {entry.describe()} was imported but registered no {self.kind} named '{key}'. "
                f"Its module must call {self.register_hint}('{entry.name}'), or the entry point must name "
                f"the object itself ('module:attr'). Report this to the maintainers of '{entry.distribution}'."
            )
        try:
            adopted = self.adopt(key, obj)
        except TypeError as exc:
            raise self.error(
                f"The plugin {entry.describe()} cannot serve as a {self.kind}: {exc}. "
                f"Report this to the maintainers of '{entry.distribution}'."
            ) from None
        self._entries[key] = adopted
        return adopted

    # -- lookup ------------------------------------------------------------- #

    def names(self) -> list[str]:
        """Every known name: registered, built-in and offered by a plugin."""
        return sorted(set(self._entries) | set(self.builtin_modules) | set(self.plugins()))

    def find(self, name: str) -> T | None:
        """The entry for ``name``, or None if nobody offers it. A plugin that
        fails to load raises ``error`` naming its distribution."""
        key = self.normalise(name)
        if key in self._entries:
            return self._entries[key]
        if key in self.builtin_modules:  # built-ins win: a plugin never shadows one
            module = self.builtin_modules[key]
            importlib.import_module(module)
            if key not in self._entries:
                raise self.error(f"Built-in module {module} did not register the {self.kind} '{key}' (a bug in "
                                 f"skillopt).")
            return self._entries[key]
        return self._load_plugin(key)

    def get(self, name: str) -> T:
        """The entry for ``name``; an unknown name raises ``error`` naming the nearest known one."""
        found = self.find(name)
        if found is not None:
            return found
        raise self.error(self.unknown_message(name))

    def unknown_message(self, name: str) -> str:
        key = self.normalise(name)
        known = self.names()
        near = difflib.get_close_matches(key, known, n=1)
        hint = f" Did you mean '{near[0]}'?" if near else ""
        message = f"Unknown {self.kind} '{name}'.{hint} Known {self.kind}s: {', '.join(known)}."
        if self._plugin_problems:
            problems = "; ".join(self._plugin_problems)
            message += f" (Some installed packages could not be checked for plugins: {problems}.)"
        return message
