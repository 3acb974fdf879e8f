"""``skillopt-sleep``: the SkillOpt-Sleep command line.

Each subcommand is a small function its own module registers (:mod:`sleep.commands`);
:func:`build_parser` hands the modules of :data:`COMMAND_MODULES` the subparsers, and
none of them imports this module back.

Before any command (but the SessionEnd ``hook``, which must return at once),
operations a killed process left unfinished are finished or undone
(:func:`sleep.proposals.journal.recover`). A full disk, an unwritable data
directory or a damaged index is one line on stderr (what, which file, what
to do), never a traceback.

Exit codes: 0 success, 2 usage error (or an index / data directory that
cannot be used as it is), 3 another harvest holds the index lock.
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import sqlite3
import sys
from importlib import import_module
from typing import NoReturn

from sleep.lock import LockBusy
from sleep.storage import StorageError, explain_os, explain_sqlite

# Commands that must not wait for anything (the SessionEnd hook has well under a second).
_NO_RECOVERY = {"hook"}

# The modules that define subcommands, in the order `--help` lists them; each has
# ``register(subparsers)`` (sleep.commands).
COMMAND_MODULES = (
    "sleep.harvest.cli",  # harvest, sessions
    "sleep.mcp.cli",  # mcp
    "sleep.proposals.cli",  # propose, review, show, adopt, reject, undo
    "sleep.mine.cli",  # mine, tasks
    "sleep.ui.cli",  # ui
    "sleep.cycle.cli",  # run, history, demo, config
    "sleep.scheduler.cli",  # schedule, unschedule, status, daemon, hook
    "sleep.integrations.cli",  # integrate
    "sleep.doctor",  # doctor
    "sleep.completion",  # completion
)


# Commands parsed without importing the other modules (0.1 s of CPU that every scheduled
# `skillopt-sleep harvest` would pay): the command's own module only.
_ALONE = {"harvest": "sleep.harvest.cli", "sessions": "sleep.harvest.cli"}


class SleepParser(argparse.ArgumentParser):
    """argparse, with "did you mean" after an invalid choice of a nested command
    (``integrate codx``, ``tasks shwo``); sub-parsers inherit the class."""

    def error(self, message: str) -> NoReturn:
        found = re.match(r"argument \S+: invalid choice: '([^']*)' \(choose from (.*)\)$", message)
        if found:
            close = difflib.get_close_matches(found.group(1), re.findall(r"'([^']*)'", found.group(2)), n=3, cutoff=0.6)
            if close:
                message += f"; did you mean {' or '.join(repr(c) for c in close)}?"
        super().error(message)


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole command line; or, with ``only`` (a command of :data:`_ALONE`), a parser that
    knows that command's module alone (the same arguments and help for it)."""
    parser = SleepParser(
        prog="skillopt-sleep",
        description="SkillOpt-Sleep: learn from your own Claude Code, Codex and Copilot sessions.")
    if only is None:  # top-level options come before the command, so `only` never sees them
        from sleep.commands import version

        parser.add_argument("--version", action="version", version=f"%(prog)s {version()}")
    parser.set_defaults(root_parser=parser)  # for `completion`, which describes this very parser
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in (_ALONE[only],) if only is not None else COMMAND_MODULES:
        import_module(name).register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args_in = sys.argv[1:] if argv is None else argv
    if args_in == ["hook", "session-end"]:
        # Claude Code's SessionEnd hook: before the parser, whose modules it does not need (its budget,
        # shared with every other SessionEnd hook, is 1.5 s; see sleep.scheduler.hook).
        from sleep.scheduler.hook import session_end

        return session_end()
    parser = build_parser(args_in[0] if args_in and args_in[0] in _ALONE else None)
    if args_in and not args_in[0].startswith("-") and args_in[0] not in command_names(parser):
        parser.print_usage(sys.stderr)
        print(f"skillopt-sleep: {unknown_command(args_in[0], command_names(parser))}", file=sys.stderr)
        return 2
    args = parser.parse_args(args_in)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    name = f"skillopt-sleep {args.command}"
    try:
        if args.command not in _NO_RECOVERY:
            _recover_unfinished()
            _sweep_killed_nights()
        return int(args.func(args) or 0)
    except LockBusy as exc:
        print(f"skillopt-sleep: {exc}", file=sys.stderr)
        return 3
    except BrokenPipeError:
        _reader_gone()
        return 0
    except KeyboardInterrupt:
        print("skillopt-sleep: interrupted; nothing partial was committed for the current batch.",
              file=sys.stderr)
        return 130
    except StorageError as exc:
        print(f"{name}: {exc}", file=sys.stderr)
        return 2
    except sqlite3.Error as exc:  # raised past the index's own handling (e.g. a full disk mid-write)
        from sleep import paths

        print(f"{name}: {explain_sqlite(exc, paths.index_path())}", file=sys.stderr)
        return 2
    except OSError as exc:  # a file SkillOpt writes: full disk, read-only folder, no permission
        from sleep import paths

        print(f"{name}: {explain_os(exc, paths.data_dir())}", file=sys.stderr)
        return 2


def command_names(parser: argparse.ArgumentParser) -> list[str]:
    """The sub-command names ``parser`` knows."""
    return [name for action in parser._actions if isinstance(action, argparse._SubParsersAction)
            for name in action.choices]


def unknown_command(word: str, names: list[str]) -> str:
    """What to say about a command that does not exist: the close names, else the list."""
    close = difflib.get_close_matches(word, names, n=3, cutoff=0.6)
    if close:
        return f"unknown command {word!r}; did you mean {' or '.join(repr(c) for c in close)}?"
    return (f"unknown command {word!r}; the commands are: {', '.join(names)} "
            "(`skillopt-sleep --help` says what each does)")


def _reader_gone() -> None:
    """The reader of stdout (e.g. `| head`) went away: nothing is left to tell it. Output still
    buffered would raise again when Python flushes stdout at exit (a traceback on stderr), so
    stdout is pointed at the null device first (as the Python docs advise for SIGPIPE)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # no real file descriptor (an embedding's stdout): nothing to flush
        pass


def _recover_unfinished() -> None:
    """Finish or undo what a killed staging, adoption or rejection left (a cheap look first)."""
    from sleep import paths
    from sleep.proposals import journal

    if not journal.any_unfinished(paths.index_path()):
        return
    from sleep.index import Index

    with Index.open() as index:
        for line in journal.recover(index):
            print(f"skillopt-sleep: {line}", file=sys.stderr)


def _sweep_killed_nights() -> None:
    """Remove the private replay roots (checkouts, scratch homes, egress sockets) of killed nights:
    one folder listing when there is nothing to sweep."""
    from skillopt_core.replay import sweep_dead_nights

    try:
        sweep_dead_nights()
    except OSError as exc:  # a leftover we cannot remove is no reason to refuse the command
        print(f"skillopt-sleep: could not remove a killed night's replay folder ({exc})", file=sys.stderr)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
