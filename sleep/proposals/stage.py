"""Stage a proposal: one branch, one commit, built from git objects.

The commit's parent is the repository's ``HEAD`` (in SkillOpt's skills
repository: ``main`` after recording the live file there) and its tree is the
parent's tree with only the skill file replaced or added. The order makes a
crash or error harmless: objects first (unreachable until referenced), then
the branch, created atomically and never over an existing one, then the note
and the index row; if either of those fails the branch and note are removed
again. The person's HEAD, index file, working tree, stash and config are
never written. Stagings of one repository are serialised by a lock file in
the data directory, so two at once get two branches and one notes history.
"""

from __future__ import annotations

import hashlib
import os
import re
import time
from contextlib import contextmanager
from datetime import date
from pathlib import Path
from typing import Iterator

import git

from sleep import paths
from sleep.index import Index
from sleep.lock import FileLock
from sleep.proposals import gitobjects as g
from sleep.proposals import message as msg
from sleep.proposals import store
from sleep.proposals.errors import CandidateSecretError, GitFailed, NothingToPropose
from sleep.proposals.locate import SKILLS_MAIN, Location, locate
from sleep.proposals.model import Proposal, ProposalReport
from sleep.proposals.naming import branch_name, new_proposal_id, skill_name_of

MAX_BRANCH_ATTEMPTS = 100
LOCK_WAIT_S = 60.0


def sha256(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


def stage(skill_path: str | os.PathLike, candidate_text: str, report: ProposalReport | None = None, *,
          trained_from_text: str | None = None, night: date | None = None,
          project: str | os.PathLike | None = None, index: Index | None = None) -> Proposal:
    """Stage ``candidate_text`` as a proposal for the live skill file ``skill_path``.

    ``trained_from_text`` is the exact text the night trained from (read with
    ``newline=""``); None means "the live file as it is now" (absent for a new
    skill). ``night`` names the branch (default: today, local time). With
    ``project``, the skill file must be inside it. Raises a
    :class:`~sleep.proposals.errors.ProposalError` for bad input, leaving
    nothing behind.
    """
    loc = locate(skill_path, project)
    live = loc.live_path.read_bytes() if loc.live_path.is_file() else None
    trained = trained_from_text.encode("utf-8") if trained_from_text is not None else live
    candidate = candidate_text.encode("utf-8")
    if trained is not None and candidate == trained:
        raise NothingToPropose(f"the candidate is identical to the text it was trained from "
                               f"({loc.live_path}); there is nothing to propose.")
    trained_text = trained.decode("utf-8", "replace") if trained is not None else None
    index_path = index.path if index is not None else paths.index_path()  # whose remembered secrets apply
    leaks = msg.new_secrets(candidate_text, trained_text, index_path)
    if leaks:
        where = "; ".join(f"line {n}: {kind}" for n, kind in leaks[:5])
        raise CandidateSecretError(f"the candidate contains what looks like a secret the live skill does not "
                                   f"({where}). Nothing was staged; remove it from the candidate first.")
    report, _ = msg.redact_report(report or ProposalReport(source="candidate"), index_path)
    night = night or date.today()
    own_index = index is None
    index = index or Index.open()
    try:
        with _repo_lock(loc.repo):
            return _stage_locked(loc, live, trained, trained_text, candidate, candidate_text, report, night, index)
    finally:
        if own_index:
            index.close()


def _stage_locked(loc: Location, live: bytes | None, trained: bytes | None, trained_text: str | None,
                  candidate: bytes, candidate_text: str, report: ProposalReport, night: date,
                  index: Index) -> Proposal:
    repo, parts = loc.repo, tuple(loc.tree_path.split("/"))
    sweep_orphans(repo, index)
    when = f"{int(time.time())} +0000"
    parent = _skills_repo_base(loc, live, when) if loc.store == "skills-repo" else g.resolve(repo, "HEAD")
    assert parent is not None  # locate() sends repositories without commits to the skills repo
    base_tree = g.tree_of(repo, parent)
    committed = g.blob_at(repo, base_tree, parts)
    committed_bytes = g.read_blob(repo, committed.sha) if committed is not None else None
    tree = g.replace_path(repo, base_tree, parts, g.write_blob(repo, candidate))
    if tree == base_tree:
        raise NothingToPropose(f"the candidate is identical to the committed {loc.tree_path}; "
                               "there is nothing to propose.")
    notes = list(report.notes) + ([loc.note] if loc.note else [])
    uncommitted = loc.store == "project" and live != committed_bytes
    if uncommitted:
        notes.append("the live file had uncommitted changes; the night trained from the working-tree "
                     "text, and the branch diff against HEAD includes those changes.")
    if trained != live:
        notes.append("the live file changed while the night ran; this proposal is stale from the start.")
    skill = skill_name_of(loc.live_path)
    n_edits = msg.applied_edits(report) if report.edits else msg.changed_hunks(
        (committed_bytes or b"").decode("utf-8", "replace"), candidate_text)
    report = report.with_(trained_from_sha256=sha256(trained), candidate_sha256=sha256(candidate),
                          uncommitted_changes=uncommitted, notes=notes)
    pid = _fresh_id(index)
    message = msg.scrub_message(msg.commit_message(skill, report, pid, n_edits), index)
    commit = g.commit_tree(repo, tree, [parent], message, when)
    branch = _create_branch(repo, skill, night, commit, pid)
    proposal = Proposal(
        id=pid, state="pending", created_at=store.now(), night=night.isoformat(), store=loc.store,
        project=loc.project, repo=loc.repo_dir, skill_path=str(loc.live_path), tree_path=loc.tree_path,
        skill_name=skill, branch=branch, commit=commit, parent=parent,
        trained_from_sha256=report.trained_from_sha256, candidate_sha256=report.candidate_sha256 or "",
        baseline_val=report.baseline_val, candidate_val=report.candidate_val, n_edits=n_edits,
        cycle_id=report.cycle_id, report=report)
    notes_before = g.ref_target(repo, g.NOTES_REF)
    try:
        g.add_note(repo, commit, msg.note_text(report, proposal_id=pid, skill=skill, branch=branch,
                                               tree_path=loc.tree_path, night=proposal.night, index=index))
        with index.transaction():
            store.insert(index, proposal, trained_text)
    except BaseException:
        g.delete_ref(repo, f"refs/heads/{branch}", commit)
        _undo_note(repo, notes_before)
        raise
    return proposal


_PROPOSAL_TRAILER = re.compile(r"^SkillOpt-Proposal: ([0-9a-f]{8})$", re.M)


def sweep_orphans(repo: git.Repo, index: Index) -> list[str]:
    """Delete ``skillopt/*`` branches whose proposal never reached the index (a
    staging killed between creating the branch and recording it); returns them.
    Only branches whose tip is a SkillOpt-Sleep commit with a proposal trailer
    are considered, and only while the repository's staging lock is held."""
    listing = g.run(repo, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads/skillopt/")
    removed = []
    for line in str(listing).splitlines():
        ref, _, sha = line.partition(" ")
        message = str(g.run(repo, "log", "-1", "--format=%an%n%B", sha))
        found = _PROPOSAL_TRAILER.search(message)
        if not message.startswith("SkillOpt-Sleep\n") or found is None or store.id_taken(index, found.group(1)):
            continue
        if g.delete_ref(repo, ref, sha):
            removed.append(ref[len("refs/heads/"):])
    return removed


def _undo_note(repo: git.Repo, notes_before: str | None) -> None:
    """Put the notes ref back where it was before this staging added its note."""
    now = g.ref_target(repo, g.NOTES_REF)
    if now is None or now == notes_before:
        return
    if notes_before is None:
        g.delete_ref(repo, g.NOTES_REF, now)
    else:
        try:
            g.update_ref(repo, g.NOTES_REF, notes_before, now, "skillopt-sleep: undo a failed staging")
        except GitFailed:
            pass


def _create_branch(repo: git.Repo, skill: str, night: date, commit: str, pid: str) -> str:
    for attempt in range(1, MAX_BRANCH_ATTEMPTS + 1):
        name = branch_name(skill, night, attempt)
        ref = f"refs/heads/{name}"
        if not g.check_ref_format(repo, ref):  # sanitize() makes this unreachable; keep the guard
            raise GitFailed(f"refusing to create the invalid branch name {name!r}")
        if g.create_ref(repo, ref, commit, f"skillopt-sleep: stage proposal {pid}"):
            return name
    raise GitFailed(f"{MAX_BRANCH_ATTEMPTS} branches named {branch_name(skill, night)}[-N] already exist; "
                    "reject or delete some (`skillopt-sleep review --all`).")


def _skills_repo_base(loc: Location, live: bytes | None, when: str) -> str:
    """``main`` of the skills repository with the live file's current text recorded."""
    repo, parts = loc.repo, tuple(loc.tree_path.split("/"))
    main = g.ref_target(repo, SKILLS_MAIN)
    if main is None:
        root = g.commit_tree(repo, g.mktree(repo, []), [], "SkillOpt skills repository\n", when)
        g.update_ref(repo, SKILLS_MAIN, root, None, "skillopt-sleep: create the skills repository")
        main = root
    main_tree = g.tree_of(repo, main)
    recorded = g.blob_at(repo, main_tree, parts)
    live_blob = g.write_blob(repo, live) if live is not None else None
    if (recorded.sha if recorded else None) == live_blob:
        return main
    tree = g.replace_path(repo, main_tree, parts, live_blob)
    what = "removed" if live is None else "recorded"
    snap = g.commit_tree(repo, tree, [main], f"snapshot: {loc.tree_path} {what}\n\nLive file: {loc.live_path}\n", when)
    g.update_ref(repo, SKILLS_MAIN, snap, main, "skillopt-sleep: record the live skill")
    return snap


def record_in_skills_repo(loc_repo: git.Repo, tree_path: str, live_path: str, text: bytes, subject: str) -> str:
    """Commit ``text`` at ``tree_path`` on the skills repository's ``main`` (after an adopt)."""
    with _repo_lock(loc_repo):
        when = f"{int(time.time())} +0000"
        main = g.ref_target(loc_repo, SKILLS_MAIN)
        base = g.tree_of(loc_repo, main) if main else None
        tree = g.replace_path(loc_repo, base, tuple(tree_path.split("/")), g.write_blob(loc_repo, text))
        commit = g.commit_tree(loc_repo, tree, [main] if main else [], f"{subject}\n\nLive file: {live_path}\n", when)
        g.update_ref(loc_repo, SKILLS_MAIN, commit, main, "skillopt-sleep: adopt")
        return commit


def _fresh_id(index: Index) -> str:
    while True:
        pid = new_proposal_id()
        if not store.id_taken(index, pid):
            return pid


@contextmanager
def _repo_lock(repo: git.Repo) -> Iterator[None]:
    """One staging (or skills-repository update) per repository at a time."""
    key = hashlib.sha1(str(Path(repo.common_dir).resolve()).encode()).hexdigest()[:16]
    lock = FileLock(paths.data_dir() / "locks" / f"proposals-{key}.lock", what="proposal staging")
    lock.acquire(wait=LOCK_WAIT_S)
    try:
        yield
    finally:
        lock.release()
