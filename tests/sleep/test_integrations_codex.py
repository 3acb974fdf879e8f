"""The Codex integration's own logic: the TOML edit of config.toml and the skill file
(sleep.integrations.codex). The real `codex` CLI is driven in test_plugin_codex.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from plugin_testutil import toml_loads

from sleep.integrations import codex
from sleep.integrations.codex import CodexConfigError, is_registered, server_entry, with_server, without_server
from sleep.mcp.launch import MAX_WAIT_S, SERVER_ENV_VARS, TOOL_TIMEOUT_S

EXE = "/opt/tools/bin/skillopt-sleep"
WHERE = Path("config.toml")
MINE = ('# my settings\nmodel = "o3"   # inline comment\n\n[profiles.fast]\nmodel = "gpt-5"\n\n'
        '[mcp_servers.other]\ncommand = "x"\n')
ENTRY = {"command": EXE, "args": ["mcp"], "env_vars": list(SERVER_ENV_VARS), "tool_timeout_sec": TOOL_TIMEOUT_S}


def test_the_entry_is_added_and_everything_else_kept_as_written() -> None:
    out = with_server(MINE, WHERE, EXE)
    assert out.startswith(MINE)  # comments, spacing and order untouched
    assert toml_loads(out)["mcp_servers"] == {"other": {"command": "x"}, "skillopt": ENTRY}


@pytest.mark.parametrize("text", [
    "",
    'model = "o3"\nmcp_servers.other.command = "x"\n',
    'mcp_servers = { other = { command = "x" } }\n',
    '[mcp_servers]\n\n[mcp_servers.other]\ncommand = "x"\n',
], ids=["empty", "dotted-keys", "inline-table", "explicit-super-table"])
def test_the_entry_is_added_to_each_way_of_writing_mcp_servers(text: str) -> None:
    out = with_server(text, WHERE, EXE)
    assert toml_loads(out)["mcp_servers"]["skillopt"] == ENTRY
    assert {k: v for k, v in toml_loads(out).get("mcp_servers", {}).items() if k != "skillopt"} == \
        toml_loads(text).get("mcp_servers", {})


def test_an_existing_entry_gets_the_command_and_keeps_its_other_settings() -> None:
    text = '[mcp_servers.skillopt]\ncommand = "old"\nargs = ["mcp", "--http"]\nstartup_timeout_sec = 20\n'
    assert server_entry(with_server(text, WHERE, EXE), WHERE) == {**ENTRY, "startup_timeout_sec": 20}


def test_the_server_gets_every_variable_it_reads_and_a_timeout_above_the_longest_wait() -> None:
    entry = server_entry(with_server("", WHERE, EXE), WHERE)
    assert {"SKILLOPT_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "CLAUDE_CONFIG_DIR", "CODEX_HOME",
            "COPILOT_HOME"} <= set(entry["env_vars"])
    assert entry["tool_timeout_sec"] > MAX_WAIT_S > 60  # 60 s: Codex's default, evaluate_skill's default wait


def test_an_earlier_install_without_env_vars_is_not_taken_as_registered() -> None:
    old = f'[mcp_servers.skillopt]\ncommand = "{EXE}"\nargs = ["mcp"]\n'
    assert not is_registered(old, WHERE, EXE)
    assert is_registered(with_server(old, WHERE, EXE), WHERE, EXE)


def test_the_persons_own_env_vars_and_a_longer_timeout_are_kept() -> None:
    text = (f'[mcp_servers.skillopt]\ncommand = "{EXE}"\nargs = ["mcp"]\n'
            'env_vars = ["MY_PROXY", {{ name = "REMOTE_TOKEN", source = "remote" }}, "SKILLOPT_HOME"]\n'
            'tool_timeout_sec = 7200\n').replace("{{", "{").replace("}}", "}")
    entry = server_entry(with_server(text, WHERE, EXE), WHERE)
    assert entry["env_vars"][:3] == ["MY_PROXY", {"name": "REMOTE_TOKEN", "source": "remote"}, "SKILLOPT_HOME"]
    assert entry["env_vars"].count("SKILLOPT_HOME") == 1 and set(SERVER_ENV_VARS) <= set(
        v for v in entry["env_vars"] if isinstance(v, str))
    assert entry["tool_timeout_sec"] == 7200


def test_a_timeout_below_the_longest_wait_is_raised() -> None:
    text = f'[mcp_servers.skillopt]\ncommand = "{EXE}"\nargs = ["mcp"]\ntool_timeout_sec = 60\n'
    assert server_entry(with_server(text, WHERE, EXE), WHERE)["tool_timeout_sec"] == TOOL_TIMEOUT_S


def test_removing_the_entry_gives_back_the_text_it_was_added_to() -> None:
    assert without_server(with_server(MINE, WHERE, EXE), WHERE) == MINE
    assert without_server(with_server("", WHERE, EXE), WHERE) == ""


def test_removing_from_a_file_without_the_entry_changes_nothing() -> None:
    assert without_server(MINE, WHERE) == MINE


def test_invalid_toml_is_refused_with_the_file_named() -> None:
    with pytest.raises(CodexConfigError, match=r"config.toml is not valid TOML.*Nothing was changed"):
        with_server('model = "o3\n', WHERE, EXE)


def test_mcp_servers_that_is_not_a_table_is_refused() -> None:
    with pytest.raises(CodexConfigError, match="`mcp_servers` is not a table"):
        with_server("mcp_servers = 3\n", WHERE, EXE)


def _skill(tmp_path: Path) -> Path:
    source = tmp_path / "SKILL.md"
    source.write_text("---\nname: skillopt-sleep\ndescription: test\n---\nbody\n")
    return source


def _exe(tmp_path: Path) -> str:
    exe = tmp_path / "bin" / "skillopt-sleep"
    exe.parent.mkdir()
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    return str(exe)


def test_install_without_the_codex_cli_edits_config_toml_and_uninstall_restores_it(tmp_path: Path) -> None:
    config = codex.config_path()
    config.parent.mkdir(parents=True)
    config.write_text(MINE)
    exe, skill = _exe(tmp_path), _skill(tmp_path)

    actions = [o.action for o in codex.install(exe, skill, use_codex_cli=False)]
    assert actions == ["updated", "created"]
    assert server_entry(config.read_text(), config) == {**ENTRY, "command": exe}
    assert codex.skill_path().read_bytes() == skill.read_bytes()

    assert [o.action for o in codex.uninstall(skill)] == ["restored", "deleted"]
    assert config.read_text() == MINE and not codex.skill_path().exists()


def test_a_skill_changed_after_the_install_is_not_overwritten_and_a_copy_survives_uninstall(tmp_path: Path) -> None:
    exe, skill = _exe(tmp_path), _skill(tmp_path)
    codex.install(exe, skill, use_codex_cli=False)
    codex.skill_path().write_text("---\nname: skillopt-sleep\ndescription: adopted\n---\nimproved\n")

    assert codex.install(exe, skill, use_codex_cli=False)[1].action == "kept"
    assert "improved" in codex.skill_path().read_text()

    outcome = codex.uninstall(skill)[1]
    assert outcome.action == "deleted" and "your changed copy is kept in" in outcome.detail
    kept = Path(outcome.detail.rsplit("kept in ", 1)[1])
    assert "improved" in kept.read_text() and not codex.skill_path().exists()


def test_a_skill_of_the_same_name_from_before_comes_back_on_uninstall(tmp_path: Path) -> None:
    exe, skill = _exe(tmp_path), _skill(tmp_path)
    codex.skill_path().parent.mkdir(parents=True)
    codex.skill_path().write_text("the person's own skill\n")

    assert codex.install(exe, skill, use_codex_cli=False)[1].action == "updated"
    codex.uninstall(skill)
    assert codex.skill_path().read_text() == "the person's own skill\n"


def test_uninstall_without_a_record_leaves_a_skill_that_is_not_ours(tmp_path: Path) -> None:
    skill = _skill(tmp_path)
    codex.skill_path().parent.mkdir(parents=True)
    codex.skill_path().write_text("someone else's\n")

    assert codex.uninstall(skill)[1].action == "unchanged"
    assert codex.skill_path().read_text() == "someone else's\n"


def test_a_codex_whose_mcp_add_fails_falls_back_to_the_toml_edit(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    old_codex = tmp_path / "old" / "codex"  # a Codex too old for `codex mcp add`
    old_codex.parent.mkdir()
    old_codex.write_text("#!/bin/sh\necho \"error: unrecognized subcommand 'mcp'\" >&2\nexit 2\n")
    old_codex.chmod(0o755)
    monkeypatch.setenv("PATH", f"{old_codex.parent}:/usr/bin:/bin")
    exe, skill = _exe(tmp_path), _skill(tmp_path)

    [config_outcome, _] = codex.install(exe, skill)

    assert "by a TOML edit; `codex mcp add` did not register it (error: unrecognized subcommand" in \
        config_outcome.detail
    assert server_entry(codex.config_path().read_text(), codex.config_path()) == {**ENTRY, "command": exe}
