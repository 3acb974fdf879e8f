"""``skillopt-sleep``: the SkillOpt-Sleep command line.

Each subcommand is a small function registered with :func:`command`; later
issues add ``run``, ``status``, ``proposals``, ``adopt``, ``reject``,
``schedule`` and ``mcp`` the same way (one ``@command`` each, possibly in
their own module imported from :func:`build_parser`).

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
import json
import os
import sqlite3
import sys
from typing import TYPE_CHECKING, Callable

from sleep.lock import LockBusy
from sleep.storage import StorageError, explain_os, explain_sqlite

# Commands that must not wait for anything (the SessionEnd hook has well under a second).
_NO_RECOVERY = {"hook"}

if TYPE_CHECKING:
    from sleep.harvest import HarvestReport

Handler = Callable[[argparse.Namespace], int]
_COMMANDS: list[tuple[str, str, Callable[[argparse.ArgumentParser], None], Handler]] = []


def command(name: str, help: str, configure: Callable[[argparse.ArgumentParser], None]):
    """Register a subcommand: ``configure`` adds its arguments, the decorated function runs it."""
    def wrap(fn: Handler) -> Handler:
        _COMMANDS.append((name, help, configure, fn))
        return fn
    return wrap


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole command line; or, with ``only`` (a command of this module, see
    :data:`_OWN_COMMANDS`), a parser of that command alone, built without importing the
    sub-CLIs (0.1 s of CPU that every `skillopt-sleep harvest` would pay)."""
    if only is None:
        _import_sub_clis()
    parser = argparse.ArgumentParser(
        prog="skillopt-sleep",
        description="SkillOpt-Sleep: learn from your own Claude Code, Codex and Copilot sessions.")
    if only is None:  # top-level options come before the command, so `only` never sees them
        parser.add_argument("--version", action="version", version=f"%(prog)s {version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, help_text, configure, fn in _COMMANDS:
        if only is not None and name != only:
            continue
        p = sub.add_parser(name, help=help_text, description=help_text)
        configure(p)
        p.set_defaults(func=fn)
    return parser


def _import_sub_clis() -> None:
    import sleep.mcp.cli  # noqa: F401  (registers mcp)
    import sleep.proposals.cli  # noqa: F401  (registers propose, review, show, adopt, reject)
    import sleep.mine.cli  # noqa: F401  (registers `mine` and `tasks`)
    import sleep.ui.cli  # noqa: F401  (registers ui)
    import sleep.cycle.cli  # noqa: F401  (registers run, history, demo)
    import sleep.scheduler.cli  # noqa: F401  (registers schedule, unschedule, status, daemon, hook)
    import sleep.integrations.cli  # noqa: F401  (registers integrate)
    import sleep.doctor  # noqa: F401  (registers doctor)
    import sleep.completion  # noqa: F401  (registers completion)


def version() -> str:
    """The installed distribution's version (``skillopt``)."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as dist_version

    try:
        return dist_version("skillopt")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown (not installed)"


def main(argv: list[str] | None = None) -> int:
    args_in = sys.argv[1:] if argv is None else argv
    if args_in == ["hook", "session-end"]:
        # Claude Code's SessionEnd hook: before the parser, whose modules it does not need (its budget,
        # shared with every other SessionEnd hook, is 1.5 s; see sleep.scheduler.hook).
        from sleep.scheduler.hook import session_end

        return session_end()
    parser = build_parser(args_in[0] if args_in and args_in[0] in _OWN_COMMANDS else None)
    args = parser.parse_args(args_in)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    name = f"skillopt-sleep {args.command}"
    try:
        if args.command not in _NO_RECOVERY:
            _recover_unfinished()
        return int(args.func(args) or 0)
    except LockBusy as exc:
        print(f"skillopt-sleep: {exc}", file=sys.stderr)
        return 3
    except BrokenPipeError:
        # The reader (e.g. `| head`) went away; nothing to report to it.
        sys.stderr.close()
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


# ----- harvest -------------------------------------------------------------------------

def _harvest_args(p: argparse.ArgumentParser) -> None:
    from sleep.sources import SOURCE_GROUPS

    p.add_argument("--source", choices=sorted(SOURCE_GROUPS), default="all",
                   help="which host's transcripts to read (copilot = VS Code and CLI; default all)")
    scope = p.add_mutually_exclusive_group()
    scope.add_argument("--project", metavar="PATH",
                       help="only sessions whose working directory is PATH or below "
                            "(default: the current directory)")
    scope.add_argument("--all-projects", action="store_true", help="sessions of every project")
    p.add_argument("--since", metavar="AGE", type=_duration,
                   help="only files modified in the last AGE (e.g. 72h, 7d)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    from sleep.hosts import home_flags

    for flag, _dest, home in home_flags():  # --claude-home, --codex-home, --copilot-home (sleep/hosts/)
        p.add_argument(flag, metavar="DIR", help=f"{home.label} (default {home.describe_default()})")
    p.add_argument("--copilot-export", metavar="FILE", action="append", default=[],
                   help="a VS Code 'Chat: Export Session...' JSON file to include (repeatable)")
    p.add_argument("--max-line-mb", type=float, default=16.0,
                   help="skip (and count) transcript lines larger than this (default 16)")
    p.add_argument("--wait", type=float, default=0.0, metavar="SECONDS",
                   help="if another harvest is running, wait up to SECONDS instead of exiting")


def _duration(text: str):
    from sleep.harvest import parse_duration

    try:
        return parse_duration(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


@command("harvest", "read new transcript lines into the index (redacted, incremental)", _harvest_args)
def cmd_harvest(args: argparse.Namespace) -> int:
    from sleep.harvest import HarvestOptions, harvest

    from sleep.hosts import home_flags

    for _flag, flag, home in home_flags():
        if getattr(args, flag, None) and home.env:
            os.environ[home.env] = os.path.abspath(os.path.expanduser(getattr(args, flag)))
    for export in args.copilot_export:
        if not os.path.isfile(export):
            print(f"skillopt-sleep: --copilot-export {export}: no such file", file=sys.stderr)
            return 2
    project = None if args.all_projects else (args.project or os.getcwd())
    opts = HarvestOptions(source=args.source, project=project, since=args.since,
                          max_line_bytes=int(args.max_line_mb * (1 << 20)),
                          copilot_exports=[os.path.abspath(e) for e in args.copilot_export],
                          wait=args.wait)
    report = harvest(opts)
    if args.json:
        print(json.dumps(report.to_dict(), indent=2, sort_keys=True))
    else:
        print(format_report(report))
    return 0


def _n(value: int) -> str:
    return f"{value:,}"


def format_report(r: HarvestReport) -> str:
    """The human summary of a harvest (counts only, never transcript text)."""
    lines = [
        f"Harvest ({r.scope}): {_n(r.files_seen)} files seen, {_n(r.files_read)} read, "
        f"{_n(r.files_unchanged)} unchanged"
        + (f", {_n(r.files_out_of_scope)} out of scope" if r.files_out_of_scope else ""),
        f"  {r.bytes_read / 1e6:,.1f} MB in {r.elapsed_s:.2f} s ({r.mb_per_s:,.1f} MB/s)",
        f"  sessions: {_n(r.sessions_new)} new, {_n(r.sessions_updated)} updated; "
        f"{_n(r.replay_sessions_skipped)} SkillOpt replay sessions skipped",
    ]
    if r.history_prompts:
        lines.append(f"  typed-prompt history: {_n(r.history_prompts)} lines")
    secrets = ", ".join(f"{k} {v}" for k, v in sorted(r.secrets_by_type.items()))
    lines.append(f"  secrets redacted: {_n(r.secrets_redacted)}" + (f" ({secrets})" if secrets else "")
                 + (f"; {_n(r.secrets_remembered)} new values remembered as keyed hashes"
                    if r.secrets_remembered else ""))
    if r.skipped:
        skipped = ", ".join(f"{k} {v}" for k, v in sorted(r.skipped.items()))
        lines.append(f"  skipped: {skipped}")
        for reason, where in sorted(r.skipped_examples.items()):
            lines.append(f"    {reason}: e.g. {where[0]}")
    else:
        lines.append("  skipped: nothing")
    for name, rep in r.sources.items():
        lines.append(f"  {name:<15} {_n(rep.files_seen):>7} files, {_n(rep.files_read):>6} read, "
                     f"{rep.bytes_read / 1e6:>9,.1f} MB, {_n(rep.sessions_new)} new, "
                     f"{_n(rep.sessions_updated)} updated")
    noted = {h: how for h, how in r.watch.items() if how.startswith("noted")}
    if noted:
        lines.append("  watcher: " + "; ".join(f"{h} {how}" for h, how in sorted(noted.items())))
    lines.append(f"  index: {r.index_path}")
    return "\n".join(lines)


# ----- sessions ------------------------------------------------------------------------

def _sessions_args(p: argparse.ArgumentParser) -> None:
    scope = p.add_mutually_exclusive_group()
    scope.add_argument("--project", metavar="PATH",
                       help="only sessions in PATH or below (default: the current directory)")
    scope.add_argument("--all-projects", action="store_true", help="sessions of every project")
    from sleep.hosts import source_names

    hosts = source_names()
    p.add_argument("--host", choices=hosts, metavar="HOST", help="only sessions of this host: " + ", ".join(hosts))
    p.add_argument("--limit", type=int, default=50, help="at most this many (text output; default 50)")
    p.add_argument("--json", action="store_true", help="print full session records as JSON")


@command("sessions", "list the sessions stored in the index", _sessions_args)
def cmd_sessions(args: argparse.Namespace) -> int:
    from sleep import paths
    from sleep.index import Index

    if not paths.index_path().exists():
        print(f"No index yet at {paths.index_path()}; run `skillopt-sleep harvest` first.",
              file=sys.stderr)
        if args.json:
            print("[]")
        return 0
    project = None if args.all_projects else os.path.abspath(os.path.expanduser(args.project or os.getcwd()))
    with Index.open() as index:
        sessions = index.sessions(project=project, host=args.host)
        others = len(index.sessions(project=None, host=args.host)) if not sessions and project else 0
    if args.json:
        print(json.dumps([s.to_dict(with_state=False) for s in sessions], indent=2))
        return 0
    if not sessions:
        hint = f"; `--all-projects` lists {others} of other projects" if others else ""
        print("No sessions stored" + (f" for {project}" if project else "") + hint + ".")
        return 0
    for s in sessions[: max(0, args.limit)]:
        first = (s.prompts[0].text if s.prompts else "").replace("\n", " ")
        if len(first) > 60:
            first = first[:57] + "..."
        kind = " (subagent)" if s.is_subagent else ""
        print(f"{(s.started_at or '?')[:16]:<16}  {s.host:<14} {s.session_id[:36]:<36} "
              f"{len(s.prompts):>3} {'prompt ' if len(s.prompts) == 1 else 'prompts'}  {s.project_dir or '-'}{kind}  {first}")
    if len(sessions) > args.limit:
        print(f"... {len(sessions) - args.limit} more (use --limit or --json)")
    return 0


# The commands this module registers itself (before any sub-CLI is imported): `main` parses
# them without the sub-CLIs.
_OWN_COMMANDS = frozenset(name for name, *_ in _COMMANDS)


if __name__ == "__main__":  # pragma: no cover
    # Run the imported module's main, not this __main__ copy: subcommand modules
    # register themselves on `sleep.cli`, which `python -m` would otherwise load twice.
    from sleep.cli import main as _main

    raise SystemExit(_main())
