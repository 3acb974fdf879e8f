"""Reading proposals: the list for the morning review, one proposal with its diff.

A pending proposal is shown as ``stale`` when its live file no longer has the
text the night trained from, or its branch or repository is gone, or its
branch no longer leads to its commit (deleted and made again); the
``stale_reason`` says which. Nothing here writes to git or to the live file,
except that opening the index first finishes or undoes operations a killed
process left unfinished (:func:`sleep.proposals.journal.recover`).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, replace
from pathlib import Path

import git

from sleep.index import Index
from sleep.proposals import gitobjects as g
from sleep.proposals import journal, lesson, store, textdiff
from sleep.proposals.errors import BranchMissing, NotARepositoryError
from sleep.proposals.locate import open_repo
from sleep.proposals.model import Proposal


@dataclass(frozen=True)
class ProposalView:
    """A proposal with its diff: the text the night trained from → the candidate. The
    person's own edits the night found uncommitted (HEAD → trained-from text) are not
    part of the proposal and are shown apart (``pending``, "" when there were none)."""

    proposal: Proposal
    diff: str
    branch_tip: str | None  # where the branch points now (None: deleted)
    pending: str = ""


def live_sha256(path: str) -> str | None:
    p = Path(path)
    return hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else None


def stale_reason(p: Proposal) -> str | None:
    """Why a pending proposal can no longer be adopted as staged, or None."""
    current = live_sha256(p.skill_path)
    if current != p.trained_from_sha256:
        if current is not None and current == p.candidate_sha256:
            return f"the live file {p.skill_path} already has the candidate's text (merged by hand?)"
        if current is None:
            return f"the live file {p.skill_path} was deleted since the night"
        if p.trained_from_sha256 is None:
            return f"the live file {p.skill_path} was created since the night"
        return (f"the live file {p.skill_path} changed since the night "
                f"(sha256 {p.trained_from_sha256[:12]} → {current[:12]})")
    try:
        repo = open_repo(p.repo)
    except NotARepositoryError:
        return f"the repository {p.repo} is gone"
    tip = g.ref_target(repo, f"refs/heads/{p.branch}")
    if tip is None:
        return f"the branch {p.branch} was deleted"
    if proposal_tip(repo, p) is None:
        return f"the branch {p.branch} was deleted and made again: it no longer holds this proposal's commit"
    return None


def proposal_tip(repo: git.Repo, p: Proposal) -> str | None:
    """Where the proposal's branch points, if it still leads to the staged commit (the person
    may have committed on top); None when it is gone or now holds something else."""
    tip = g.ref_target(repo, f"refs/heads/{p.branch}")
    if tip is None or tip == p.commit:
        return tip
    return tip if g.is_ancestor(repo, p.commit, tip) else None


def effective(p: Proposal) -> Proposal:
    """``p`` with ``state="stale"`` and its reason when a pending proposal went stale."""
    if p.state != "pending":
        return p
    reason = stale_reason(p)
    return replace(p, state="stale", stale_reason=reason) if reason else p


def list_proposals(*, include_decided: bool = False, project: str | os.PathLike | None = None,
                   index: Index | None = None, within: str | os.PathLike | None = None) -> list[Proposal]:
    """Pending (and stale) proposals, oldest first; every proposal with ``include_decided``.

    ``project`` keeps the proposals of that repository's work tree; ``within`` (the CLI's
    default scope) those of work trees at or below that folder and of skills outside any
    repository that a night of a project there staged.
    """
    where = str(Path(os.path.abspath(os.fspath(project))).resolve()) if project is not None else None
    below = str(Path(os.path.abspath(os.fspath(within))).resolve()) if within is not None else None
    with _index(index) as idx:
        rows = store.select(idx, include_decided=True, project=where, within=below)
    if include_decided:  # the whole record, duplicates staged before nights checked included
        return [effective(r.proposal) for r in rows]
    # One proposal per lesson: a later pending duplicate (staged before nights checked), or the
    # pending twin of an adopted lesson, is not listed.
    pending, _ = lesson.distinct([r.proposal for r in rows if r.proposal.state == "pending"],
                                 [r.proposal for r in rows])
    return [effective(p) for p in pending]


def get(ref: str, *, index: Index | None = None) -> Proposal:
    """One proposal by id, unique id prefix or branch name (with its effective state)."""
    with _index(index) as idx:
        return effective(store.get(idx, ref).proposal)


def show(ref: str, *, color: bool = False, index: Index | None = None) -> ProposalView:
    """A proposal with its diff and the person's pending edits apart (coloured with ``color``)."""
    with _index(index) as idx:
        row = store.get(idx, ref)
    p = effective(row.proposal)
    trained, candidate, committed = _texts(p, row.trained_from_text)
    path = p.tree_path
    # Trained from the committed text: the staged commit's own diff (as git shows it) is the proposal.
    proposed = diff(p, color=color) if trained == committed else \
        textdiff.unified(trained, candidate, f"a/{path}", f"b/{path}", color=color)
    return ProposalView(p, proposed, _tip(p),
                        pending=textdiff.unified(committed, trained, f"HEAD:{path}", f"{path} (uncommitted, as "
                                                 "the night found it)", color=color))


def diff(p: Proposal, *, color: bool = False) -> str:
    """The staged commit against its parent (HEAD when the night staged it), as git shows it."""
    repo = _repo_with_commit(p)
    paths = [p.tree_path, *(f"{p.tree_path.rsplit('/', 1)[0]}/{rel}" if "/" in p.tree_path else rel
                            for rel in (p.report.package if p.report.kind == "package" else {}))]
    return str(g.run(repo, "diff", "--no-ext-diff", "--no-textconv", f"--color={'always' if color else 'never'}",
                     p.parent, p.commit, "--", *(f":(literal){path}" for path in paths)))


def _repo_with_commit(p: Proposal) -> git.Repo:
    repo = open_repo(p.repo)
    if not g.object_exists(repo, p.commit):
        raise BranchMissing(f"the commit {p.commit[:12]} of proposal {p.id} is no longer in {p.repo} "
                            "(the branch was deleted and git collected it); only the report remains.")
    return repo


def _texts(p: Proposal, trained_from_text: str | None) -> tuple[str, str, str]:
    """(trained-from, candidate, committed at the staging's parent) texts of the skill file."""
    repo = _repo_with_commit(p)
    parts = tuple(p.tree_path.split("/"))

    def at(commit: str) -> str:
        entry = g.blob_at(repo, g.tree_of(repo, commit), parts)
        return g.read_blob(repo, entry.sha).decode("utf-8", "replace") if entry is not None else ""

    committed = at(p.parent)
    if trained_from_text is None and p.trained_from_sha256 is not None:
        trained = committed
    else:
        trained = trained_from_text or ""
    return trained, at(p.commit), committed


def _tip(p: Proposal) -> str | None:
    try:
        return g.ref_target(open_repo(p.repo), f"refs/heads/{p.branch}")
    except NotARepositoryError:
        return None


class _index:
    """Use the caller's index, or open (and close) the default one."""

    def __init__(self, index: Index | None) -> None:
        self._given = index
        self._own: Index | None = None

    def __enter__(self) -> Index:
        if self._given is not None:
            idx = self._given
        else:
            self._own = idx = Index.open()
        try:
            journal.recover(idx)
        except BaseException:
            self.__exit__()
            raise
        return idx

    def __exit__(self, *exc: object) -> None:
        if self._own is not None:
            self._own.close()
