"""``skillopt-sleep run``, ``history`` and ``demo``.

Exit codes of ``run``: 0 the night finished (whatever it decided: staged,
no improvement, too few tasks, idle, dry run), 1 the night or one of its
skills failed (recorded with its error; a dry run too), 2 bad input (nothing
recorded), 3 another night of the project is running.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from sleep.commands import Commands
from sleep.cycle.verdict import all_corrections, describe_corrections
from sleep.lock import LockBusy

commands = Commands()
register = commands.register


def _run_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--project", type=Path, default=None,
                   help="the project's folder (default: the current directory); a subfolder means its repository")
    p.add_argument("--dry-run", action="store_true", help="everything except staging the proposal")
    p.add_argument("--skill", type=Path, metavar="PATH",
                   help="the skill file to evolve: a SKILL.md in a project or user skill folder "
                        "(default: chosen from the sessions and the skills' descriptions)")
    p.add_argument("--new-skill", action="store_true",
                   help="confirm a --skill path that is no existing skill in a skill folder (a new file to create, "
                        "or a Markdown file elsewhere)")
    p.add_argument("--backend", help="one backend for every role (e.g. local, claude-code, scripted)")
    p.add_argument("--config", type=Path, metavar="FILE",
                   help="a night config file (default: $SKILLOPT_HOME/sleep.yaml if present)")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="SECTION.KEY=VALUE",
                   help="override one setting, e.g. --set sleep.min_tasks=2 or --set budget.max_calls=100")
    p.add_argument("--wait", type=float, default=0.0, metavar="SECONDS",
                   help="seconds to wait for a running night of the project (default 0: exit 3 at once)")
    p.add_argument("--json", action="store_true", help="print the night's record as JSON (progress goes to stderr)")


@commands.command("run", "one night for a project: harvest, mine, replay its recurring tasks, gate, stage a proposal",
                  _run_args)
def cmd_run(args: argparse.Namespace) -> int:
    from skillopt_core import ConfigError, ConsoleRenderer, plain_console
    from sleep.cycle.advice import night_subscriber
    from sleep.cycle.night import NightError, NightOptions, run_night
    from sleep.cycle.progress import PlainProgress
    from sleep.terminal_text import safe_console

    # The night's lines quote skills, tasks and replies verbatim: their control sequences go.
    console = safe_console(plain_console(stderr=args.json))
    opts = NightOptions(project=args.project or Path.cwd(), dry_run=args.dry_run, skill=args.skill,
                        new_skill=args.new_skill,
                        backend=args.backend, config=args.config, overrides=list(args.overrides), wait=args.wait)
    try:
        subscribers = [night_subscriber(ConsoleRenderer(console))]
        if not console.is_terminal:  # a log (the scheduler's): plain progress lines with estimates
            subscribers.append(PlainProgress(console.print))
        night = run_night(opts, say=console.print, subscribers=subscribers)
    except (NightError, ConfigError) as exc:
        print(f"skillopt-sleep: {exc}", file=sys.stderr)
        return 2
    except LockBusy as exc:
        print(f"skillopt-sleep: {exc}", file=sys.stderr)
        return 3
    except KeyboardInterrupt:
        print("skillopt-sleep: the night was interrupted and recorded as such; nothing was staged.", file=sys.stderr)
        return 130
    if args.json:
        print(json.dumps(night.to_dict(), indent=2, default=str))
    else:
        console.print(summary_text(night))
    return run_exit_code(night)


def run_exit_code(night) -> int:
    """1 when the night failed or any of its skills did (the others' outcome does not hide it), else 0."""
    return 1 if night.outcome == "failed" or any(p.get("outcome") == "failed" for p in night.skills) else 0


def summary_text(night) -> str:
    """The night's closing summary."""
    lines = [f"Night {night.id}: {night.outcome} — {night.reason}"]
    if night.tasks:
        lines.append(f"  tasks: {len(night.tasks.get('train', []))} train / {len(night.tasks.get('val', []))} val "
                     f"of {night.tasks.get('total')}")
    if night.scores:
        b, c = night.scores.get("baseline"), night.scores.get("candidate")
        lines.append(f"  val: {_f(b)} → {_f(c)} (gate {night.scores.get('policy')})")
    said = describe_corrections(all_corrections(night))  # every skill's, so the counts add up over the night
    if said:
        lines.append(f"  your corrections: {said}")
    lines += [f"  judge: {s}" for s in judge_sentences(night) if s not in night.reason]
    if night.proposal:
        lines.append(f"  proposal {night.proposal['id']}: branch {night.proposal['branch']} "
                     f"(`skillopt-sleep show {night.proposal['id']}`)")
    if len(night.skills) > 1:
        lines.append(f"  {len(night.skills)} skills this night:")
        lines += [f"    {line}" for line in skill_lines(night.skills)]
        trained = sum(1 for p in night.skills if (p.get("usage") or {}).get("model_calls"))
        lines.append(f"  {trained} of {len(night.skills)} skills made model calls (an idle or too-small skill costs "
                     "none); the night costs the sum of its skills' calls, as the same skills' single-skill nights "
                     "would")
        failed = [p["name"] for p in night.skills if p.get("outcome") == "failed"]
        if failed:
            lines.append(f"  {len(failed)} of {len(night.skills)} skills failed ({', '.join(failed)}): the night "
                         "exits 1")
    pre = getattr(night, "preflight", None) or {}
    if pre:
        lines.append(f"  preflight estimate: ≈ {pre.get('calls', 0)} model calls, ≈ ${pre.get('usd', 0.0):.2f}"
                     + (f" + unpriced {', '.join(pre['unpriced_roles'])}" if pre.get("unpriced_roles") else ""))
        lines += [f"  warning: {w}" for w in pre.get("warnings", [])]
    u = night.usage or {}
    lines.append(f"  model calls {u.get('model_calls', 0)}, tokens {u.get('tokens', 0)}, "
                 f"cost ${u.get('cost_usd', 0.0):.2f}, wall {night.wall_s:.1f} s")
    return "\n".join(lines)


def judge_sentences(night, left_out_only: bool = False) -> list[str]:
    """What the model judge probe of each skill's part found (:mod:`sleep.cycle.judgeprobe`), one line
    each, the same line once; ``left_out_only``: only where it left the judge out of the gate."""
    found = [p.get("judge_probe") or {} for p in night.skills] or [getattr(night, "judge_probe", None) or {}]
    said = [f["sentence"] for f in found
            if f.get("sentence") and (not left_out_only or f.get("verdict") == "left_out")]
    return list(dict.fromkeys(said))


def _f(value) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _history_args(p: argparse.ArgumentParser) -> None:
    scope = p.add_mutually_exclusive_group()
    scope.add_argument("--project", type=Path, metavar="PATH",
                       help="the nights of the project PATH is in (default: the current directory's project)")
    scope.add_argument("--all-projects", action="store_true", help="the nights of every project")
    p.add_argument("--limit", type=int, default=20, metavar="N", help="at most the N latest nights (default 20)")
    p.add_argument("--json", action="store_true", help="print the nights as a JSON list")


@commands.command("history", "past nights of the current project: when, tasks, decision and why, what became of "
                  "the proposal, cost", _history_args)
def cmd_history(args: argparse.Namespace) -> int:
    from sleep import nightstore, paths
    from sleep.index import Index
    from sleep.project import listing_project
    from sleep.terminal_text import echo

    nights, project, others = [], None, 0
    if paths.index_path().exists():
        with Index.open() as index:
            nightstore.settle_dead(index)  # a night whose process is gone shows as interrupted at once
            if not args.all_projects:
                project = listing_project(args.project or Path.cwd(), index)
            nights = nightstore.nights(index, limit=max(1, args.limit), within=str(project) if project else None)
            others = nightstore.count(index) if not nights and project else 0
    if args.json:
        print(json.dumps([n.to_dict() for n in nights], indent=2, default=str))
        return 0
    if not nights:
        where = f" for {project}" if project else ""
        hint = f"; `--all-projects` lists {others} of other projects" if others else \
            ". Run one with `skillopt-sleep run` in a project folder"
        echo(f"No nights yet{where}{hint}.")
        return 0
    fates = _proposal_fates(sorted({p["id"] for n in nights
                                    for p in [n.proposal, *(s.get("proposal") for s in n.skills)] if p}))
    if project:
        echo(f"Nights of {project}, newest first:")
    echo("\n".join(history_lines(nights, fates, show_project=args.all_projects)))
    return 0


HISTORY_HEADER = ("STARTED (UTC)", "OUTCOME", "TASKS", "VAL", "PROPOSAL", "CALLS", "TOKENS", "COST")
HISTORY_WIDTHS = (16, 16, 6, 13, 18, 6, 8, 7)


def history_lines(nights: list, fates: dict[str, str], show_project: bool = False) -> list[str]:
    """The history table: a header row (TASKS is train/val, VAL the starting → best val score,
    PROPOSAL the proposal id and what became of it), one row per night, and under a night that
    staged nothing one line saying why."""
    def row(cells) -> str:
        return "  ".join(f"{c:<{w}}" for c, w in zip(cells, HISTORY_WIDTHS, strict=False)).rstrip() + \
            (f"  {cells[-1]}" if show_project else "")

    lines = [row((*HISTORY_HEADER, "PROJECT"))]
    for n in nights:
        tasks = f"{len(n.tasks.get('train', []))}/{len(n.tasks.get('val', []))}" if n.tasks else "-"
        scores = f"{_f(n.scores.get('baseline'))}→{_f(n.scores.get('candidate'))}" if n.scores else "-"
        proposal = f"{n.proposal['id']} {fates.get(n.proposal['id'], 'gone')}" if n.proposal else "-"
        u = n.usage or {}
        cost = f"${u.get('cost_usd', 0.0):.2f}" if u.get("cost_usd") else "$0"
        lines.append(row((n.started_at[:16].replace("T", " "), n.outcome, tasks, scores, proposal,
                          str(u.get("model_calls", 0)), str(u.get("tokens", 0)), cost, n.project)))
        if n.outcome not in ("staged", "running") and n.reason:
            lines.append(f"    why: {short_reason(n.reason)}")
        lines += [f"    judge: {s}" for s in judge_sentences(n, left_out_only=True)
                  if s not in n.reason]
        if len(n.skills) > 1:
            lines += ["    " + line for line in skill_lines(n.skills, fates)]
    return lines


def short_reason(reason: str, limit: int = 160) -> str:
    """A night's reason without its advice (the part from "Next:"), cut to ``limit`` characters."""
    text = reason.split(" Next:")[0].strip()
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "…"


def _proposal_fates(ids: list[str]) -> dict[str, str]:
    """What became of each proposal: pending, stale, adopted, rejected or undone (from the index)."""
    if not ids:
        return {}
    from sleep.index import Index
    from sleep.proposals import store as proposal_store
    from sleep.proposals.review import effective

    fates = {}
    with Index.open() as index:
        for pid in ids:
            try:
                fates[pid] = effective(proposal_store.get(index, pid).proposal).state
            except Exception:
                continue
    return fates


def skill_lines(parts: list[dict], fates: dict[str, str] | None = None) -> list[str]:
    """One line per skill of a night, side by side: outcome, val, proposal (and, with ``fates``,
    what became of it), calls."""
    out = []
    for p in parts:
        scores = p.get("scores") or {}
        val = f"{_f(scores.get('baseline'))}→{_f(scores.get('candidate'))}" if scores else "-"
        prop = (p.get("proposal") or {}).get("id", "-")
        if fates is not None and prop != "-":
            prop = f"{prop} {fates.get(prop, 'gone')}"
        lesson = " (a lesson from another host)" if p.get("lesson_from") else ""
        out.append(f"{p['name']} ({p['host']}): {p['outcome']:<16} val {val:<13} proposal {prop:<9} "
                   f"calls {(p.get('usage') or {}).get('model_calls', 0)}{lesson}")
    return out


def _demo_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--keep", type=Path, metavar="DIR", help="keep the scratch project, home and data in DIR")
    p.add_argument("--backend", default="local", help="backend for every role (default: the embedded local model)")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="SECTION.KEY=VALUE",
                   help="override a night setting")


@commands.command("demo", "a whole night offline on example sessions, in a scratch directory, ending in the morning "
                  "review", _demo_args)
def cmd_demo(args: argparse.Namespace) -> int:
    from sleep.cycle.demo import run_demo

    return run_demo(args.keep, args.backend, list(args.overrides))


def files_read(config) -> list[str]:
    """The files a night config was read from, in order: the packaged defaults, then ``local.yaml``
    when every role runs on the embedded model (it fills only the keys no file or flag of yours
    set), then the person's file."""
    from sleep.cycle.config import LOCAL_CONFIG

    files = list(config.sources)
    if str(LOCAL_CONFIG) in config.origin.values():
        files.insert(1, f"{LOCAL_CONFIG} (the embedded model's profile: only keys you did not set)")
    return files


def _config_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", type=Path, metavar="FILE",
                   help="a night config file (default: $SKILLOPT_HOME/sleep.yaml if present)")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="SECTION.KEY=VALUE",
                   help="an override, as `run` takes it, to see its effect")
    p.add_argument("--changed", action="store_true", help="only the keys a file or flag set, not the defaults")
    p.add_argument("--json", action="store_true", help="print a JSON list of {key, value, from}")


@commands.command("config", "the effective night settings and which file or flag each one came from", _config_args)
def cmd_config(args: argparse.Namespace) -> int:
    from skillopt_core import ConfigError
    from sleep.cycle.config import DEFAULT_CONFIG, LOCAL_CONFIG, effective_settings, load_night_config

    try:
        config = load_night_config(args.config, list(args.overrides))
    except ConfigError as exc:
        print(f"skillopt-sleep config: {exc}", file=sys.stderr)
        return 2
    from skillopt_core.run.config import PACKAGED_CONFIGS

    core_default = str(PACKAGED_CONFIGS / "_base_")
    rows = []
    for key, value, origin in effective_settings(config):
        if origin == str(DEFAULT_CONFIG):
            origin = "night default (sleep/configs/default.yaml)"
        elif origin == str(LOCAL_CONFIG):
            origin = "night default on the local model (sleep/configs/local.yaml)"
        elif origin == "default" or origin.startswith(core_default):
            origin = "core default"
        if args.changed and (origin == "core default" or origin.startswith("night default")):
            continue
        rows.append((key, value, origin))
    if args.json:
        print(json.dumps([{"key": k, "value": v, "from": o} for k, v, o in rows], indent=2, default=str))
        return 0
    print("Files read, later ones win: " + ", ".join(files_read(config)))
    width = max((len(k) for k, _, _ in rows), default=10)
    for key, value, origin in rows:
        print(f"  {key:<{width}}  {json.dumps(value, default=str):<22}  {origin}")
    return 0
