"""The subcommands of ``skillopt-sleep``, one :class:`Commands` per module that defines some.

A module makes ``commands = Commands()``, decorates each handler with
``@commands.command(name, help, configure)`` and exposes ``register = commands.register``;
:func:`sleep.cli.build_parser` hands every such module the subparsers to register into.
No module imports :mod:`sleep.cli` back.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

Handler = Callable[[argparse.Namespace], int]
Configure = Callable[[argparse.ArgumentParser], None]


class Commands:
    """The subcommands one module defines, in the order it defines them."""

    def __init__(self) -> None:
        self._entries: list[tuple[str, str, Configure, Handler]] = []

    def command(self, name: str, help: str, configure: Configure) -> Callable[[Handler], Handler]:
        """Decorate a handler: ``configure`` adds its arguments, the handler runs it."""
        def wrap(fn: Handler) -> Handler:
            self._entries.append((name, help, configure, fn))
            return fn
        return wrap

    def register(self, sub: argparse._SubParsersAction) -> None:
        """Add every subcommand of this module to ``sub``."""
        for name, help_text, configure, fn in self._entries:
            p = sub.add_parser(name, help=help_text, description=help_text)
            configure(p)
            p.set_defaults(func=fn)


def version() -> str:
    """The installed distribution's version (``skillopt``)."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as dist_version

    try:
        return dist_version("skillopt")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown (not installed)"
