"""What a client sees when it connects: the ``tools/list`` wire JSON pinned in a
snapshot (regenerate with SKILLOPT_UPDATE_SNAPSHOTS=1 after a deliberate
change and review the diff), every tool with typed input and output schemas
and all four annotations, the resources and the prompt; the same over
streamable HTTP on loopback; and a start-up path free of the engine, GitPython
and the model SDKs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from mcp_testutil import connect, http_client, http_server, server_env

SNAPSHOT = Path(__file__).parent / "snapshots" / "mcp_tools_list.json"
TOOLS = {"train_skill", "evaluate_skill", "job_status", "cancel_job", "list_runs", "get_run", "sleep_harvest",
         "sleep_run", "sleep_status", "list_proposals", "show_proposal", "adopt_proposal", "reject_proposal",
         "schedule_sleep", "unschedule_sleep", "list_tasks", "set_task_enabled"}


def wire_exchange(cwd: Path, *requests: dict) -> list[dict]:
    """Raw JSON-RPC lines to a spawned server; the responses, in order (notifications skipped)."""
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "skillopt-tests", "version": "0"}}}
    lines = [init, {"jsonrpc": "2.0", "method": "notifications/initialized"}, *requests]
    proc = subprocess.Popen([sys.executable, "-m", "sleep.cli", "mcp"], cwd=cwd, env=server_env(),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    responses = []
    try:
        assert proc.stdin and proc.stdout
        for message in lines:
            proc.stdin.write(json.dumps(message) + "\n")
            proc.stdin.flush()
            if "id" in message:
                while True:
                    line = proc.stdout.readline()
                    assert line, f"the server closed stdout: {proc.stderr.read() if proc.stderr else ''}"
                    data = json.loads(line)  # every stdout line is a protocol message
                    if data.get("id") == message["id"]:
                        responses.append(data)
                        break
    finally:
        proc.stdin.close()  # type: ignore[union-attr]
        proc.wait(timeout=30)
    return responses


def test_tools_list_wire_json_matches_the_snapshot(tmp_path: Path) -> None:
    init, listed = wire_exchange(tmp_path, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert init["result"]["serverInfo"]["name"] == "skillopt"
    result = listed["result"]
    if os.environ.get("SKILLOPT_UPDATE_SNAPSHOTS"):
        SNAPSHOT.parent.mkdir(exist_ok=True)
        SNAPSHOT.write_text(json.dumps(result, indent=2, sort_keys=True) + "\n")
    assert result == json.loads(SNAPSHOT.read_text())


def test_every_tool_has_typed_schemas_and_all_four_annotations() -> None:
    tools = json.loads(SNAPSHOT.read_text())["tools"]
    assert {t["name"] for t in tools} == TOOLS
    for tool in tools:
        assert tool["inputSchema"]["type"] == "object", tool["name"]
        assert tool["outputSchema"]["type"] == "object" and tool["outputSchema"]["properties"], tool["name"]
        assert set(tool["annotations"]) == {"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"}
        assert tool["description"].strip(), tool["name"]
    destructive = {t["name"] for t in tools if t["annotations"]["destructiveHint"]}
    read_only = {t["name"] for t in tools if t["annotations"]["readOnlyHint"]}
    assert destructive == {"adopt_proposal", "reject_proposal", "unschedule_sleep"}
    assert read_only == {"job_status", "list_runs", "get_run", "sleep_status", "list_proposals", "show_proposal",
                         "list_tasks"}


async def test_resources_and_the_prompt_are_listed(tmp_path: Path) -> None:
    async with connect(cwd=tmp_path) as client:
        templates = await client.list_resource_templates()
        prompts = await client.list_prompts()
    assert sorted(t.uri_template for t in templates.resource_templates) == [
        "skillopt://proposals/{proposal_id}", "skillopt://runs/{run_id}/best_skill",
        "skillopt://runs/{run_id}/history"]
    assert [(p.name, [a.name for a in p.arguments or []]) for p in prompts.prompts] == [("morning-review", ["project"])]


async def test_streamable_http_on_loopback_initializes_and_lists_tools(tmp_path: Path, homes) -> None:
    with http_server(tmp_path) as (proc, port):
        token = (homes.skillopt / "mcp-http-token").read_text().strip()
        async with http_client(port, token) as client:
            assert client.server_info is not None and client.server_info.name == "skillopt"
            listed = await client.list_tools()
            status = await client.call_tool("job_status", {})
    assert {t.name for t in listed.tools} == TOOLS
    assert status.structured_content == {"jobs": [], "message": "0 jobs, 0 running."}
    assert proc.stdout is not None and proc.stdout.read() == b""  # logs go to stderr and the log file


HEAVY = ("git", "yaml", "sleep.proposals.decide", "skillopt_core.run.trainer", "skillopt_core.run.api",
         "skillopt_core.backends", "openai", "anthropic", "llama_cpp", "matplotlib")


def test_start_up_path_loads_no_engine_gitpython_or_model_sdk(tmp_path: Path) -> None:
    """What `skillopt-sleep mcp` loads before it answers: the CLI's parser (every subcommand's
    module) and the server with all its tools. The rest loads inside the tools that need it."""
    code = ("import sys\nfrom sleep.cli import build_parser\nbuild_parser()\n"
            "from sleep.mcp.guards import ServerConfig\nfrom sleep.mcp.server import build_server\n"
            "build_server(ServerConfig.create())\n"
            f"print(' '.join(m for m in {HEAVY!r} if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=server_env(), capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ""


@pytest.mark.parametrize("flag", ["--port=0", "--port=70000"])
def test_a_port_out_of_range_is_a_usage_error(tmp_path: Path, flag: str) -> None:
    out = subprocess.run([sys.executable, "-m", "sleep.cli", "mcp", "--http", flag], cwd=tmp_path, env=server_env(),
                         capture_output=True, text=True, timeout=60)
    assert (out.returncode, out.stdout) == (2, "")
    assert "is not a TCP port" in out.stderr
