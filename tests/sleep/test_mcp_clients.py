"""Other clients against the real server: the MCP Inspector CLI, Claude Code
(`claude mcp add` + `claude mcp list`, which connects and reports health) and
Codex (`codex mcp add` + `codex mcp list`), and the Copilot launcher.

The npm tools are found in ``$SKILLOPT_NPM_TOOLS/node_modules/.bin`` (a folder
made with ``npm install --prefix DIR @anthropic-ai/claude-code @openai/codex
@modelcontextprotocol/inspector``) or on PATH; a test is skipped, saying which
tool is missing, only when it is not installed. Every run uses the test's
private homes, and the CLIs are told not to send telemetry.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from mcp_testutil import REPO, connect, server_env
from npm_clients import npm_tool, run
from test_mcp_listing import TOOLS

pytestmark = pytest.mark.timeout(300)


def test_inspector_cli_lists_every_tool(tmp_path: Path) -> None:
    inspector = npm_tool("mcp-inspector")
    out = run([inspector, "--cli", sys.executable, "-m", "sleep.cli", "mcp", "--method", "tools/list"], tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    tools = json.loads(out.stdout)["tools"]
    assert {t["name"] for t in tools} == TOOLS and all("outputSchema" in t for t in tools)


def test_inspector_cli_calls_a_tool(tmp_path: Path) -> None:
    inspector = npm_tool("mcp-inspector")
    out = run([inspector, "--cli", sys.executable, "-m", "sleep.cli", "mcp", "--method", "tools/call",
               "--tool-name", "list_runs"], tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout)["structuredContent"] == {
        "runs": [], "roots": [str(Path(os.environ["SKILLOPT_HOME"]) / "runs")], "truncated": False}


def test_claude_mcp_add_then_list_reports_connected(tmp_path: Path) -> None:
    claude = npm_tool("claude")
    project = tmp_path / "project"
    project.mkdir()
    added = run([claude, "mcp", "add", "skillopt", "--", "skillopt-sleep", "mcp"], project)
    assert added.returncode == 0, added.stderr[-2000:]
    listed = run([claude, "mcp", "list"], project)
    assert listed.returncode == 0, listed.stderr[-2000:]
    assert "skillopt: skillopt-sleep mcp - ✔ Connected" in listed.stdout, listed.stdout


def test_codex_mcp_add_then_list_shows_the_server(tmp_path: Path) -> None:
    codex = npm_tool("codex")
    Path(os.environ["CODEX_HOME"]).mkdir(parents=True, exist_ok=True)  # codex wants its home to exist
    added = run([codex, "mcp", "add", "skillopt", "--", "skillopt-sleep", "mcp"], tmp_path)
    assert added.returncode == 0, added.stderr[-2000:]
    listed = run([codex, "mcp", "list", "--json"], tmp_path)
    assert listed.returncode == 0, listed.stderr[-2000:]
    [entry] = [e for e in json.loads(listed.stdout) if e["name"] == "skillopt"]
    assert (entry["enabled"], entry["transport"]["type"], entry["transport"]["command"],
            entry["transport"]["args"]) == (True, "stdio", "skillopt-sleep", ["mcp"])
    config = (Path(os.environ["CODEX_HOME"]) / "config.toml").read_text()
    assert '[mcp_servers.skillopt]\ncommand = "skillopt-sleep"\nargs = ["mcp"]' in config


async def test_the_copilot_launcher_serves_the_same_tools(tmp_path: Path) -> None:
    from mcp.client.client import Client
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(command=sys.executable, args=[str(REPO / "plugins" / "copilot" / "mcp_server.py")],
                                   env=server_env(), cwd=str(tmp_path))
    async with Client(params, mode="legacy") as launcher, connect(cwd=tmp_path) as direct:
        via_launcher = await launcher.list_tools()
        via_cli = await direct.list_tools()
    assert [t.model_dump() for t in via_launcher.tools] == [t.model_dump() for t in via_cli.tools]
