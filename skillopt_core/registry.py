"""A name → object registry whose built-in entries live in modules imported
on first use (so a heavy SDK loads only when its backend is chosen). Backends
and envs each keep one."""

from __future__ import annotations

import difflib
import importlib
from typing import Callable, Generic, TypeVar

T = TypeVar("T")


class LazyRegistry(Generic[T]):
    def __init__(
        self,
        kind: str,
        builtin_modules: dict[str, str],
        normalise: Callable[[str], str],
        error: type[Exception] = ValueError,
    ) -> None:
        self.kind = kind
        self.builtin_modules = builtin_modules
        self.normalise = normalise
        self.error = error
        self._entries: dict[str, T] = {}

    def register(self, name: str) -> Callable[[T], T]:
        def deco(obj: T) -> T:
            self._entries[self.normalise(name)] = obj
            return obj

        return deco

    def names(self) -> list[str]:
        return sorted(set(self._entries) | set(self.builtin_modules))

    def get(self, name: str) -> T:
        """The entry for ``name``; an unknown name raises ``error`` naming the nearest known one."""
        key = self.normalise(name)
        if key not in self._entries and key in self.builtin_modules:
            importlib.import_module(self.builtin_modules[key])
        if key in self._entries:
            return self._entries[key]
        known = self.names()
        near = difflib.get_close_matches(key, known, n=1)
        hint = f" Did you mean '{near[0]}'?" if near else ""
        raise self.error(f"Unknown {self.kind} '{name}'.{hint} Known {self.kind}s: {', '.join(known)}.")
