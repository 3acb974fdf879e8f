"""Stage a proposal: one branch, one commit, built from git objects.

The commit's parent is the repository's ``HEAD`` (in SkillOpt's skills
repository: ``main`` after recording the live file there) and its tree is the
parent's tree with only the skill file replaced or added. The commit message
carries the proposal id and this index's identity. The order makes a crash or
error harmless: the operation is journalled first (:mod:`.journal`), then
objects are written (unreachable until referenced), then the branch, created
atomically and never over an existing one or under a name any proposal has
used, then the note, then the index row, which deletes the journal record in
the same transaction. A failure undoes the branch and the note at once; a
kill leaves the journal record, and the next command of any kind undoes them.
The person's HEAD, index file, working tree, stash and config are never
written. Operations on one repository are serialised by a lock file in the
data directory, so two stagings at once get two branches and one notes history.
A branch this index did not journal is never deleted here: another index
(another ``SKILLOPT_HOME``, or an index moved aside) may own it.
"""

from __future__ import annotations

import hashlib
import os
import time
from datetime import date
from pathlib import Path

import git
import orjson

from sleep import crashpoints, paths
from sleep.index import Index
from sleep.proposals import gitobjects as g
from sleep.proposals import journal, store
from sleep.proposals import message as msg
from sleep.proposals.errors import (
    CandidateSecretError,
    DuplicateProposal,
    GitFailed,
    NotARepositoryError,
    NothingToPropose,
    ProposalError,
)
from sleep.proposals.lesson import duplicate_of, lesson_key
from sleep.proposals.locate import SKILLS_MAIN, Location, locate, open_repo
from sleep.proposals.model import Proposal, ProposalReport
from sleep.proposals.naming import branch_name, new_proposal_id, skill_name_of
from sleep.proposals.package import write_files

MAX_BRANCH_ATTEMPTS = 100


def sha256(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


def stage(skill_path: str | os.PathLike, candidate_text: str | None, report: ProposalReport | None = None, *,
          trained_from_text: str | None = None, night: date | None = None,
          project: str | os.PathLike | None = None, index: Index | None = None,
          files: dict[str, bytes] | None = None, modes: dict[str, str] | None = None) -> Proposal:
    """Stage ``candidate_text`` as a proposal for the live skill file ``skill_path``.

    ``trained_from_text`` is the exact text the night trained from (read with
    ``newline=""``); None means "the live file as it is now" (absent for a new
    skill). ``night`` names the branch (default: today, local time). With
    ``project``, the skill file must be inside it. ``files``: other files of the skill's folder
    (relative paths) the proposal adds or replaces, with git ``modes`` (a package proposal,
    :mod:`sleep.proposals.package`). ``candidate_text`` None proposes deleting
    the file (retiring the skill; adopting deletes it, undo restores its bytes). Raises a
    :class:`~sleep.proposals.errors.ProposalError` for bad input, leaving
    nothing behind.
    """
    loc = locate(skill_path, project)
    live = loc.live_path.read_bytes() if loc.live_path.is_file() else None
    trained = trained_from_text.encode("utf-8") if trained_from_text is not None else live
    candidate = candidate_text.encode("utf-8") if candidate_text is not None else None  # None: delete the file
    if candidate is None and live is None:
        raise NothingToPropose(f"there is no file {loc.live_path} to retire; there is nothing to propose.")
    if trained is not None and candidate == trained and not files:
        raise NothingToPropose(f"the candidate is identical to the text it was trained from "
                               f"({loc.live_path}); there is nothing to propose.")
    trained_text = trained.decode("utf-8", "replace") if trained is not None else None
    index_path = index.path if index is not None else paths.index_path()  # whose remembered secrets apply
    leaks: list[tuple[int | str, str]] = list(msg.new_secrets(candidate_text or "", trained_text, index_path))
    for rel, data in sorted((files or {}).items()):  # a package's other files: every line is new
        text = data.decode("utf-8", "replace")
        leaks += [(f"{rel}:{n}", kind) for n, kind in msg.new_secrets(text, None, index_path)]
    if leaks:
        where = "; ".join(f"line {n}: {kind}" for n, kind in leaks[:5])
        raise CandidateSecretError(f"the candidate contains what looks like a secret the live skill does not "
                                   f"({where}). Nothing was staged; remove it from the candidate first.")
    report, _ = msg.redact_report(report or ProposalReport(source="candidate"), index_path)
    night = night or date.today()
    own_index = index is None
    index = index or Index.open()
    try:
        with journal.repo_lock(loc.repo.common_dir) as lock_path:
            journal.recover(index, held=lock_path)
            return _stage_locked(loc, live, trained, trained_text, candidate, candidate_text, report, night, index,
                                 lock_path, files or {}, modes or {})
    finally:
        if own_index:
            index.close()


def _stage_locked(loc: Location, live: bytes | None, trained: bytes | None, trained_text: str | None,
                  candidate: bytes | None, candidate_text: str | None, report: ProposalReport, night: date,
                  index: Index, lock_path: Path, files: dict[str, bytes], modes: dict[str, str]) -> Proposal:
    repo = loc.repo
    same = duplicate_of(index, str(loc.live_path), candidate_text or "", report.lesson_evidence)
    if same is not None:
        raise DuplicateProposal(
            f"the candidate is the same lesson as proposal {same.id} ({same.state}, branch {same.branch}, "
            f"night {same.night}); nothing new was staged."
            + (" It was rejected and its evidence has not changed since." if same.state == "rejected" else ""), same)
    pid = _fresh_id(index)
    op = journal.begin(index, "stage", pid, loc.repo_dir, lock_path,
                       {"notes_before": g.ref_target(repo, g.NOTES_REF)})
    try:
        proposal = _write(loc, live, trained, trained_text, candidate, candidate_text, report, night, index, op,
                          files, modes)
    except BaseException:
        try:
            undo_staging(index, op)
        except Exception:
            pass
        raise
    crashpoints.reached("index row")
    return proposal


def _write(loc: Location, live: bytes | None, trained: bytes | None, trained_text: str | None,
           candidate: bytes | None, candidate_text: str | None, report: ProposalReport, night: date, index: Index,
           op: journal.Operation, files: dict[str, bytes] | None = None,
           modes: dict[str, str] | None = None) -> Proposal:
    repo, parts, pid = loc.repo, tuple(loc.tree_path.split("/")), op.proposal_id
    when = f"{int(time.time())} +0000"
    parent = _skills_repo_base(loc, live, when) if loc.store == "skills-repo" else g.resolve(repo, "HEAD")
    assert parent is not None  # locate() sends repositories without commits to the skills repo
    base_tree = g.tree_of(repo, parent)
    committed = g.blob_at(repo, base_tree, parts)
    committed_bytes = g.read_blob(repo, committed.sha) if committed is not None else None
    tree = g.replace_path(repo, base_tree, parts, g.write_blob(repo, candidate) if candidate is not None else None)
    if files:
        if loc.store != "project":
            raise ProposalError("a package proposal (files besides SKILL.md) needs the skill inside a project's git "
                                f"repository; {loc.live_path} is not")
        tree, package = write_files(repo, tree, loc.tree_path, loc.live_path.parent, files, modes or {})
        report = report.with_(package=package, kind="package")
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
        (committed_bytes or b"").decode("utf-8", "replace"), candidate_text or "")
    report = report.with_(trained_from_sha256=sha256(trained), candidate_sha256=sha256(candidate),
                          lesson_sha256=lesson_key(candidate_text or ""), uncommitted_changes=uncommitted, notes=notes)
    message = msg.scrub_message(msg.commit_message(skill, report, pid, n_edits, index_id=index.identity), index)
    commit = g.commit_tree(repo, tree, [parent], message, when)
    journal.update(index, op, "commit", commit=commit)
    branch = _create_branch(repo, index, skill, night, commit, pid)
    proposal = Proposal(
        id=pid, state="pending", created_at=store.now(), night=night.isoformat(), store=loc.store,
        project=loc.project, repo=loc.repo_dir, skill_path=str(loc.live_path), tree_path=loc.tree_path,
        skill_name=skill, branch=branch, commit=commit, parent=parent,
        trained_from_sha256=report.trained_from_sha256, candidate_sha256=report.candidate_sha256 or "",
        baseline_val=report.baseline_val, candidate_val=report.candidate_val, n_edits=n_edits,
        cycle_id=report.cycle_id, report=report)
    g.add_note(repo, commit, msg.note_text(report, proposal_id=pid, skill=skill, branch=branch,
                                           tree_path=loc.tree_path, night=proposal.night, index=index))
    with index.transaction():
        store.insert(index, proposal, trained_text)
        journal.finish(index, op)
    return proposal


def undo_staging(index: Index, op: journal.Operation) -> str:
    """Remove what an unfinished staging wrote (its branch and note) and its journal record.

    Only refs that point at the staging's own commit are deleted (compare and
    delete), so nothing another process or index made is touched.
    """
    commit = op.data.get("commit")
    removed: list[str] = []
    if commit:
        try:
            repo = open_repo(op.repo_dir)
        except NotARepositoryError:
            repo = None
        if repo is not None:
            listing = g.run(repo, "for-each-ref", "--format=%(refname)", f"--points-at={commit}",
                            "refs/heads/skillopt/")
            for ref in str(listing).split():
                if g.delete_ref(repo, ref, commit):
                    removed.append(ref[len("refs/heads/"):])
            _undo_note(repo, op.data.get("notes_before"), commit)
    with index.transaction():
        journal.finish(index, op)
    what = f" (removed its branch {', '.join(removed)} and note)" if removed else ""
    return f"undid the interrupted staging of proposal {op.proposal_id} in {op.repo_dir}{what}"


def _undo_note(repo: git.Repo, notes_before: str | None, commit: str) -> None:
    """Take back the note a staging added to ``commit``.

    When the notes ref is still at the notes commit that added only that note,
    the ref goes back to where it was (so the note leaves no history); when
    another note was added since, only this note is removed.
    """
    now = g.ref_target(repo, g.NOTES_REF)
    if now is None or now == notes_before:
        return
    if g.only_note_added(repo, notes_before, now, commit):
        if notes_before is None:
            if g.delete_ref(repo, g.NOTES_REF, now):
                return
        else:
            try:
                g.update_ref(repo, g.NOTES_REF, notes_before, now, "skillopt-sleep: undo a failed staging")
                return
            except GitFailed:
                pass
    if g.read_note(repo, commit) is not None:
        g.remove_note(repo, commit)


def _create_branch(repo: git.Repo, index: Index, skill: str, night: date, commit: str, pid: str) -> str:
    """The first free name of ``skillopt/<skill>/<night>[-N]``: free means no ref has it, no
    proposal of this index and no note in the repository names it (a name is never reused,
    so a record or a note can never come to mean another proposal's branch)."""
    used = store.branch_names(index) | _names_in_notes(repo)
    for attempt in range(1, MAX_BRANCH_ATTEMPTS + 1):
        name = branch_name(skill, night, attempt)
        if name in used:
            continue
        ref = f"refs/heads/{name}"
        if not g.check_ref_format(repo, ref):  # sanitize() makes this unreachable; keep the guard
            raise GitFailed(f"refusing to create the invalid branch name {name!r}")
        if g.create_ref(repo, ref, commit, f"skillopt-sleep: stage proposal {pid}"):
            return name
    raise GitFailed(f"{MAX_BRANCH_ATTEMPTS} branches named {branch_name(skill, night)}[-N] already exist; "
                    "reject or delete some (`skillopt-sleep review --all`).")


def _names_in_notes(repo: git.Repo) -> set[str]:
    """The branch names the repository's SkillOpt notes (any index's) record."""
    names = set()
    for text in g.all_notes(repo):
        try:
            branch = orjson.loads(text).get("branch")
        except (orjson.JSONDecodeError, AttributeError):
            continue
        if isinstance(branch, str):
            names.add(branch)
    return names


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


def record_in_skills_repo(loc_repo: git.Repo, tree_path: str, live_path: str, text: bytes | None, subject: str) -> str:
    """Commit ``text`` at ``tree_path`` on the skills repository's ``main`` (after an adopt;
    the caller holds the repository's lock)."""
    when = f"{int(time.time())} +0000"
    main = g.ref_target(loc_repo, SKILLS_MAIN)
    base = g.tree_of(loc_repo, main) if main else None
    blob = g.write_blob(loc_repo, text) if text is not None else None  # None: the skill was retired
    tree = g.replace_path(loc_repo, base, tuple(tree_path.split("/")), blob)
    commit = g.commit_tree(loc_repo, tree, [main] if main else [], f"{subject}\n\nLive file: {live_path}\n", when)
    g.update_ref(loc_repo, SKILLS_MAIN, commit, main, "skillopt-sleep: adopt")
    return commit


def _fresh_id(index: Index) -> str:
    while True:
        pid = new_proposal_id()
        if not store.id_taken(index, pid):
            return pid
