"""``skillopt-sleep schedule``, ``unschedule``, ``status``, ``daemon`` and ``hook``.

Exit codes: 0 done, 2 bad input or a mode this machine lacks (the message says
what to do), 3 another daemon is running. ``hook`` always exits 0.
"""

from __future__ import annotations

import argparse
import json
import sys

from sleep.commands import Commands
from sleep.scheduler.model import DEFAULT_AT, MODES

commands = Commands()
register = commands.register


def _fail(message: str) -> int:
    print(f"skillopt-sleep: {message}", file=sys.stderr)
    return 2


def _seconds(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected whole seconds, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError("must be 0 or more")
    return value


def _hours(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected hours, got {text!r}") from None
    if not 0 <= value <= 23:
        raise argparse.ArgumentTypeError("must be between 0 and 23 hours")
    return value


# ----- schedule ------------------------------------------------------------------------

def _schedule_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--at", default=DEFAULT_AT, metavar="HH:MM", help=f"local time of the night (default {DEFAULT_AT})")
    p.add_argument("--project", metavar="PATH", help="the project folder (default: the current directory)")
    p.add_argument("--mode", choices=("auto", *MODES), default="auto",
                   help="cron, systemd (user timer), launchd, or daemon (a schedule `skillopt-sleep daemon` runs); "
                        "auto picks what this machine has")
    p.add_argument("--jitter", type=_seconds, metavar="SECONDS",
                   help="daemon mode only: start up to SECONDS later, at random (default 300)")
    p.add_argument("--print", dest="dry", action="store_true",
                   help="show exactly what would be installed; change nothing")
    p.add_argument("--json", action="store_true", help="print the result as JSON")


@commands.command("schedule", "install the nightly run for a project (cron, systemd timer, launchd, or the daemon)",
         _schedule_args)
def cmd_schedule(args: argparse.Namespace) -> int:
    from sleep.scheduler import api
    from sleep.scheduler.model import ScheduleError

    try:
        if args.dry:
            p = api.plan(args.project, args.at, args.mode, args.jitter, printing=True)
            print(json.dumps(p.to_dict(), indent=2) if args.json else _plan_text(p))
            return 0
        out = api.schedule(args.project, args.at, args.mode, args.jitter)
    except ScheduleError as exc:
        return _fail(str(exc))
    if args.json:
        print(json.dumps(out.to_dict(), indent=2))
        return 0
    s = out.schedule
    assert s is not None
    print(f"Scheduled {s.project}: nightly at {s.at} ({s.mode}).")
    for change in out.changes:
        print(f"  - {change}")
    print(f"  next night: {out.next_run.replace('T', ' ') if out.next_run else '?'} (local time)")
    for note in out.notes:
        print(f"  note: {note}")
    print("  check with `skillopt-sleep status`; remove with `skillopt-sleep unschedule`")
    return 0


def _plan_text(p) -> str:
    s = p.schedule
    lines = [f"Would schedule {s.project}: nightly at {s.at} ({s.mode}). Nothing was changed."]
    if p.rendered is None:
        lines.append(f"  the daemon would run: {' '.join(s.argv)} --json"
                     + (f" (up to {s.jitter_s} s after {s.at})" if s.jitter_s else ""))
    else:
        for where, text in p.rendered.files.items():
            lines.append(f"--- {where} ---")
            lines.append(text.rstrip("\n"))
        lines.append("--- then ---")
        lines += ["  " + " ".join(argv) for argv in p.rendered.commands]
    lines.append(f"next night: {p.next_run.replace('T', ' ')} (local time)")
    lines += [f"note: {n}" for n in p.notes]
    return "\n".join(lines)


# ----- unschedule ----------------------------------------------------------------------

def _unschedule_args(p: argparse.ArgumentParser) -> None:
    scope = p.add_mutually_exclusive_group()
    scope.add_argument("--project", metavar="PATH", help="the project folder (default: the current directory)")
    scope.add_argument("--all", action="store_true", help="every schedule (and any entry of ours found without one)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")


@commands.command("unschedule", "remove a project's nightly run (only what `schedule` installed)", _unschedule_args)
def cmd_unschedule(args: argparse.Namespace) -> int:
    from sleep.scheduler import api
    from sleep.scheduler.model import ScheduleError

    try:
        out = api.unschedule(args.project, everything=args.all)
    except ScheduleError as exc:
        return _fail(str(exc))
    if args.json:
        print(json.dumps(out.to_dict(), indent=2))
        return 0
    for change in out.changes:
        print(f"- {change}")
    for note in out.notes:
        print(note[0].upper() + note[1:] + ".")
    return 0


# ----- status --------------------------------------------------------------------------

def _status_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--project", metavar="PATH", help="only this project (default: every scheduled one)")
    p.add_argument("--json", action="store_true", help="print the status as JSON")


@commands.command("status", "next night, last night and its result, proposals waiting, daemon and watcher",
                  _status_args)
def cmd_status(args: argparse.Namespace) -> int:
    from sleep.scheduler.status import render, status
    from sleep.terminal_text import echo

    data = status(args.project)
    echo(json.dumps(data, indent=2, default=str) if args.json else render(data))
    return 0


# ----- daemon --------------------------------------------------------------------------

def _daemon_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--no-watch", action="store_true", help="do not watch transcript folders")
    p.add_argument("--catch-up-hours", type=_hours, default=12.0, metavar="H",
                   help="run a night missed while the machine slept or the daemon was down if it is at most H "
                        "hours late (default 12)")
    p.add_argument("--stop-timeout", type=float, default=30.0, metavar="SECONDS",
                   help="on stop, how long a running night gets to record itself as interrupted (default 30)")
    p.add_argument("--quiet", action="store_true", help="log only to the log file, not to stderr")


@commands.command("daemon", "run scheduled nights and watch transcripts (foreground; for a process supervisor)",
         _daemon_args)
def cmd_daemon(args: argparse.Namespace) -> int:
    from sleep.scheduler.daemon import run_daemon
    from sleep.scheduler.model import ScheduleError

    try:
        return run_daemon(watch=not args.no_watch, grace_s=args.catch_up_hours * 3600,
                          stop_timeout_s=args.stop_timeout, stderr=not args.quiet)
    except ScheduleError as exc:
        return _fail(str(exc))


# ----- hook ----------------------------------------------------------------------------

def _hook_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("event", choices=["session-end"], help="the hook event (Claude Code's SessionEnd)")


@commands.command("hook", "for agent hooks: note an ended session's transcript (reads the hook JSON on stdin; always "
                 "exits 0)", _hook_args)
def cmd_hook(args: argparse.Namespace) -> int:
    from sleep.scheduler.hook import session_end

    return session_end()
