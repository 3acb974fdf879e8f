"""Every guard of the MCP server, one test each: bad arguments and traversal
attempts come back as tool errors whose message says what to do, and the
server goes on answering."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from mcp.shared.exceptions import MCPError
from mcp_testutil import call, call_error, connect, scripted_config

PREFIX = "Error executing tool "


async def _error(tmp_path: Path, tool: str, args: dict, *server_args: str) -> str:
    async with connect(*server_args, cwd=tmp_path) as client:
        message = await call_error(client, tool, args)
        await call(client, "job_status")  # still serving
    assert message.startswith(PREFIX + tool + ": "), message
    return message[len(PREFIX + tool + ": "):]


async def test_train_skill_needs_a_config_or_a_run_to_resume(tmp_path: Path) -> None:
    assert await _error(tmp_path, "train_skill", {}) == (
        "give exactly one of config_path (a new run) or resume (a stopped run).")


async def test_train_skill_refuses_config_and_resume_together(tmp_path: Path) -> None:
    assert await _error(tmp_path, "train_skill", {"config_path": "a.yaml", "resume": "r1"}) == (
        "give exactly one of config_path (a new run) or resume (a stopped run).")


async def test_an_override_that_would_become_a_flag_is_refused(tmp_path: Path) -> None:
    assert await _error(tmp_path, "train_skill", {"config_path": "searchqa/local", "overrides": ["--resume=/"]}) == (
        "override '--resume=/' is not section.key=value (e.g. train.num_epochs=1).")


async def test_a_misspelled_override_key_is_named_with_the_nearest_key(tmp_path: Path) -> None:
    scripted_config(tmp_path)
    message = await _error(tmp_path, "train_skill", {"config_path": "config.yaml",
                                                      "overrides": ["train.num_epoch=2"]})
    assert "Did you mean 'train.num_epochs'?" in message
    assert not (tmp_path / "out").exists()


async def test_a_config_path_climbing_out_is_neither_a_file_nor_a_packaged_name(tmp_path: Path) -> None:
    assert await _error(tmp_path, "train_skill", {"config_path": "../../etc/x.yaml"}) == (
        "config '../../etc/x.yaml': no such file, and not a packaged config name (names look like 'searchqa/local').")


async def test_an_unknown_packaged_config_lists_the_known_ones(tmp_path: Path) -> None:
    message = await _error(tmp_path, "train_skill", {"config_path": "searchqa/lokal"})
    assert "searchqa/local" in message


async def test_a_job_id_with_a_path_is_rejected_by_its_schema(tmp_path: Path) -> None:
    message = await _error(tmp_path, "job_status", {"job_id": "../../../etc"})
    assert "job_id" in message and "String should match pattern" in message


async def test_an_unknown_job_id_says_how_to_list_jobs(tmp_path: Path) -> None:
    message = await _error(tmp_path, "cancel_job", {"job_id": "20260101-000000-abcdef"})
    assert message.startswith("no job 20260101-000000-abcdef in ")
    assert message.endswith("; job_status without an id lists the jobs.")


async def test_wait_without_a_job_id_is_refused(tmp_path: Path) -> None:
    assert await _error(tmp_path, "job_status", {"wait_seconds": 5}) == "wait_seconds needs a job_id."


async def test_a_negative_wait_is_rejected_by_its_schema(tmp_path: Path) -> None:
    message = await _error(tmp_path, "train_skill", {"config_path": "x", "wait_seconds": -1})
    assert "wait_seconds" in message and "greater than or equal to 0" in message


async def test_a_run_id_climbing_out_is_refused(tmp_path: Path) -> None:
    assert await _error(tmp_path, "get_run", {"run": "../../etc"}) == (
        "'../../etc' is neither a run id, env/run_id nor an absolute path; list_runs shows the runs.")


async def test_a_run_id_of_dots_is_refused(tmp_path: Path) -> None:
    assert await _error(tmp_path, "get_run", {"run": "x/.."}) == (
        "'..' is not a valid run id (letters, digits, '.', '_' and '-'; no '..').")


async def test_a_run_path_outside_the_output_folders_is_refused(tmp_path: Path, homes) -> None:
    elsewhere = tmp_path / "elsewhere" / "env" / "r1"
    elsewhere.mkdir(parents=True)
    message = await _error(tmp_path, "get_run", {"run": str(elsewhere)})
    assert message == (f"{elsewhere} is outside the known output folders ({homes.skillopt / 'runs'}); runs are read "
                       "only there (start the server with --outputs DIR to add one).")


def _fake_run(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "config.yaml").write_text("env: {}\n")
    (folder / "events.jsonl").write_text("")
    return folder


async def test_a_symlinked_run_directory_leading_out_is_not_listed_or_read(tmp_path: Path) -> None:
    outside = _fake_run(tmp_path / "secret" / "env" / "s1")
    (tmp_path / "outputs" / "env").mkdir(parents=True)
    os.symlink(outside, tmp_path / "outputs" / "env" / "s1")
    async with connect("--outputs", "outputs", cwd=tmp_path) as client:
        runs = await call(client, "list_runs")
        by_id = await call_error(client, "get_run", {"run": "s1"})
        by_path = await call_error(client, "get_run", {"run": str(tmp_path / "outputs" / "env" / "s1")})
    assert runs["runs"] == []
    assert by_id.startswith(PREFIX + "get_run: no run 's1' under ")
    assert f"{tmp_path / 'outputs' / 'env' / 's1'} is outside the known output folders" in by_path


async def test_a_symlinked_file_inside_a_run_is_not_read(tmp_path: Path) -> None:
    run = _fake_run(tmp_path / "outputs" / "env" / "r1")
    (tmp_path / "private.md").write_text("not for the agent")
    os.symlink(tmp_path / "private.md", run / "best_skill.md")
    async with connect("--outputs", "outputs", cwd=tmp_path) as client:
        detail = await call(client, "get_run", {"run": "r1"})
    assert detail["best_skill"] is None


async def test_a_missing_skill_file_is_named(tmp_path: Path) -> None:
    scripted_config(tmp_path)
    assert await _error(tmp_path, "evaluate_skill", {"config_path": "config.yaml", "skill_path": "nope.md"}) == (
        f"skill_path 'nope.md': no such file (relative paths are read from {tmp_path}).")


async def test_a_proposal_id_with_a_path_is_rejected_by_its_schema(tmp_path: Path) -> None:
    message = await _error(tmp_path, "show_proposal", {"proposal": "../../etc/passwd"})
    assert "proposal" in message and "String should match pattern" in message


async def test_a_proposal_id_that_would_become_a_git_flag_is_rejected(tmp_path: Path) -> None:
    message = await _error(tmp_path, "reject_proposal", {"proposal": "--all"})
    assert "String should match pattern" in message


async def test_an_unknown_proposal_says_how_to_list_them(tmp_path: Path) -> None:
    from proposal_testutil import CANDIDATE, SKILL, make_repo, report

    from sleep.proposals import stage

    repo = make_repo(tmp_path / "app")
    stage(repo / SKILL, CANDIDATE, report())
    assert await _error(tmp_path, "adopt_proposal", {"proposal": "deadbeef"}) == (
        "no proposal 'deadbeef'; `skillopt-sleep review --all` lists every id.")


async def test_a_project_that_is_not_a_folder_is_refused(tmp_path: Path) -> None:
    assert await _error(tmp_path, "list_proposals", {"project": "no/such/dir"}) == (
        f"project 'no/such/dir' is not a folder (relative paths are read from {tmp_path}).")


async def test_a_night_needs_a_project_when_none_is_configured(tmp_path: Path) -> None:
    assert await _error(tmp_path, "sleep_run", {}) == (
        "name the project (its folder) in the call; no project was configured (skillopt-sleep mcp --project PATH).")


async def test_unschedule_needs_a_project_or_all(tmp_path: Path) -> None:
    assert await _error(tmp_path, "unschedule_sleep", {}) == "name the project (its folder) in the call, or pass all=true."


async def test_schedule_in_a_mode_the_machine_lacks_is_refused(tmp_path: Path, monkeypatch) -> None:
    from sched_testutil import fake_tools

    fake_tools(tmp_path, monkeypatch, cron=False)
    assert await _error(tmp_path, "schedule_sleep", {"project": str(tmp_path), "mode": "cron"}) == (
        "--mode cron is not usable here: no `crontab` command on PATH. Use another --mode, or --mode daemon with "
        "`skillopt-sleep daemon` kept running by a process supervisor; `skillopt-sleep schedule --print --mode cron` "
        "shows the entry anyway.")


async def test_schedule_refuses_a_malformed_time(tmp_path: Path) -> None:
    message = await _error(tmp_path, "schedule_sleep", {"project": str(tmp_path), "at": "3am"})
    assert "at" in message and "String should match pattern" in message


async def test_a_resource_uri_climbing_out_is_refused(tmp_path: Path) -> None:
    _fake_run(tmp_path / "outputs" / "env" / "r1")
    async with connect("--outputs", "outputs", cwd=tmp_path) as client:
        with pytest.raises(MCPError):
            await client.read_resource("skillopt://runs/..%2F..%2Fetc/history")
        await call(client, "job_status")


async def test_an_unknown_tool_is_an_error_and_the_server_goes_on(tmp_path: Path) -> None:
    async with connect(cwd=tmp_path) as client:
        message = await call_error(client, "rm_rf", {})
        assert "rm_rf" in message
        assert (await call(client, "list_runs"))["runs"] == []
