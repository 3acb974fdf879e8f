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
never in the project. One night per project at a time (a lock). This module
takes the options, holds the lock, harvests and mines; the skills' parts follow
(:mod:`sleep.cycle.skillqueue`), each given a :class:`sleep.cycle.context.NightContext`
and returning its result. The record has one writer
(:class:`sleep.cycle.writer.NightWriter`); it is saved at each stage, with its
run directory before the replay starts and its
spend after each model call, so a night that dies keeps what it did and
spent; its ``running`` record shows as ``interrupted`` as soon as its lock is
free (:func:`sleep.nightstore.settle_dead`), and it leaves no partial branch
(staging is journalled). A full disk or an unwritable data directory stops the
night with :class:`sleep.storage.StorageError` (recorded when the index can
still be written).
"""

from __future__ import annotations

import errno
import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

from skillopt_core import events
from sleep import nightstore, paths
from sleep.cycle.config import load_night_config
from sleep.cycle.context import NightContext
from sleep.cycle.preflight import check_night_settings
from sleep.cycle.replaying import refused_message
from sleep.cycle.skillqueue import every_skill
from sleep.cycle.skills import SkillPathError, check_skill_path
from sleep.cycle.writer import NightWriter
from sleep.index import Index
from sleep.lock import FileLock
from sleep.nightstore import NightRecord
from sleep.project import SeveralProjects, repository_root, resolve_project
from sleep.storage import StorageError, explain_os, explain_sqlite, is_disk_full

__all__ = ["NightError", "NightOptions", "night_lock", "refused_message", "run_night"]

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
        writer = NightWriter.start(project, opts.dry_run, say)
        ctx = NightContext(project, config, writer, say, tuple(subscribers), opts.skill, opts.dry_run, opts.wait)
        try:
            _stages(ctx)
        except Exception as exc:
            storage = _storage_problem(exc)
            writer.failed(storage or f"{type(exc).__name__}: {exc}")
            say(f"[Night] failed during the {writer.night.stage} stage: {storage or exc}")
            if storage:
                writer.finish_if_possible()
                raise StorageError(f"the night stopped during its {writer.night.stage} stage: {storage}") from None
        except BaseException:  # Ctrl-C, SystemExit: record the stop, then let it through
            writer.interrupted()
            writer.finish()
            raise
        writer.finish()
        return writer.night
    finally:
        lock.release()


def _stages(ctx: NightContext) -> None:
    """Harvest, mine, then each skill's part (:func:`sleep.cycle.skillqueue.every_skill`)."""
    from sleep.harvest.harvester import HarvestOptions, harvest
    from sleep.mine.embed import resolve
    from sleep.mine.miner import MineOptions, mine

    writer, say, project, wait = ctx.writer, ctx.say, str(ctx.project), max(ctx.wait, 60.0)
    writer.stage("harvest")
    report = harvest(HarvestOptions(project=project, wait=wait))
    writer.harvested(report.sessions_new, report.sessions_updated)
    say(f"[Harvest] {report.sessions_new} new and {report.sessions_updated} updated sessions")

    writer.stage("mine")
    mined = mine(MineOptions(project=project, min_support=ctx.config.sleep.min_support, wait=wait,
                             embedder=resolve(ctx.config.sleep.mine_embedder)))
    writer.mined(mined.tasks_new, mined.tasks_updated, mined.tasks_total)
    say(f"[Mine] {mined.tasks_total} recurring tasks ({mined.tasks_new} new, {mined.tasks_updated} updated)")

    writer.stage("tasks")
    every_skill(ctx)


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
