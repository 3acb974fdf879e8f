"""The real `gemini` (npm `@google/gemini-cli`) driven by the scripted model endpoint, pointed at it the
way Gemini CLI documents a custom endpoint: `GOOGLE_GEMINI_BASE_URL` with `GEMINI_API_KEY` and the
API-key auth selected in the person's settings (Gemini API `streamGenerateContent`), through the
`gemini-cli` backend.

What its stream showed that the fake did not: `--allowed-tools` takes one comma-separated value (a
second one is read as a positional prompt and the run refused); a refused command is
`policy_violation`; a command that ran is `success` whatever its exit code, with no exit code at
all. `-m` names a model: with the default `auto`, 0.61 first asks a router model and retries for
about 100 s when the answer is not the router's JSON."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import replay_fakes
from model_endpoint import ModelEndpoint, run, say, script, write
from npm_clients import QUIET, npm_tool
from real_cli_testutil import act_and_deny, commit_project, first_on_path, replay_read_only, start_elsewhere, target
from sleep_testutil import run as harvest

from skillopt_core.backends.gemini_cli import GeminiCliBackend
from sleep.index import Index

MODEL = "gemini-2.5-flash"


def project(root: Path, marker: Path) -> Path:
    """A repository whose `.gemini/settings.json` would run code: a hook, an MCP server, tool discovery."""
    (root / ".gemini").mkdir(parents=True)
    (root / ".gemini" / "settings.json").write_text(json.dumps({
        "hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": f"touch {marker}.hook"}]}]},
        "mcpServers": {"planted": {"command": "sh", "args": ["-c", f"touch {marker}.mcp; sleep 3"]}},
        "tools": {"discoveryCommand": f"sh -c 'touch {marker}.discovery; echo []'"}}))
    (root / "package.json").write_text('{"name": "p"}\n')
    return commit_project(root)


@pytest.fixture
def gemini(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # fake pnpm/npm (the project's tools), then the real CLI
    first_on_path(monkeypatch, replay_fakes.install(tmp_path / "tools"), Path(npm_tool("gemini")).parent)
    home = Path.home()
    (home / ".gemini").mkdir(parents=True, exist_ok=True)
    (home / ".gemini" / "settings.json").write_text(json.dumps({"security": {"auth": {
        "selectedType": "gemini-api-key"}}}))
    start_elsewhere(tmp_path, monkeypatch)

    def point(ep: ModelEndpoint) -> None:
        monkeypatch.setenv("GEMINI_API_KEY", "scripted-key")
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", ep.url)

    return point


def test_real_gemini_read_only_replay_runs_no_project_code_and_finds_the_skill(gemini, tmp_path: Path) -> None:
    repo = project(tmp_path / "project", tmp_path / "ran")
    completion, ep = replay_read_only(target(GeminiCliBackend, MODEL), repo, gemini)
    bodies = json.dumps([c.body for c in ep.model_calls("gemini")])
    assert sorted(p.name for p in tmp_path.glob("ran.*")) == []
    assert "Setting up this project" in bodies and "planted" not in bodies
    assert completion.text
    assert all(c.denied for c in completion.trajectory.commands())  # nothing runs in a read-only replay


def test_real_gemini_acting_runs_what_is_allowed_and_records_the_denial(gemini, tmp_path: Path) -> None:
    act_and_deny(target(GeminiCliBackend, MODEL), tmp_path, gemini)
    assert list(Path.cwd().iterdir()) == []  # nothing acted where the night was started


def test_real_gemini_chat_is_harvested_as_typed(gemini, tmp_path: Path) -> None:
    """The chat file the real CLI writes (0.61: JSONL whose first patch sets the message array led by
    the injected ``<session_context>``; ``content`` with ``@src/water.py`` expanded beside the typed
    ``displayContent``; each answer re-written under its id once its tool call finished; tool results as
    ``functionResponse`` user messages), harvested: the prompt exactly as typed, one session, its
    project from ``projects.json``, each tool once."""
    proj = tmp_path / "garden"
    (proj / "src").mkdir(parents=True)
    (proj / "src" / "water.py").write_text("def water(): pass\n")
    typed = "explain @src/water.py then note it"
    with ModelEndpoint(script(run("ls src"), write("NOTES.md", "ok\n"), say("Done."))) as ep:
        gemini(ep)
        done = subprocess.run([npm_tool("gemini"), "-p", typed, "-m", MODEL, "--yolo", "--skip-trust",
                               "--output-format", "json"], cwd=proj, env={**os.environ, **QUIET},
                              capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    [chat] = (Path(os.environ["HOME"]) / ".gemini" / "tmp").glob("*/chats/session-*.jsonl")
    lines = [json.loads(line) for line in chat.read_text().splitlines()]
    assert "$set" in lines[1] and "<session_context>" in json.dumps(lines[1])  # the shape this test is about
    report = harvest(source="gemini")
    assert not report.skipped and report.sessions_new == 1
    with Index.open() as idx:
        [s] = idx.sessions(host="gemini-cli")
    assert [p.text for p in s.prompts] == [typed]
    assert s.project_dir == str(proj)
    assert s.tools == {"run_shell_command": 1, "write_file": 1}
    assert s.prompts[0].shell == ["ls"] and s.prompts[0].files == ["NOTES.md"]
    assert s.finals == ["Done."]
