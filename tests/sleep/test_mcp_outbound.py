"""Nothing leaves the server unfiltered: a secret in a run's files, a job's stderr,
an event line or an error message reaches the client as a redaction marker, in
the structured content and in the text content alike, in resources and in
progress notifications. The real server over stdio and the SDK's client."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp_testutil import call, call_error, connect, scripted_config
from sleep_testutil import Homes

from sleep.lock import FileLock
from sleep.mcp import jobs

pytestmark = pytest.mark.timeout(300)

GITHUB = "ghp_Zq8wN3vK5tR7yB2mX4cL6pD9sF1gH0jQ2eT8"
AWS = "AKIAQ3EGRT5YB7WNSXKL"


def _run_with_secrets(root: Path) -> Path:
    run = root / "jsonl_tasks" / "leaky"
    run.mkdir(parents=True)
    (run / "config.yaml").write_text("env: {}\n")
    (run / "best_skill.md").write_text(f"# Deploy\n\n- Push with the token {GITHUB}.\n")
    (run / "history.json").write_text(json.dumps([{"step": 1, "gate_reason": f"the reply quoted {AWS}",
                                                   "skill_hash": "e74b7f44986050ca1ea20a32eaf7d64bcf86c068972"
                                                                 "aba2cfbb7337321e9e935"}]))
    (run / "summary.json").write_text(json.dumps({"status": "completed", "best_reason": f"key {AWS} helped"}))
    (run / "events.jsonl").write_text(json.dumps({"event": "notice", "level": "info", "text": f"saw {GITHUB}"})
                                      + "\n")
    return run


def _leaks(text: str) -> list[str]:
    return [s for s in (GITHUB, AWS) if s in text]


async def test_get_run_filters_structured_and_text_content(tmp_path: Path, homes: Homes) -> None:
    _run_with_secrets(tmp_path / "runs")
    async with connect("--outputs", "runs", cwd=tmp_path) as client:
        result = await client.call_tool("get_run", {"run": "leaky"})
    structured = result.structured_content or {}
    text = " ".join(getattr(c, "text", "") for c in result.content)
    assert not result.is_error and _leaks(json.dumps(structured)) == [] and _leaks(text) == []
    assert "[REDACTED:github-token]" in structured["best_skill"]
    assert "[REDACTED:aws-access-key]" in structured["history"][0]["gate_reason"]
    assert structured["history"][0]["skill_hash"].startswith("e74b7f44")  # a content hash is not a secret
    assert json.loads(text) == structured  # the text content is the filtered structured content


async def test_run_resources_are_filtered(tmp_path: Path, homes: Homes) -> None:
    _run_with_secrets(tmp_path / "runs")
    async with connect("--outputs", "runs", cwd=tmp_path) as client:
        best = await client.read_resource("skillopt://runs/leaky/best_skill")
        history = await client.read_resource("skillopt://runs/leaky/history")
    assert _leaks(best.contents[0].text) == [] and "[REDACTED:github-token]" in best.contents[0].text
    assert _leaks(history.contents[0].text) == []
    assert json.loads(history.contents[0].text)[0]["skill_hash"].startswith("e74b7f44")


def _job(kind: str, run_dir: Path | None, stderr: str = "", exit_code: int | None = None) -> Path:
    folder = jobs.jobs_dir() / jobs.new_job_id()
    folder.mkdir(parents=True)
    jobs._write_json(folder / "job.json", {"job_id": folder.name, "kind": kind, "argv": ["skillopt", "train"],
                                           "cwd": str(folder), "created_at": jobs.utc_now(),
                                           "run_dir": str(run_dir) if run_dir else None})
    (folder / "stderr.txt").write_text(stderr)
    (folder / "stdout.txt").write_text("")
    if exit_code is not None:
        jobs._write_json(folder / "exit.json", {"exit_code": exit_code, "ended_at": jobs.utc_now()})
    return folder


async def test_a_failed_jobs_stderr_is_filtered(tmp_path: Path, homes: Homes) -> None:
    run = _run_with_secrets(tmp_path / "runs")
    folder = _job("train", run, stderr=f"Traceback ...\nopenai.AuthenticationError: bad key {AWS}\n", exit_code=1)
    async with connect("--outputs", "runs", cwd=tmp_path) as client:
        status = await call(client, "job_status", {"job_id": folder.name})
    [job] = status["jobs"]
    assert job["state"] == "failed" and "[REDACTED:aws-access-key]" in job["error"] and _leaks(json.dumps(status)) == []
    assert _leaks(" ".join(job["recent_events"])) == []


async def test_progress_messages_are_filtered(tmp_path: Path, homes: Homes) -> None:
    run = _run_with_secrets(tmp_path / "runs")
    folder = _job("train", run)
    jobs._write_json(folder / "process.json", {"runner_pid": 1, "child_pid": 1, "started_at": jobs.utc_now()})
    messages: list[str] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        messages.append(message or "")

    runner = FileLock(folder / "runner.lock", what="job runner").acquire()  # the test plays the running job
    try:
        async with connect("--outputs", "runs", cwd=tmp_path) as client:
            await call(client, "job_status", {"job_id": folder.name, "wait_seconds": 1}, progress_callback=progress)
    finally:
        runner.release()
    assert any("[REDACTED:github-token]" in m for m in messages), messages
    assert _leaks(" ".join(messages)) == []


async def test_an_error_message_quoting_a_value_is_filtered(tmp_path: Path) -> None:
    scripted_config(tmp_path)
    async with connect("--outputs", "runs", cwd=tmp_path) as client:
        message = await call_error(client, "train_skill", {"config_path": "config.yaml",
                                                           "overrides": [f"train.num_epochs={GITHUB}"]})
    assert "train.num_epochs" in message and _leaks(message) == [] and "[REDACTED:github-token]" in message


async def test_a_prompt_text_is_filtered(tmp_path: Path) -> None:
    async with connect(cwd=tmp_path) as client:
        prompt = await client.get_prompt("morning-review", {"project": f"/srv/{GITHUB}"})
    text = " ".join(m.content.text for m in prompt.messages)
    assert "[REDACTED:github-token]" in text and _leaks(text) == []


async def test_a_remembered_secret_in_a_form_the_rules_miss_never_leaves(tmp_path: Path, homes: Homes) -> None:
    """Issue 19 §1, defence in depth: every value a harvest ever redacted is filtered from the
    tools' results too, where the rules alone would see nothing ("deploy / <password>")."""
    import sleep_builders as b
    from sleep_testutil import run as harvest

    password = "Qx7vR2mLk9Zt4Wn"
    b.write_jsonl(b.claude_session_path(homes.claude, "/work/app", "k"), [
        b.claude_user(f"load the fixtures with mysql -u deploy -p{password} ledger", sid="k", cwd="/work/app", t=0)])
    assert harvest().secrets_remembered >= 1
    run = _run_with_secrets(tmp_path / "runs")
    (run / "best_skill.md").write_text(f"# Deploy\n\n- Log in as deploy / {password}.\n")
    async with connect("--outputs", "runs", cwd=tmp_path) as client:
        result = await client.call_tool("get_run", {"run": "leaky"})
        best = await client.read_resource("skillopt://runs/leaky/best_skill")
    structured = result.structured_content or {}
    text = " ".join(getattr(c, "text", "") for c in result.content)
    assert password not in json.dumps(structured) + text + best.contents[0].text
    assert "deploy / [REDACTED:known-secret]" in structured["best_skill"]
    assert structured["history"][0]["skill_hash"].startswith("e74b7f44")
