"""One night for one project: harvest → mine → tasks → replay through the core
trainer → gate → proposal branch, recorded in the index.

Each skill the project's sessions use gets its own part of the night, most used
first, with a fair share of the budget (:mod:`sleep.cycle.multiskill`; the
record's ``skills`` lists them, its single-skill fields are the first staged
one's). There is no second optimisation loop here: each part hands its tasks,
its skill and the person's corrections to the core's in-process API
(:func:`skillopt_core.prepare_training`) and takes its result in memory
(:class:`skillopt_core.run.api.TrainingResult`: no run file is read on the way
from the trainer to the proposal branch). The run
directory and the evidence of every model call live in the data directory,
never in the project. One night per project at a time (a lock). The record is
saved at each stage, with its run directory before the replay starts and its
spend after each model call, so a night that dies keeps what it did and
spent; its ``running`` record shows as ``interrupted`` as soon as its lock is
free (:func:`sleep.nightstore.settle_dead`), and it leaves no partial branch
(staging is journalled). A full disk or an unwritable data directory stops the
night with :class:`sleep.storage.StorageError` (recorded when the index can
still be written).
"""

from __future__ import annotations

import asyncio
import errno
import hashlib
import json
import secrets
import sqlite3
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, cast

from skillopt_core import Task, events, prepare_training
from skillopt_core.run.api import TrainingResult
from skillopt_core.timestamps import utc_now
from sleep import nightstore, paths
from sleep.cycle import lifecycle, multiskill, package, triggers
from sleep.cycle.backends import CLI_BACKENDS, build_night_backends, replay_host, target_backend
from sleep.cycle.config import NightConfig, load_night_config
from sleep.cycle.corrections import correction_edits, with_own_words
from sleep.cycle.preflight import check_night_settings
from sleep.cycle.skills import SkillChoice, SkillPathError, check_skill_path, skill_hosts
from sleep.cycle.spend import SpendMeter
from sleep.cycle.split import night_split
from sleep.cycle.verdict import correction_outcomes, nothing_staged
from sleep.index import Index
from sleep.lock import FileLock
from sleep.memory.placement import place
from sleep.memory.plan import MemoryPlan
from sleep.memory.plan import notes as memory_notes
from sleep.nightstore import NightCorrections, NightProposal, NightRecord, NightSkill, NightUsage
from sleep.project import SeveralProjects, repository_root, resolve_project
from sleep.proposals.errors import DuplicateProposal
from sleep.redact import Redactor
from sleep.redact import known as known_secrets
from sleep.replay.checkout import replay_checkout
from sleep.replay.egress import EgressProxy
from sleep.replay.instances import MIN_MEANINGFUL_VAL, task_items
from sleep.replay.modes import as_text_judge, choose_mode
from sleep.replay.sandbox import cleanup_homes
from sleep.rule_text import Style
from sleep.storage import StorageError, explain_os, explain_sqlite, is_disk_full

Say = Callable[[str], None]


class NightError(RuntimeError):
    """Bad input for a night (the message says what to do); nothing was recorded."""


@dataclass
class NightOptions:
    project: Path
    dry_run: bool = False
    skill: Path | None = None
    new_skill: bool = False  # --new-skill: the person confirms a --skill path that is no existing skill
    backend: str | None = None  # every role
    config: Path | None = None
    overrides: list[str] = field(default_factory=list)
    wait: float = 0.0


# A status or history probing the lock of a night recorded "running" holds it for microseconds;
# a night starting in that instant waits this long instead of reporting another night.
LOCK_GRACE_S = 0.25


def night_lock(project: Path) -> FileLock:
    return FileLock(nightstore.night_lock_path(str(project)), what=f"night for {project}")


def new_night_id() -> str:
    return datetime.now(timezone.utc).strftime("n%Y%m%d-%H%M%S-") + secrets.token_hex(3)


def run_night(opts: NightOptions, say: Say = print, subscribers: Iterable[events.Subscriber] = ()) -> NightRecord:
    """Run one night (see the module docstring). Raises :class:`NightError` for
    bad input and :class:`sleep.lock.LockBusy` when a night of the project runs."""
    folder = opts.project.expanduser().resolve()
    if not folder.is_dir():
        raise NightError(f"{folder} is not a directory; pass --project with the folder you work in.")
    overrides = list(opts.overrides) + ([f"model.backend={opts.backend}"] if opts.backend else [])
    config = load_night_config(opts.config, overrides)
    check_night_settings(config.core, opts.backend)  # before the harvest: a backend mistake costs nothing
    project = _project_of(folder, opts, say)
    if opts.skill is not None:
        try:
            opts = replace(opts, skill=check_skill_path(opts.skill, project, opts.new_skill))
        except SkillPathError as exc:
            raise NightError(str(exc)) from None
    lock = night_lock(project).acquire(max(opts.wait, LOCK_GRACE_S))
    try:
        with Index.open() as index:
            if nightstore.mark_interrupted(index, str(project)):
                say("[Night] an earlier night of this project was interrupted; it is recorded as such")
            night = NightRecord(new_night_id(), str(project), utc_now(), dry_run=opts.dry_run)
            nightstore.save(index, night)
        started = time.perf_counter()
        try:
            _stages(night, project, config, opts, say, list(subscribers))
        except Exception as exc:
            storage = _storage_problem(exc)
            night.outcome = "failed"
            night.reason = storage or f"{type(exc).__name__}: {exc}"
            say(f"[Night] failed during the {night.stage} stage: {storage or exc}")
            if storage:
                _finish_if_possible(night, started)
                raise StorageError(f"the night stopped during its {night.stage} stage: {storage}") from None
        except BaseException:  # Ctrl-C, SystemExit: record the stop, then let it through
            night.outcome, night.reason = "interrupted", f"stopped during the {night.stage} stage; nothing was staged"
            _finish(night, started)
            raise
        _finish(night, started)
        return night
    finally:
        lock.release()


def _project_of(folder: Path, opts: NightOptions, say: Say) -> Path:
    """The project the night is for (:func:`sleep.project.resolve_project`). Outside a git
    repository the sessions decide, so the folder's transcripts are harvested first."""
    if repository_root(folder) is None:
        from sleep.harvest.harvester import HarvestOptions, harvest
        from sleep.offsets import STATUS_PEEK

        harvest(HarvestOptions(project=str(folder), wait=max(opts.wait, 60.0)))
        with Index.open() as index:
            dirs = [row[0] for row in index.conn.execute("SELECT project_dir FROM sessions WHERE is_subagent = 0")]
            dirs += [c.project_dir for c in index.cursors().values() if c.status == STATUS_PEEK]
    else:
        dirs = []
    try:
        choice = resolve_project(folder, dirs)
    except SeveralProjects as exc:
        raise NightError(str(exc)) from None
    if choice.moved:
        say(f"[Night] project {choice.path} ({choice.why})")
    return choice.path


def _storage_problem(exc: BaseException) -> str | None:
    """The one-line explanation when ``exc`` is a full disk or an unwritable data directory."""
    if isinstance(exc, StorageError):
        return str(exc)
    if isinstance(exc, sqlite3.Error) and (is_disk_full(exc) or "readonly" in str(exc)):
        return explain_sqlite(exc, paths.index_path())
    if isinstance(exc, OSError) and (is_disk_full(exc) or exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS)):
        return explain_os(exc, paths.data_dir())
    return None


def _finish_if_possible(night: NightRecord, started: float) -> None:
    """Record the failed night if the index can still be written; else its record stays
    ``running`` and shows as interrupted once this process is gone (its spend is kept)."""
    try:
        _finish(night, started)
    except (StorageError, sqlite3.Error, OSError):
        pass


def _finish(night: NightRecord, started: float) -> None:
    night.finished_at = utc_now()
    night.wall_s = round(time.perf_counter() - started, 3)
    with Index.open() as index:
        nightstore.save(index, night)


def _stage(night: NightRecord, name: str) -> None:
    night.stage = name
    with Index.open() as index:
        nightstore.save(index, night)


def _stages(night: NightRecord, project: Path, config: NightConfig, opts: NightOptions, say: Say,
            subscribers: list[events.Subscriber]) -> None:
    from sleep.harvest.harvester import HarvestOptions, harvest
    from sleep.mine import MineOptions, mine

    _stage(night, "harvest")
    report = harvest(HarvestOptions(project=str(project), wait=max(opts.wait, 60.0)))
    night.harvest = {"sessions_new": report.sessions_new, "sessions_updated": report.sessions_updated}
    say(f"[Harvest] {report.sessions_new} new and {report.sessions_updated} updated sessions")

    _stage(night, "mine")
    from sleep.mine.embed import resolve
    mined = mine(MineOptions(project=str(project), min_support=config.sleep.min_support, wait=max(opts.wait, 60.0),
                             embedder=resolve(config.sleep.mine_embedder)))
    night.mine = {"tasks_new": mined.tasks_new, "tasks_updated": mined.tasks_updated, "tasks_total": mined.tasks_total}
    say(f"[Mine] {mined.tasks_total} recurring tasks ({mined.tasks_new} new, {mined.tasks_updated} updated)")

    _stage(night, "tasks")
    _every_skill(night, project, config, opts, say, subscribers)


def _every_skill(night: NightRecord, project: Path, config: NightConfig, opts: NightOptions, say: Say,
                 subscribers: list[events.Subscriber]) -> None:
    """Each skill of the night in turn, most used first, with its fair share of the budget
    (:mod:`sleep.cycle.multiskill`); then the night's record over them."""
    records, members, sessions = _load(project)
    queue = multiskill.skill_groups(project, records, members, sessions, opts.skill,
                                    config.sleep.min_tasks if config.sleep.paired.per_cluster else 0)
    memory = MemoryPlan(project, records, members, config.sleep)  # lessons about the whole repository
    with Index.open() as index:
        before = multiskill.previous_fingerprints(n for n in nightstore.nights(index, str(project), limit=20)
                                                  if not n.dry_run)
    hosts = multiskill.hosts_of(sessions)
    taken = {g.choice.path for g in queue}
    if len(queue) > 1:
        say(f"[Tasks] {len(queue)} skills this night, most used first: "
            + ", ".join(f"{g.choice.name} ({g.choice.host}, {len(g.records)} tasks)" for g in queue))
    done: list[dict[str, Any]] = []
    used = {"model_calls": 0, "tokens": 0, "cost_usd": 0.0}
    i = 0
    while i < len(queue):
        group = queue[i]
        left = len(queue) - i
        core = config.core.model_copy(deep=True)
        core.budget = core.budget.model_copy(update={
            "max_calls": multiskill.budget_share(config.core.budget.max_calls, used["model_calls"], left),
            "max_tokens": multiskill.budget_share(config.core.budget.max_tokens, used["tokens"], left),
            "max_usd": multiskill.usd_share(config.core.budget.max_usd, used["cost_usd"], left)})
        part = NightRecord(night.id, night.project, night.started_at, dry_run=night.dry_run)
        run_id = night.id if i == 0 else f"{night.id}-{i}"

        def persist(stage: str | None = None, part: NightRecord = part, group=group) -> None:
            night.skills = done + [multiskill.part_summary(group.choice, part, group.uses, group.lesson_from, group)]
            night.usage = multiskill.total_usage(night.skills)
            night.run_dir = night.run_dir or part.run_dir  # a killed night keeps its (first) run directory
            if stage:
                _stage(night, stage)
            else:
                with Index.open() as index:
                    nightstore.save(index, night)

        spent = multiskill.budget_spent(config.core.budget, used)
        if spent:
            part.skill = {"path": str(group.choice.path), "name": group.choice.name}
            part.outcome, part.reason = "no_improvement", spent
            say(f"[Night] {group.choice.name}: {spent}")
        else:
            try:
                if memory.enabled and opts.skill is None and group.edits is None and group.document is None:
                    group.edits, more = memory.split(group, _edits(group, members, config, Style.of(
                        group.choice.seed_text())), _evidence(group, members, config), say)
                    queue.extend(more)
                memory.started(group)
                _one_skill(part, group, project, config, config.model_copy(update={"core": core}), run_id, before,
                           say, subscribers, persist, members)
            except SkillPathError as exc:  # one unreadable skill file does not stop the others
                part.outcome, part.reason = "failed", f"{exc}; nothing was trained or staged for it"
                say(f"[Night] {group.choice.name}: {part.reason}")
        done.append(multiskill.part_summary(group.choice, part, group.uses, group.lesson_from, group))
        used["model_calls"] += part.usage.get("model_calls", 0)
        used["tokens"] += part.usage.get("tokens", 0)
        used["cost_usd"] += part.usage.get("cost_usd", 0.0)
        accepted = part.corrections.get("kept") or []
        if (part.outcome in ("staged", "would_stage") and accepted and group.lesson_from is None
                and group.document is not None):
            for offer in memory.offers(group, accepted, taken):
                say(f"[Lesson] {offer.choice.why}: {offer.choice.path}")
                queue.append(offer)
        elif (part.outcome in ("staged", "would_stage") and accepted and group.lesson_from is None
                and len(hosts) > 1 and opts.skill is None):
            style = Style.of(group.choice.seed_text())
            lesson = [e for e in _edits(group, members, config, style) if e.content in accepted]
            for target in multiskill.lesson_targets(project, group, hosts, taken):
                say(f"[Lesson] {len(lesson)} correction(s) accepted for {group.choice.name} ({group.choice.host}) "
                    f"are offered to {target.host}'s skill {target.path}")
                queue.append(multiskill.SkillGroup(target, group.records, 0, str(group.choice.path), lesson))
        i += 1
    _settle(night, done)


def _settle(night: NightRecord, parts: list[dict[str, Any]]) -> None:
    """The night's own fields over its skills: the first staged skill (else the first) fills the
    single-skill fields that history, review and the MCP tools read; ``skills`` lists them all."""
    night.skills = parts
    lead = next((p for p in parts if p["outcome"] == "staged"), parts[0] if parts else None)
    if lead is not None:
        night.skill = NightSkill(path=lead["path"], name=lead["name"], host=lead["host"], managed=lead["managed"],
                                 why=lead["why"])
        for key in ("tasks", "scores", "corrections", "proposal", "run_dir", "fingerprint", "replay", "paired",
                    "triggers", "package"):
            setattr(night, key, lead[key])
    night.outcome, night.reason = multiskill.night_outcome(parts)
    night.usage = multiskill.total_usage(parts)
    night.preflight = night_preflight([p["preflight"] for p in parts if p.get("preflight")])


def night_preflight(estimates: list[dict[str, Any]]) -> dict[str, Any]:
    """The night's preflight estimate: its skills' (each made just before that skill's replay), summed."""
    if len(estimates) <= 1:
        return estimates[0] if estimates else {}
    return {"calls": sum(e.get("calls", 0) for e in estimates), "usd": round(sum(e.get("usd", 0.0) for e in estimates), 4),
            "tokens": sum(e.get("tokens", 0) for e in estimates),
            "unpriced_roles": sorted({r for e in estimates for r in e.get("unpriced_roles", [])}),
            "warnings": [w for e in estimates for w in e.get("warnings", [])], "skills": len(estimates)}


def _load(project: Path) -> tuple[list, dict[str, list], list]:
    """The project's enabled tasks, their member pool items by task id, and its sessions."""
    from sleep.mine.store import load_pool, load_tasks

    with Index.open() as index:
        records = load_tasks(index.conn, str(project), enabled_only=True)
        pools = {p: load_pool(index.conn, p) for p in {r.project for r in records}}
        sessions = index.sessions(project=str(project), include_subagents=False)
    members: dict[str, list] = {}
    for pool in pools.values():
        for item in pool:
            if item.task_id:
                members.setdefault(item.task_id, []).append(item)
    return records, members, sessions


def _items(records: list, members: dict[str, list], config: NightConfig) -> list[Task]:
    """The items of a skill's tasks (most supported first, at most ``sleep.max_tasks`` tasks)."""
    return [t for r in _chosen(records, config) for t in task_items(r, members.get(r.id, []), config.sleep.instances_per_task,
                                                   ("skillopt-sleep", *[f"host:{h}" for h in r.hosts]))]


def _chosen(records: list, config: NightConfig) -> list:
    return sorted(records, key=lambda r: (-r.support, r.id))[: config.sleep.max_tasks]


def _pick(project: Path, config: NightConfig, opts: NightOptions) -> tuple[list[Task], list[dict], SkillChoice]:
    """The items, member evidence and skill of the night's first (most used) skill."""
    records, members, sessions = _load(project)
    group = multiskill.skill_groups(project, records, members, sessions, opts.skill)[0]
    evidence = [item.evidence for r in _chosen(group.records, config) for item in members.get(r.id, [])]
    return _items(group.records, members, config), evidence, group.choice


def _edits(group, members: dict[str, list], config: NightConfig, style: Style | None = None) -> list:
    """The correction edits of a skill's (chosen) tasks, written in the skill's ``style``."""
    evidence = _evidence(group, members, config)
    return correction_edits(evidence, config.sleep.max_corrections, style) if config.sleep.use_corrections else []


def _evidence(group, members: dict[str, list], config: NightConfig) -> list[dict]:
    return [item.evidence for r in _chosen(group.records, config) for item in members.get(r.id, [])]


def _one_skill(night: NightRecord, group, project: Path, base: NightConfig, config: NightConfig, run_id: str,
               before: dict[str, tuple[str, str]], say: Say, subscribers: list[events.Subscriber],
               persist: Callable[..., None], members: dict[str, list]) -> None:
    """One skill's part of the night, recorded in ``night`` (the part; ``persist`` saves the whole night).
    ``base``: the night's configuration (its fingerprint); ``config``: with this skill's budget share."""
    choice = group.choice
    tasks = _items(group.records, members, config)
    night.skill = {"path": str(choice.path), "name": choice.name, "host": choice.host, "managed": choice.managed,
                   "why": choice.why}
    n_tasks = len({t.metadata.get("task_id", t.id) for t in tasks})
    say(f"[Tasks] {n_tasks} enabled tasks ({len(tasks)} instances) for skill {choice.name} ({choice.why}): "
        f"{choice.path}")
    if n_tasks < config.sleep.min_tasks:
        night.outcome = "too_few_tasks"
        night.reason = (f"{n_tasks} usable recurring task{'' if n_tasks == 1 else 's'} for skill {choice.name}, "
                        f"fewer than sleep.min_tasks={config.sleep.min_tasks}; "
                        "nothing was trained or staged for it. Work with your agents a few more days, or lower "
                        "sleep.min_tasks / sleep.min_support.")
        say(f"[Night] {night.reason}")
        return
    seed_text = choice.seed_text()
    tasks = with_own_words(tasks, members)  # the judge guard never counts the person's words as the judge's
    edits = group.edits if group.edits is not None else _edits(group, members, config, Style.of(seed_text))
    night.fingerprint = _fingerprint(tasks, seed_text, base, edits)
    last = before.get(str(choice.path))
    if base.sleep.skip_idle and last is not None and last[0] == night.fingerprint:
        night.outcome = "idle"
        night.reason = (f"nothing changed for skill {choice.name} since night {last[1]} (same tasks, judges, "
                        "corrections and skill); 0 model calls")
        say(f"[Night] idle: {night.reason}")
        return

    persist("replay")
    target_hosts = Counter({choice.host: 1}) if group.lesson_from else None
    def after(settings, run_dir: Path, backends: dict, summary) -> None:  # with vs without the skill
        if group.lesson_from or group.document is not None:  # a lesson offered from another skill (its tasks are
            return  # not this skill's own), or a memory file (no trigger, package or retirement)
        lifecycle.measure_part(night, choice, seed_text, settings, summary, backends, config.sleep.paired, say,
                               n_items=len(tasks), used_calls=summary.usage.get("calls", 0))
        if not night.paired.get("verdict") or night.paired.get("kind") != "retire":  # no use tuning a retiree
            left = settings.budget.max_calls - summary.usage.get("calls", 0) - (night.paired.get("spent") or {}).get(
                "model_calls", 0) if settings.budget.max_calls else None
            triggers.run_part(night, choice, seed_text, project, {r.id for r in group.records}, backends,
                              config.sleep.triggers, left, say, config.core.train.workers)
            left = None if left is None else left - (night.triggers.get("spent") or {}).get("model_calls", 0)
            package.run_part(night, choice, seed_text, project, settings, run_dir, backends, config.sleep.package,
                             [t.prompt for t in tasks], say, left)

    result = _train(night, project, config, tasks, seed_text, edits, say, subscribers, run_id=run_id,
                    persist=persist, target_hosts=target_hosts, skill=choice.path, document=group.document,
                    after=after)
    summary, history, splits = result.summary, result.history, result.splits
    night.run_dir = summary.run_dir
    night.usage = _usage(summary.usage)  # the core's ledger: authoritative once the run ended
    lifecycle.add_spend(night)  # the with/without, trigger and package steps' calls
    triggers.add_spend(night)
    package.add_spend(night)
    night.corrections = cast(NightCorrections, correction_outcomes(
        edits, history, [r for h in history for r in result.step_refused(h.step)]))
    night.tasks = {"train": splits["train"], "val": splits["val"], "total": len(tasks),
                   "recurring": len({t.metadata.get("task_id", t.id) for t in tasks})}
    say(f"[Tasks] {len(splits['train'])} train and {len(splits['val'])} val items")
    if len(splits["val"]) < MIN_MEANINGFUL_VAL:
        night.tasks["note"] = (f"only {len(splits['val'])} val item(s): the gate's decision says little; "
                               "raise sleep.instances_per_task or wait for more sessions")
        say(f"[Tasks] {night.tasks['note']}")
    night.scores = {"baseline": summary.initial_val, "candidate": summary.best_val, "status": summary.status,
                    "best_source": summary.best_source, "policy": config.core.evaluation.gate_policy}
    evidence_notes = _val_evidence(night, result, seed_text, tasks)  # the records
    if summary.status in ("failed", "cancelled"):
        night.outcome = "failed"
        refused = (night.replay or {}).get("refused_hosts")
        cause = f"{refused_message(refused)}; the CLI's last error: {summary.error}" if refused else summary.error
        night.reason = f"the replay {summary.status}: {cause}; nothing was staged"
        say(f"[Night] {night.reason}")
        return

    persist("gate")
    improved = summary.best_val is not None and summary.initial_val is not None and summary.best_val > summary.initial_val + 1e-9
    budget_note = " (the night's budget ran out; the best skill was fully evaluated before)" \
        if summary.status == "budget_exhausted" else ""
    if not improved:
        night.outcome = "no_improvement"
        limit = config.core.evaluation.val_limit
        gated = min(len(splits["val"]), limit) if limit else len(splits["val"])  # the val tasks the gate scored
        night.reason = nothing_staged(summary, history, gated, config.core.evaluation.gate_policy)
        say(f"[Gate] no candidate beat the starting skill (val {_score(summary.initial_val)} → best "
            f"{_score(summary.best_val)}); nothing was staged")  # why: the night's reason, in its summary
        lifecycle.after_gate(night, choice, seed_text, tasks, project, say)
        return
    refused = lifecycle.refuse_new_skill(night, choice)
    if refused:
        night.outcome, night.reason = "no_improvement", refused
        say(f"[Gate] {refused}")
        return
    say(f"[Gate] val {_score(summary.initial_val)} → {_score(summary.best_val)} ({summary.best_source}){budget_note}")
    if night.dry_run:
        night.outcome = "would_stage"
        night.reason = "dry run: the improvement was not staged"
        say(f"[Proposal] {night.reason}")
        return

    persist("stage")
    try:
        night.proposal = proposal = _propose(night, choice, seed_text, result, tasks, project, evidence_notes,
                                             memory_notes(group, project, result.best_skill))
    except DuplicateProposal as exc:  # one proposal per lesson (sleep.proposals.lesson)
        night.outcome = "already_proposed"
        night.reason = str(exc)
        say(f"[Proposal] {night.reason}")
        return
    night.outcome = "staged"
    night.reason = f"staged as branch {proposal['branch']}"
    say(f"[Proposal] {proposal['id']} on branch {proposal['branch']} ({proposal['where']}); "
        f"review with `skillopt-sleep show {proposal['id']}`")


def _fingerprint(tasks: list[Task], seed_text: str, config: NightConfig, edits: list) -> str:
    payload = {
        "tasks": [[t.id, t.prompt, t.judge, t.metadata.get("support")] for t in tasks],
        "skill": hashlib.sha256(seed_text.encode("utf-8")).hexdigest(),
        "config": [config.core.to_dict(), config.sleep.model_dump()],
        "edits": [e.to_dict() for e in edits],
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode("utf-8")).hexdigest()


def _train(night: NightRecord, project: Path, config: NightConfig, tasks: list[Task], seed_text: str, edits: list,
           say: Say, subscribers: list[events.Subscriber], run_id: str, persist: Callable[..., None],
           target_hosts: Counter[str] | None = None, skill: Path | None = None, document=None,
           after: Callable[[Any, Path, dict, Any], None] | None = None):
    """Replay and gate ``tasks`` in the core; ``target_hosts``: a lesson for one host's skill
    replays through that host (its CLI when ready, else the configured backend). Otherwise a
    ``skill`` in a host's skill folder replays through that host's CLI when it is ready
    (:func:`sleep.cycle.backends.target_backend`). ``after(settings, run_dir, backends, result)`` runs once the
    run ended well, with its backends and checkout still up."""
    hosts = target_hosts or Counter(h.split(":", 1)[1] for t in tasks for h in t.tags if h.startswith("host:"))
    owners = skill_hosts(skill, project) if skill is not None and not target_hosts else []
    target, why = target_backend(hosts, "host" if target_hosts else config.sleep.target_backend, config.core,
                                 skill_hosts=owners)
    say(f"[Replay] target backend {target} ({why})")
    root = paths.private_dir(paths.data_dir() / "nights")
    core = config.core.model_copy(deep=True)
    core.model = core.model.model_copy(update={"target_backend": target})
    core.output = core.output.model_copy(update={"root": str(root), "run_id": run_id})
    run_dir = root / "jsonl_tasks" / run_id
    paths.private_dir(run_dir.parent)  # the core creates what is below with the umask's mode
    with ExitStack() as stack:
        night.run_dir = str(run_dir)
        persist()  # the run directory is known before the first call

        def spent(usage: dict[str, Any]) -> None:
            night.usage = cast(NightUsage, usage)  # sleep.cycle.spend: the NightUsage keys
            try:
                persist()
            except sqlite3.Error:  # a busy or full index must not stop the replay; the end records the totals
                pass

        workdir = None
        cli_target = config.sleep.replay_in_checkout and target.replace("_", "-") in CLI_BACKENDS.values()
        if cli_target:
            workdir = stack.enter_context(replay_checkout(project))
            say(f"[Replay] in a disposable checkout of the project at HEAD: {workdir}")
        mode = choose_mode(config.sleep.replay, cli_target)
        night.replay = {**mode.to_dict(), "target": target, "target_host": replay_host(target), "target_why": why}
        say(f"[Replay] mode {mode.mode.replace('_', '-')}: {mode.why}")
        if mode.mode == "read_only":
            tasks = [replace(t, judge=as_text_judge(t.judge)) for t in tasks]
        else:
            stack.callback(cleanup_homes)
        redactor = Redactor(collect=True)  # the replies' secrets, for the night's index
        act_family = target.replace("_", "-") if mode.mode == "actions" else None
        egress = None
        if act_family is not None:
            egress = EgressProxy.for_cli(act_family, config.sleep.replay_api_hosts)
            stack.callback(egress.close)
            stack.callback(_record_refused, night, egress, say)
            allowed = ", ".join(str(e) for e in egress.endpoints) or "none configured"
            say(f"[Replay] the sandbox lets the agent reach {', '.join(egress.hosts) or 'no vendor host'} and its "
                f"configured endpoints ({allowed})" + (f" through your proxy {egress.upstream}" if egress.upstream else ""))
        backends = build_night_backends(core, run_dir / "evidence.jsonl", redactor, act_family=act_family,
                                        egress=egress)
        if document is not None:  # a memory file: the candidate where the host loads it (sleep.memory.placement)
            backends = place(backends, document, project)
            say(f"[Replay] the candidate {document.rel} is placed where {document.host} loads it")
        backends = SpendMeter(spent).wrap(backends)
        run = prepare_training(core, tasks=night_split(tasks, core.env.split_seed, core.env.split_ratio),
                               seed_skill=seed_text, backends=backends, candidate_edits=edits,
                               workdir=workdir, subscribers=subscribers)
        night.preflight = {k: v for k, v in run.estimate.items() if k != "text"}  # the core prints its line
        persist()
        if edits:
            say(f"[Replay] {len(edits)} of your corrections join the first step as candidate edits")
        try:
            result = asyncio.run(run.run())
            if after is not None and result.summary.status not in ("failed", "cancelled"):
                after(run.settings, Path(run.run_dir), backends, result)  # the result: held in memory
        finally:
            paths.make_private_tree(Path(run.run_dir))  # the core writes some run files with the umask's mode
            if redactor.values:
                with Index.open() as index, index.transaction():
                    known_secrets.remember(index, redactor.values)
            if redactor.total:
                say(f"[Replay] {redactor.total} secrets redacted at the model boundary (replies, recorded prompts) "
                    "before anything recorded them")
    return result


def refused_message(hosts: list[str]) -> str:
    """What to tell the person when the sandbox refused the CLI's way out (instead of a login hint)."""
    names = ", ".join(hosts[:5]) + (f" and {len(hosts) - 5} more" if len(hosts) > 5 else "")
    first = hosts[0].split(" ", 1)[0]
    return (f"the sandbox refused {names} (allow it with `--set sleep.replay_api_hosts=[\"{first}\"]` or "
            f"`replay_api_hosts: [\"{first}\"]` under `sleep:` in {USER_CONFIG_HINT}, if the agent's model "
            "endpoint is there)")


USER_CONFIG_HINT = "$SKILLOPT_HOME/sleep.yaml"


def _record_refused(night: NightRecord, egress: EgressProxy, say: Any) -> None:
    refused = egress.refused_hosts()
    if refused:
        night.replay = {**(night.replay or {}), "refused_hosts": refused}
        say(f"[Replay] the sandbox refused {len(refused)} host(s): {', '.join(refused[:5])}")
    unreachable = list(dict.fromkeys(egress.unreachable))
    if unreachable:  # allowed, but they did not resolve or answer (a network problem, not the sandbox)
        night.replay = {**(night.replay or {}), "unreachable_hosts": unreachable}
        say(f"[Replay] {len(unreachable)} allowed host(s) could not be reached: {', '.join(unreachable[:5])}")


def _usage(totals: dict[str, Any]) -> NightUsage:
    return {"model_calls": totals.get("calls", 0), "input_tokens": totals.get("input_tokens", 0),
            "output_tokens": totals.get("output_tokens", 0),
            "tokens": totals.get("input_tokens", 0) + totals.get("output_tokens", 0),
            "cost_usd": round(totals.get("cost_usd", 0.0), 6)}


def _val_evidence(night: NightRecord, result: TrainingResult, seed_text: str, tasks: list[Task]) -> list[dict]:
    """Per val instance, before/after actions and verdicts (:mod:`sleep.replay.evidence`): the records."""
    from sleep.replay import evidence

    records = evidence.val_evidence(result.val_rollouts, seed_text, result.best_skill or seed_text,
                                    list(result.splits["val"]), {t.id: t.prompt for t in tasks})
    night.replay["evidence"] = str(evidence.write(result.reader.path, records))
    return records


def _propose(night: NightRecord, choice: SkillChoice, seed_text: str, result: TrainingResult, tasks: list[Task],
             project: Path, evidence_records: Sequence[dict] = (), extra_notes: Sequence[str] = ()) -> NightProposal:
    from sleep.proposals import stage
    from sleep.proposals.fromrun import report_from_result
    from sleep.proposals.lesson import evidence_key

    text, report = report_from_result(result, seed_text)
    rejected = night.corrections.get("rejected") or []
    notes = list(extra_notes) + list(report.notes) + (
        ["Corrections the gate rejected this night: " + "; ".join(rejected)] if rejected else [])
    lesson_evidence = evidence_key([*(night.corrections.get("offered") or []),
                                    *{f"task:{t.metadata.get('task_id', t.id)}" for t in tasks}])
    report = report.with_(cycle_id=night.id, source="cycle", notes=notes, evidence=list(evidence_records),
                          task_intents={t.id: str(t.metadata.get("intent", "")) for t in tasks},
                          lesson_evidence=lesson_evidence, **lifecycle.report_fields(night, choice))
    proposal = stage(choice.path, text, report, trained_from_text=None if choice.managed else seed_text,
                     project=project if choice.path.is_relative_to(project) else None)
    where = (f"the project's repository {proposal.project}" if proposal.store == "project"
             else f"SkillOpt's skills repository {proposal.repo}")
    return {"id": proposal.id, "branch": proposal.branch, "where": where, "skill_path": str(choice.path)}


def _score(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"
