"""The morning decisions: adopt a proposal into the live skill file, or reject it.

Adopt writes the candidate (the skill file at the branch's tip) to the live
file atomically, and only if the live file still has the exact text the night
trained from; with ``commit`` it also commits that one file on the current
branch (refused up front if the index is locked or has staged changes, and
undone if the commit fails). Reject deletes the branch and its note and keeps
the record. Both record who and when in the index; neither deletes a branch
that has moved since staging (the person's commits on it are theirs).
"""

from __future__ import annotations

import difflib
import getpass
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import git

from sleep.index import Index
from sleep.proposals import gitobjects as g
from sleep.proposals import store
from sleep.proposals.errors import (BranchMissing, GitFailed, IndexBusy, LiveFileChanged,
                                    NotARepositoryError, ProposalDecided)
from sleep.proposals.locate import open_repo
from sleep.proposals.model import Proposal
from sleep.proposals.review import _index, live_sha256
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


def adopt(ref: str, *, commit: bool = False, delete_branch: bool = False, by: str | None = None,
          index: Index | None = None) -> Decision:
    """Make the proposal's candidate the live skill file (see the module docstring)."""
    with _index(index) as idx:
        row = store.get(idx, ref)
        p = _pending(row.proposal)
        repo = open_repo(p.repo)
        ref_name = f"refs/heads/{p.branch}"
        tip = g.ref_target(repo, ref_name)
        if tip is None:
            raise BranchMissing(f"the branch {p.branch} of proposal {p.id} no longer exists in {p.repo}, so there "
                                f"is nothing to adopt. Close it with `skillopt-sleep reject {p.id}`, or re-run the night.")
        entry = g.blob_at(repo, g.tree_of(repo, tip), tuple(p.tree_path.split("/")))
        if entry is None:
            raise BranchMissing(f"the branch {p.branch} no longer holds {p.tree_path}; nothing to adopt.")
        candidate = g.read_blob(repo, entry.sha)
        messages = [] if tip == p.commit else [
            f"the branch {p.branch} moved since staging; adopted the file at its tip {tip[:12]}."]
        live_path = Path(p.skill_path)
        before = live_path.read_bytes() if live_path.is_file() else None
        in_place = before == candidate
        if not in_place and sha256(before) != p.trained_from_sha256:
            raise LiveFileChanged(_changed(p, before, row.trained_from_text))
        made: str | None = None
        if p.store == "project":
            if commit:
                _check_index(repo, p)
            if not in_place:
                _atomic_write(live_path, candidate)
            if commit and _committed_text(repo, p) == candidate:
                messages.append(f"{p.tree_path} is already committed with the candidate's text.")
            elif commit:
                made = _commit_file(repo, p, live_path, before)
        else:
            if not in_place:
                _atomic_write(live_path, candidate)
            made = record_in_skills_repo(repo, p.tree_path, p.skill_path, candidate,
                                         f"adopt {p.id}: {p.tree_path}")
            if commit:
                messages.append("recorded in SkillOpt's skills repository (--commit applies to project repositories).")
        if in_place:
            messages.append(f"{p.skill_path} already had the candidate's text; recorded the adoption.")
        deleted = delete_branch and _drop_branch(repo, p, tip, messages)
        store.decide(idx, p.id, "adopted", by=by or _who(), adopted_commit=made, branch_deleted=deleted)
        decided = store.get(idx, p.id).proposal
    return Decision(decided, wrote_file=not in_place, commit=made, branch_deleted=deleted, messages=messages)


def reject(ref: str, *, reason: str | None = None, by: str | None = None,
           index: Index | None = None) -> Decision:
    """Delete the proposal's branch and note; keep the record, report and reason."""
    with _index(index) as idx:
        p = _pending(store.get(idx, ref).proposal)
        messages: list[str] = []
        deleted = False
        try:
            repo = open_repo(p.repo)
        except NotARepositoryError as exc:
            messages.append(f"{exc} Recorded the rejection only.")
        else:
            tip = g.ref_target(repo, f"refs/heads/{p.branch}")
            if tip is None:
                messages.append(f"the branch {p.branch} was already gone.")
            else:
                deleted = _drop_branch(repo, p, tip, messages)
        store.decide(idx, p.id, "rejected", by=by or _who(), reason=reason, branch_deleted=deleted)
        decided = store.get(idx, p.id).proposal
    return Decision(decided, branch_deleted=deleted, messages=messages)


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
    try:
        g.remove_note(repo, p.commit)
    except GitFailed as exc:
        messages.append(f"could not remove the note of {p.commit[:12]}: {exc}")
    messages.append(f"deleted the branch {p.branch}." if deleted else f"the branch {p.branch} could not be deleted.")
    return deleted


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
        what = f"changed (+{added} -{removed} lines; sha256 {p.trained_from_sha256[:12]} → {live_sha256(path)[:12]})"
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


def _commit_file(repo: git.Repo, p: Proposal, live: Path, before: bytes | None) -> str:
    env = {**_PATHS, **_committer(repo)}
    subject = f"skillopt: adopt {p.skill_name} (proposal {p.id})"
    body = f"Adopted from branch {p.branch} (commit {p.commit[:12]})."
    try:
        g.run(repo, "add", "--", p.tree_path, env=_PATHS)
        g.run(repo, "commit", "-q", "--only", "-m", subject, "-m", body, "--", p.tree_path, env=env)
    except GitFailed as exc:
        _restore(repo, p, live, before)
        raise GitFailed(f"{exc}. The live file was restored; adopt again without --commit, or fix the "
                        "commit problem first.") from None
    return str(g.resolve(repo, "HEAD"))


def _restore(repo: git.Repo, p: Proposal, live: Path, before: bytes | None) -> None:
    if before is None:
        live.unlink(missing_ok=True)
    else:
        _atomic_write(live, before)
    try:
        g.run(repo, "reset", "-q", "--", p.tree_path, env=_PATHS)
    except GitFailed:
        pass


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
    """Replace ``path`` with ``data`` in one rename (keeping its permissions)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o7777 if path.exists() else None
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".skillopt.tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _who() -> str:
    try:
        return getpass.getuser()
    except Exception:  # no user name in this environment (containers); still record the decision
        return "unknown"

