"""One mining run: new sessions in, recurring tasks out, in one transaction.

:func:`mine` reads only the sessions that are new or changed since the last
run (through the index's ``sessions_for_mining`` index), turns their typed
prompts into task candidates (sleep.mine.select), re-groups each affected
project's pool with its existing tasks kept whole (sleep.mine.group), makes a
task of every group seen in at least ``min_support`` distinct sessions, builds
or refreshes the judges of the tasks that changed (sleep.mine.rules, and the
optimizer through sleep.mine.assist when one is given), and writes everything
at once. With nothing new it reads nothing else, calls no model and returns.
"""

from __future__ import annotations

import hashlib
import time
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from skillopt_core.timestamps import utc_now
from sleep import paths
from sleep.index import Index
from sleep.lock import FileLock
from sleep.mine import store
from sleep.mine.assist import Assistant, Draft
from sleep.mine.cluster import ClusterParams
from sleep.mine.embed import Embedder
from sleep.mine.features import FeatureParams
from sleep.mine.group import cluster_pool
from sleep.mine.rules import Evidence, assemble, build_judge, summary
from sleep.mine.select import PoolItem, excluded_counts, extract, pending_sessions

MINE_LOCK_FILE = "mine.lock"
INTENT_CHARS = 90


@dataclass
class MineOptions:
    """What to mine. ``project``: a directory (its sessions and those below it); None: every project."""

    project: str | None = None
    min_support: int = 2
    include_scripted: bool = False
    index_path: Path | None = None
    params: ClusterParams = field(default_factory=ClusterParams)
    features: FeatureParams = field(default_factory=FeatureParams)
    assistant: Assistant | None = None
    wait: float = 0.0
    embedder: Embedder | None = None  # sentence vectors blended into the words (sleep.mine.embed); None: words only


@dataclass
class MineReport:
    """What one run did: counts only, never prompt text."""

    scope: str
    method: str = "lexical"  # or the embedder used (sleep.mine.embed)
    nothing_new: bool = False
    sessions_read: int = 0
    sessions_excluded: dict[str, int] = field(default_factory=dict)
    prompts_seen: int = 0
    candidates: int = 0
    dropped: dict[str, int] = field(default_factory=dict)
    projects: int = 0
    tasks_new: int = 0
    tasks_updated: int = 0
    tasks_total: int = 0
    members_added: int = 0
    model: dict[str, Any] = field(default_factory=dict)
    elapsed_s: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def task_id_for(project: str, key: tuple[str, str, int]) -> str:
    """A new task's id: stable for the prompt it was first represented by."""
    raw = "\x1f".join([project, key[0], key[1], str(key[2])])
    return "t" + hashlib.sha1(raw.encode("utf-8")).hexdigest()[:11]


def intent_of(text: str) -> str:
    line = " ".join(text.strip().splitlines()[0].split()) if text.strip() else ""
    if len(line) <= INTENT_CHARS:
        return line
    cut = line[:INTENT_CHARS].rsplit(" ", 1)[0]
    return cut + "..."


@dataclass(frozen=True)
class SessionRef:
    host: str
    session_id: str
    project_dir: str | None
    harvested_at: str


@dataclass
class _Plan:
    """What a run will write for one project."""

    sessions: list[tuple[SessionRef, list[PoolItem]]]
    drafts: list[Draft] = field(default_factory=list)
    updated: int = 0
    added: int = 0


def mine(opts: MineOptions | None = None) -> MineReport:
    """Run the miner once under its lock (raises sleep.lock.LockBusy if another runs)."""
    opts = opts or MineOptions()
    if opts.min_support < 1:
        raise ValueError(f"min_support must be at least 1, got {opts.min_support}")
    started, t0 = utc_now(), time.perf_counter()
    index_path = Path(opts.index_path) if opts.index_path else paths.index_path()
    report = MineReport(scope=f"project {opts.project}" if opts.project else "all projects",
                        method=opts.embedder.describe() if opts.embedder else "lexical")
    lock = FileLock(index_path.with_name(MINE_LOCK_FILE), what="mining run").acquire(opts.wait)
    try:
        with Index.open(index_path) as index:
            conn = index.conn
            report.sessions_excluded = dict(excluded_counts(conn, opts.project, opts.include_scripted))
            dropped: Counter[str] = Counter()
            by_project: dict[str, list[tuple[SessionRef, list[PoolItem]]]] = defaultdict(list)
            for s, harvested_at in pending_sessions(conn, opts.project, opts.include_scripted):
                items, d = extract(s)
                dropped.update(d)
                report.sessions_read += 1
                report.prompts_seen += len(s.prompts)
                report.candidates += len(items)
                by_project[s.project_dir or ""].append(
                    (SessionRef(s.host, s.session_id, s.project_dir, harvested_at), items))
            if not report.sessions_read:
                report.nothing_new = True
                report.tasks_total = _count_tasks(conn, opts.project)
                report.elapsed_s = round(time.perf_counter() - t0, 4)
                return report
            report.dropped = dict(sorted(dropped.items()))
            plans = [_plan(conn, project, entries, opts) for project, entries in sorted(by_project.items())]
            if opts.assistant is not None:
                for plan in plans:
                    _assist(plan, opts, conn)
                report.model = opts.assistant.report()
            now = utc_now()
            with index.transaction():
                for plan in plans:
                    for ref, items in plan.sessions:
                        store.replace_session_prompts(conn, ref.host, ref.session_id, ref.project_dir,
                                                      ref.harvested_at, items)
                    for d in plan.drafts:
                        store.save_task(conn, d.record, now)
                    report.tasks_new += sum(1 for d in plan.drafts if d.is_new)
                    report.tasks_updated += plan.updated
                    report.members_added += plan.added
                if opts.assistant is not None:
                    opts.assistant.flush(conn, now)
                report.projects = len(plans)
                report.tasks_total = _count_tasks(conn, opts.project)
                report.elapsed_s = round(time.perf_counter() - t0, 4)
                store.record_run(conn, started, utc_now(), report.to_dict())
            return report
    finally:
        lock.release()


def _count_tasks(conn: Any, project: str | None) -> int:
    from sleep.mine.select import scope_clause
    where, args = scope_clause(project, "project")
    return int(conn.execute(f"SELECT COUNT(*) FROM tasks WHERE {where}", args).fetchone()[0])


def _plan(conn: Any, project: str, entries: list[tuple[SessionRef, list[PoolItem]]],
          opts: MineOptions) -> _Plan:
    plan = _Plan(sessions=entries)
    changed = {(ref.host, ref.session_id) for ref, _ in entries}
    old = store.load_pool(conn, project)
    task_of = {it.key: it.task_id for it in old if it.task_id}
    pool = [it for it in old if (it.host, it.session_id) not in changed]
    fresh = [it for _, items in entries for it in items]
    for it in fresh:
        it.task_id = task_of.get(it.key)
    pool += fresh
    existing = {t.id: t for t in store.load_tasks(conn, project, exact=True, with_members=False)}
    groups, _ = cluster_pool(pool, opts.params, opts.features, opts.embedder)
    touched = {it.task_id for it in fresh if it.task_id}
    for g in groups:
        items = [pool[r] for r in g.rows]
        ids = {it.task_id for it in items if it.task_id}
        if ids:
            tid = min(ids)  # linkage keeps tasks apart; min() only guards the impossible
            joined = [it for it in items if not it.task_id]
            for it in joined:
                it.task_id = tid
            plan.added += len(joined)
            if joined or tid in touched:
                members = [it for it in items if it.task_id == tid]
                medoid = pool[g.medoid] if pool[g.medoid].task_id == tid else members[0]
                plan.drafts.append(draft(project, tid, members, medoid, g.loosest, existing.get(tid)))
                plan.updated += 1
            continue
        support = len({(it.host, it.session_id) for it in items})
        if support < opts.min_support or (support <= 2 and g.cohesion < opts.params.pair_threshold):
            continue  # two sessions alone must look clearly alike to count as recurring
        medoid = pool[g.medoid]
        tid = task_id_for(project, medoid.key)
        for it in items:
            it.task_id = tid
        plan.drafts.append(draft(project, tid, items, medoid, g.loosest, None))
        plan.added += len(items)
    return plan


def _assist(plan: _Plan, opts: MineOptions, conn: Any) -> None:
    """Let the optimizer confirm or split new borderline tasks, then refine changed judges."""
    assert opts.assistant is not None
    project = plan.drafts[0].record.project if plan.drafts else ""

    def make(items: list[PoolItem]) -> Draft | None:
        for it in items:
            it.task_id = None
        if len({(it.host, it.session_id) for it in items}) < opts.min_support:
            return None
        medoid = max(items, key=lambda it: sum(1 for o in items if o.text == it.text))
        tid = task_id_for(project, medoid.key)
        for it in items:
            it.task_id = tid
        return draft(project, tid, items, medoid, 1.0, None)

    before = sum(len(d.items) for d in plan.drafts if d.is_new)
    plan.drafts = opts.assistant.review_groups(plan.drafts, conn, make)
    plan.added -= before - sum(len(d.items) for d in plan.drafts if d.is_new)
    for d in plan.drafts:
        opts.assistant.refine(d, conn)


def draft(project: str, tid: str, members: list[PoolItem], medoid: PoolItem, loosest: float,
          before: store.TaskRecord | None) -> Draft:
    """A task record for ``members`` (represented by ``medoid``) with its deterministic judge."""
    intent = intent_of(medoid.text)
    ev = Evidence.merge([it.evidence for it in members])
    judge, lines = build_judge(intent, medoid.text, ev)
    ats = sorted(a for a in (it.at for it in members) if a)
    record = store.TaskRecord(
        id=tid, project=project, intent=intent, prompt=medoid.text, context="", judge=judge,
        judge_summary=summary(judge), support=len({(it.host, it.session_id) for it in members}),
        hosts=sorted({it.host for it in members}), first_seen=ats[0] if ats else None,
        last_seen=ats[-1] if ats else None, enabled=before.enabled if before else True,
        members=sorted(it.key for it in members))

    def rebuild(rules: list[dict[str, Any]], lines_: list[str], rubric: str | None) -> list[dict[str, Any]]:
        spec = assemble(intent, medoid.text, ev, lines_, rules)
        if rubric:
            spec[0] = {"type": "rubric", "rubric": rubric}
        return spec

    return Draft(record, members, ev, lines, loosest, before is None, rebuild)
