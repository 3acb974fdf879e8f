"""``skillopt-sleep integrate gemini|opencode|cursor`` (sleep.integrations.mcp_json): the
``skillopt`` MCP server in the hosts' documented JSON configuration.

- Gemini CLI ``settings.json`` ``mcpServers.<name>`` with ``command``/``args``
  (https://geminicli.com/docs/tools/mcp-server/);
- OpenCode ``opencode.json`` ``mcp.<name>`` with ``type: local``, ``command`` as an
  array and ``enabled`` (https://opencode.ai/docs/mcp-servers/);
- Cursor ``~/.cursor/mcp.json`` ``mcpServers.<name>`` with ``command``/``args``
  (https://cursor.com/docs/context/mcp).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sleep_testutil import Homes

from sleep import hosts
from sleep.cli import main
from sleep.integrations import mcp_json

EXE = "/opt/tools/bin/skillopt-sleep"


def files(homes: Homes) -> dict[str, Path]:
    return {"gemini": homes.home / ".gemini" / "settings.json",
            "opencode": homes.home / ".config" / "opencode" / "opencode.json",
            "cursor": homes.home / ".cursor" / "mcp.json"}


@pytest.fixture(autouse=True)
def _plain_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GEMINI_CLI_HOME", raising=False)
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)


def test_every_host_with_an_integrate_command_names_it_in_the_registry() -> None:
    assert {h.name: h.mcp.integrate for h in hosts.all_hosts() if h.name in mcp_json.HOSTS} == \
        {"gemini": "gemini", "opencode": "opencode", "cursor": "cursor"}


@pytest.mark.parametrize("host, entry", [
    ("gemini", {"command": EXE, "args": ["mcp"]}),
    ("opencode", {"type": "local", "command": [EXE, "mcp"], "enabled": True}),
    ("cursor", {"command": EXE, "args": ["mcp"]}),
])
def test_install_writes_the_documented_entry_and_keeps_the_other_keys(host: str, entry: dict, homes: Homes) -> None:
    path = files(homes)[host]
    path.parent.mkdir(parents=True)
    key = "mcp" if host == "opencode" else "mcpServers"
    theirs = {"theme": "dark", key: {"other": {"command": "x"}}, "zzz": [1, 2]}
    path.write_text(json.dumps(theirs, indent=4) + "\n")
    outcome = mcp_json.install(host, EXE)
    assert outcome.action == "updated"
    data = json.loads(path.read_text())
    assert list(data) == ["theme", key, "zzz"] and data["zzz"] == [1, 2]
    assert data[key] == {"other": {"command": "x"}, "skillopt": entry}
    assert '\n    "theme"' in path.read_text()  # the file's own indentation
    assert mcp_json.install(host, EXE).action == "unchanged"  # idempotent
    assert json.loads(path.read_text()) == data


@pytest.mark.parametrize("host", mcp_json.HOSTS)
def test_uninstall_gives_back_the_bytes(host: str, homes: Homes) -> None:
    path = files(homes)[host]
    path.parent.mkdir(parents=True)
    before = b'{"a": 1}\n'
    path.write_bytes(before)
    mcp_json.install(host, EXE)
    assert path.read_bytes() != before
    (outcome,) = mcp_json.uninstall(host)
    assert path.read_bytes() == before, outcome


def test_a_file_that_did_not_exist_is_created_and_removed_again(homes: Homes) -> None:
    path = files(homes)["cursor"]
    assert mcp_json.install("cursor", EXE).action == "created"
    assert json.loads(path.read_text()) == {"mcpServers": {"skillopt": {"command": EXE, "args": ["mcp"]}}}
    mcp_json.uninstall("cursor")
    assert not path.exists()


def test_gemini_home_variable_moves_the_settings_file(homes: Homes, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path / "g"))
    mcp_json.install("gemini", EXE)
    assert (tmp_path / "g" / ".gemini" / "settings.json").is_file()


def test_settings_with_comments_are_refused_and_left_alone(homes: Homes) -> None:
    path = files(homes)["gemini"]
    path.parent.mkdir(parents=True)
    text = '{\n  // mine\n  "theme": "dark"\n}\n'
    path.write_text(text)
    with pytest.raises(ValueError, match="not plain JSON"):
        mcp_json.install("gemini", EXE)
    assert path.read_text() == text


def test_the_cli_installs_into_a_given_project_file_and_says_what_it_did(homes: Homes, tmp_path: Path,
                                                                          capsys) -> None:
    project_file = tmp_path / "proj" / ".cursor" / "mcp.json"
    exe = tmp_path / "bin" / "skillopt-sleep"
    exe.parent.mkdir()
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    assert main(["integrate", "cursor", "--command", str(exe), "--config", str(project_file)]) == 0
    assert f"{project_file}: created" in capsys.readouterr().out
    assert json.loads(project_file.read_text())["mcpServers"]["skillopt"]["command"] == str(exe)
    assert main(["integrate", "cursor", "--uninstall", "--config", str(project_file)]) == 0
    assert not project_file.exists()


def test_the_cli_refuses_a_relative_command_and_changes_nothing(homes: Homes, capsys) -> None:
    assert main(["integrate", "opencode", "--command", "skillopt-sleep"]) == 2
    assert "absolute path" in capsys.readouterr().err
    assert not files(homes)["opencode"].exists()
