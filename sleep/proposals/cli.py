"""``skillopt-sleep propose | review | show | adopt | reject | undo``: the morning review.

Every command calls the library (the nightly cycle, the MCP server and the
dashboard call the same functions). A :class:`ProposalError` becomes one line
on stderr and exit status 2; no traceback reaches the person.
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

from sleep.commands import Commands
from sleep.proposals.errors import ProposalError
from sleep.proposals.render import report_text, review_lines
from sleep.terminal_text import echo, json_text

commands = Commands()
register = commands.register

USER_ERROR = 2


def _user_errors(fn: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    @functools.wraps(fn)
    def run(args: argparse.Namespace) -> int:
        try:
            return fn(args)
        except ProposalError as exc:
            echo(f"skillopt-sleep {args.command}: {exc}", file=sys.stderr)
            return USER_ERROR
        except BrokenPipeError:  # the reader went away (`show … | head`): sleep.cli.main ends quietly
            raise
        except OSError as exc:  # e.g. a skill file the person may not read or write, a full disk
            from sleep import paths
            from sleep.storage import explain_os

            echo(f"skillopt-sleep {args.command}: {explain_os(exc, paths.data_dir())}", file=sys.stderr)
            return USER_ERROR
    return run


def _print_json(data: Any) -> None:
    print(json_text(json.dumps(data, indent=2, ensure_ascii=False)))


# ----- propose -------------------------------------------------------------------------

def _propose_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--skill", required=True, metavar="PATH", help="the live skill file the proposal is for")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--candidate", metavar="FILE", help="the proposed skill text (a file you wrote)")
    src.add_argument("--from-run", metavar="RUN_DIR", help="a `skillopt train` run directory (its best_skill.md)")
    p.add_argument("--force", action="store_true",
                   help="with --from-run: stage a run trained from another text, or one that did not improve")
    p.add_argument("--project", metavar="PATH", help="refuse a skill file outside this folder")
    p.add_argument("--night", metavar="YYYY-MM-DD", type=_date, help="the date in the branch name (default today)")
    p.add_argument("--json", action="store_true", help="print the proposal (with its id) as JSON")


def _date(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date like 2026-12-01") from None


@commands.command("propose", "stage a skill file you wrote, or a training run's best skill, as a reviewable branch",
         _propose_args)
@_user_errors
def cmd_propose(args: argparse.Namespace) -> int:
    from sleep.proposals.fromrun import report_from_run, run_refusal
    from sleep.proposals.stage import stage  # GitPython loads with the commands that use it

    live = Path(args.skill).expanduser()
    live_text = _read(live, "--skill") if live.is_file() else None
    if args.candidate:
        candidate, report = _read(Path(args.candidate).expanduser(), "--candidate"), None
    else:
        candidate, report = report_from_run(args.from_run, live_text)
        refusal = run_refusal(args.from_run, live_text, report)
        if refusal and not args.force:
            raise ProposalError(f"--from-run {args.from_run}: {refusal}. Nothing was staged; "
                                "to stage it anyway, add --force.")
    p = stage(live, candidate, report, night=args.night, project=args.project)
    if args.json:
        _print_json(p.to_dict())
        return 0
    where = p.project if p.store == "project" else f"SkillOpt's skills repository {p.repo}"
    echo(f"Staged proposal {p.id}: branch {p.branch} in {where}")
    edits = "1 edit" if p.n_edits == 1 else f"{p.n_edits} edits"
    echo(f"  {p.skill_name}: val {_s(p.baseline_val)} → {_s(p.candidate_val)}, {edits}")
    for note in p.report.notes:
        echo(f"  note: {note}")
    echo(f"  next: skillopt-sleep show {p.id}  |  adopt {p.id}  |  reject {p.id}")
    return 0


def _read(path: Path, flag: str) -> str:
    try:
        with open(path, encoding="utf-8", newline="") as fh:
            return fh.read()
    except FileNotFoundError:
        raise ProposalError(f"{flag} {path}: no such file") from None
    except IsADirectoryError:
        raise ProposalError(f"{flag} {path} is a folder; pass a file") from None
    except UnicodeDecodeError:
        raise ProposalError(f"{flag} {path} is not UTF-8 text; a skill file is Markdown") from None
    except OSError as exc:
        raise ProposalError(f"{flag} {path}: {exc.strerror}") from None


def _s(value: float | None) -> str:
    return "?" if value is None else f"{value:.2f}"


# ----- review / show -------------------------------------------------------------------

def _review_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--all", action="store_true", help="include adopted and rejected proposals")
    scope = p.add_mutually_exclusive_group()
    scope.add_argument("--project", metavar="PATH",
                       help="the proposals of the project PATH is in (default: the current directory's project)")
    scope.add_argument("--all-projects", action="store_true", help="the proposals of every project")
    p.add_argument("--json", action="store_true", help="print the proposals (with reports) as JSON")


@commands.command("review", "list the current project's pending proposals, one line each (stale ones say why)",
                  _review_args)
@_user_errors
def cmd_review(args: argparse.Namespace) -> int:
    from sleep.index import Index
    from sleep.project import listing_project
    from sleep.proposals import review, store

    with Index.open() as index:
        project = None if args.all_projects else listing_project(Path(args.project or Path.cwd()), index)
        proposals = review.list_proposals(include_decided=args.all, within=project, index=index)
        others = len(store.select(index, include_decided=args.all)) if project and not proposals else 0
    if args.json:
        _print_json([p.to_dict() for p in proposals])
        return 0
    if not proposals:
        where = f" for {project}" if project else ""
        echo("No proposals" + (where if args.all else f" waiting for review{where}")
              + (f"; `--all-projects` lists {others} of other projects." if others else
                 "." if args.all else " (`--all` shows decided ones)."))
        return 0
    echo("\n".join(review_lines(proposals)))
    return 0


def _show_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("proposal", metavar="PROPOSAL", help="a proposal id (or a unique prefix, or its branch)")
    p.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                   help="colour the diff (auto: when the output is a terminal)")
    p.add_argument("--json", action="store_true", help="print the proposal and its diff as JSON")


@commands.command("show", "a proposal's report and diff", _show_args)
@_user_errors
def cmd_show(args: argparse.Namespace) -> int:
    from sleep.proposals import review

    color = args.color == "always" or (args.color == "auto" and not args.json and sys.stdout.isatty())
    view = review.show(args.proposal, color=color)
    if args.json:
        _print_json({**view.proposal.to_dict(), "diff": view.diff, "pending_diff": view.pending,
                     "branch_tip": view.branch_tip})
        return 0
    echo(report_text(view.proposal))
    if view.branch_tip is not None and view.branch_tip != view.proposal.commit:
        echo(f"Note: the branch has moved to {view.branch_tip[:12]}; the diff is the staged commit.")
    print()
    echo("The proposal (the text the night trained from → the candidate):")
    _print_diff(view.diff or "(no change)", color)
    if view.pending:
        echo("Your own edits, uncommitted when the night ran (not part of the proposal; it builds on them, "
              "and adopting keeps them):")
        _print_diff(view.pending, color)
    return 0


def _print_diff(diff: str, color: bool) -> None:
    """A diff as ``textdiff.unified`` made it: a coloured one holds our colours around lines it
    already cleaned; a plain one is cleaned here."""
    if color:
        print(diff)
    else:
        echo(diff)


# ----- adopt / reject ------------------------------------------------------------------

def _adopt_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("proposal", metavar="PROPOSAL", help="a proposal id (or a unique prefix, or its branch)")
    p.add_argument("--commit", action="store_true",
                   help="also commit the skill file on the current branch (refused if other changes are staged)")
    branch = p.add_mutually_exclusive_group()
    branch.add_argument("--keep-branch", action="store_true",
                        help="keep the proposal's branch and note (by default both are deleted once adopted)")
    branch.add_argument("--delete-branch", action="store_true", help=argparse.SUPPRESS)  # the default now
    p.add_argument("--json", action="store_true", help="print the decision as JSON")


@commands.command("adopt", "make a proposal's candidate the live skill file", _adopt_args)
@_user_errors
def cmd_adopt(args: argparse.Namespace) -> int:
    from sleep.proposals import decide

    d = decide.adopt(args.proposal, commit=args.commit, delete_branch=not args.keep_branch)
    return _print_decision(args, d, f"Adopted {d.proposal.id}: {d.proposal.skill_path} now has the candidate.")


def _reject_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("proposal", metavar="PROPOSAL", help="a proposal id (or a unique prefix, or its branch)")
    p.add_argument("--reason", metavar="TEXT", help="why (kept with the record)")
    p.add_argument("--json", action="store_true", help="print the decision as JSON")


@commands.command("reject", "delete a proposal's branch; keep the record and the reason", _reject_args)
@_user_errors
def cmd_reject(args: argparse.Namespace) -> int:
    from sleep.proposals import decide

    d = decide.reject(args.proposal, reason=args.reason)
    return _print_decision(args, d, f"Rejected {d.proposal.id} ({d.proposal.skill_name}, {d.proposal.night}).")


def _undo_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("proposal", metavar="PROPOSAL", help="an adopted proposal's id (or a unique prefix, or its branch)")
    p.add_argument("--json", action="store_true", help="print the decision as JSON")


@commands.command("undo", "give the skill file back the text it had before a proposal was adopted", _undo_args)
@_user_errors
def cmd_undo(args: argparse.Namespace) -> int:
    from sleep.proposals.undo import undo

    d = undo(args.proposal)
    return _print_decision(args, d, f"Undid the adoption of {d.proposal.id} ({d.proposal.skill_name}).")


def _print_decision(args: argparse.Namespace, d: Any, headline: str) -> int:
    if args.json:
        _print_json({"proposal": d.proposal.to_dict(), "wrote_file": d.wrote_file, "commit": d.commit,
                     "branch_deleted": d.branch_deleted, "messages": d.messages})
        return 0
    echo(headline)
    if d.commit:
        echo(f"  commit {d.commit[:12]}")
    for m in d.messages:
        echo(f"  {m}")
    return 0
