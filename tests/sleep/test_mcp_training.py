"""Training and evaluation through the real server over stdio: train_skill and
job_status to completion with progress notifications, cancel_job then
`skillopt train --resume`, a job outliving its client, evaluate_skill,
list_runs / get_run and the run resources."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from mcp_testutil import (call, call_error, connect, fake_copilot_env, normalise, scripted_config, server_env,
                          stop_jobs)
from sleep_testutil import Homes

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(autouse=True)
def _no_stray_jobs(homes: Homes):
    yield
    stop_jobs(homes.skillopt)


async def test_train_skill_runs_to_completion_with_progress(tmp_path: Path) -> None:
    scripted_config(tmp_path, steps=2, slow=True, run_id="t1")
    seen: list[tuple[float, float | None, str | None]] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        seen.append((value, total, message))

    async with connect("--outputs", "out", cwd=tmp_path, env=fake_copilot_env(tmp_path, delay=0.2)) as client:
        started = await call(client, "train_skill", {"config_path": "config.yaml"})
        assert started["state"] in ("starting", "running")
        status = await call(client, "job_status", {"job_id": started["job_id"], "wait_seconds": 240},
                            progress_callback=progress)
    job = status["jobs"][0]
    assert normalise(job, tmp_path) == {
        "job_id": "<job>", "kind": "train", "state": "completed", "label": "train jsonl_tasks (<tmp>/config.yaml)",
        "created_at": "<time>", "ended_at": "<time>", "exit_code": 0,
        "command": ["skillopt", "train", "--config", "<tmp>/config.yaml", "--set", "output.root=<tmp>/out",
                    "--set", "output.run_id=t1", "--json"],
        "cwd": "<tmp>", "run_id": "t1", "run_dir": "<tmp>/out/jsonl_tasks/t1", "project": None,
        "step": 2, "total_steps": 2, "best_val": 1.0, "last_score": "test best 1.00",
        "recent_events": job["recent_events"],
        "train_summary": {"status": "completed", "steps_done": 2, "total_steps": 2, "initial_val": 0.0,
                          "best_val": 1.0, "initial_test": 0.0, "best_test": 1.0, "accepted": 1, "rejected": 0,
                          "best_source": "step 1", "best_reason": "passed the gate against the best skill (paired); re-measured full val 1.000",
                          "error": "", "failed_items": 0, "usage": job["train_summary"]["usage"],
                          "preflight": job["train_summary"]["preflight"]},
        "eval_scores": None, "night": None, "error": None,
        "next": "get_run(run='<tmp>/out/jsonl_tasks/t1') shows its history and best skill.", "notes": [],
    }
    assert job["recent_events"][-1] == "Done (completed) after 2 steps; best val 1.00"
    assert job["train_summary"]["preflight"]["calls"] > 0 and job["train_summary"]["preflight"]["warnings"] == []
    values = [v for v, _, _ in seen]
    assert len(seen) >= 3 and values == sorted(values) and len(set(values)) == len(values), seen
    assert any(m and m.startswith("[Step 1/2]") for _, _, m in seen), seen
    assert all(v <= total for v, total, _ in seen if total is not None), seen
    assert seen[-1][1] == 2.0 and seen[-1][0] == 2.0 and seen[-1][2].endswith("completed")


async def test_cancel_job_stops_cleanly_and_the_run_resumes(tmp_path: Path) -> None:
    config = scripted_config(tmp_path, steps=4, slow=True, run_id="c1")
    async with connect("--outputs", "out", cwd=tmp_path, env=fake_copilot_env(tmp_path, delay=1.0)) as client:
        job_id = (await call(client, "train_skill", {"config_path": str(config)}))["job_id"]
        for _ in range(1200):  # until step 1 has finished and step 2 has begun
            job = (await call(client, "job_status", {"job_id": job_id}))["jobs"][0]
            if any(line.startswith("[Step 2/4]") for line in job["recent_events"]):
                break
            await _sleep(0.1)
        else:
            pytest.fail(f"the run never reached step 2: {job}")
        cancelled = await call(client, "cancel_job", {"job_id": job_id})
        if cancelled["state"] != "cancelled":
            cancelled = (await call(client, "job_status", {"job_id": job_id, "wait_seconds": 120}))["jobs"][0]
        again = await call(client, "cancel_job", {"job_id": job_id})
    run_dir = tmp_path / "out" / "jsonl_tasks" / "c1"
    assert (cancelled["state"], cancelled["exit_code"]) == ("cancelled", 130)
    assert cancelled["next"] == (f"train_skill(resume='{run_dir}') continues the run after its last finished step "
                                 f"(or `skillopt train --resume {run_dir}`).")
    assert again["state"] == "cancelled" and again["next"].startswith(f"job {job_id} had already ended (cancelled)")
    env = server_env(fake_copilot_env(tmp_path, delay=0.0))
    resumed = subprocess.run([sys.executable, "-m", "skillopt_core.cli.main", "train", "--resume", str(run_dir),
                              "--json"], capture_output=True, text=True, env=env, timeout=240)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert json.loads(resumed.stdout)["status"] == "completed"
    starts = [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines()
              if '"run_started"' in line]
    assert len(starts) == 2 and 1 <= starts[1]["resumed_at_step"] < 4, starts
    assert json.loads(resumed.stdout)["steps_done"] == 4


async def test_job_survives_the_client_disconnecting(tmp_path: Path, homes: Homes) -> None:
    scripted_config(tmp_path, steps=2, slow=True, run_id="d1")
    env = fake_copilot_env(tmp_path, delay=0.3)
    async with connect(cwd=tmp_path, env=env) as client:
        job_id = (await call(client, "train_skill", {"config_path": "config.yaml"}))["job_id"]
    # The client has shut its server down (stdin closed, then its process group killed).
    from sleep.mcp import jobs

    assert jobs.read(job_id).state in ("starting", "running")
    async with connect(cwd=tmp_path, env=env) as client:
        job = (await call(client, "job_status", {"job_id": job_id, "wait_seconds": 240}))["jobs"][0]
    assert (job["state"], job["step"], job["train_summary"]["status"]) == ("completed", 2, "completed")


async def test_train_skill_resume_continues_a_budget_stopped_run(tmp_path: Path) -> None:
    scripted_config(tmp_path, steps=2, run_id="b1")
    async with connect(cwd=tmp_path) as client:
        first = await call(client, "train_skill", {"config_path": "config.yaml",
                                                    "overrides": ["budget.max_calls=14"], "wait_seconds": 240})
        assert (first["state"], first["exit_code"]) == ("budget_exhausted", 3)
        second = await call(client, "train_skill", {"resume": "b1", "overrides": ["budget.max_calls=1000"],
                                                     "wait_seconds": 240})
    assert (second["state"], second["label"], second["train_summary"]["steps_done"]) == (
        "completed", "resume jsonl_tasks/b1", 2)


async def test_evaluate_skill_returns_scores(tmp_path: Path) -> None:
    scripted_config(tmp_path)
    skill = tmp_path / "yes.md"
    skill.write_text("---\nname: yes-skill\ndescription: says yes\n---\n\nAlways reply yes.\n")
    async with connect("--outputs", "out", cwd=tmp_path) as client:
        result = await call(client, "evaluate_skill", {"config_path": "config.yaml", "skill_path": "yes.md",
                                                        "split": "val", "wait_seconds": 240})
    assert result["state"] == "completed"
    scores = result["eval_scores"]
    assert scores == {"split": "val", "skill": str(skill), "n_items": 9, "hard": 1.0, "soft": 1.0,
                      "failed_items": 0, "skill_hash": scores["skill_hash"]}
    assert result["run_dir"] == str(tmp_path / "out" / "jsonl_tasks" / result["run_id"])
    assert result["run_id"].startswith("eval-")


async def test_list_runs_get_run_and_resources_read_a_finished_run(tmp_path: Path) -> None:
    scripted_config(tmp_path, run_id="g1")
    async with connect("--outputs", "out", cwd=tmp_path) as client:
        await call(client, "train_skill", {"config_path": "config.yaml", "wait_seconds": 240})
        runs = await call(client, "list_runs")
        detail = await call(client, "get_run", {"run": "g1"})
        history = await client.read_resource("skillopt://runs/g1/history")
        best = await client.read_resource("skillopt://runs/g1/best_skill")
    run_dir = tmp_path / "out" / "jsonl_tasks" / "g1"
    expected_run = {"run_id": "g1", "env": "jsonl_tasks", "kind": "train", "run_dir": str(run_dir),
                    "status": "completed", "started_at": runs["runs"][0]["started_at"], "steps_done": 2,
                    "total_steps": 2, "initial_val": 0.0, "best_val": 1.0, "initial_test": 0.0, "best_test": 1.0,
                    "split": None, "hard": None, "soft": None, "job_id": None}
    assert runs == {"runs": [expected_run], "roots": [str(tmp_path / "out")], "truncated": False}
    assert detail["run"] == expected_run
    assert detail["best_skill"] == (run_dir / "best_skill.md").read_text()
    assert detail["history"] == json.loads((run_dir / "history.json").read_text())
    assert detail["summary"] == json.loads((run_dir / "summary.json").read_text())
    assert json.loads(history.contents[0].text) == detail["history"]
    assert best.contents[0].text == detail["best_skill"]


async def test_concurrent_read_only_calls_all_answer(tmp_path: Path, homes: Homes) -> None:
    import anyio

    results: list[dict] = []

    async def one(client) -> None:
        results.append(await call(client, "list_runs"))

    async with connect(cwd=tmp_path) as client:
        async with anyio.create_task_group() as tg:
            for _ in range(20):
                tg.start_soon(one, client)
    assert results == [{"runs": [], "roots": [str(homes.skillopt / "runs")], "truncated": False}] * 20


async def test_train_skill_refuses_a_run_directory_that_holds_a_run(tmp_path: Path) -> None:
    scripted_config(tmp_path, run_id="x1")
    async with connect("--outputs", "out", cwd=tmp_path) as client:
        await call(client, "train_skill", {"config_path": "config.yaml", "wait_seconds": 240})
        message = await call_error(client, "train_skill", {"config_path": "config.yaml"})
    run_dir = tmp_path / "out" / "jsonl_tasks" / "x1"
    assert message == (f"Error executing tool train_skill: {run_dir} already holds a run: resume it with "
                       f"train_skill(resume='{run_dir}') or choose another output.run_id.")


async def _sleep(seconds: float) -> None:
    import anyio

    await anyio.sleep(seconds)

