"""``skillopt-sleep mine`` and ``skillopt-sleep tasks [disable|enable|export]``.

Registered through sleep.commands like every subcommand. Heavy modules (scikit-learn, scipy)
load inside the handlers, so other subcommands stay quick to start. User errors
(no index, a project without sessions, an unknown task id, a bad option) print
one line saying what to do and exit 2.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from sleep import paths
from sleep.commands import Commands
from sleep.terminal_text import echo, json_text

commands = Commands()
register = commands.register


class UserError(Exception):
    """A mistake the person can fix; the message says how (exit 2)."""


def _scope_args(p: argparse.ArgumentParser, verb: str) -> None:
    scope = p.add_mutually_exclusive_group()
    scope.add_argument("--project", metavar="PATH",
                       help=f"{verb} the sessions of PATH and below (default: the current directory)")
    scope.add_argument("--all-projects", action="store_true", help=f"{verb} every project")


def _project(args: argparse.Namespace) -> str | None:
    if getattr(args, "all_projects", False):
        return None
    return os.path.normpath(os.path.abspath(os.path.expanduser(args.project or os.getcwd())))


def _fail(message: str) -> int:
    echo(f"skillopt-sleep: {message}", file=sys.stderr)
    return 2


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


# ----- mine ------------------------------------------------------------------------------

def _mine_args(p: argparse.ArgumentParser) -> None:
    _scope_args(p, "mine")
    p.add_argument("--min-support", type=_positive, default=2, metavar="N",
                   help="distinct sessions a task must be seen in (default 2)")
    p.add_argument("--include-scripted", action="store_true",
                   help="also mine your own automation (claude -p / SDK and codex exec sessions)")
    p.add_argument("--optimizer", metavar="BACKEND[:MODEL]",
                   help="let this model confirm borderline tasks and refine judges (e.g. claude-code, "
                        "openai:gpt-4.1-mini); without it the deterministic path alone is used")
    p.add_argument("--config", metavar="FILE",
                   help="a skillopt config whose model section names the optimizer role")
    p.add_argument("--max-model-calls", type=_positive, default=20, metavar="N",
                   help="at most N optimizer calls per run (default 20)")
    p.add_argument("--wait", type=float, default=0.0, metavar="SECONDS",
                   help="if another mining run holds the index, wait up to SECONDS")
    p.add_argument("--embedder", metavar="CHOICE",
                   help="how prompts are compared: auto, lexical, e5 or wordllama (default: sleep.mine_embedder "
                        "of your sleep.yaml, else auto: embeddings when the `embed` extra is installed)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")


def _embedder(args: argparse.Namespace) -> Any:
    from sleep.mine.embed import resolve, validate_choice

    choice = args.embedder
    if choice is None:
        from skillopt_core import ConfigError
        from sleep.cycle.config import load_night_config
        try:
            choice = load_night_config().sleep.mine_embedder
        except ConfigError as exc:
            raise UserError(str(exc)) from exc
    try:
        return resolve(validate_choice(choice))
    except (ValueError, ImportError) as exc:
        raise UserError(f"--embedder / sleep.mine_embedder: {exc}") from exc


def _assistant(args: argparse.Namespace) -> Any:
    if not args.optimizer and not args.config:
        return None
    from skillopt_core import BackendError, BackendSpec, ConfigError, create_backend, load_settings
    from sleep.mine.assist import Assistant

    try:
        options: dict[str, Any] = {}
        name, model = None, None
        if args.config:
            settings = load_settings(args.config)
            options = settings.model.model_dump()
            name, model = settings.model.backend_for("optimizer"), settings.model.model_for("optimizer")
        if args.optimizer:
            name, _, given = args.optimizer.partition(":")
            model = given or model
        backend = create_backend(BackendSpec(name=name or "auto", model=model, role="optimizer", options=options))
    except (BackendError, ConfigError, OSError, ValueError) as exc:
        raise UserError(f"cannot set up the optimizer: {exc}") from None
    return Assistant(backend, max_calls=args.max_model_calls)


def _check_sessions(project: str | None) -> None:
    from sleep.index import Index
    from sleep.mine.select import scope_clause

    if not paths.index_path().exists():
        raise UserError(f"no index yet at {paths.index_path()}; run `skillopt-sleep harvest` first.")
    with Index.open() as index:
        total = index.session_count()
        where, params = scope_clause(project)
        here = index.conn.execute(f"SELECT COUNT(*) FROM sessions WHERE {where}", params).fetchone()[0]
    if total == 0:
        raise UserError("the index holds no sessions; run `skillopt-sleep harvest` first.")
    if here == 0:
        raise UserError(f"no harvested sessions for {project} ({total:,} in other projects); run "
                        "`skillopt-sleep harvest` there, or use --project PATH / --all-projects.")


@commands.command("mine", "find the tasks you repeat across sessions and store them as replayable, judged tasks",
         _mine_args)
def cmd_mine(args: argparse.Namespace) -> int:
    project = _project(args)
    try:
        _check_sessions(project)
        assistant = _assistant(args)
        embedder = _embedder(args)
    except UserError as exc:
        return _fail(str(exc))
    from sleep.mine.miner import MineOptions, mine

    report = mine(MineOptions(project=project, min_support=args.min_support,
                              include_scripted=args.include_scripted, assistant=assistant, wait=args.wait,
                              embedder=embedder))
    if args.json:
        print(json.dumps(report.to_dict(), indent=2, sort_keys=True))
        return 0
    echo(format_mine_report(report))
    return 0


def format_mine_report(r: Any) -> str:
    """The human summary of a mining run (counts only, never prompt text)."""
    if r.nothing_new:
        return (f"Mine ({r.scope}): nothing new since the last run; {r.tasks_total:,} tasks "
                f"({r.elapsed_s:.2f} s). See `skillopt-sleep tasks`.")
    lines = [f"Mine ({r.scope}): {r.sessions_read:,} sessions read, {r.prompts_seen:,} prompts, "
             f"{r.candidates:,} task candidates, {r.elapsed_s:.2f} s",
             f"  tasks: {r.tasks_new:,} new, {r.tasks_updated:,} updated, {r.tasks_total:,} in scope; "
             f"{r.members_added:,} prompts joined a task",
             f"  compared by: {getattr(r, 'method', 'lexical')}"]
    dropped = ", ".join(f"{k} {v:,}" for k, v in sorted(r.dropped.items())) or "nothing"
    lines.append(f"  dropped prompts: {dropped}")
    excluded = ", ".join(f"{k} {v:,}" for k, v in sorted(r.sessions_excluded.items())) or "none"
    lines.append(f"  sessions left out: {excluded}")
    if r.model:
        m = r.model
        lines.append(f"  optimizer {m['backend']}: {m['calls']} calls (budget {m['budget']}), "
                     f"{m['cache_hits']} cached, {m['splits']} groups split, {m['dropped_rules']} rules dropped, "
                     f"{m['rejected_replies']} replies rejected")
        lines += [f"    error: {e}" for e in m.get("errors", [])]
    return "\n".join(lines)


# ----- tasks -----------------------------------------------------------------------------

def _tasks_args(p: argparse.ArgumentParser) -> None:
    _scope_args(p, "show tasks of")
    p.add_argument("--json", action="store_true", help="print the tasks as a JSON list")
    sub = p.add_subparsers(dest="action", metavar="ACTION")
    for name, text in (("show", "show one task: its intent, example prompt, members, hosts and judge"),
                       ("disable", "never replay this task"), ("enable", "replay this task again")):
        a = sub.add_parser(name, help=text, description=text)
        a.add_argument("task_id", metavar="TASK_ID", help="a task id, or the start of one (as `tasks` lists them)")
    e = sub.add_parser("export", help="write enabled tasks as a jsonl_tasks file for skillopt",
                       description="write the enabled tasks of one project as a jsonl_tasks file")
    e.add_argument("--out", required=True, metavar="FILE", help="where to write the JSONL file")
    e.add_argument("--project", dest="export_project", metavar="PATH",
                   help="the project directory (default: the current directory)")


@commands.command("tasks", "show the recurring tasks found by `mine`; disable / enable one; export them", _tasks_args)
def cmd_tasks(args: argparse.Namespace) -> int:
    from sleep.index import Index
    from sleep.mine import store

    action = getattr(args, "action", None)
    if action == "export":
        from sleep.mine.export import export_tasks_jsonl

        where = args.export_project or args.project or os.getcwd()
        project = os.path.normpath(os.path.abspath(os.path.expanduser(where)))
        try:
            result = export_tasks_jsonl(project, args.out)
        except OSError as exc:
            return _fail(f"cannot write {args.out}: {exc.strerror or exc}")
        echo(f"Wrote {result.tasks} tasks of {project} to {result.path}"
              + (f" ({result.skipped_disabled} disabled left out)" if result.skipped_disabled else ""))
        return 0
    if not paths.index_path().exists():
        if action:
            return _fail(f"no task {args.task_id!r}: there is no index yet; run `skillopt-sleep harvest` "
                         "and `skillopt-sleep mine` first.")
        print("[]" if args.json else "No tasks yet: run `skillopt-sleep harvest`, then `skillopt-sleep mine`.")
        return 0
    with Index.open() as index:
        if action in ("show", "disable", "enable"):
            ids = store.find_task_ids(index.conn, args.task_id)
            if len(ids) != 1:
                return _fail(_no_single_task(index.conn, args.task_id, ids))
            tid = ids[0]
            if action == "show":
                task = store.load_tasks(index.conn, None, with_members=True)
                echo(format_task(next(t for t in task if t.id == tid)))
                return 0
            with index.transaction():
                store.set_enabled(index.conn, tid, action == "enable")
            print(f"Task {tid} {action}d.")
            return 0
        tasks = store.load_tasks(index.conn, _project(args))
    if args.json:
        print(json_text(json.dumps([t.to_dict() for t in tasks], indent=2, ensure_ascii=False)))
        return 0
    if not tasks:
        echo("No tasks found" + (f" for {_project(args)}" if _project(args) else "")
              + ": run `skillopt-sleep mine` (tasks need the same work in at least 2 sessions).")
        return 0
    echo(format_tasks(tasks))
    return 0


def _no_single_task(conn: Any, prefix: str, ids: list[str]) -> str:
    from sleep.mine import store

    if not ids:
        return f"no task {prefix!r}; `skillopt-sleep tasks --all-projects` lists the ids."
    intents = {t.id: t.intent for t in store.load_tasks(conn, None, with_members=False)}
    shown = "\n".join(f"  {i}  {intents.get(i, '')}" for i in ids[:10])
    more = f"\n  ... and {len(ids) - 10} more" if len(ids) > 10 else ""
    return f"{prefix!r} matches {len(ids)} tasks; give more of the id:\n{shown}{more}"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def format_task(t: Any) -> str:
    """One task in words: what it asks, how often and where it was seen, how it is judged."""
    sessions = len({(h, s) for h, s, _ in t.members}) or t.support
    lines = [f"{t.id}  {'enabled' if t.enabled else 'DISABLED'}  {t.project}",
             f"  intent:  {t.intent}",
             f"  seen:    {_plural(len(t.members), 'prompt')} in {_plural(sessions, 'session')}, "
             f"{(t.first_seen or '?')[:10]} .. {(t.last_seen or '?')[:10]}",
             f"  hosts:   {', '.join(t.hosts)}",
             f"  judge:   {t.judge_summary}",
             "  prompt:"]
    lines += [f"    {line}" for line in t.prompt.splitlines()[:12]]
    return "\n".join(lines)


def format_tasks(tasks: list[Any]) -> str:
    lines: list[str] = []
    project = None
    for t in tasks:
        if t.project != project:
            project = t.project
            lines.append(f"{project}")
        seen = f"{(t.first_seen or '?')[:10]} .. {(t.last_seen or '?')[:10]}"
        state = "enabled" if t.enabled else "DISABLED"
        members = _plural(len(t.members), "prompt") + ", " if t.members else ""
        lines.append(f"  {t.id}  {state:<8}  support {t.support:<3}  {members}{', '.join(t.hosts)}  {seen}")
        lines.append(f"      {t.intent}")
        lines.append(f"      judge: {t.judge_summary}")
    return "\n".join(lines)
