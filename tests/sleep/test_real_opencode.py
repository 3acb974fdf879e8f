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

import json
from functools import partial
from pathlib import Path

import pytest
import replay_fakes
from model_endpoint import ModelEndpoint
from npm_clients import npm_tool
from real_cli_testutil import act_and_deny, commit_project, first_on_path, replay_read_only, start_elsewhere, target

from skillopt_core.backends.opencode import OpenCodeBackend


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
    return commit_project(root)


@pytest.fixture
def opencode(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    # fake pnpm/npm (the project's tools), then the real CLI
    first_on_path(monkeypatch, replay_fakes.install(tmp_path / "tools"), Path(npm_tool("opencode")).parent)
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.delenv("OPENCODE_CONFIG_CONTENT", raising=False)
    return Path.home()


def test_real_opencode_read_only_replay_runs_no_project_code_and_finds_the_skill(opencode: Path, tmp_path: Path) -> None:
    repo = project(tmp_path / "project", tmp_path / "ran")
    completion, ep = replay_read_only(target(OpenCodeBackend, "scripted/m"), repo, partial(person_config, opencode))
    # (opencode's first call may be its title generator, a call without tools)
    first = next(json.dumps(c.body) for c in ep.model_calls("chat") if c.body.get("tools"))
    assert sorted(p.name for p in tmp_path.glob("ran.*")) == []
    assert "Setting up this project" in first  # offered from the side folder, project config being off
    assert [s.name for s in completion.trajectory.steps if getattr(s, "kind", "") == "tool_call"][:1] == ["read"]
    assert completion.trajectory.commands() == []  # no shell in a read-only replay


def test_real_opencode_acting_runs_what_is_allowed_and_records_the_denial(opencode: Path, tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    started_in = start_elsewhere(tmp_path, monkeypatch)
    act_and_deny(target(OpenCodeBackend, "scripted/m"), tmp_path, partial(person_config, opencode))
    assert list(started_in.iterdir()) == []  # nothing acted where the night was started
