"""The harvest: every source's new transcript bytes into the index, redacted.

:func:`harvest` takes the index lock, walks the selected sources, reads each
file only as far as its cursor says is new (sleep.offsets), parses it with its
source, stores sessions, history and the new cursor in one transaction per
batch, and returns a :class:`HarvestReport`. Bad input never stops it: each
unusable line or file is counted by reason (``report.skipped``).
"""

from __future__ import annotations

import os
import re
import stat as stat_mod
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field, fields
from datetime import timedelta
from pathlib import Path
from typing import Any

from skillopt_core.timestamps import utc_now
from sleep import paths
from sleep.harvest.pool import POOL_MIN_BYTES, Job, Outcome, Pool, file_stat, parse_job, stat_error, workers
from sleep.harvest.reader import DEFAULT_MAX_LINE_BYTES, ParseContext
from sleep.harvest.side_files import SideFileError
from sleep.harvest.sources import ParseResult, Source, SourceFile, all_sources
from sleep.harvest.sources.copilot_vscode import CopilotVSCodeSource
from sleep.harvest.sources.sqlite_ro import ROW_SEP
from sleep.hosts import source_groups
from sleep.index import Index, session_key
from sleep.lock import FileLock
from sleep.offsets import (
    STATUS_OK,
    STATUS_PEEK,
    STATUS_REPLAY,
    STATUS_SKIPPED,
    FileCursor,
    FileStat,
    ReadPlan,
    plan_read,
)
from sleep.paths import is_under
from sleep.redact import Redactor
from sleep.redact import known as known_secrets
from sleep.scheduler.noted import HarvestPlan, finish_harvest, plan_harvest

COMMIT_EVERY = 500
_DURATION_RX = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$", re.IGNORECASE)
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_duration(text: str) -> timedelta:
    """``"72h"``, ``"30m"``, ``"7d"``, ``"2w"``, ``"90s"`` -> timedelta (ValueError otherwise)."""
    m = _DURATION_RX.match(text or "")
    if not m:
        raise ValueError(f"cannot read duration {text!r}: use a number and a unit, e.g. 72h, 30m, 7d")
    return timedelta(seconds=float(m.group(1)) * _UNITS[m.group(2).lower()])


@dataclass
class HarvestOptions:
    """What to harvest. ``project`` None means every project."""

    source: str = "all"  # a key of sleep.hosts.source_groups()
    project: str | None = None
    since: timedelta | None = None
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
    copilot_exports: list[str] = field(default_factory=list)
    use_detect_secrets: bool = True
    wait: float = 0.0
    index_path: Path | None = None
    use_noted: bool = True  # read only the watcher's noted files where that is safe (sleep.scheduler.noted)


@dataclass
class _Counts:
    """What was read: per source, and summed over the sources in the harvest's report."""

    files_seen: int = 0
    files_read: int = 0
    files_unchanged: int = 0
    files_out_of_scope: int = 0
    bytes_read: int = 0
    sessions_new: int = 0
    sessions_updated: int = 0
    replay_sessions_skipped: int = 0
    history_prompts: int = 0


@dataclass
class SourceReport(_Counts):
    rereads: dict[str, int] = field(default_factory=dict)
    failed: str | None = None  # why this source read nothing this time (a bad side file), else None


@dataclass(kw_only=True)
class HarvestReport(_Counts):
    """What one harvest did. Only counts and locations: never transcript text."""

    index_path: str
    scope: str
    sources: dict[str, SourceReport]
    lines_total: int = 0
    lines_kept: int = 0
    lines_ignored: int = 0
    lines_skipped_undecoded: int = 0
    records_with_unknown_fields: int = 0
    actions: dict[str, int] = field(default_factory=dict)
    skipped: dict[str, int] = field(default_factory=dict)
    skipped_lines: dict[str, int] = field(default_factory=dict)
    skipped_files: dict[str, int] = field(default_factory=dict)
    skipped_examples: dict[str, list[str]] = field(default_factory=dict)
    secrets_redacted: int = 0
    secrets_by_type: dict[str, int] = field(default_factory=dict)
    secrets_remembered: int = 0  # new keyed hashes of redacted values (sleep.redact.known)
    elapsed_s: float = 0.0
    mb_per_s: float = 0.0
    watch: dict[str, str] = field(default_factory=dict)  # per host: noted files only, or a full scan and why
    sources_failed: dict[str, str] = field(default_factory=dict)  # source -> why it read nothing (the others did)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class _Harvester:
    def __init__(self, opts: HarvestOptions, index: Index) -> None:
        self.opts = opts
        self.index = index
        # collect: every value it redacts is remembered as a keyed hash (sleep.redact.known)
        self.ctx = ParseContext(redactor=Redactor(use_detect_secrets=opts.use_detect_secrets, collect=True),
                                max_line_bytes=opts.max_line_bytes)
        self.secrets_remembered = 0
        self.cutoff = (time.time() - opts.since.total_seconds()) if opts.since else None
        self.project = os.path.abspath(os.path.expanduser(opts.project)) if opts.project else None
        self.pending = 0
        self.plan: HarvestPlan | None = None
        # Files to parse, parsed together (in worker processes when that pays: sleep.harvest.pool).
        self.jobs: list[Job] = []
        self.job_bytes = 0
        n = workers()
        self.pool = Pool(n, opts.use_detect_secrets, opts.max_line_bytes) if n > 1 else None

    def run(self) -> HarvestReport:
        started = time.perf_counter()
        names = source_groups()[self.opts.source]
        sources = all_sources()
        if self.opts.copilot_exports:
            sources["copilot-vscode"] = CopilotVSCodeSource(exports=self.opts.copilot_exports)
        reports = {n: SourceReport() for n in names}
        self.cursors = self.index.cursors(names)
        seen: set[str] = set()
        self.index.conn.execute("BEGIN IMMEDIATE")
        try:
            if self.opts.use_noted:
                self.plan = plan_harvest(self.index, names, since_given=self.opts.since is not None)
            for name in names:
                try:
                    self._source(name, sources[name], reports[name], seen)
                except SideFileError as exc:  # this source only: the others are harvested as usual
                    reports[name].failed = str(exc)
                self._parse_jobs()
            for path in set(self.cursors) - seen:
                if not os.path.lexists(path) and not _row_db_exists(path):
                    self.index.delete_cursor(path)
            if self.plan is not None:  # a failed source's noted files stay noted for the next harvest
                finish_harvest(self.index, self.plan, tuple(n for n in names if reports[n].failed is None))
            self._remember_secrets()
            self.index.conn.execute("COMMIT")
        except BaseException:
            if self.pool is not None:
                self.pool.terminate()
            self.index.rollback()  # not a bare ROLLBACK: SQLite already rolled back on a full disk
            raise
        if self.pool is not None:
            self.pool.close()
        return self._report(reports, time.perf_counter() - started)

    def _source(self, name: str, src: Source, rep: SourceReport, seen: set[str]) -> None:
        for file in src.discover(self.ctx.stats):
            seen.add(file.path)
            rep.files_seen += 1
            if self.plan is not None and not any(self.plan.allows(name, p) for p in _watched(file)):
                rep.files_unchanged += 1  # the watcher saw no change since the last harvest
                continue
            before = self.ctx.stats.bytes_read
            self._file(src, file, rep)
            rep.bytes_read += self.ctx.stats.bytes_read - before
            self._maybe_commit()

    def _maybe_commit(self) -> None:
        self.pending += 1
        if self.pending >= COMMIT_EVERY:
            self._remember_secrets()
            self.index.conn.execute("COMMIT")
            self.index.conn.execute("BEGIN IMMEDIATE")
            self.pending = 0

    def _remember_secrets(self) -> None:
        """The keyed hashes of what was redacted since the last commit, in the same
        transaction as the sessions it was redacted from."""
        values = self.ctx.redactor.values
        if values:
            self.secrets_remembered += known_secrets.remember(self.index, values)
            values.clear()

    # ----- one file ----------------------------------------------------------------------

    def _file(self, src: Source, file: SourceFile, rep: SourceReport) -> None:
        stats = self.ctx.stats
        try:
            file.path.encode("utf-8")
        except UnicodeEncodeError:  # a name that is not UTF-8 cannot be a cursor key
            stats.skip_file("undecodable_file_name", file.path.encode("utf-8", "replace").decode())
            return
        try:
            st = file_stat(file)
        except OSError as exc:
            stats.skip_file(stat_error(file.container or file.path, exc), file.path)
            return
        if not stat_mod.S_ISREG(st.st_mode):
            stats.skip_file("not_a_regular_file", file.path)
            return
        if self.cutoff is not None and st.st_mtime < self.cutoff:
            rep.files_out_of_scope += 1
            self._leave(file.container or file.path, changed=False)
            return
        cur = self.cursors.get(file.path)
        if file.replay_hint:
            if cur is not None and cur.status == STATUS_REPLAY and cur.same_stat(st):
                rep.files_unchanged += 1
                return
            if cur is None or cur.status != STATUS_REPLAY:
                rep.replay_sessions_skipped += 1
            self._put(file, st, cur, status=STATUS_REPLAY, offset=st.st_size)
            return
        plan = plan_read(cur, st, file.incremental, lambda n: _read_head(file.path, n))
        if plan.action == "touched" and file.container is not None:
            plan = ReadPlan("reread", 0, "changed")  # a chat's version is not a size: any change is one
        if plan.action == "unchanged":
            rep.files_unchanged += 1
            return
        if plan.action == "touched" or (cur and cur.status == STATUS_REPLAY and plan.action == "append"):
            assert cur is not None  # "touched" and "append" plans come from a cursor
            self._put(file, st, cur, status=cur.status, offset=cur.offset, head=cur.head)
            rep.files_unchanged += 1
            return
        if self.project and file.kind != "history" and not self._in_scope(src, file, cur):
            rep.files_out_of_scope += 1
            self._leave(file.container or file.path)
            return
        if st.st_size == 0:
            stats.skip_file("empty_file", file.path)
            self._put(file, st, cur, status=STATUS_SKIPPED + "empty_file", offset=0)
            return
        self._read(src, file, cur, plan.action, plan.offset if plan.action == "append" else 0,
                   plan.reason, rep)

    def _leave(self, path: str, changed: bool = True) -> None:
        """Keep ``path`` noted for a later harvest: it (may have) changed and was not brought up to date."""
        if self.plan is not None and (path in self.plan.snapshot or (changed and self.plan.epoch is not None)):
            self.plan.leave(path)

    def _in_scope(self, src: Source, file: SourceFile, cur: FileCursor | None) -> bool:
        assert self.project is not None
        if src.scope_hint(file, self.project) is False:
            return False
        project = (cur.project_dir if cur else None) or file.project_dir
        if project is None:
            try:
                project = src.project_of(file, self.ctx)
            except OSError:
                project = None
        if is_under(project, self.project):
            return True
        if project and is_under(self.project, project):
            # Started in a directory above the project: the person may have moved into
            # it mid-session, and the turns typed there belong to it (Session.for_project).
            return True
        if cur is None:
            c = FileCursor(file.path, file.host, file.kind, status=STATUS_PEEK, project_dir=project)
            self.index.put_cursor(c)
            self.cursors[file.path] = c
        return False

    def _read(self, src: Source, file: SourceFile, cur: FileCursor | None, action: str,
              start: int, reason: str, rep: SourceReport) -> None:
        """Queue the file for parsing (:meth:`_parse_jobs` parses the queue and stores it)."""
        prior = None
        if action == "append" and cur is not None and cur.session_key:
            prior = self.index.get_session_by_key(cur.session_key)
        try:
            size = max(0, file_stat(file).st_size - start)
        except OSError:
            size = 0
        self.jobs.append(Job(src, file, start, prior, size, token=(cur, action, reason, rep)))
        self.job_bytes += size

    def _parse_jobs(self) -> None:
        """Parse the queued files (in worker processes when there are enough bytes) and
        store each outcome, in queue order, as the only writer."""
        jobs, self.jobs, total, self.job_bytes = self.jobs, [], self.job_bytes, 0
        if not jobs:
            return
        if self.pool is not None and len(jobs) > 1 and total >= POOL_MIN_BYTES:
            done = self.pool.map(jobs)
        else:
            done = self._parse_here(jobs)
        for job, out in done:
            cur, action, reason, rep = job.token
            if out.stats is not None:  # parsed in a worker: its counts join this harvest's
                self.ctx.stats.merge(out.stats)
                self.ctx.redactor.counts.update(out.counts)
                self.ctx.redactor.values.update(out.values)
            rep.bytes_read += out.bytes_read
            self._finish(job.file, cur, action, reason, rep, out)
            self._maybe_commit()

    def _parse_here(self, jobs: list[Job]) -> Iterator[tuple[Job, Outcome]]:
        for job in jobs:
            before = self.ctx.stats.bytes_read
            out = parse_job(job, self.ctx)
            out.bytes_read = self.ctx.stats.bytes_read - before
            yield job, out

    def _finish(self, file: SourceFile, cur: FileCursor | None, action: str, reason: str,
                rep: SourceReport, out: Outcome) -> None:
        if out.skip is not None:
            why, where, leave = out.skip
            self.ctx.stats.skip_file(why, where)
            if leave:
                self._leave(file.container or file.path)
            return
        assert out.result is not None and out.st is not None
        rep.files_read += 1
        if action != "append":
            rep.rereads[reason] = rep.rereads.get(reason, 0) + 1
        self._store(file, out.st, cur, out.result, action, rep, out.head)

    def _store(self, file: SourceFile, st: FileStat, cur: FileCursor | None,
               result: ParseResult, action: str, rep: SourceReport, head: str | None) -> None:
        end = result.end_offset if file.incremental else st.st_size
        if result.replay:
            if cur is None or cur.status != STATUS_REPLAY:
                rep.replay_sessions_skipped += 1
            if cur is not None and cur.session_key:
                host, _, sid = cur.session_key.partition("\x1f")
                self.index.delete_session(host, sid)
            self._put(file, st, cur, status=STATUS_REPLAY, offset=st.st_size, head=head)
            return
        if result.file_skip_reason:
            self._put(file, st, cur, status=STATUS_SKIPPED + result.file_skip_reason,
                      offset=st.st_size, head=head)
            return
        key = cur.session_key if cur else None
        if result.session is not None:
            s = result.session
            s.source_path = file.path
            new_key = session_key(s.host, s.session_id)
            if key and key != new_key and action != "append":
                host, _, sid = key.partition("\x1f")
                self.index.delete_session(host, sid)
            if self.index.put_session(s):
                rep.sessions_new += 1
            else:
                rep.sessions_updated += 1
            key = new_key
        if result.history or (file.kind == "history" and action != "append"):
            self.index.replace_history(file.path, result.history, append=action == "append")
            rep.history_prompts += len(result.history)
        self._put(file, st, cur, status=STATUS_OK, offset=end, head=head, key=key,
                  project=result.session.project_dir if result.session else None)

    def _put(self, file: SourceFile, st: FileStat, cur: FileCursor | None, *, status: str,
             offset: int, head: str | None = None, key: str | None = None,
             project: str | None = None) -> None:
        c = FileCursor(file.path, file.host, file.kind, offset=offset, head=head, status=status,
                       session_key=key or (cur.session_key if cur else None),
                       project_dir=project or file.project_dir or (cur.project_dir if cur else None))
        c.set_stat(st)
        self.index.put_cursor(c)
        self.cursors[file.path] = c

    # ----- report ------------------------------------------------------------------------

    def _report(self, reports: dict[str, SourceReport], elapsed: float) -> HarvestReport:
        s = self.ctx.stats
        r = HarvestReport(index_path=str(self.index.path),
                          scope=f"project {self.project}" if self.project else "all projects",
                          sources=reports)
        for rep in reports.values():
            for f in fields(_Counts):
                setattr(r, f.name, getattr(r, f.name) + getattr(rep, f.name))
        r.lines_total, r.lines_kept, r.lines_ignored = s.lines_total, s.lines_kept, s.lines_ignored
        r.lines_skipped_undecoded = s.lines_skipped_undecoded
        r.records_with_unknown_fields = s.records_with_unknown_fields
        r.actions = dict(s.actions)
        r.skipped_lines = dict(s.skipped_lines)
        r.skipped_files = dict(s.skipped_files)
        r.skipped = dict(Counter(s.skipped_lines) + Counter(s.skipped_files))
        r.skipped_examples = {k: list(v) for k, v in s.examples.items()}
        r.secrets_by_type = dict(self.ctx.redactor.counts)
        r.secrets_redacted = self.ctx.redactor.total
        r.secrets_remembered = self.secrets_remembered
        r.elapsed_s = round(elapsed, 4)
        r.mb_per_s = round(r.bytes_read / 1e6 / elapsed, 2) if elapsed > 0 else 0.0
        r.watch = self.plan.summary() if self.plan is not None else {}
        r.sources_failed = {name: rep.failed for name, rep in reports.items() if rep.failed is not None}
        return r


def _watched(file: SourceFile) -> tuple[str, ...]:
    """The paths the watcher notes when ``file`` changes (a row file: its database and its WAL)."""
    return (file.path,) if file.container is None else (file.container, file.container + "-wal")


def _row_db_exists(path: str) -> bool:
    """True if ``path`` is a row file (``<db>#<key>``) whose database still exists: a chat the
    listing missed (the database was busy) keeps its cursor, so it is not read again."""
    db, sep, _ = path.rpartition(ROW_SEP)
    return bool(sep) and os.path.isfile(db)


def _read_head(path: str, n: int) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read(n)
    except OSError:
        return b""


def harvest(opts: HarvestOptions | None = None) -> HarvestReport:
    """Run one harvest under the index lock (raises sleep.lock.LockBusy if another runs)."""
    opts = opts or HarvestOptions()
    index_path = Path(opts.index_path) if opts.index_path else paths.index_path()
    lock = FileLock(index_path.with_name(paths.LOCK_FILE)).acquire(opts.wait)
    try:
        started_at = utc_now()
        with Index.open(index_path) as index:
            report = _Harvester(opts, index).run()
            index.record_run(started_at, report.to_dict())
        return report
    finally:
        lock.release()
