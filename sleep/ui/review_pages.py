"""Routes of the morning review (proposals, adopt, reject), the nights and the mined tasks.

Adopt and reject call :mod:`sleep.proposals` exactly as the CLI does; a
:class:`ProposalError` (live file changed, already decided, branch gone, ...)
is shown on the proposal page with the library's own message, and nothing
else happens. A decision redirects (303) to the proposal page, which then
shows what was done.
"""

from __future__ import annotations

import re
from contextlib import contextmanager
from typing import Any, Iterator

from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from sleep import paths
from sleep.ui.app import Ui, render, ui
from sleep.ui.data import list_nights, list_tasks
from sleep.ui.textdiff import parse_unified

_PID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{3,63}$")


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
            return list_proposals(include_decided=include_decided, index=idx), ""
    except ProposalError as exc:
        return [], str(exc)


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
            return v.proposal, v.diff, ""
        except (BranchMissing, NotARepositoryError) as exc:
            return get(pid, index=idx), None, str(exc)


async def proposal_page(request: Request, *, status: int = 200, error: str | None = None) -> Response:
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
    if error:
        flash = {"kind": "error", "title": "Refused", "messages": [error]}
    return render(request, "proposal.html", status=status, p=proposal, r=proposal.report,
                  diff=parse_unified(diff) if diff is not None else None, no_diff=no_diff, flash=flash)


async def _decide(request: Request, action: str) -> Response:
    from sleep.proposals import ProposalError, UnknownProposal, adopt, reject

    u = ui(request)
    pid = _pid(request)
    form = await request.form()
    if not u.policy.csrf_ok(form.get("csrf")):
        return render(request, "error.html", status=403, title="Refused", roots=[], message=(
            "The form's security token is missing or out of date (the dashboard was restarted?). "
            "Reload the proposal page and press the button again."))
    if not _index_path(u).is_file():
        raise HTTPException(404, f"No proposal {pid}: there is no index yet at {_index_path(u)}.")

    def run() -> Any:
        with _index(u) as idx:
            if action == "adopt":
                return adopt(pid, commit=bool(form.get("commit")), delete_branch=bool(form.get("delete_branch")),
                             index=idx)
            reason = str(form.get("reason") or "").strip() or None
            return reject(pid, reason=reason, index=idx)

    try:
        d = await run_in_threadpool(run)
    except UnknownProposal as exc:
        raise HTTPException(404, str(exc)) from None
    except ProposalError as exc:
        return await proposal_page(request, status=409, error=str(exc))
    except OSError as exc:
        where = f" {exc.filename}" if exc.filename else ""
        return await proposal_page(request, status=409, error=f"{where}: {exc.strerror or exc}; nothing was changed.")
    p = d.proposal
    if action == "adopt":
        title = f"Adopted {p.id}: {p.skill_path} now has the candidate."
    else:
        title = f"Rejected {p.id} ({p.skill_name}, {p.night})."
    messages = ([f"commit {d.commit[:12]}"] if d.commit else []) + list(d.messages)
    key = u.flash("ok", title, messages)
    return RedirectResponse(f"/proposals/{p.id}?flash={key}", status_code=303)


async def adopt_post(request: Request) -> Response:
    return await _decide(request, "adopt")


async def reject_post(request: Request) -> Response:
    return await _decide(request, "reject")


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


routes = [
    Route("/proposals", proposals_list),
    Route("/proposals/{pid}", proposal_page),
    Route("/proposals/{pid}/adopt", adopt_post, methods=["POST"]),
    Route("/proposals/{pid}/reject", reject_post, methods=["POST"]),
    Route("/nights", nights_page),
    Route("/tasks", tasks_page),
]
