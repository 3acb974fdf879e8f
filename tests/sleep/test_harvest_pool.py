"""Files parsed in worker processes give the same index and report as one process."""

from __future__ import annotations

import multiprocessing

import sleep_builders as b
import pytest
from sleep_testutil import Homes, run

import sleep.harvest.pool as harvest_pool
from sleep.index import Index

pytestmark = pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(),
                                reason="worker processes are forked")


def _corpus(homes: Homes) -> None:
    for i in range(4):
        cwd = f"/work/p{i}"
        b.write_jsonl(b.claude_session_path(homes.claude, cwd, f"c{i}"), b.claude_actions_session(f"c{i}", cwd))
        sid = b.uid(f"x{i}")
        b.write_jsonl(b.codex_rollout_path(homes.codex, sid, t=i), b.codex_actions_session(sid, cwd))
    # A secret in a prompt: its count and remembered hash must come back from the worker.
    b.write_jsonl(b.claude_session_path(homes.claude, "/work/s", "sec"), [
        b.claude_user("deploy with ghp_abcdefghijklmnopqrstuvwxyz0123456789", sid="sec", cwd="/work/s", t=0)])


def _snapshot() -> list[dict]:
    with Index.open() as idx:
        return sorted((s.to_dict(with_state=False) for s in idx.sessions()), key=lambda d: (d["host"], d["session_id"]))


def _comparable(report) -> dict:
    d = report.to_dict()
    for key in ("elapsed_s", "mb_per_s", "index_path"):
        d.pop(key)
    return d


def test_pool_and_one_process_agree(homes: Homes, monkeypatch: pytest.MonkeyPatch) -> None:
    _corpus(homes)
    monkeypatch.setenv("SKILLOPT_HARVEST_WORKERS", "1")
    one = _comparable(run())
    one_sessions = _snapshot()
    (homes.skillopt / "sleep.sqlite3").unlink()

    monkeypatch.setenv("SKILLOPT_HARVEST_WORKERS", "2")
    monkeypatch.setattr(harvest_pool, "POOL_MIN_BYTES", 0)
    monkeypatch.setattr("sleep.harvest.harvester.POOL_MIN_BYTES", 0)
    used: list[int] = []
    real_map = harvest_pool.Pool.map

    def counting_map(self, jobs):
        used.append(len(jobs))
        return real_map(self, jobs)

    monkeypatch.setattr(harvest_pool.Pool, "map", counting_map)
    pooled = _comparable(run())
    assert used and sum(used) >= 9  # the files really went through the workers
    assert pooled == one
    assert _snapshot() == one_sessions
    assert one["secrets_redacted"] >= 1 and one["secrets_remembered"] >= 1


def test_worker_count_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKILLOPT_HARVEST_WORKERS", "1")
    assert harvest_pool.workers() == 1
    monkeypatch.setenv("SKILLOPT_HARVEST_WORKERS", "99")
    assert harvest_pool.workers() == harvest_pool.MAX_WORKERS
