"""``skillopt-sleep harvest`` and ``skillopt-sleep sessions``: read transcripts into the index, list what it holds."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import TYPE_CHECKING

from sleep.commands import Commands

if TYPE_CHECKING:
    from sleep.harvest.harvester import HarvestReport

commands = Commands()
register = commands.register


# ----- harvest -------------------------------------------------------------------------

def _harvest_args(p: argparse.ArgumentParser) -> None:
    from sleep.harvest.sources import SOURCE_GROUPS

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
    from sleep.harvest.harvester import parse_duration

    try:
        return parse_duration(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


@commands.command("harvest", "read new transcript lines into the index (redacted, incremental)", _harvest_args)
def cmd_harvest(args: argparse.Namespace) -> int:
    from sleep.harvest.harvester import HarvestOptions, harvest
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
    for name, why in sorted(r.sources_failed.items()):
        lines.append(f"  {name} read nothing: {why}")
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


@commands.command("sessions", "list the sessions stored in the index", _sessions_args)
def cmd_sessions(args: argparse.Namespace) -> int:
    from sleep import paths
    from sleep.index import Index
    from sleep.terminal_text import echo

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
        echo("No sessions stored" + (f" for {project}" if project else "") + hint + ".")
        return 0
    for s in sessions[: max(0, args.limit)]:
        first = (s.prompts[0].text if s.prompts else "").replace("\n", " ")
        if len(first) > 60:
            first = first[:57] + "..."
        kind = " (subagent)" if s.is_subagent else ""
        echo(f"{(s.started_at or '?')[:16]:<16}  {s.host:<14} {s.session_id[:36]:<36} "
              f"{len(s.prompts):>3} {'prompt ' if len(s.prompts) == 1 else 'prompts'}  {s.project_dir or '-'}{kind}  "
              f"{first}")
    if len(sessions) > args.limit:
        print(f"... {len(sessions) - args.limit} more (use --limit or --json)")
    return 0
