"""The real `opencode` (npm `opencode-ai`) driven by the scripted model endpoint: pointed at it the way
a person points OpenCode at a gateway (a provider with a `baseURL` in their own opencode.json, the
`@ai-sdk/openai-compatible` adapter, Chat Completions), through the `opencode` backend.

What its stream showed that the fake did not: a denied bash call is `state.status: "error"` with
"The user has specified a rule which prevents you from using this specific tool call"; `write`
reports `metadata.exists`; and a checkout's own `.opencode/plugin` and MCP servers run unless
`OPENCODE_DISABLE_PROJECT_CONFIG` is set (which also hides `.opencode/skills`); and it takes its
project folder from `$PWD`, not from the process's working directory, so without `PWD` set to the
checkout it acts in the folder the night was started from."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
import replay_fakes
from model_endpoint import ModelEndpoint, install_plan, run, script, write
from npm_clients import npm_tool

from skillopt_core.backends.base import CompletionRequest
from skillopt_core.backends.opencode import OpenCodeBackend
from skillopt_core.backends.trajectory import FileChange
from sleep.replay.checkout import replay_checkout

SKILL = "---\nname: setup\ndescription: Setting up this project\n---\nInstall with pnpm install.\n"


@dataclass
class Direct:
    """A launcher that starts the CLI as it is (no sandbox): the acting argv and rules, alone."""

    name: str = "direct"

    def wrap(self, argv, cwd, env, writable=()):
        return argv, env


def person_config(home: Path, ep: ModelEndpoint) -> None:
    folder = home / ".config" / "opencode"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "opencode.json").write_text(json.dumps({"provider": {"scripted": {
        "npm": "@ai-sdk/openai-compatible", "name": "Scripted endpoint",
        "options": {"baseURL": f"{ep.url}/v1", "apiKey": "sk-scripted"}, "models": {"m": {"name": "m"}}}}}))


def project(root: Path, marker: Path) -> Path:
    """A repository whose own OpenCode config would run code: a plugin and a local MCP server."""
    (root / ".opencode" / "plugin").mkdir(parents=True)
    (root / ".opencode" / "plugin" / "mark.js").write_text(
        f'import fs from "fs";\nexport const Mark = async () => {{ fs.writeFileSync("{marker}.plugin", "x"); '
        "return {}; };\n")
    (root / "opencode.json").write_text(json.dumps({
        "mcp": {"planted": {"type": "local", "command": ["sh", "-c", f"touch {marker}.mcp; sleep 3"],
                            "enabled": True}},
        "permission": {"bash": "allow", "edit": "allow"}}))
    (root / "package.json").write_text('{"name": "p"}\n')
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(root)]
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "project"], check=True)
    return root


@pytest.fixture
def opencode(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    exe = npm_tool("opencode")
    tools = replay_fakes.install(tmp_path / "tools")  # fake pnpm/npm (the project's tools)
    monkeypatch.setenv("PATH", os.pathsep.join([str(tools), str(Path(exe).parent), os.environ["PATH"]]))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.delenv("OPENCODE_CONFIG_CONTENT", raising=False)
    return Path(os.environ["HOME"])


def test_real_opencode_read_only_replay_runs_no_project_code_and_finds_the_skill(opencode: Path, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    repo = project(tmp_path / "project", marker)
    with ModelEndpoint(install_plan(note=None)) as ep:
        person_config(opencode, ep)
        backend = OpenCodeBackend(model="scripted/m", role="target", options={"timeout": 120})
        with replay_checkout(repo) as work:
            completion = asyncio.run(backend.complete(CompletionRequest.single(
                "Install the dependencies.", role="target", skill=SKILL, cwd=str(work))))
        # (opencode's first call may be its title generator, a call without tools)
        first = next(json.dumps(c.body) for c in ep.model_calls("chat") if c.body.get("tools"))
    assert sorted(p.name for p in tmp_path.glob("ran.*")) == []
    assert "Setting up this project" in first  # offered from the side folder, project config being off
    assert [s.name for s in completion.trajectory.steps if getattr(s, "kind", "") == "tool_call"][:1] == ["read"]
    assert completion.trajectory.commands() == []  # no shell in a read-only replay


def test_real_opencode_acting_runs_what_is_allowed_and_records_the_denial(opencode: Path, tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "work").mkdir()
    started_in = tmp_path / "where-the-night-started"
    started_in.mkdir()
    monkeypatch.chdir(started_in)
    monkeypatch.setenv("PWD", str(started_in))  # opencode 1.18 takes its folder from $PWD, not the cwd
    with ModelEndpoint(script(run("pnpm install"), run("curl http://example.com"), write("NOTES.md", "ok\n"),
                              run("nosuchprog"))) as ep:
        person_config(opencode, ep)
        backend = OpenCodeBackend(model="scripted/m", role="target", options={"timeout": 120})
        backend.act(Direct())
        with replay_checkout(tmp_path / "work") as work:
            completion = asyncio.run(backend.complete(CompletionRequest.single(
                "Install the dependencies.", role="target", cwd=str(work),
                allowed_commands=("pnpm", "nosuchprog"))))
            assert (work / "NOTES.md").read_text() == "ok\n"
    assert list(started_in.iterdir()) == []  # nothing acted where the night was started
    t = completion.trajectory
    assert [(c.command, c.exit_code, c.denied) for c in t.commands()] == [
        ("pnpm install", 0, False), ("curl http://example.com", None, True), ("nosuchprog", 127, False)]
    assert t.file_changes() == [FileChange("NOTES.md", "added")]
    assert t.unknown_events == 0 and ep.unknown() == []
