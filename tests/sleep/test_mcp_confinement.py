"""The MCP server stays inside its data directory and its project: the real
server over stdio, driven by the SDK's client with hostile overrides and paths.

Runs are written only to the server's output folders (default
``$SKILLOPT_HOME/runs``, never ``outputs/`` in the folder the server started
in), models are reached only at the config's own URL or on loopback, and skill,
config and task files are read only from the project, the data directory and
the output folders."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml
from mcp_testutil import call, call_error, connect, scripted_config, stop_jobs
from sleep_testutil import Homes

from sleep.mcp import jobs

pytestmark = pytest.mark.timeout(300)

PREFIX = "Error executing tool "


@pytest.fixture(autouse=True)
def _no_stray_jobs(homes: Homes):
    yield
    stop_jobs(homes.skillopt)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The folder the server starts in (as Claude Code starts plugin servers), with a scripted config."""
    folder = tmp_path / "project"
    folder.mkdir()
    scripted_config(folder)
    return folder


async def _refused(cwd: Path, tool: str, args: dict, *server_args: str) -> str:
    async with connect(*server_args, cwd=cwd) as client:
        message = await call_error(client, tool, args)
        assert (await call(client, "job_status"))["jobs"] == []  # nothing was started
    assert message.startswith(PREFIX + tool + ": "), message
    return message[len(PREFIX + tool + ": "):]


@pytest.mark.parametrize("run_id", ["../../../escaped-run", "/tmp/escaped-run-abs", "a/b"])
async def test_a_run_id_that_leaves_the_output_folder_is_refused(tmp_path: Path, project: Path, run_id: str) -> None:
    message = await _refused(project, "train_skill", {"config_path": "config.yaml",
                                                      "overrides": [f"output.run_id={run_id}"]})
    assert message.startswith(f"override 'output.run_id={run_id}' is refused: output.run_id must be a plain name")
    assert not (tmp_path / "escaped-run").exists() and not Path("/tmp/escaped-run-abs").exists()


async def test_an_output_root_elsewhere_is_refused_and_names_the_server_folders(project: Path, homes: Homes) -> None:
    message = await _refused(project, "train_skill", {"config_path": "config.yaml",
                                                      "overrides": ["output.root=/tmp"]})
    assert message == ("override 'output.root=/tmp' is refused: output.root must be one of this server's output folders "
                       f"({homes.skillopt / 'runs'}); runs are written nowhere else (start the server with "
                       "--outputs DIR to add one).")


@pytest.mark.parametrize("url", ["http://evil.example/v1", "https://127.0.0.1.evil.example/v1",
                                 "http://localhost@evil.example/v1", "file:///etc/passwd"])
async def test_a_base_url_off_loopback_is_refused(project: Path, url: str) -> None:
    message = await _refused(project, "train_skill", {"config_path": "config.yaml",
                                                      "overrides": [f"model.base_url={url}"]})
    assert message.startswith(f"override 'model.base_url={url}' is refused: model.base_url from a tool call must be a "
                              "loopback URL")
    assert message.endswith("or the config's own value (none); set another server in the config file.")


async def test_the_configs_own_base_url_and_a_loopback_one_are_accepted(project: Path) -> None:
    config = yaml.safe_load((project / "config.yaml").read_text())
    config["model"]["base_url"] = "https://models.internal.example/v1"
    (project / "config.yaml").write_text(yaml.safe_dump(config))
    async with connect(cwd=project) as client:
        for run_id, url in (("own", "https://models.internal.example/v1"), ("loop", "http://127.0.0.1:8080/v1")):
            started = await call(client, "train_skill", {"config_path": "config.yaml",
                                                         "overrides": [f"model.base_url={url}",
                                                                       f"output.run_id={run_id}"]})
            assert f"model.base_url={url}" in started["command"]


@pytest.mark.parametrize("url,loopback", [
    ("http://127.0.0.1:8080/v1", True), ("http://127.8.9.10/v1", True), ("http://[::1]:1234/v1", True),
    ("http://localhost:11434/v1", True), ("https://LOCALHOST/v1", True),
    ("http://localhost.evil.example/v1", False), ("http://127.0.0.1@evil.example/v1", False),
    ("http://10.0.0.1/v1", False), ("ftp://127.0.0.1/", False), ("http:///v1", False), ("not a url", False)])
def test_which_urls_count_as_loopback(url: str, loopback: bool) -> None:
    from sleep.mcp.overrides import is_loopback_url

    assert is_loopback_url(url) is loopback


@pytest.mark.parametrize("override,why", [
    ("model.allowed_tools=[Bash, Write]", "model.allowed_tools can only be set in the config file"),
    ("model.api_key_env=AWS_SECRET_ACCESS_KEY", "model.api_key_env can only be set in the config file"),
    ("env.options.seed_skill=/etc/passwd", "env.options values from a tool call are numbers, true/false or null"),
    ("env.options.workdir=/", "env.options values from a tool call are numbers, true/false or null"),
    ("model.target={a: 1}", "model.target takes a number, true/false, null or a name"),
])
async def test_an_override_that_reaches_outside_is_refused(project: Path, override: str, why: str) -> None:
    message = await _refused(project, "train_skill", {"config_path": "config.yaml", "overrides": [override]})
    assert message.startswith(f"override {override!r} is refused: {why}"), message


@pytest.mark.parametrize("override", ["skill.init=/etc/passwd", "env.data_path=/etc/passwd",
                                      "model.scripted=/etc/passwd", "model.model_path=/etc/passwd"])
async def test_a_file_override_outside_the_project_and_data_dir_is_refused(project: Path, homes: Homes,
                                                                           override: str) -> None:
    key = override.split("=")[0]
    message = await _refused(project, "train_skill", {"config_path": "config.yaml", "overrides": [override]})
    assert message == (f"{key} '/etc/passwd' is outside what this server may read ({project}, {homes.skillopt}, "
                       f"{homes.skillopt / 'runs'}); give a file in the project or in SkillOpt's data directory, "
                       "or start the server with --project PATH.")


async def test_evaluate_skill_refuses_a_skill_outside_the_project(project: Path) -> None:
    message = await _refused(project, "evaluate_skill", {"config_path": "config.yaml", "skill_path": "/etc/passwd"})
    assert message.startswith("skill_path '/etc/passwd' is outside what this server may read (")


async def test_evaluate_skill_refuses_a_symlink_in_the_project_that_points_out(project: Path, tmp_path: Path) -> None:
    secret = tmp_path / "elsewhere" / "notes.md"
    secret.parent.mkdir()
    secret.write_text("not for the model\n")
    os.symlink(secret, project / "skill.md")
    message = await _refused(project, "evaluate_skill", {"config_path": "config.yaml", "skill_path": "skill.md"})
    assert message.startswith("skill_path 'skill.md' is outside what this server may read (")


async def test_evaluate_skill_refuses_a_file_that_is_not_a_skill(project: Path) -> None:
    (project / "data.jsonl").write_text("{}\n")
    message = await _refused(project, "evaluate_skill", {"config_path": "config.yaml", "skill_path": "data.jsonl"})
    assert message == "skill_path 'data.jsonl' is not a skill file: skills are Markdown files (SKILL.md, best_skill.md, ...)."


async def test_a_config_file_whose_skill_is_outside_is_refused(project: Path) -> None:
    config = yaml.safe_load((project / "config.yaml").read_text())
    config["skill"] = {"init": "/etc/passwd"}
    (project / "hostile.yaml").write_text(yaml.safe_dump(config))
    message = await _refused(project, "train_skill", {"config_path": "hostile.yaml"})
    assert message.startswith("skill.init '/etc/passwd' is outside what this server may read (")


async def test_a_config_file_outside_the_project_is_refused(project: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    scripted_config(elsewhere)
    message = await _refused(project, "train_skill", {"config_path": str(elsewhere / "config.yaml")})
    assert message.startswith(f"config_path '{elsewhere / 'config.yaml'}' is outside what this server may read (")


async def test_started_in_a_repository_a_run_goes_to_the_data_dir_not_into_the_repository(
        project: Path, homes: Homes) -> None:
    config = yaml.safe_load((project / "config.yaml").read_text())
    del config["output"]["root"]  # the engine's default, `outputs` (relative to where the job runs)
    (project / "config.yaml").write_text(yaml.safe_dump(config))
    before = sorted(p.relative_to(project) for p in project.rglob("*"))
    async with connect(cwd=project) as client:
        done = await call(client, "train_skill", {"config_path": "config.yaml", "overrides": ["output.run_id=r1"],
                                                  "wait_seconds": 240})
    assert (done["state"], done["notes"]) == ("completed", [])
    assert done["run_dir"] == str(homes.skillopt / "runs" / "jsonl_tasks" / "r1")
    assert (homes.skillopt / "runs" / "jsonl_tasks" / "r1" / "best_skill.md").is_file()
    assert not (project / "outputs").exists()
    assert sorted(p.relative_to(project) for p in project.rglob("*")) == before  # nothing written in the project


async def test_a_config_output_root_outside_the_server_folders_is_redirected_and_said(
        project: Path, homes: Homes) -> None:
    async with connect(cwd=project) as client:
        started = await call(client, "train_skill", {"config_path": "config.yaml", "overrides": ["output.run_id=r2"]})
    assert started["run_dir"] == str(homes.skillopt / "runs" / "jsonl_tasks" / "r2")
    assert started["notes"] == [
        f"the config's output.root {project / 'out'} is not one of this server's output folders, so the run is "
        f"written to {homes.skillopt / 'runs'} (start the server with --outputs {project / 'out'} to write there)."]


async def test_list_runs_never_adds_a_jobs_grandparent_as_a_root(tmp_path: Path, project: Path, homes: Homes) -> None:
    # A job registered with a run directory far outside (as an escaped run_id left one).
    elsewhere = tmp_path / "elsewhere" / "env"
    for name in ("escaped", "neighbour"):
        (elsewhere / name).mkdir(parents=True)
        (elsewhere / name / "config.yaml").write_text("env: {}\n")
        (elsewhere / name / "events.jsonl").write_text("")
    folder = jobs.jobs_dir() / jobs.new_job_id()
    folder.mkdir(parents=True)
    jobs._write_json(folder / "job.json", {"job_id": folder.name, "kind": "train", "argv": ["true"],
                                           "cwd": str(project), "created_at": "2026-01-01T00:00:00.000Z",
                                           "run_dir": str(elsewhere / "escaped")})
    jobs._write_json(folder / "exit.json", {"exit_code": 0, "ended_at": "2026-01-01T00:01:00.000Z"})
    async with connect(cwd=project) as client:
        listed = await call(client, "list_runs")
        by_path = await call_error(client, "get_run", {"run": str(elsewhere / "neighbour")})
        jobs_seen = await call(client, "job_status")
    assert listed == {"runs": [], "roots": [str(homes.skillopt / "runs")], "truncated": False}
    assert "is outside the known output folders" in by_path
    assert jobs_seen["jobs"] == []  # its run directory is outside this server's output folders
