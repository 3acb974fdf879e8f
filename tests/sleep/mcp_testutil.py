"""Helpers for the MCP server tests: spawn the real server over stdio with the
test's private homes, drive it with the SDK's own client, and build scripted
training configs (no model, no network).

A *slow* config puts a fake ``copilot`` CLI in front of the target role: it
answers "yes" when the installed skill says so, "no" otherwise, after a fixed
delay, so a run lasts long enough to be followed or cancelled however fast the
machine is (cached rollouts would otherwise make later steps instant).
"""

from __future__ import annotations

import json
import os
import re
import signal
import sys
import time
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any, AsyncIterator

import yaml
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters
from toy_world import write_yes_world

REPO = Path(__file__).resolve().parents[2]
BASE_CONFIG = REPO / "skillopt_core" / "configs" / "_base_" / "default.yaml"

FAKE_COPILOT = '''#!{python}
"""Fake `copilot -p`: after a delay, "yes" if the installed skill says so, else "no"."""
import glob, json, os, sys, time
workdir = next(a.split("=", 1)[1] for a in sys.argv if a.startswith("--add-dir="))
usage = next((a.split("=", 1)[1] for a in sys.argv if a.startswith("--usage-output-file=")), None)
time.sleep(float(os.environ.get("FAKE_COPILOT_DELAY", "0.15")))
skills = "".join(open(p, encoding="utf-8").read() for p in glob.glob(workdir + "/.github/skills/*/SKILL.md"))
answer = "yes" if "Always reply yes" in skills else "no"
if usage:
    json.dump({{"modelMetrics": {{"fake": {{"usage": {{"inputTokens": 1, "outputTokens": 1}}}}}}}}, open(usage, "w"))
print(json.dumps({{"type": "assistant.message", "data": {{"content": answer}}}}))
'''


def server_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The test's environment (private HOME, SKILLOPT_HOME, ...) for the spawned server."""
    env = dict(os.environ)
    env.update(extra or {})
    return env


def server_params(*args: str, cwd: Path, env: dict[str, str] | None = None) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "sleep.cli", "mcp", *args],
                                 env=server_env(env), cwd=str(cwd))


@asynccontextmanager
async def connect(*args: str, cwd: Path, env: dict[str, str] | None = None) -> AsyncIterator[Client]:
    """A client connected (initialize handshake, as Claude Code does) to a freshly spawned server."""
    async with Client(server_params(*args, cwd=cwd, env=env), mode="legacy") as client:
        yield client


async def call(client: Client, name: str, args: dict[str, Any] | None = None, **kw: Any) -> dict[str, Any]:
    """A tool call that must succeed; returns its structured content."""
    result = await client.call_tool(name, args or {}, **kw)
    text = " ".join(getattr(c, "text", "") for c in result.content)
    assert not result.is_error, f"{name} failed: {text}"
    assert result.structured_content is not None, f"{name} returned no structured content"
    return result.structured_content


async def call_error(client: Client, name: str, args: dict[str, Any]) -> str:
    """A tool call that must fail as a tool error; returns its message."""
    result = await client.call_tool(name, args)
    assert result.is_error, f"{name} succeeded: {result.structured_content}"
    return " ".join(getattr(c, "text", "") for c in result.content)


def scripted_config(tmp_path: Path, *, steps: int = 2, slow: bool = False, n_tasks: int = 20,
                    run_id: str | None = None) -> Path:
    """A training config on the scripted backend (``slow``: the target is the fake copilot)."""
    tasks, rules = write_yes_world(tmp_path, n_tasks)
    model: dict[str, Any] = {"backend": "scripted", "scripted": str(rules)}
    evaluation: dict[str, Any] = {}
    if slow:
        model["target_backend"] = "copilot"
        evaluation = {"val_limit": 4, "test_limit": 2}
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump({
        "_base_": str(BASE_CONFIG),
        "env": {"name": "jsonl_tasks", "data_path": str(tasks), "split_ratio": [2, 2, 1]},
        "model": model,
        "train": {"num_epochs": 1, "batch_size": 4, "steps_per_epoch": steps, "workers": 2},
        "evaluation": evaluation,
        "output": {"root": str(tmp_path / "out"), "plot": False, **({"run_id": run_id} if run_id else {})},
    }))
    return config


def fake_copilot_env(tmp_path: Path, delay: float = 0.15) -> dict[str, str]:
    """PATH with the fake ``copilot`` first (for slow configs)."""
    bin_dir = tmp_path / "fakebin"
    bin_dir.mkdir(exist_ok=True)
    exe = bin_dir / "copilot"
    exe.write_text(FAKE_COPILOT.format(python=sys.executable))
    exe.chmod(0o755)
    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}", "FAKE_COPILOT_DELAY": str(delay)}


_ISO = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z")
_JOB = re.compile(r"\d{8}-\d{6}-[0-9a-f]{6}")


def normalise(data: Any, tmp_path: Path) -> Any:
    """``data`` with the test's paths, times and job ids replaced, so whole results can be compared."""
    text = json.dumps(data)
    text = text.replace(str(tmp_path), "<tmp>").replace(sys.executable, "<python>")
    text = _ISO.sub("<time>", text)
    text = _JOB.sub("<job>", text)
    return json.loads(text)


def stop_jobs(skillopt_home: Path) -> None:
    """End every job runner still alive in a test's data directory (they were started by the test)."""
    from sleep.mcp import jobs

    root = skillopt_home / "jobs"
    if not root.is_dir():
        return
    for folder in root.iterdir():
        proc = jobs._read_json(folder / "process.json") or {}
        pid = proc.get("runner_pid")
        if pid and jobs.runner_alive(folder):
            for sig in (signal.SIGINT, signal.SIGKILL):
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:
                    break
                deadline = time.monotonic() + 5
                while jobs.runner_alive(folder) and time.monotonic() < deadline:
                    time.sleep(0.05)
                if not jobs.runner_alive(folder):
                    break
            child = proc.get("child_pid")
            if child:
                try:
                    os.kill(child, signal.SIGKILL)
                except ProcessLookupError:
                    pass


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def http_server(cwd: Path, *args: str, port: int | None = None):
    """``skillopt-sleep mcp --http`` on a free loopback port, until the block ends: yields (process, port)."""
    import socket
    import subprocess

    port = port or free_port()
    proc = subprocess.Popen([sys.executable, "-m", "sleep.cli", "mcp", "--http", "--port", str(port), *args],
                            cwd=cwd, env=server_env(), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
            time.sleep(0.1)
        yield proc, port
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def http_client(port: int, token: str | None = None, origin: str | None = None) -> Client:
    """The SDK's client over streamable HTTP, sending the bearer token and an Origin when given."""
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    headers = {}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    if origin is not None:
        headers["Origin"] = origin
    http = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0, read=300.0))
    transport = streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http)
    return Client(transport, mode="legacy")
