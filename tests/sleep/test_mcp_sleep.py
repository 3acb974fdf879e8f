"""The sleep tools through the real server over stdio: harvest on fixture
transcripts, status, the mined tasks, and the night (``sleep_run``) through
to the morning review."""

from __future__ import annotations

from pathlib import Path

import pytest
import sleep_builders as b
from mcp_testutil import call, call_error, connect, fake_copilot_env, normalise, scripted_config, stop_jobs
from proposal_testutil import CANDIDATE, SKILL, make_repo, report
from sleep_testutil import Homes



@pytest.fixture(autouse=True)
def _no_stray_jobs(homes: Homes):
    yield
    stop_jobs(homes.skillopt)


async def test_sleep_harvest_reads_new_transcripts_once(tmp_path: Path, homes: Homes) -> None:
    project = tmp_path / "app"
    project.mkdir()
    b.write_jsonl(b.claude_session_path(homes.claude, str(project), "s1"), b.claude_basic_session("s1", str(project)))
    async with connect(cwd=tmp_path) as client:
        first = await call(client, "sleep_harvest")
        again = await call(client, "sleep_harvest", {"project": str(project), "source": "claude-code"})
    assert normalise({k: v for k, v in first.items() if k not in ("report", "elapsed_s")}, homes.skillopt.parent) == {
        "scope": "all projects", "files_seen": 1, "files_read": 1, "sessions_new": 1, "sessions_updated": 0,
        "secrets_redacted": 0, "skipped": {}, "index_path": "<tmp>/skillopt-home/sleep.sqlite3"}
    assert first["report"]["sources"]["claude-code"]["sessions_new"] == 1
    assert (again["files_read"], again["sessions_new"], again["scope"]) == (0, 0, f"project {project}")


async def test_sleep_harvest_refuses_a_malformed_age(tmp_path: Path) -> None:
    async with connect(cwd=tmp_path) as client:
        message = await call_error(client, "sleep_harvest", {"since": "yesterday"})
    assert "since" in message and "String should match pattern" in message


async def test_sleep_status_with_nothing_yet(tmp_path: Path) -> None:
    async with connect(cwd=tmp_path) as client:
        status = await call(client, "sleep_status")
    assert status == {"last_night": None, "last_night_note": "no night has run yet.", "next_night": None,
                      "schedule_note": "no night is scheduled; schedule one with schedule_sleep (or "
                                       "`skillopt-sleep schedule`).",
                      "pending_proposals": [], "running_jobs": []}


async def test_sleep_status_shows_pending_proposals_and_running_jobs(tmp_path: Path) -> None:
    from sleep.proposals import stage

    repo = make_repo(tmp_path / "app")
    proposal = stage(repo / SKILL, CANDIDATE, report())
    scripted_config(tmp_path, steps=2, slow=True, run_id="s1")
    async with connect(cwd=tmp_path, env=fake_copilot_env(tmp_path, delay=0.5)) as client:
        job = await call(client, "train_skill", {"config_path": "config.yaml"})
        status = await call(client, "sleep_status", {"project": str(repo)})
        await call(client, "cancel_job", {"job_id": job["job_id"]})
    assert [p["id"] for p in status["pending_proposals"]] == [proposal.id]
    assert [(j["job_id"], j["kind"]) for j in status["running_jobs"]] == [(job["job_id"], "train")]


async def test_sleep_run_dry_run_is_a_job_that_reports_the_night(tmp_path: Path, homes: Homes) -> None:
    repo = make_repo(tmp_path / "app")
    b.write_jsonl(b.claude_session_path(homes.claude, str(repo), "s1"), b.claude_basic_session("s1", str(repo)))
    async with connect(cwd=tmp_path) as client:
        job = await call(client, "sleep_run", {"project": str(repo), "dry_run": True, "wait_seconds": 600})
    assert (job["kind"], job["state"], job["project"]) == ("sleep_run", "completed", str(repo))
    assert job["command"] == ["skillopt-sleep", "run", "--project", str(repo), "--json", "--dry-run"]
    assert job["night"]["outcome"] == "too_few_tasks" and job["night"]["dry_run"] is True


async def test_a_second_night_for_the_same_project_is_refused_while_one_runs(tmp_path: Path, homes: Homes) -> None:
    from sleep.lock import FileLock
    from sleep.mcp import jobs

    repo = make_repo(tmp_path / "app")
    folder = homes.skillopt / "jobs" / "20260101-000000-abcdef"
    folder.mkdir(parents=True)
    jobs._write_json(folder / "job.json", {
        "job_id": folder.name, "kind": "sleep_run", "argv": ["skillopt-sleep", "run"], "cwd": str(repo),
        "created_at": "2026-01-01T00:00:00.000Z", "project": str(repo.resolve())})
    runner = FileLock(folder / "runner.lock", what="job runner").acquire()  # this test plays the running night
    try:
        async with connect(cwd=tmp_path) as client:
            message = await call_error(client, "sleep_run", {"project": str(repo)})
    finally:
        runner.release()
    assert message == (f"Error executing tool sleep_run: a night for {repo.resolve()} is already running "
                       f"as job {folder.name}.")


async def test_mined_tasks_are_listed_and_can_be_disabled(tmp_path: Path, homes: Homes) -> None:
    from sleep.cycle.demo import install_transcripts, make_project
    from sleep.harvest.harvester import HarvestOptions, harvest
    from sleep.mine.miner import MineOptions, mine

    project = make_project(tmp_path / "tiny-ledger")
    install_transcripts(homes.home, project)
    harvest(HarvestOptions(project=str(project)))
    mine(MineOptions(project=str(project)))
    async with connect(cwd=tmp_path) as client:
        listed = await call(client, "list_tasks", {"project": str(project)})
        first = listed["tasks"][0]
        changed = await call(client, "set_task_enabled", {"task_id": first["id"], "enabled": False})
        again = await call(client, "set_task_enabled", {"task_id": first["id"], "enabled": False})
        after = await call(client, "list_tasks", {"project": str(project)})
        unknown = await call_error(client, "set_task_enabled", {"task_id": "t00000000000", "enabled": False})
    assert len(listed["tasks"]) == 3 and all(t["enabled"] for t in listed["tasks"])
    assert changed["changed"] and "disabled" in changed["changed"][0] and again["changed"] == []
    assert [t["enabled"] for t in after["tasks"] if t["id"] == first["id"]] == [False]
    assert "no task 't00000000000'" in unknown


async def test_a_night_through_the_tools_ends_in_an_adopted_proposal(tmp_path: Path, homes: Homes) -> None:
    import yaml
    from test_cycle_night import rules

    from sleep.cycle.demo import install_transcripts, make_project

    project = make_project(tmp_path / "tiny-ledger")
    install_transcripts(homes.home, project)
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump(rules()))
    homes.skillopt.mkdir(parents=True, exist_ok=True)
    (homes.skillopt / "sleep.yaml").write_text(yaml.safe_dump({"model": {
        "backend": "scripted", "scripted": str(tmp_path / "rules.yaml")}}))
    # The sessions invoked no skill; the project's ledger-dev skill's description fits their tasks (issue 23 §1).
    skill = project / ".claude/skills/ledger-dev/SKILL.md"
    async with connect(cwd=tmp_path) as client:
        job = await call(client, "sleep_run", {"project": str(project), "wait_seconds": 600})
        listed = await call(client, "list_proposals")
        status = await call(client, "sleep_status", {"project": str(project)})
        adopted = await call(client, "adopt_proposal", {"proposal": listed["proposals"][0]["id"]})
    assert job["state"] == "completed" and job["night"]["outcome"] == "staged"
    assert len(listed["proposals"]) == 1 and adopted["changed"]
    assert status["last_night"]["outcome"] == "staged" and status["last_night"]["id"] == job["night"]["id"]
    assert "Use pnpm, not npm in this repo." in skill.read_text()


async def test_schedule_sleep_installs_status_shows_it_and_unschedule_removes_it(tmp_path: Path, monkeypatch) -> None:
    from sched_testutil import fake_tools

    fakes = fake_tools(tmp_path, monkeypatch, cron=True)
    fakes.crontab.write_text("0 9 * * 1 /usr/bin/weekly\n")
    project = tmp_path / "app"
    project.mkdir()
    async with connect(cwd=tmp_path) as client:
        dry = await call(client, "schedule_sleep", {"project": str(project), "at": "02:30", "dry_run": True})
        assert fakes.crontab.read_text() == "0 9 * * 1 /usr/bin/weekly\n"
        done = await call(client, "schedule_sleep", {"project": str(project), "at": "02:30"})
        status = await call(client, "sleep_status", {"project": str(project)})
        gone = await call(client, "unschedule_sleep", {"project": str(project)})
    assert (dry["scheduled"], dry["mode"], dry["message"]) == (False, "cron", "dry run: nothing was installed or changed")
    (line,) = dry["entry"].values()
    assert line.splitlines()[1].startswith("30 2 * * * ")
    assert (done["scheduled"], done["mode"], done["at"], done["project"]) == (True, "cron", "02:30", str(project))
    assert done["changes"] == [f"installed the nightly run at 02:30 for {project} in your crontab"]
    assert status["next_night"] == done["next_night"] and status["next_night"][11:16] == "02:30"
    assert status["schedule_note"] == f"{project}: nightly at 02:30 (cron)"
    assert gone["scheduled"] is False
    assert gone["changes"] == ["removed the cron entry (the rest of your crontab is unchanged)",
                               f"removed the cron schedule of {project}"]
    assert fakes.crontab.read_text() == "0 9 * * 1 /usr/bin/weekly\n"
