"""The ``proposals`` table of the index (migration 4): rows in, :class:`Proposal` out.

The table keeps every proposal ever staged, decided or not: the report, the
text the night trained from (so a refused adopt can say what changed), and the
decision (who, when, why). ``stale`` is never stored; it is computed from the
live file and the branch when proposals are listed.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any

import orjson

from skillopt_core.timestamps import utc_now
from sleep.index import Index, within_sql
from sleep.proposals.errors import UnknownProposal
from sleep.proposals.model import Proposal, ProposalReport

_COLUMNS = (
    "id, created_at, night, state, store, project_dir, repo_dir, skill_path, tree_path, skill_name,"
    " branch, commit_sha, parent_sha, trained_from_sha256, candidate_sha256, baseline_val,"
    " candidate_val, n_edits, cycle_id, report, decided_at, decided_by, reason, adopted_commit,"
    " branch_deleted")


@dataclass(frozen=True)
class Row:
    proposal: Proposal
    trained_from_text: str | None


def now() -> str:
    return utc_now()


def insert(index: Index, p: Proposal, trained_from_text: str | None) -> None:
    index.conn.execute(
        "INSERT INTO proposals (id, created_at, night, state, store, project_dir, repo_dir, skill_path,"
        " tree_path, skill_name, branch, commit_sha, parent_sha, trained_from_sha256, trained_from_text,"
        " candidate_sha256, baseline_val, candidate_val, n_edits, cycle_id, report)"
        " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        (p.id, p.created_at, p.night, "pending", p.store, p.project, p.repo, p.skill_path, p.tree_path,
         p.skill_name, p.branch, p.commit, p.parent, p.trained_from_sha256, trained_from_text,
         p.candidate_sha256, p.baseline_val, p.candidate_val, p.n_edits, p.cycle_id,
         orjson.dumps(p.report.to_dict())))


def id_taken(index: Index, proposal_id: str) -> bool:
    return index.conn.execute("SELECT 1 FROM proposals WHERE id = ?", (proposal_id,)).fetchone() is not None


def branch_names(index: Index) -> set[str]:
    """Every branch name a proposal of this index has had (decided ones too)."""
    return {r[0] for r in index.conn.execute("SELECT branch FROM proposals")}


def get(index: Index, ref: str) -> Row:
    """The proposal named by ``ref``: its id, a unique id prefix (4+ characters), or its branch."""
    ref = (ref or "").strip()
    if not ref:
        raise UnknownProposal("no proposal id given; `skillopt-sleep review --all` lists them.")
    rows = index.conn.execute(f"SELECT {_COLUMNS}, trained_from_text FROM proposals WHERE id = ?",
                              (ref,)).fetchall()
    if not rows and len(ref) >= 4:
        rows = index.conn.execute(
            f"SELECT {_COLUMNS}, trained_from_text FROM proposals WHERE substr(id, 1, ?) = ?"
            " OR branch = ? ORDER BY created_at", (len(ref), ref, ref)).fetchall()
    if not rows:
        raise UnknownProposal(f"no proposal {ref!r}; `skillopt-sleep review --all` lists every id.")
    if len(rows) > 1:
        ids = ", ".join(f"{r[0]} ({r[6]})" for r in rows[:5])
        raise UnknownProposal(f"{ref!r} matches {len(rows)} proposals: {ids}; give the full id.")
    return Row(_proposal(rows[0][:-1]), rows[0][-1])


def select(index: Index, *, include_decided: bool = False, project: str | None = None,
           skill_path: str | None = None, within: str | None = None) -> list[Row]:
    """Proposals, oldest first; pending only unless ``include_decided``. ``within`` (the CLI's
    default scope): the proposals of work trees at or below that folder, and those of skills
    outside any repository that a night of a project there staged."""
    sql = f"SELECT {_COLUMNS}, trained_from_text FROM proposals WHERE 1=1"
    args: list[Any] = []
    if not include_decided:
        sql += " AND state = 'pending'"
    if project is not None:
        sql += " AND project_dir = ?"
        args.append(project)
    if within is not None:
        (here, here_args), (night, night_args) = within_sql("project_dir", within), within_sql("project", within)
        sql += f" AND ({here} OR (project_dir IS NULL AND cycle_id IN (SELECT id FROM cycles WHERE {night})))"
        args += here_args + night_args
    if skill_path is not None:
        sql += " AND skill_path = ?"
        args.append(skill_path)
    sql += " ORDER BY created_at, id"
    return [Row(_proposal(r[:-1]), r[-1]) for r in index.conn.execute(sql, args)]


def decide(index: Index, proposal_id: str, state: str, *, by: str, reason: str | None = None,
           adopted_commit: str | None = None, branch_deleted: bool = False) -> str:
    """Record a decision on a pending proposal; returns its time. Raises if already decided."""
    at = utc_now()
    cur = index.conn.execute(
        "UPDATE proposals SET state = ?, decided_at = ?, decided_by = ?, reason = ?,"
        " adopted_commit = ?, branch_deleted = ? WHERE id = ? AND state = 'pending'",
        (state, at, by, reason, adopted_commit, int(branch_deleted), proposal_id))
    if cur.rowcount != 1:
        raise UnknownProposal(f"proposal {proposal_id} is not pending any more (decided elsewhere?); "
                              "`skillopt-sleep review --all` shows its state.")
    return at


def undo(index: Index, proposal_id: str, *, by: str) -> str:
    """Record that an adopted proposal was undone (its live file has its old text again)."""
    at = utc_now()
    cur = index.conn.execute(
        "UPDATE proposals SET state = 'undone', reason = ? WHERE id = ? AND state = 'adopted'",
        (f"adoption undone by {by} at {at}", proposal_id))
    if cur.rowcount != 1:
        raise UnknownProposal(f"proposal {proposal_id} is not adopted any more (undone elsewhere?); "
                              "`skillopt-sleep review --all` shows its state.")
    return at


def set_branch_deleted(index: Index, proposal_id: str) -> None:
    index.conn.execute("UPDATE proposals SET branch_deleted = 1 WHERE id = ?", (proposal_id,))


def _proposal(row: sqlite3.Row | tuple) -> Proposal:
    (pid, created_at, night, state, store, project_dir, repo_dir, skill_path, tree_path, skill_name,
     branch, commit, parent, trained_sha, cand_sha, base_val, cand_val, n_edits, cycle_id, report,
     decided_at, decided_by, reason, adopted_commit, branch_deleted) = row
    return Proposal(
        id=pid, state=state, created_at=created_at, night=night, store=store, project=project_dir,
        repo=repo_dir, skill_path=skill_path, tree_path=tree_path, skill_name=skill_name, branch=branch,
        commit=commit, parent=parent, trained_from_sha256=trained_sha, candidate_sha256=cand_sha,
        baseline_val=base_val, candidate_val=cand_val, n_edits=n_edits, cycle_id=cycle_id,
        report=ProposalReport.from_dict(orjson.loads(report)), decided_at=decided_at,
        decided_by=decided_by, reason=reason, adopted_commit=adopted_commit,
        branch_deleted=bool(branch_deleted))
