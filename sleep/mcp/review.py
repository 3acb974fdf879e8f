"""The morning review over MCP: ``list_proposals``, ``show_proposal``,
``adopt_proposal``, ``reject_proposal``, the resources
``skillopt://proposals/{id}``, ``skillopt://runs/{run_id}/history`` and
``skillopt://runs/{run_id}/best_skill``, and the ``morning-review`` prompt.

The tools call :mod:`sleep.proposals` (the library the CLI calls; GitPython
loads on the first call, not at start-up) in a worker thread. A
:class:`ProposalError` becomes a tool error with the library's message, which
says what to do next; the destructive tools list exactly what they changed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceNotFoundError, ToolError
from mcp_types import ToolAnnotations
from pydantic import Field

from skillopt_core.run.reader import RunReader
from sleep.mcp import guards
from sleep.mcp import runs as rd
from sleep.mcp.guards import ServerConfig
from sleep.mcp.models import DecisionResult, EvidenceInstance, ProposalDetail, ProposalList, ProposalSummary

PROPOSAL_REF = r"^([0-9a-f]{4,8}|skillopt/[a-z0-9._-]{1,64}/\d{4}-\d{2}-\d{2}(-\d+)?)$"
ProposalRef = Annotated[str, Field(pattern=PROPOSAL_REF,
                                   description="a proposal id (8 hex digits, or a unique prefix of 4+) "
                                               "or its branch skillopt/<skill>/<YYYY-MM-DD>")]
DESTRUCTIVE = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False,
                              open_world_hint=False)
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True,
                            open_world_hint=False)


def summary(p: Any) -> ProposalSummary:
    return ProposalSummary(id=p.id, state=p.state, stale_reason=p.stale_reason, skill_name=p.skill_name,
                           skill_path=p.skill_path, project=p.project, branch=p.branch, night=p.night,
                           created_at=p.created_at, baseline_val=p.baseline_val, candidate_val=p.candidate_val,
                           n_edits=p.n_edits, decided_at=p.decided_at, reason=p.reason)


async def _call(fn, *args, **kwargs):
    """Run a proposal-library call in a worker thread; its typed errors become tool errors."""
    from sleep.proposals import ProposalError

    def run():
        return fn(*args, **kwargs)

    try:
        return await anyio.to_thread.run_sync(run)
    except ProposalError as exc:
        raise ToolError(str(exc)) from None
    except OSError as exc:
        where = f" {exc.filename}" if exc.filename else ""
        raise ToolError(f"{where}: {exc.strerror or exc}; nothing was changed.".lstrip()) from None


async def scoped(config: ServerConfig, ref: str) -> Any:
    """The proposal ``ref`` (an id, a unique id prefix or a branch) names among this server's
    projects' proposals; a tool error if it names none of them (without saying whose it is)."""
    from sleep.proposals import ProposalError, get, list_proposals

    if not config.projects:
        return await _call(get, ref)
    mine = [p for where in config.projects for p in await _call(list_proposals, include_decided=True, project=where)]
    matches = [p for p in mine if p.id.startswith(ref) or p.branch == ref]
    if len(matches) > 1:
        raise ToolError(f"{ref!r} matches {len(matches)} proposals of this server's projects: "
                        + ", ".join(p.id for p in matches) + "; give the full id.")
    if matches:
        return matches[0]
    try:
        found = await anyio.to_thread.run_sync(get, ref)
    except ProposalError:
        found = None
    if found is not None and guards.in_scope(config, found.project):
        return found  # a project below a configured folder
    if found is not None:
        raise guards.out_of_scope(config, f"proposal {found.id}", found.project)
    raise ToolError(f"no proposal {ref!r} in this server's projects; list_proposals lists them.")


async def proposal_summaries(config: ServerConfig, scope: Path | None, *,
                             include_decided: bool) -> list[ProposalSummary]:
    """Proposals of ``scope``, else of the configured projects, else of every project."""
    from sleep import paths
    from sleep.proposals import list_proposals

    if not paths.index_path().exists():
        return []
    wanted: list[Path | None] = [scope] if scope is not None else (list(config.projects) or [None])
    found = []
    for where in wanted:
        found += await _call(list_proposals, include_decided=include_decided, project=where)
    return [summary(p) for p in found]


async def list_proposals(ctx: Context, project: Annotated[str | None, Field(
                             description="only proposals for this repository")] = None,
                         include_decided: bool = False) -> ProposalList:
    """Proposals waiting for review (pending, and stale ones with the reason), oldest first;
    with include_decided, adopted, rejected and undone ones too."""
    config = guards.server_config(ctx)
    scope = guards.project(config, project, required=False) if project else None
    items = await proposal_summaries(config, scope, include_decided=include_decided)
    pending = sum(1 for p in items if p.state == "pending")
    noun = "proposal" if len(items) == 1 else "proposals"
    return ProposalList(proposals=items, message=f"{len(items)} {noun}, {pending} pending review.")


async def show_proposal(ctx: Context, proposal: ProposalRef) -> ProposalDetail:
    """A proposal's report (scores before and after, tasks, edits and why), the diff of its
    staged commit, and per val instance what the agent did before and after (evidence)."""
    config = guards.server_config(ctx)
    from sleep.proposals import show
    from sleep.proposals.evidence import instances
    from sleep.proposals.render import report_text

    view = await _call(show, (await scoped(config, proposal)).id)
    return ProposalDetail(proposal=summary(view.proposal), report_text=report_text(view.proposal),
                          diff=view.diff, branch_tip=view.branch_tip, report=view.proposal.report.to_dict(),
                          evidence=[EvidenceInstance.model_validate(i.to_dict())
                                    for i in instances(view.proposal.report.evidence)])


async def adopt_proposal(ctx: Context, proposal: ProposalRef,
                         commit: Annotated[bool, Field(description="also commit the skill file on the "
                                                                   "current branch")] = False,
                         delete_branch: Annotated[bool, Field(description="delete the proposal's branch "
                                                                          "afterwards (false keeps it)")] = True,
                         ) -> DecisionResult:
    """Adopt a proposal: write its candidate into the live skill file (refused if that file
    changed since the night). Ask the person before calling this. Returns every change made."""
    config = guards.server_config(ctx)
    from sleep.proposals import adopt

    d = await _call(adopt, (await scoped(config, proposal)).id, commit=commit, delete_branch=delete_branch)
    p = d.proposal
    changed = []
    if d.wrote_file:
        changed.append(f"wrote the candidate's text to {p.skill_path}")
    else:
        changed.append(f"{p.skill_path} already had the candidate's text; the file was not written")
    if d.commit and p.store == "project":
        changed.append(f"committed {p.tree_path} as {d.commit[:12]} on the current branch of {p.repo}")
    elif d.commit:
        changed.append(f"recorded the adopted text in SkillOpt's skills repository {p.repo} ({d.commit[:12]})")
    if d.branch_deleted:
        changed.append(f"deleted the branch {p.branch} in {p.repo}")
    changed.append(f"recorded proposal {p.id} as adopted in the index")
    return DecisionResult(proposal=summary(p), action="adopted", wrote_file=p.skill_path if d.wrote_file else None,
                          commit=d.commit, branch_deleted=p.branch if d.branch_deleted else None,
                          messages=list(d.messages), changed=changed)


async def reject_proposal(ctx: Context, proposal: ProposalRef,
                          reason: Annotated[str | None, Field(max_length=2000,
                                                              description="why (kept with the record)")] = None,
                          ) -> DecisionResult:
    """Reject a proposal: delete its branch (unless it moved since staging) and keep the record,
    report and reason. The live skill file is not touched. Ask the person before calling this."""
    config = guards.server_config(ctx)
    from sleep.proposals import reject

    d = await _call(reject, (await scoped(config, proposal)).id, reason=reason)
    p = d.proposal
    changed = [f"deleted the branch {p.branch} in {p.repo}"] if d.branch_deleted else []
    changed.append(f"recorded proposal {p.id} as rejected in the index"
                   + (f" (reason: {reason})" if reason else ""))
    return DecisionResult(proposal=summary(p), action="rejected", commit=None,
                          branch_deleted=p.branch if d.branch_deleted else None,
                          messages=list(d.messages), changed=changed)


async def proposal_resource(ctx: Context, proposal_id: str) -> str:
    import re

    from sleep.proposals import show

    config = guards.server_config(ctx)

    if not re.match(PROPOSAL_REF, proposal_id):
        raise ResourceNotFoundError(f"{proposal_id!r} is not a proposal id")
    try:
        p = await scoped(config, proposal_id)
        view = await _call(show, p.id)
    except ToolError as exc:
        raise ResourceNotFoundError(str(exc)) from None
    return json.dumps({**view.proposal.to_dict(), "diff": view.diff, "branch_tip": view.branch_tip}, indent=2)


async def run_history(ctx: Context, run_id: str) -> str:
    return _run_file(ctx, run_id, RunReader.HISTORY)


async def run_best_skill(ctx: Context, run_id: str) -> str:
    return _run_file(ctx, run_id, RunReader.BEST_SKILL)


def _run_file(ctx: Context, run_id: str, name: str) -> str:
    text = rd.read_text(_run(guards.server_config(ctx), run_id), name)
    if text is None:
        raise ResourceNotFoundError(f"run {run_id} has no {name} yet")
    return text


def morning_review(project: str | None = None) -> str:
    where = f" for the project {project}" if project else ""
    return (
        f"Let's review the skill improvements SkillOpt-Sleep staged overnight{where}.\n\n"
        "1. Call list_proposals" + (f" with project={project!r}" if project else "") + " and tell me how "
        "many are pending; mention stale ones with their reason (they cannot be adopted as staged).\n"
        "2. For each pending proposal, oldest first, call show_proposal and summarise in a few lines: "
        "the skill and project, the val score before → after, which recurring tasks improved or got "
        "worse, and each edit with its rationale; from its evidence, what the agent did before and "
        "after on the val instances that changed (commands run, files changed, checks). Show the diff "
        "if it is short.\n"
        "3. Then ask me whether to adopt, reject (and why) or skip it. Do not adopt or reject "
        "anything until I have answered for that proposal.\n"
        "4. On my answer call adopt_proposal or reject_proposal and repeat exactly what it changed "
        "(the `changed` list).\n"
        "5. At the end, list what was adopted, rejected and skipped.")


TOOLS = (
    (list_proposals, READ_ONLY),
    (show_proposal, READ_ONLY),
    (adopt_proposal, DESTRUCTIVE),
    (reject_proposal, DESTRUCTIVE),
)


RESOURCES = (
    ("skillopt://proposals/{proposal_id}", "application/json", "a proposal with its report and diff",
     proposal_resource),
    ("skillopt://runs/{run_id}/history", "application/json", "a training run's history.json (one record per step)",
     run_history),
    ("skillopt://runs/{run_id}/best_skill", "text/markdown", "a training run's best skill so far (best_skill.md)",
     run_best_skill),
)


def register(app: MCPServer) -> None:
    guards.register_tools(app, TOOLS)
    for uri, mime_type, description, fn in RESOURCES:
        app.resource(uri, mime_type=mime_type, description=description)(fn)
    app.prompt(name="morning-review", description="walk through last night's proposals and decide each one")(
        morning_review)


def _run(config: ServerConfig, run_id: str) -> rd.RunRef:
    from sleep.mcp.tools_train import roots

    try:
        return rd.resolve(run_id, roots(config))
    except rd.RunError as exc:
        raise ResourceNotFoundError(str(exc)) from None

