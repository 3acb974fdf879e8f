"""The Copilot integration's own logic: VS Code's user mcp.json ("servers") and the
Copilot CLI's mcp-config.json ("mcpServers") (sleep.integrations.copilot), and which
executable gets registered (sleep.integrations.command)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from sleep_testutil import Homes

from sleep.integrations import copilot
from sleep.integrations.command import CommandError, resolve
from sleep.integrations.copilot import CopilotConfigError, Target

EXE = "/opt/tools/bin/skillopt-sleep"
VSCODE = Target("vscode", Path("mcp.json"), "servers")
CLI = Target("copilot-cli", Path("mcp-config.json"), "mcpServers")
# VS Code writes its files with tabs; an "inputs" list and other servers live next to ours.
THEIRS = '{\n\t"inputs": [\n\t\t{\n\t\t\t"id": "token",\n\t\t\t"type": "promptString"\n\t\t}\n\t],\n' \
         '\t"servers": {\n\t\t"github": {\n\t\t\t"type": "http",\n\t\t\t"url": "https://example.invalid/mcp"\n' \
         '\t\t}\n\t}\n}\n'


def test_vscode_gets_a_stdio_entry_under_servers_next_to_the_others() -> None:
    out = copilot.with_server(THEIRS, VSCODE, EXE)
    data = json.loads(out)
    assert list(data) == ["inputs", "servers"] and list(data["servers"]) == ["github", "skillopt"]
    assert data["servers"]["skillopt"] == {"type": "stdio", "command": EXE, "args": ["mcp"]}
    assert '\n\t"servers": {' in out  # the file's own indentation


def test_the_copilot_cli_gets_an_entry_under_mcpservers_with_every_tool() -> None:
    data = json.loads(copilot.with_server("", CLI, EXE))
    assert data == {"mcpServers": {"skillopt": {"type": "stdio", "command": EXE, "args": ["mcp"], "tools": ["*"]}}}


def test_removing_the_entry_gives_back_the_file_it_was_added_to() -> None:
    assert copilot.without_server(copilot.with_server(THEIRS, VSCODE, EXE), VSCODE) == THEIRS
    assert copilot.without_server(copilot.with_server("", CLI, EXE), CLI) == ""


@pytest.mark.parametrize("text", ['{\n  // my servers\n  "servers": {}\n}\n', '{"servers": {},}\n'],
                         ids=["comment", "trailing-comma"])
def test_json_with_comments_is_refused_with_the_entry_to_add_by_hand(text: str) -> None:
    with pytest.raises(CopilotConfigError) as err:
        copilot.with_server(text, VSCODE, EXE)
    assert "not plain JSON" in str(err.value) and '"skillopt": {"type": "stdio"' in str(err.value)


def test_a_servers_key_that_is_not_an_object_is_refused() -> None:
    with pytest.raises(CopilotConfigError, match='object "servers"'):
        copilot.with_server('{"servers": []}', VSCODE, EXE)


def test_install_twice_then_uninstall_gives_back_the_bytes(homes: Homes) -> None:
    homes.vscode_user.mkdir(parents=True)
    target = copilot.vscode_target(homes.vscode_user)
    target.path.write_text(THEIRS)

    assert copilot.install(target, EXE).action == "updated"
    after_first = (target.path.read_bytes(), target.path.stat().st_mtime_ns)
    assert copilot.install(target, EXE).action == "unchanged"
    assert (target.path.read_bytes(), target.path.stat().st_mtime_ns) == after_first

    assert copilot.uninstall(target).action == "restored"
    assert target.path.read_text() == THEIRS


def test_vscode_user_folders_are_found_for_code_and_insiders_not_vscodium(homes: Homes) -> None:
    code = homes.home / ".config" / "Code" / "User"
    insiders = homes.home / "Library" / "Application Support" / "Code - Insiders" / "User"
    server = homes.home / ".vscode-server" / "data" / "User"
    codium = homes.home / ".config" / "VSCodium" / "User"
    for folder in (code, insiders, server, codium):
        folder.mkdir(parents=True)
    assert set(copilot.vscode_user_dirs()) == {code, insiders, server}


def test_the_copilot_cli_file_follows_copilot_home(homes: Homes, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COPILOT_HOME", str(tmp_path / "elsewhere"))
    assert copilot.cli_target().path == tmp_path / "elsewhere" / "mcp-config.json"


# ----- the executable that gets registered ------------------------------------------------

def _exe(folder: Path, body: str = "#!/bin/sh\n") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    exe = folder / "skillopt-sleep"
    exe.write_text(body)
    exe.chmod(0o755)
    return exe


def test_an_explicit_command_must_be_an_absolute_executable(tmp_path: Path) -> None:
    exe = _exe(tmp_path / "bin")
    assert resolve(str(exe)) == str(exe)
    with pytest.raises(CommandError, match="absolute path"):
        resolve("bin/skillopt-sleep")
    exe.chmod(0o644)
    with pytest.raises(CommandError, match="not an executable file"):
        resolve(str(exe))


def test_a_plugin_launcher_shim_is_never_registered(tmp_path: Path) -> None:
    shim = _exe(tmp_path / "plugin" / "bin", "#!/bin/sh\n# SKILLOPT_SLEEP_SHIM\nexec true\n")
    with pytest.raises(CommandError, match="plugin launcher"):
        resolve(str(shim))


def test_the_default_is_found_on_absolute_path_entries_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _exe(tmp_path / "project" / "bin")
    monkeypatch.chdir(tmp_path / "project")
    monkeypatch.setenv("PATH", os.pathsep.join(["bin", ".", "/nonexistent"]))
    with pytest.raises(CommandError, match="not on PATH"):
        resolve()
    real = _exe(tmp_path / "tools")
    monkeypatch.setenv("PATH", os.pathsep.join(["bin", str(tmp_path / "tools")]))
    assert resolve() == str(real)
