"""The real `pi` (npm `@mariozechner/pi-coding-agent`) driven by the scripted model endpoint through
the `pi` backend, pointed at it the way a person adds a gateway to Pi: a provider with a `baseUrl`
in their own `~/.pi/agent/models.json` (Chat Completions).

What the real CLI showed: `--tools` is the whole permission model (only the listed tools are offered
to the model), `--no-session` writes no session file, and a checkout's `.pi/extensions/*.ts` runs
inside Pi unless `--no-extensions` is given."""

from __future__ import annotations

import json
import os
import subprocess
from functools import partial
from pathlib import Path

import pytest
import replay_fakes
from model_endpoint import ModelEndpoint, run, script, write
from npm_clients import npm_tool
from real_cli_testutil import act, commit_project, first_on_path, offered_tools, replay_read_only, target

from skillopt_core.backends.pi import PiBackend
from skillopt_core.backends.trajectory import FileChange


def person_models(home: Path, ep: ModelEndpoint) -> None:
    agent = home / ".pi" / "agent"
    agent.mkdir(parents=True, exist_ok=True)
    (agent / "models.json").write_text(json.dumps({"providers": {"scripted": {
        "baseUrl": f"{ep.url}/v1", "api": "openai-completions", "apiKey": "sk-scripted",
        "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
        "models": [{"id": "m"}]}}}))


def project(root: Path, marker: Path) -> Path:
    """A repository whose own Pi extension would run code when loaded."""
    (root / ".pi" / "extensions").mkdir(parents=True)
    (root / ".pi" / "extensions" / "mark.ts").write_text(
        f'import * as fs from "node:fs";\nexport default function (pi: any) {{ fs.writeFileSync("{marker}", "x"); }}\n')
    (root / "package.json").write_text('{"name": "p"}\n')
    return commit_project(root)


@pytest.fixture
def pi(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    first_on_path(monkeypatch, Path(npm_tool("pi")).parent)
    monkeypatch.setenv("PI_OFFLINE", "1")
    monkeypatch.delenv("PI_CODING_AGENT_DIR", raising=False)
    return Path(os.environ["HOME"])


def test_the_extension_would_run_without_the_flag(pi: Path, tmp_path: Path) -> None:
    """The control for the next test: plain `pi -p` in that checkout loads its extension."""
    marker = tmp_path / "ran"
    repo = project(tmp_path / "project", marker)
    with ModelEndpoint(script()) as ep:
        person_models(pi, ep)
        done = subprocess.run([npm_tool("pi"), "--model", "scripted/m", "--no-session", "-p", "hi"], cwd=repo,
                              capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert marker.exists()


def test_real_pi_read_only_replay_runs_no_project_code_and_finds_the_skill(pi: Path, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    repo = project(tmp_path / "project", marker)
    completion, ep = replay_read_only(target(PiBackend, "scripted/m"), repo, partial(person_models, pi))
    assert not marker.exists()
    assert offered_tools(ep) == {"read", "grep", "find", "ls"}
    t = completion.trajectory
    assert [s.name for s in t.steps if getattr(s, "kind", "") == "tool_call"][:1] == ["read"]
    assert t.commands() == [] and t.file_changes() == []
    assert completion.text and completion.model == "m"
    assert not (pi / ".pi" / "agent" / "sessions").exists()  # --no-session: no transcript of the replay


def test_real_pi_acting_edits_files_and_runs_commands(pi: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    first_on_path(monkeypatch, replay_fakes.install(tmp_path / "tools"))  # a fake pnpm (the project's tool)
    with ModelEndpoint(script(write("NOTES.md", "ok\n"), run("pnpm install"), run("nosuchprog"))) as ep:
        person_models(pi, ep)
        completion = act(target(PiBackend, "scripted/m"), tmp_path, "Write the notes, then install.", ("pnpm",))
        offered = offered_tools(ep)
    assert offered == {"read", "grep", "find", "ls", "edit", "write", "bash"}
    t = completion.trajectory
    assert t.file_changes() == [FileChange("NOTES.md", "added")]
    assert [(c.command, c.exit_code) for c in t.commands()] == [("pnpm install", 0), ("nosuchprog", 127)]
