"""GitHub Copilot: the example configurations (VS Code `.vscode/mcp.json` with key
"servers", the Copilot CLI's `mcp-config.json` with key "mcpServers") and
`bash plugins/copilot/install.sh` in the test's private HOME: it finds VS Code's
User folder and the Copilot CLI, a second run changes nothing, `--uninstall`
gives each file back byte for byte, and each registered entry starts the server
as the host would. (The launcher plugins/copilot/mcp_server.py is driven through
the SDK client in test_mcp_clients.py.)"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters
from npm_clients import client_env
from plugin_testutil import COPILOT_INSTALL, PLUGINS, SYSTEM_PATH, bash, tree
from sleep_testutil import Homes

pytestmark = pytest.mark.timeout(300)

EXE = str(Path(sys.executable).parent / "skillopt-sleep")
REVIEW_TOOLS = {"list_proposals", "show_proposal", "adopt_proposal", "reject_proposal", "sleep_status"}
THEIRS = '{\n\t"servers": {\n\t\t"github": {\n\t\t\t"type": "http",\n\t\t\t"url": "https://example.invalid/mcp"\n' \
         '\t\t}\n\t}\n}\n'


def env() -> dict[str, str]:
    return {**client_env(), "PATH": os.pathsep.join([str(Path(sys.executable).parent), SYSTEM_PATH])}


async def serves_the_review(entry: dict, cwd: Path) -> None:
    """Start ``entry`` the way the host does (command + args over stdio) and check what it serves."""
    params = StdioServerParameters(command=entry["command"], args=entry["args"], env=env(), cwd=str(cwd))
    async with Client(params, mode="legacy") as client:
        tools = {t.name for t in (await client.list_tools()).tools}
        prompts = {p.name for p in (await client.list_prompts()).prompts}
    assert REVIEW_TOOLS <= tools and "morning-review" in prompts


@pytest.mark.parametrize("example, key, extra", [
    (PLUGINS / "copilot" / ".vscode" / "mcp.json", "servers", {}),
    (PLUGINS / "copilot" / "mcp-config.json", "mcpServers", {"tools": ["*"]}),
], ids=["vscode", "copilot-cli"])
async def test_each_example_config_has_its_hosts_key_and_starts_the_server(tmp_path: Path, example: Path, key: str,
                                                                           extra: dict) -> None:
    data = json.loads(example.read_text())
    assert data == {key: {"skillopt": {"type": "stdio", "command": "skillopt-sleep", "args": ["mcp"], **extra}}}
    await serves_the_review(data[key]["skillopt"], tmp_path)


def test_install_finds_both_hosts_then_again_changes_nothing_then_uninstall_restores(tmp_path: Path,
                                                                                    homes: Homes) -> None:
    homes.vscode_user.mkdir(parents=True)
    vscode = homes.vscode_user / "mcp.json"
    vscode.write_text(THEIRS)
    homes.copilot_cli.mkdir(parents=True)  # the Copilot CLI has run here before
    cli = homes.copilot_cli / "mcp-config.json"

    first = bash(COPILOT_INSTALL, env=env(), cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert json.loads(vscode.read_text())["servers"] == {
        "github": {"type": "http", "url": "https://example.invalid/mcp"},
        "skillopt": {"type": "stdio", "command": EXE, "args": ["mcp"]}}
    assert json.loads(cli.read_text()) == {
        "mcpServers": {"skillopt": {"type": "stdio", "command": EXE, "args": ["mcp"], "tools": ["*"]}}}

    before = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in (vscode, cli)}
    second = bash(COPILOT_INSTALL, env=env(), cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    assert second.stdout.count(": unchanged") == 2
    assert {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in (vscode, cli)} == before

    undone = bash(COPILOT_INSTALL, "--uninstall", env=env(), cwd=tmp_path)
    assert undone.returncode == 0, undone.stderr
    assert vscode.read_bytes() == THEIRS.encode() and not cli.exists()


async def test_each_registered_entry_starts_the_server(tmp_path: Path, homes: Homes) -> None:
    user_dir = tmp_path / "Code - Portable" / "User"
    out = bash(COPILOT_INSTALL, "--cli", "--vscode-user-dir", str(user_dir), env=env(), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    await serves_the_review(json.loads((user_dir / "mcp.json").read_text())["servers"]["skillopt"], tmp_path)
    cli_file = homes.copilot_cli / "mcp-config.json"
    await serves_the_review(json.loads(cli_file.read_text())["mcpServers"]["skillopt"], tmp_path)


def test_only_the_chosen_host_is_touched(tmp_path: Path, homes: Homes) -> None:
    homes.vscode_user.mkdir(parents=True)
    out = bash(COPILOT_INSTALL, "--cli", env=env(), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert (homes.copilot_cli / "mcp-config.json").exists() and not (homes.vscode_user / "mcp.json").exists()


def test_with_neither_host_found_it_says_what_to_pass(tmp_path: Path, homes: Homes) -> None:
    before = tree(homes.home)
    out = bash(COPILOT_INSTALL, env=env(), cwd=tmp_path)
    assert out.returncode == 2
    assert "pass --vscode-user-dir DIR or --cli" in out.stderr
    assert tree(homes.home) == before


def test_a_vscode_mcp_json_with_comments_is_refused_and_left_alone(tmp_path: Path, homes: Homes) -> None:
    homes.vscode_user.mkdir(parents=True)
    jsonc = '{\n\t// mine\n\t"servers": {}\n}\n'
    (homes.vscode_user / "mcp.json").write_text(jsonc)
    out = bash(COPILOT_INSTALL, "--vscode", env=env(), cwd=tmp_path)
    assert out.returncode == 2
    assert "not plain JSON" in out.stderr and '"skillopt": {"type": "stdio"' in out.stderr
    assert (homes.vscode_user / "mcp.json").read_text() == jsonc


def test_a_refused_file_means_no_host_is_touched(tmp_path: Path, homes: Homes) -> None:
    homes.vscode_user.mkdir(parents=True)  # VS Code comes first, and is fine
    homes.copilot_cli.mkdir(parents=True)
    (homes.copilot_cli / "mcp-config.json").write_text('{"mcpServers": {},}\n')  # trailing comma: refused
    out = bash(COPILOT_INSTALL, env=env(), cwd=tmp_path)
    assert out.returncode == 2 and "mcp-config.json is not plain JSON" in out.stderr
    assert not (homes.vscode_user / "mcp.json").exists()
