"""One registry of hosts (issue 22 §1): the built-in descriptions give the lists SkillOpt-Sleep
had written out by hand, and a host added as one module (tests/sleep/toy_host.py), by
``sleep.hosts.register`` or by a ``skillopt.hosts`` entry point, reaches harvest discovery,
the CLI's ``--source``/``--host`` choices and home flag, the watcher's roots, the carried
environment of a scheduled night, the skill folders and the MCP tool's accepted sources,
with no other edit."""

from __future__ import annotations

import asyncio
import importlib.metadata
import json
from pathlib import Path

import pytest
import toy_host

from sleep import hosts


@pytest.fixture
def toy():
    hosts.register(toy_host.HOST)
    try:
        yield toy_host.HOST
    finally:
        hosts.unregister(toy_host.HOST.name)


def _toy_chat(home: Path, project: Path) -> Path:
    chat = home / "chats" / "c1.json"
    chat.parent.mkdir(parents=True)
    chat.write_text(json.dumps({"id": "toy-1", "cwd": str(project),
                                "prompts": [{"text": "rename the helper and run the tests",
                                             "at": "2026-01-02T03:04:05.000Z"}]}))
    return chat


def test_the_built_in_hosts_give_the_lists_that_were_written_out_by_hand() -> None:
    from sleep.cycle.backends import CLI_BACKENDS, HOST_FAMILY
    from sleep.scheduler.model import CARRIED_ENV

    assert hosts.source_groups() == {
        "claude-code": ("claude-code",), "codex": ("codex",), "copilot": ("copilot-vscode", "copilot-cli"),
        "gemini": ("gemini-cli",), "opencode": ("opencode",), "cursor": ("cursor-agent", "cursor-ide"),
        "pi": ("pi",), "dsh": ("dsh",), "goose": ("goose",), "amp": ("amp",), "hermes": ("hermes",),
        "all": ("claude-code", "codex", "copilot-vscode", "copilot-cli", "gemini-cli", "opencode", "cursor-agent",
                "cursor-ide", "pi", "dsh", "goose", "amp", "hermes")}
    assert CLI_BACKENDS == {"claude-code": "claude-code", "codex": "codex", "copilot": "copilot",
                            "gemini": "gemini-cli", "opencode": "opencode", "cursor": "cursor-agent", "pi": "pi"}
    assert HOST_FAMILY == {"claude-code": "claude-code", "codex": "codex", "copilot-vscode": "copilot",
                           "copilot-cli": "copilot", "gemini-cli": "gemini", "opencode": "opencode",
                           "cursor-agent": "cursor", "cursor-ide": "cursor", "pi": "pi", "dsh": "dsh",
                           "goose": "goose", "amp": "amp", "hermes": "hermes"}
    assert [f for f, _, _ in hosts.home_flags()] == ["--claude-home", "--codex-home", "--copilot-home",
                                                     "--cursor-ide-home", "--pi-home", "--dsh-home",
                                                     "--goose-home", "--hermes-home"]
    assert CARRIED_ENV == ("PATH", "CLAUDE_CONFIG_DIR", "CODEX_HOME", "COPILOT_HOME", "GEMINI_CLI_HOME",
                           "SKILLOPT_CURSOR_IDE_HOME", "PI_CODING_AGENT_DIR", "DSH_HOME", "GOOSE_PATH_ROOT",
                           "HERMES_HOME", "SKILLOPT_REPLAY_ROOT",
                           "SKILLOPT_CACHE_DIR")


def test_a_host_added_as_one_module_reaches_every_list(toy, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    from sleep.cli import build_parser, main
    from sleep.cycle.skills import candidate_paths, managed_path
    from sleep.index import Index
    from sleep.scheduler import model
    from sleep.scheduler.roots import transcript_roots

    toy_home, project = tmp_path / "toy-home", tmp_path / "project"
    project.mkdir()
    chat = _toy_chat(toy_home, project)

    # The CLI: --source and --host choices, and the home flag that sets the host's variable.
    args = build_parser().parse_args(["sessions", "--host", "toy-agent"])
    assert args.host == "toy-agent"
    monkeypatch.delenv("TOY_AGENT_HOME", raising=False)
    assert main(["harvest", "--source", "toy", "--toy-home", str(toy_home), "--all-projects", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["sessions_new"] == 1 and "toy-agent" in report["sources"]
    # Harvest discovery: the session is in the index, and `all` reads the host too.
    with Index.open() as index:
        (session,) = index.sessions(host="toy-agent")
    assert session.project_dir == str(project) and session.prompts[0].text == "rename the helper and run the tests"
    assert "toy-agent" in hosts.source_groups()["all"]

    # The watcher watches the host's folder and wants its chat files.
    roots = [r for r in transcript_roots() if r.host == "toy-agent"]
    assert [r.path for r in roots] == [str(toy_home / "chats")] and roots[0].wants(str(chat))

    # A scheduled night carries the host's variable.
    assert "TOY_AGENT_HOME" in model.CARRIED_ENV
    assert ("TOY_AGENT_HOME", str(toy_home)) in model.night_command(str(project), executable="/bin/true").env

    # Skill folders: project first, then the host's home.
    assert candidate_paths("toy", "lint", project) == [project / ".toy/skills/lint/SKILL.md",
                                                       toy_home / "skills" / "lint" / "SKILL.md"]
    assert managed_path("toy", project) == project / ".toy/skills/skillopt-learned/SKILL.md"

    # The MCP tool accepts the host as a source.
    from sleep.mcp.guards import ServerConfig
    from sleep.mcp.server import build_server

    tools = asyncio.run(build_server(ServerConfig(cwd=tmp_path)).list_tools())
    (harvest_tool,) = [t for t in tools if t.name == "sleep_harvest"]
    assert "toy" in json.dumps(harvest_tool.input_schema["properties"]["source"])


def test_a_host_named_by_an_entry_point_is_loaded(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.metadata.entry_points
    ep = importlib.metadata.EntryPoint(name="toy", value="toy_host", group=hosts.ENTRY_POINT_GROUP)
    monkeypatch.setattr(importlib.metadata, "entry_points",
                        lambda **kw: [ep] if kw.get("group") == hosts.ENTRY_POINT_GROUP else real(**kw))
    hosts.reload_plugins()
    try:
        assert hosts.source_groups()["toy"] == ("toy-agent",)
        assert hosts.source_names()[-1] == "toy-agent"
    finally:
        monkeypatch.undo()
        hosts.reload_plugins()
    assert "toy" not in hosts.source_groups()


def test_a_broken_host_plugin_is_left_out_and_named(monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    ep = importlib.metadata.EntryPoint(name="gone", value="no_such_module_for_skillopt", group=hosts.ENTRY_POINT_GROUP)
    monkeypatch.setattr(importlib.metadata, "entry_points", lambda **kw: [ep])
    hosts.reload_plugins()
    try:
        assert list(hosts.source_groups()) == ["claude-code", "codex", "copilot", "gemini", "opencode", "cursor",
                                                 "pi", "dsh", "goose", "amp", "hermes", "all"]
    finally:
        monkeypatch.undo()
        hosts.reload_plugins()
    err = capsys.readouterr().err
    assert "host plugin left out" in err and "gone = no_such_module_for_skillopt" in err


def test_a_host_cannot_take_a_name_or_source_already_taken() -> None:
    import dataclasses

    with pytest.raises(ValueError, match="already registered"):
        hosts.register(dataclasses.replace(toy_host.HOST, name="codex"))
    codex_source = hosts.get("codex").sources[0]
    with pytest.raises(ValueError, match="belongs to another host"):
        hosts.register(dataclasses.replace(toy_host.HOST, sources=(codex_source,)))
    assert "toy" not in hosts.source_groups()


def test_python_dash_m_sleep_runs_the_cli() -> None:
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "sleep", "sessions", "--help"], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0 and "gemini-cli" in out.stdout and "opencode" in out.stdout


def test_every_host_with_an_integrate_subcommand_has_one() -> None:
    import argparse

    from sleep.cli import build_parser

    parser = build_parser()
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    (hosts_arg,) = [a for a in sub.choices["integrate"]._actions if isinstance(a, argparse._SubParsersAction)]
    wanted = {h.mcp.integrate for h in hosts.all_hosts() if h.mcp.integrate}
    assert wanted == {"codex", "copilot", "gemini", "opencode", "cursor"} and wanted <= set(hosts_arg.choices)


def test_a_night_finds_gemini_and_opencode_skills_in_their_own_folders(tmp_path: Path) -> None:
    from sleep.cycle.skills import choose_skill
    from sleep.sessions import Session

    project = tmp_path / "project"
    for folder, source in ((".gemini/skills", "gemini-cli"), (".opencode/skills", "opencode")):
        skill = project / folder / "lint" / "SKILL.md"
        skill.parent.mkdir(parents=True)
        skill.write_text("---\nname: lint\ndescription: lint\n---\n")
        choice = choose_skill(project, [Session(host=source, session_id="s1", skills={"lint": 1})])
        assert choice.path == skill and not choice.managed
        skill.unlink()
    # Cursor's own folder: a managed skill is created in .cursor/skills.
    choice = choose_skill(project, [Session(host="cursor-agent", session_id="s2")])
    assert (choice.host, choice.path) == ("cursor", project / ".cursor/skills/skillopt-learned/SKILL.md")


def test_a_skill_chosen_with_skill_belongs_to_the_host_whose_folder_holds_it(tmp_path: Path) -> None:
    from sleep.cycle.skills import choose_skill

    project = tmp_path / "project"
    expected = {".claude": "claude-code", ".agents": "codex", ".github": "copilot", ".gemini": "gemini",
                ".opencode": "opencode", ".cursor": "cursor", "docs": "claude-code"}
    for folder, host in expected.items():
        choice = choose_skill(project, [], override=project / folder / "skills" / "x" / "SKILL.md")
        assert choice.host == host, folder
