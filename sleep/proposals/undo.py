"""``skillopt-sleep undo ID``: give a skill file back the text it had before an adoption.

The text is the one the night trained from, kept in the index with the
proposal (adopting requires the live file to have exactly that text, so it is
the text the adoption replaced; a skill the proposal created had none, and
undoing removes the file). Refused, writing nothing, when the live file
changed since the adoption (its text is no longer the candidate's): that work
is the person's. The proposal's state becomes ``undone``. A commit
``adopt --commit`` made stays where it is (history is the person's); the
message says how to revert it. In SkillOpt's skills repository the restored
text is recorded on ``main``.

Killed after the write and before the record, the file already has the old
text; running ``undo`` again recognises that and records it.
"""

from __future__ import annotations

from contextlib import nullcontext
from pathlib import Path

from sleep.index import Index
from sleep.proposals import journal, package, store
from sleep.proposals.decide import Decision, _atomic_write, _open_or_none, _who
from sleep.proposals.errors import LiveFileChanged, ProposalDecided, ProposalError
from sleep.proposals.review import _index, live_sha256
from sleep.proposals.stage import record_in_skills_repo, sha256


def undo(ref: str, *, by: str | None = None, index: Index | None = None) -> Decision:
    """Restore the live file's text from before the proposal's adoption (see the module docstring)."""
    with _index(index) as idx:
        p = _adopted(store.get(idx, ref).proposal)
        repo = _open_or_none(p.repo)
        with journal.repo_lock(repo.common_dir) if repo is not None else nullcontext():
            row = store.get(idx, p.id)  # undone by another process while we waited?
            p = _adopted(row.proposal)
            before = None if p.trained_from_sha256 is None else (row.trained_from_text or "").encode("utf-8")
            if before is not None and sha256(before) != p.trained_from_sha256:
                raise ProposalError(f"the index does not hold the exact text {p.skill_path} had before proposal "
                                    f"{p.id} was adopted, so it cannot be restored; nothing was written.")
            live = Path(p.skill_path)
            now = live_sha256(str(live))
            extra = p.report.package if p.report.kind == "package" else {}
            befores = _package_befores(p, repo, extra) if extra else {}
            messages: list[str] = []
            if now == p.trained_from_sha256:
                messages.append(f"{p.skill_path} already had the text from before the adoption; recorded the undo.")
            elif now != (p.candidate_sha256 or None):  # "": a retirement deleted the file
                what = "was deleted" if now is None else "changed"
                raise LiveFileChanged(f"{p.skill_path} {what} since proposal {p.id} was adopted, so undoing would "
                                      "overwrite that work; nothing was written. Edit the file by hand "
                                      f"(`skillopt-sleep show {p.id}` has the diff).")
            elif before is None:
                live.unlink()
                messages.append(f"removed {p.skill_path}: the proposal had created it.")
            else:
                _atomic_write(live, before)
                messages.append(f"{p.skill_path} has its text from before the adoption again.")
            for rel, data in sorted(befores.items()):  # the package as one unit: its other files too
                package.put(live.parent / rel, data, extra[rel].get("mode"))
            if befores:
                messages.append(f"{len(befores)} other file(s) of the skill folder have their bytes from before again.")
            if repo is not None and p.store != "project" and before is not None:
                record_in_skills_repo(repo, p.tree_path, p.skill_path, before, f"undo {p.id}: {p.tree_path}")
            if p.adopted_commit and p.store == "project":
                messages.append(f"the commit {p.adopted_commit[:12]} that adopted it stays in your history; "
                                f"commit the restored file, or `git revert {p.adopted_commit[:12]}`.")
            with idx.transaction():
                store.undo(idx, p.id, by=by or _who())
            return Decision(store.get(idx, p.id).proposal, wrote_file=now != p.trained_from_sha256,
                            messages=messages)


def _package_befores(p, repo, extra: dict) -> dict[str, bytes | None]:
    """The package's other files as they were before the adoption (from the staging's parent
    commit), after checking each still has the adopted bytes (else nothing is written)."""
    if repo is None:
        raise ProposalError(f"the repository {p.repo} is gone, so the files of package proposal {p.id} cannot be "
                            "restored; nothing was written.")
    package.check_live(Path(p.skill_path).parent, extra, "after_sha256")
    out = {}
    for rel, info in extra.items():
        data = package.file_bytes(repo, p.parent, p.tree_path, rel)
        if sha256(data) != info["before_sha256"]:
            raise ProposalError(f"the repository no longer holds {rel} as it was before proposal {p.id}; nothing "
                                "was written.")
        out[rel] = data
    return out


def _adopted(p):
    if p.state != "adopted":
        hint = " (adopt it first, or reject it)" if p.state in ("pending", "stale") else ""
        raise ProposalDecided(f"proposal {p.id} is {p.state}; only an adopted proposal can be undone{hint}.")
    return p
