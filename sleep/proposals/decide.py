"""The morning decisions: adopt a proposal into the live skill file, or reject it.

Adopt writes the candidate (the skill file at the branch's tip) to the live
file atomically, and only if the live file still has the exact text the night
trained from; with ``commit`` it also commits that one file on the current
branch (refused up front if the index is locked or has staged changes, and
undone if the commit fails), then deletes the proposal's branch and note
unless asked to keep them (``delete_branch=False``, ``adopt --keep-branch``): a
decided proposal leaves nothing for ``git push --all`` or ``git log --all``
(when the last note goes, the notes ref goes too). Reject deletes the branch and
its note and keeps the record. Both record who and when in the index; neither deletes a branch
that has moved since staging (the person's commits on it are theirs), and
neither uses a branch that no longer leads to the proposal's commit.

One decision per proposal: each is taken under the repository's lock, which
is held from re-reading the proposal (still pending?) through the file write
and the git steps to recording the outcome, and is journalled
(:mod:`.journal`). An adoption is undone, after a kill, until its git record
exists (the ``--commit`` commit, or the skills repository's record) or the
decision is recorded; from then on it is finished. A rejection is finished.
"""

from __future__ import annotations

import base64
import difflib
import getpass
import hashlib
from dataclasses import dataclass, field
from pathlib import Path

import git

from sleep import crashpoints
from sleep.index import Index
from sleep.integrations.managed import atomic_write
from sleep.proposals import gitobjects as g
from sleep.proposals import journal, package, store
from sleep.proposals.errors import (
    BranchMissing,
    GitFailed,
    IndexBusy,
    LiveFileChanged,
    NotARepositoryError,
    NothingToAdopt,
    ProposalDecided,
    UnknownProposal,
)
from sleep.proposals.gitindex import restore_index
from sleep.proposals.locate import SKILLS_MAIN, open_repo
from sleep.proposals.model import Proposal
from sleep.proposals.review import _index, live_sha256, proposal_tip
from sleep.proposals.stage import record_in_skills_repo, sha256

_PATHS = {"GIT_LITERAL_PATHSPECS": "1"}


@dataclass(frozen=True)
class Decision:
    """What adopt or reject did. ``messages`` are sentences for the person."""

    proposal: Proposal
    wrote_file: bool = False
    commit: str | None = None  # adopt --commit (or the skills repository's record)
    branch_deleted: bool = False
    messages: list[str] = field(default_factory=list)


def adopt(ref: str, *, commit: bool = False, delete_branch: bool = True, by: str | None = None,
          index: Index | None = None) -> Decision:
    """Make the proposal's candidate the live skill file (see the module docstring)."""
    with _index(index) as idx:
        p = _pending(store.get(idx, ref).proposal)
        repo = open_repo(p.repo)
        with journal.repo_lock(repo.common_dir) as lock_path:
            row = store.get(idx, p.id)  # decided by another process while we waited?
            _pending(row.proposal)
            return _adopt_locked(idx, repo, row, lock_path, commit=commit, delete_branch=delete_branch,
                                 by=by or _who())


def _adopt_locked(idx: Index, repo: git.Repo, row: store.Row, lock_path: Path, *, commit: bool,
                  delete_branch: bool, by: str) -> Decision:
    p = row.proposal
    tip = proposal_tip(repo, p)
    if tip is None:
        raise BranchMissing(f"the branch {p.branch} of proposal {p.id} no longer exists in {p.repo}, so there "
                            f"is nothing to adopt. Close it with `skillopt-sleep reject {p.id}`, or re-run the night.")
    entry = g.blob_at(repo, g.tree_of(repo, tip), tuple(p.tree_path.split("/")))
    retire = p.report.kind == "retire"  # the branch deletes the file: adopting deletes the live file
    if entry is None and not retire:
        raise BranchMissing(f"the branch {p.branch} no longer holds {p.tree_path}; nothing to adopt.")
    candidate = g.read_blob(repo, entry.sha) if entry is not None else None
    messages = [] if tip == p.commit else [
        f"the branch {p.branch} moved since staging; adopted the file at its tip {tip[:12]}."]
    live_path = Path(p.skill_path)
    before = live_path.read_bytes() if live_path.is_file() else None
    in_place = before == candidate
    twin = _adopted_twin(idx, p) if in_place else None
    if twin is not None:  # one proposal per lesson: the live text came from adopting its twin
        raise NothingToAdopt(f"proposal {p.id} changes nothing: the live file {p.skill_path} already has its text, "
                             f"adopted with proposal {twin.id} (the same lesson). Nothing was written or recorded; "
                             f"close it with `skillopt-sleep reject {p.id}`.")
    if not in_place and sha256(before) != p.trained_from_sha256:
        raise LiveFileChanged(_changed(p, before, row.trained_from_text))
    project = p.store == "project"
    extra = p.report.package if p.report.kind == "package" else {}
    skill_dir = live_path.parent
    if extra and not in_place:
        package.check_live(skill_dir, extra, "before_sha256")  # every file as staged, or nothing is written
    if project and commit:
        _check_index(repo, p)
    index_file = Path(repo.git_dir) / "index"
    saved = index_file.read_bytes() if project and commit and index_file.is_file() else None
    op = journal.begin(idx, "adopt", p.id, p.repo, lock_path, {
        "live": p.skill_path, "before": _b64(before), "in_place": in_place, "candidate_sha256": sha256(candidate),
        "tip": tip, "commit": commit, "delete_branch": delete_branch, "by": by,
        "head_before": g.resolve(repo, "HEAD") if project else None,
        "main_before": None if project else g.ref_target(repo, SKILLS_MAIN),
        "package_before": package.snapshot(skill_dir, extra) if extra else None}, saved=saved)
    made: str | None = None
    try:
        if not in_place:
            if candidate is None:
                live_path.unlink()
            else:
                _atomic_write(live_path, candidate)
            for rel, info in sorted(extra.items()):  # the package's other files, from the branch tip
                package.put(skill_dir / rel, package.file_bytes(repo, tip, p.tree_path, rel), info.get("mode"))
            crashpoints.reached("write file")
        if project:
            if commit and _committed_text(repo, p) == candidate:
                messages.append(f"{p.tree_path} is already committed with the candidate's text.")
            elif commit:
                made = _commit_file(repo, p)
        else:
            made = record_in_skills_repo(repo, p.tree_path, p.skill_path, candidate, f"adopt {p.id}: {p.tree_path}")
            if commit:
                messages.append("recorded in SkillOpt's skills repository (--commit applies to project repositories).")
    except BaseException as exc:
        try:
            _undo_adopt(idx, op, repo)
        except Exception:
            pass
        if isinstance(exc, GitFailed) and commit:
            raise GitFailed(f"{exc}. The live file was restored; adopt again without --commit, or fix the "
                            "commit problem first.") from None
        raise
    if in_place:
        messages.append(f"{p.skill_path} already had the candidate's text; recorded the adoption.")
    return _finish_adopt(idx, op, repo, p, made, messages)


def _finish_adopt(idx: Index, op: journal.Operation, repo: git.Repo | None, p: Proposal, made: str | None,
                  messages: list[str]) -> Decision:
    """Record the adoption (the point of no return), then delete the branch if asked."""
    with idx.transaction():
        if store.get(idx, p.id).proposal.state == "pending":
            store.decide(idx, p.id, "adopted", by=op.data["by"], adopted_commit=made)
        journal.update(idx, op, "decided", made=made)
    tip = g.ref_target(repo, f"refs/heads/{p.branch}") if repo is not None else None
    deleted = op.data["delete_branch"] and _deleted_by_this(op, p, tip)
    if repo is not None and op.data["delete_branch"] and tip is not None:
        deleted = _drop_branch(repo, p, tip, messages)
    elif repo is not None and op.data["delete_branch"] and deleted:  # no repository: no note to remove
        _remove_note(repo, p, messages)
    with idx.transaction():
        if deleted:
            store.set_branch_deleted(idx, p.id)
        journal.finish(idx, op)
    decided = store.get(idx, p.id).proposal
    return Decision(decided, wrote_file=not op.data["in_place"], commit=decided.adopted_commit,
                    branch_deleted=decided.branch_deleted, messages=messages)


def settle_adopt(idx: Index, op: journal.Operation) -> str:
    """After a kill: finish an adoption whose git record or decision exists, else undo it."""
    try:
        p = store.get(idx, op.proposal_id).proposal
    except UnknownProposal:
        with idx.transaction():
            journal.finish(idx, op)
        return f"dropped the record of an interrupted adoption of the unknown proposal {op.proposal_id}"
    repo = _open_or_none(op.repo_dir)
    made = op.data.get("made") if op.step == "decided" else _adoption_record(repo, op, p)
    if op.step == "decided" or made is not None or p.state == "adopted":
        _finish_adopt(idx, op, repo, p, made, [])
        return f"finished the interrupted adoption of proposal {p.id} ({p.skill_path})"
    _undo_adopt(idx, op, repo)
    return f"undid the interrupted adoption of proposal {p.id}: {p.skill_path} is as it was, and it is still pending"


def _adoption_record(repo: git.Repo | None, op: journal.Operation, p: Proposal) -> str | None:
    """The commit an interrupted adoption made (``--commit``'s, or the skills repository's), if any."""
    if repo is None:
        return None
    d = op.data
    if p.store == "project":
        if not d.get("commit"):
            return None
        now, before, mark = g.resolve(repo, "HEAD"), d.get("head_before"), f"(proposal {p.id})"
    else:
        now, before, mark = g.ref_target(repo, SKILLS_MAIN), d.get("main_before"), f"adopt {p.id}:"
    if now is None or now == before:
        return None
    info = str(g.run(repo, "log", "-1", "--format=%P%n%s", now)).split("\n", 1)
    parents, subject = info[0].split(), info[1] if len(info) > 1 else ""
    return now if parents == ([before] if before else []) and mark in subject else None


def _undo_adopt(idx: Index, op: journal.Operation, repo: git.Repo | None) -> None:
    """Put the live file (and, for ``--commit``, the person's index) back; drop the record."""
    d = op.data
    live = Path(d["live"])
    if not d["in_place"] and live_sha256(str(live)) == d["candidate_sha256"]:
        before = _unb64(d["before"])
        if before is None:
            live.unlink(missing_ok=True)
        else:
            _atomic_write(live, before)
    if d.get("package_before"):
        package.restore(live.parent, d["package_before"], store.get(idx, op.proposal_id).proposal.report.package)
    if d.get("commit") and repo is not None:
        restore_index(repo, op.saved, _tree_path(idx, op))
    with idx.transaction():
        journal.finish(idx, op)


def _tree_path(idx: Index, op: journal.Operation) -> str:
    return store.get(idx, op.proposal_id).proposal.tree_path


def reject(ref: str, *, reason: str | None = None, by: str | None = None,
           index: Index | None = None) -> Decision:
    """Delete the proposal's branch and note; keep the record, report and reason."""
    with _index(index) as idx:
        p = _pending(store.get(idx, ref).proposal)
        try:
            repo = open_repo(p.repo)
        except NotARepositoryError as exc:
            store.decide(idx, p.id, "rejected", by=by or _who(), reason=reason)
            return Decision(store.get(idx, p.id).proposal, messages=[f"{exc} Recorded the rejection only."])
        with journal.repo_lock(repo.common_dir) as lock_path:
            p = _pending(store.get(idx, p.id).proposal)  # decided by another process while we waited?
            op = journal.begin(idx, "reject", p.id, p.repo, lock_path, {
                "reason": reason, "by": by or _who(), "tip": g.ref_target(repo, f"refs/heads/{p.branch}")})
            return _finish_reject(idx, op, repo, p)


def settle_reject(idx: Index, op: journal.Operation) -> str:
    """After a kill: finish the rejection (it had begun deleting the branch)."""
    try:
        p = store.get(idx, op.proposal_id).proposal
    except UnknownProposal:
        p = None
    if p is None or p.state != "pending":
        with idx.transaction():
            journal.finish(idx, op)
        return f"dropped the finished record of rejecting proposal {op.proposal_id}"
    repo = _open_or_none(op.repo_dir)
    _finish_reject(idx, op, repo, p)
    return f"finished the interrupted rejection of proposal {p.id}"


def _finish_reject(idx: Index, op: journal.Operation, repo: git.Repo | None, p: Proposal) -> Decision:
    messages: list[str] = []
    tip = g.ref_target(repo, f"refs/heads/{p.branch}") if repo is not None else None
    deleted = _deleted_by_this(op, p, tip)
    if repo is None:
        messages.append(f"the repository {p.repo} is gone; recorded the rejection only.")
    elif tip is None:
        if not deleted:
            messages.append(f"the branch {p.branch} was already gone.")
        _remove_note(repo, p, messages)
    else:
        deleted = _drop_branch(repo, p, tip, messages)
    with idx.transaction():
        store.decide(idx, p.id, "rejected", by=op.data["by"], reason=op.data.get("reason"), branch_deleted=deleted)
        journal.finish(idx, op)
    return Decision(store.get(idx, p.id).proposal, branch_deleted=deleted, messages=messages)


def _deleted_by_this(op: journal.Operation, p: Proposal, tip: str | None) -> bool:
    """Whether the branch is gone because this operation (killed after deleting it) deleted it."""
    return tip is None and op.data.get("tip") == p.commit


def _open_or_none(repo_dir: str) -> git.Repo | None:
    try:
        return open_repo(repo_dir)
    except NotARepositoryError:
        return None


def _b64(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode("ascii")


def _unb64(text: str | None) -> bytes | None:
    return None if text is None else base64.b64decode(text)


def _pending(p: Proposal) -> Proposal:
    if p.state != "pending":
        raise ProposalDecided(f"proposal {p.id} was already {p.state}"
                              + (f" on {p.decided_at[:10]}" if p.decided_at else "") + "; nothing to do.")
    return p


def _drop_branch(repo: git.Repo, p: Proposal, tip: str, messages: list[str]) -> bool:
    """Delete the branch if it still points at the staged commit, and the note."""
    if tip != p.commit:
        messages.append(f"kept the branch {p.branch}: it has moved since staging (now {tip[:12]}); "
                        f"delete it yourself with `git branch -D {p.branch}` if you no longer need it.")
        return False
    deleted = g.delete_ref(repo, f"refs/heads/{p.branch}", p.commit)
    _remove_note(repo, p, messages)
    messages.append(f"deleted the branch {p.branch}." if deleted else f"the branch {p.branch} could not be deleted.")
    return deleted


def _remove_note(repo: git.Repo, p: Proposal, messages: list[str]) -> None:
    """Remove the proposal's note; the notes ref itself once it holds no note (its history of
    "Notes added/removed" commits would otherwise stay in ``git log --all``)."""
    try:
        if g.read_note(repo, p.commit) is not None:
            g.remove_note(repo, p.commit)
        notes = g.ref_target(repo, g.NOTES_REF)
        if notes is not None and not g.ls_tree(repo, g.tree_of(repo, notes)):
            g.delete_ref(repo, g.NOTES_REF, notes)
    except GitFailed as exc:
        messages.append(f"could not remove the note of {p.commit[:12]}: {exc}")


def _changed(p: Proposal, now: bytes | None, trained_from_text: str | None) -> str:
    path = p.skill_path
    if now is None:
        what = "was deleted"
    elif p.trained_from_sha256 is None:
        what = "was created"
    else:
        old = (trained_from_text or "").splitlines()
        new = now.decode("utf-8", "replace").splitlines()
        added = removed = 0
        for line in difflib.unified_diff(old, new, lineterm="", n=0):
            if line.startswith("+") and not line.startswith("+++"):
                added += 1
            elif line.startswith("-") and not line.startswith("---"):
                removed += 1
        now_sha = hashlib.sha256(now).hexdigest()
        what = f"changed (+{added} -{removed} lines; sha256 {p.trained_from_sha256[:12]} → {now_sha[:12]})"
    return (f"the live file {path} {what} since the night trained from it, so adopting would overwrite that "
            f"work; nothing was written. Re-run the night to train from the new text, or look at "
            f"`skillopt-sleep show {p.id}` and merge by hand (then `skillopt-sleep reject {p.id}`).")


def _check_index(repo: git.Repo, p: Proposal) -> None:
    lock = Path(repo.git_dir) / "index.lock"
    if lock.exists():
        raise IndexBusy(f"another git process holds {lock}; nothing was written. Wait for it to finish "
                        f"(or remove a stale lock), then adopt again.")
    staged = [s for s in str(g.run(repo, "diff", "--cached", "--name-only", "-z")).split("\0") if s]
    if staged:
        listed = ", ".join(staged[:5]) + (" ..." if len(staged) > 5 else "")
        raise IndexBusy(f"--commit would commit on top of your staged changes ({listed}); nothing was "
                        f"written. Commit or unstage them first, or adopt without --commit.")


def _committed_text(repo: git.Repo, p: Proposal) -> bytes | None:
    head = g.resolve(repo, "HEAD")
    entry = g.blob_at(repo, g.tree_of(repo, head), tuple(p.tree_path.split("/"))) if head else None
    return g.read_blob(repo, entry.sha) if entry is not None else None


def _commit_file(repo: git.Repo, p: Proposal) -> str:
    """``git add`` and ``git commit --only`` the skill file; the caller undoes both on failure."""
    env = {**_PATHS, **_committer(repo)}
    subject = f"skillopt: adopt {p.skill_name} (proposal {p.id})"
    body = f"Adopted from branch {p.branch} (commit {p.commit[:12]})."
    paths = [p.tree_path, *(package.tree_path_of(p.tree_path, rel) for rel in
                            (p.report.package if p.report.kind == "package" else {}))]
    g.run(repo, "add", "--", *paths, env=_PATHS)
    g.run(repo, "commit", "-q", "--only", "-m", subject, "-m", body, "--", *paths, env=env)
    return str(g.resolve(repo, "HEAD"))


def _committer(repo: git.Repo) -> dict[str, str]:
    """SkillOpt-Sleep authors the text; the person commits it if git knows who they are."""
    author = {"GIT_AUTHOR_NAME": g.AUTHOR_NAME, "GIT_AUTHOR_EMAIL": g.AUTHOR_EMAIL}
    try:
        g.run(repo, "config", "user.name")
        g.run(repo, "config", "user.email")
        return author
    except GitFailed:
        return {**author, "GIT_COMMITTER_NAME": g.AUTHOR_NAME, "GIT_COMMITTER_EMAIL": g.AUTHOR_EMAIL}


def _atomic_write(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` in one rename, keeping its permissions (a new file is
    private to its owner, as the temporary file it was made from)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, data, path.stat().st_mode & 0o7777 if path.exists() else 0o600)


def _adopted_twin(idx: Index, p: Proposal) -> Proposal | None:
    """The adopted proposal of the same skill with the same lesson as ``p``, if any."""
    for row in reversed(store.select(idx, include_decided=True, skill_path=p.skill_path)):
        q = row.proposal
        if q.id != p.id and q.state == "adopted" and (q.candidate_sha256 == p.candidate_sha256 or (
                q.report.lesson_sha256 and q.report.lesson_sha256 == p.report.lesson_sha256)):
            return q
    return None


def _who() -> str:
    try:
        return getpass.getuser()
    except Exception:  # no user name in this environment (containers); still record the decision
        return "unknown"

