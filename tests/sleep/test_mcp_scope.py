"""A server started with ``--project A`` shows and decides only A's records: B's
proposals, tasks and nights are refused by every tool and resource, and B's
repository is left exactly as it was. The real server over stdio, real git
repositories, a real index."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp.shared.exceptions import MCPError
from mcp_testutil import call, call_error, connect
from proposal_testutil import CANDIDATE, SKILL, SKILL_TEXT, git, make_repo, report, snapshot
from sleep_testutil import Homes

from sleep.lock import FileLock
from sleep.mcp import jobs
from sleep.proposals import get, stage

pytestmark = pytest.mark.timeout(300)


LINT = ".claude/skills/lint/SKILL.md"


@pytest.fixture
def two_projects(tmp_path: Path):
    """Project A (the server's) and project B, each with one staged proposal (B's for its lint skill)."""
    a = make_repo(tmp_path / "a")
    b = make_repo(tmp_path / "b", {LINT: SKILL_TEXT.replace("name: tests", "name: lint"), "README.md": "# b\n"})
    theirs = stage(b / LINT, (b / LINT).read_text() + "- Run `ruff check .` first.\n", report())
    return a, stage(a / SKILL, CANDIDATE, report()), b, theirs


def _outside(tool: str, what: str, a: Path) -> str:
    return (f"Error executing tool {tool}: {what} belongs to another project, outside this server's projects "
            f"({a}); start a server with --project for it.")


@pytest.mark.parametrize("tool,extra", [("show_proposal", {}), ("adopt_proposal", {"commit": True}),
                                        ("reject_proposal", {"reason": "not mine"})])
async def test_bs_proposal_is_refused_and_bs_repository_is_untouched(tmp_path: Path, two_projects, tool: str,
                                                                    extra: dict) -> None:
    a, _, b, theirs = two_projects
    before = snapshot(b)
    async with connect("--project", str(a), cwd=tmp_path) as client:
        by_id = await call_error(client, tool, {"proposal": theirs.id, **extra})
        by_branch = await call_error(client, tool, {"proposal": theirs.branch, **extra})
    assert by_id == by_branch == _outside(tool, f"proposal {theirs.id}", a)
    assert (b / LINT).read_bytes() == before.files[LINT]
    after = snapshot(b)
    assert (after.head, after.index, after.status, after.other_refs) == (
        before.head, before.index, before.status, before.other_refs)
    assert git(b, "rev-parse", f"refs/heads/{theirs.branch}") == theirs.commit
    assert get(theirs.id).state == "pending"


async def test_as_own_proposal_is_still_adopted(tmp_path: Path, two_projects) -> None:
    a, mine, _, _ = two_projects
    async with connect("--project", str(a), cwd=tmp_path) as client:
        decided = await call(client, "adopt_proposal", {"proposal": mine.id})
    assert decided["action"] == "adopted" and (a / SKILL).read_text() == CANDIDATE


async def test_bs_proposal_resource_is_not_found(tmp_path: Path, two_projects) -> None:
    a, mine, b, theirs = two_projects
    async with connect("--project", str(a), cwd=tmp_path) as client:
        own = await client.read_resource(f"skillopt://proposals/{mine.id}")
        with pytest.raises(MCPError) as refused:
            await client.read_resource(f"skillopt://proposals/{theirs.id}")
    assert '"project": ' + f'"{a}"' in own.contents[0].text
    assert str(refused.value).startswith(f"proposal {theirs.id} belongs to another project, outside this server's")


async def test_bs_proposals_are_neither_listed_nor_in_the_status(tmp_path: Path, two_projects) -> None:
    a, mine, b, _ = two_projects
    async with connect("--project", str(a), cwd=tmp_path) as client:
        listed = await call(client, "list_proposals", {"include_decided": True})
        status = await call(client, "sleep_status")
        named = await call_error(client, "sleep_status", {"project": str(b)})
    assert [p["id"] for p in listed["proposals"]] == [mine.id]
    assert [p["id"] for p in status["pending_proposals"]] == [mine.id]
    assert named == (f"Error executing tool sleep_status: project {str(b)!r} is outside this server's projects "
                     f"({a}); start a server with --project for it.")


@pytest.mark.parametrize("tool,args", [("sleep_run", {}), ("schedule_sleep", {"dry_run": True}),
                                       ("unschedule_sleep", {}), ("list_tasks", {}), ("sleep_harvest", {})])
async def test_a_tool_naming_project_b_is_refused(tmp_path: Path, two_projects, tool: str, args: dict) -> None:
    a, _, b, _ = two_projects
    async with connect("--project", str(a), cwd=tmp_path) as client:
        message = await call_error(client, tool, {"project": str(b), **args})
        assert (await call(client, "job_status"))["jobs"] == []
    if tool == "unschedule_sleep":
        assert message == _outside(tool, "that schedule", a)
    else:
        assert message == (f"Error executing tool {tool}: project {str(b)!r} is outside this server's projects "
                           f"({a}); start a server with --project for it.")


async def test_bs_task_cannot_be_disabled_and_is_not_listed(tmp_path: Path, homes: Homes) -> None:
    from sleep.cycle.demo import install_transcripts, make_project
    from sleep.harvest.harvester import HarvestOptions, harvest
    from sleep.index import Index
    from sleep.mine.miner import MineOptions, mine
    from sleep.mine.store import load_tasks

    a = make_repo(tmp_path / "a")
    b = make_project(tmp_path / "tiny-ledger")
    install_transcripts(homes.home, b)
    harvest(HarvestOptions(project=str(b)))
    mine(MineOptions(project=str(b)))
    with Index.open() as index:
        task = load_tasks(index.conn, str(b), with_members=False)[0]
    async with connect("--project", str(a), cwd=tmp_path) as client:
        listed = await call(client, "list_tasks")
        refused = await call_error(client, "set_task_enabled", {"task_id": task.id, "enabled": False})
    assert listed["tasks"] == []
    assert refused == _outside("set_task_enabled", f"task {task.id}", a)
    with Index.open() as index:
        assert load_tasks(index.conn, str(b), with_members=False)[0].enabled


def _night_job(project: Path) -> Path:
    folder = jobs.jobs_dir() / jobs.new_job_id()
    folder.mkdir(parents=True)
    jobs._write_json(folder / "job.json", {
        "job_id": folder.name, "kind": "sleep_run", "argv": ["skillopt-sleep", "run"], "cwd": str(project),
        "created_at": "2026-01-01T00:00:00.000Z", "project": str(project.resolve())})
    return folder


async def test_bs_night_is_not_listed_and_cannot_be_read_or_cancelled(tmp_path: Path, two_projects) -> None:
    a, _, b, _ = two_projects
    folder = _night_job(b)
    runner = FileLock(folder / "runner.lock", what="job runner").acquire()  # this test plays B's running night
    try:
        async with connect("--project", str(a), cwd=tmp_path) as client:
            listed = await call(client, "job_status")
            status = await call(client, "sleep_status")
            read = await call_error(client, "job_status", {"job_id": folder.name})
            cancelled = await call_error(client, "cancel_job", {"job_id": folder.name})
    finally:
        runner.release()
    assert listed["jobs"] == [] and status["running_jobs"] == []
    assert read == _outside("job_status", f"job {folder.name} (a night)", a)
    assert cancelled == _outside("cancel_job", f"job {folder.name} (a night)", a)
    assert not (folder / "cancel.json").exists()
