"""Routes of the morning review (proposals, adopt, reject, undo), the nights and the mined tasks.

Adopt and reject call :mod:`sleep.proposals` exactly as the CLI does. Every
POST ends in a redirect (303) to the proposal page, which shows what was done
or, for a refusal (the form's CSRF token out of date, a :class:`ProposalError`
such as "live file changed" or "already decided", a file error), the reason,
with nothing else changed: a reload shows the page again and never repeats the
POST. A stale proposal's page has no active Adopt button (the library would
refuse it); Reject stays. The Decide panel comes first, above the evidence: each action
opens (a ``<details>`` box, no script needed) on what it will do and a "Yes, …" button,
so one click never changes a file. An adopted proposal's panel offers Undo
(:func:`sleep.proposals.undo`, as ``skillopt-sleep undo``).

Adopt deletes the proposal's branch unless the form's "keep the branch" box
is ticked (as ``adopt --keep-branch``). The proposal page shows the night's
evidence per val instance (:mod:`sleep.proposals.evidence`): before and after
side by side, the commands run, files changed, checks and the judge's verdict.

Everything shown from the index (proposals, their reports and evidence, diffs,
the library's messages) passes through :func:`sleep.ui.outbound.outbound`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from sleep import paths
from sleep.proposals.evidence import instances
from sleep.ui.app import Ui, render, ui
from sleep.ui.data import list_nights, list_tasks, task_detail
from sleep.ui.outbound import outbound, scrub
from sleep.ui.textdiff import sbs_from_unified

_PID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{3,63}$")
# Fields of a proposal holding hashes the library computed (git commits, sha256 of the skill files).
HASHES = frozenset({"commit", "parent", "adopted_commit", "trained_from_sha256", "candidate_sha256"})


def _index_path(u: Ui):
    return u.index_path or paths.index_path()


@contextmanager
def _index(u: Ui) -> Iterator[Any]:
    """The index to hand the proposal library (None: the library opens the default one)."""
    if u.index_path is None:
        yield None
        return
    from sleep.index import Index

    with Index.open(u.index_path) as idx:
        yield idx


def pending_proposals(u: Ui, include_decided: bool = False) -> tuple[list[Any], str]:
    """Proposals waiting for review (or all), and a note when there is no index to ask."""
    if not _index_path(u).is_file():
        return [], f"No index yet at {_index_path(u)}: nothing has been proposed."
    from sleep.proposals import ProposalError, list_proposals

    try:
        with _index(u) as idx:
            return scrub(list_proposals(include_decided=include_decided, index=idx), HASHES), ""
    except ProposalError as exc:
        return [], outbound(str(exc))


def _pid(request: Request) -> str:
    pid = request.path_params["pid"]
    if not _PID.match(pid):
        raise HTTPException(404, f"{pid!r} is not a proposal id.")
    return pid


async def proposals_list(request: Request) -> Response:
    show_all = bool(request.query_params.get("all"))
    rows, note = await run_in_threadpool(pending_proposals, ui(request), show_all)
    return render(request, "proposals.html", proposals=rows, note=note, show_all=show_all)


def _view(u: Ui, pid: str) -> tuple[Any, str | None, str]:
    """(proposal, diff text or None, why there is no diff)."""
    from sleep.proposals import BranchMissing, NotARepositoryError, get, show

    with _index(u) as idx:
        try:
            v = show(pid, index=idx)
            return scrub(v.proposal, HASHES), outbound(v.diff), ""
        except (BranchMissing, NotARepositoryError) as exc:
            return scrub(get(pid, index=idx), HASHES), None, outbound(str(exc))


async def proposal_page(request: Request) -> Response:
    from sleep.proposals import UnknownProposal

    u = ui(request)
    pid = _pid(request)
    if not _index_path(u).is_file():
        raise HTTPException(404, f"No proposal {pid}: there is no index yet at {_index_path(u)}.")
    try:
        proposal, diff, no_diff = await run_in_threadpool(_view, u, pid)
    except UnknownProposal as exc:
        raise HTTPException(404, str(exc)) from None
    flash = u.take_flash(request.query_params.get("flash"))
    files = [(path, sbs_from_unified(part)) for path, part in per_file(diff)] if diff is not None else []
    return render(request, "proposal.html", p=proposal, r=proposal.report, evidence=instances(proposal.report.evidence),
                  diff=sbs_from_unified(diff) if diff is not None else None, files=files, no_diff=no_diff,
                  flash=flash, kind=KINDS.get(proposal.report.kind, proposal.report.kind))


KINDS = {"edit": "edits to SKILL.md", "create": "a new skill", "retire": "retire the skill (deletes its SKILL.md)",
         "description": "the description (when the agent loads the skill)",
         "package": "the skill package (SKILL.md and other files of its folder)"}


def per_file(diff: str) -> list[tuple[str, str]]:
    """(path, its part) for each file of a git diff (one part, path "", when it has no file headers)."""
    parts: list[tuple[str, list[str]]] = []
    for line in diff.splitlines():
        if line.startswith("diff --git "):
            parts.append((line.split(" b/", 1)[-1] if " b/" in line else line[11:], [line]))
        elif parts:
            parts[-1][1].append(line)
        else:
            parts.append(("", [line]))
    return [(path, "\n".join(lines)) for path, lines in parts]


async def _decide(request: Request, action: str) -> Response:
    from sleep.proposals import ProposalError, UnknownProposal, adopt, reject
    from sleep.proposals.undo import (
        undo,  # the function (once its module is imported, `sleep.proposals.undo` is the module)
    )

    u = ui(request)
    pid = _pid(request)
    page = f"/proposals/{pid}"

    def back(kind: str, title: str, messages: list[str]) -> Response:
        return RedirectResponse(f"{page}?flash={u.flash(kind, title, messages)}", status_code=303)

    form = await request.form()
    if not u.policy.csrf_ok(form.get("csrf")):
        return back("error", "Refused", [
            "The form's security token is missing or out of date (the dashboard was restarted?). "
            "Nothing was changed: press the button again on this page."])
    if not _index_path(u).is_file():
        return RedirectResponse(page, status_code=303)  # the proposal page says there is no index

    def run() -> Any:
        with _index(u) as idx:
            if action == "adopt":
                return adopt(pid, commit=bool(form.get("commit")), delete_branch=not form.get("keep_branch"),
                             index=idx)
            if action == "undo":
                return undo(pid, index=idx)
            reason = str(form.get("reason") or "").strip() or None
            return reject(pid, reason=reason, index=idx)

    try:
        d = await run_in_threadpool(run)
    except UnknownProposal:
        return RedirectResponse(page, status_code=303)  # the proposal page says it is unknown
    except ProposalError as exc:
        return back("error", "Refused", [str(exc)])
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        return back("error", "Refused", [f"{where}{exc.strerror or exc}; nothing was changed."])
    p = d.proposal
    if action == "adopt":
        title = f"Adopted {p.id}: {p.skill_path} now has the candidate."
    elif action == "undo":
        title = f"Undid the adoption of {p.id} ({p.skill_name})."
    else:
        title = f"Rejected {p.id} ({p.skill_name}, {p.night})."
    messages = ([f"commit {d.commit[:12]}"] if d.commit else []) + list(d.messages)
    return back("ok", title, messages)


async def adopt_post(request: Request) -> Response:
    return await _decide(request, "adopt")


async def reject_post(request: Request) -> Response:
    return await _decide(request, "reject")


async def undo_post(request: Request) -> Response:
    return await _decide(request, "undo")


async def nights_page(request: Request) -> Response:
    u = ui(request)
    listing = await run_in_threadpool(lambda: list_nights(index_path=u.index_path))
    refs = {n.id: u.catalog.ref_for_path(n.run_dir) for n in listing.rows}
    return render(request, "nights.html", listing=listing, refs=refs)


async def tasks_page(request: Request) -> Response:
    u = ui(request)
    project = request.query_params.get("project") or None
    listing = await run_in_threadpool(lambda: list_tasks(project=project, index_path=u.index_path))
    return render(request, "tasks.html", listing=listing, project=project)


async def task_page(request: Request) -> Response:
    u = ui(request)
    tid = request.path_params["tid"]
    detail, why = await run_in_threadpool(lambda: task_detail(tid, index_path=u.index_path))
    if detail is None:
        raise HTTPException(404, why)
    return render(request, "task.html", d=detail, t=detail.task)


routes = [
    Route("/proposals", proposals_list),
    Route("/proposals/{pid}", proposal_page),
    Route("/proposals/{pid}/adopt", adopt_post, methods=["POST"]),
    Route("/proposals/{pid}/reject", reject_post, methods=["POST"]),
    Route("/proposals/{pid}/undo", undo_post, methods=["POST"]),
    Route("/nights", nights_page),
    Route("/tasks", tasks_page),
    Route("/tasks/{tid}", task_page),
]
