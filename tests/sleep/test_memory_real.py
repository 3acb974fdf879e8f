"""Real binary: a night whose repository-wide correction trains CLAUDE.md, replayed by the real `claude`
from npm in the bubblewrap sandbox, pointed at the scripted model endpoint on loopback
(tests/sleep/model_endpoint.py). The endpoint's plan runs `pnpm install` when the conversation names
pnpm, else `npm install` (the project's fake tools on PATH); the conversation names pnpm only when the
candidate CLAUDE.md, which the real CLI loads by itself from the checkout, says so. The requests the
endpoint recorded show that text where Claude Code puts project memory, with its @import, and no
project settings (a SessionStart hook in the checkout's .claude/settings.json never runs).

Skipped (naming the tool) without the npm CLIs or bubblewrap; CI installs both (.ci/run)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from model_endpoint import ModelEndpoint, install_plan
from test_real_gemini import gemini  # noqa: F401,F811  (the fixture)
from sleep_testutil import Homes
from test_replay_night import git, state
from test_replay_night_real import point

from sleep.cli import main
from sleep.cycle.demo import install_transcripts, make_project
from sleep.replay.sandbox import sandbox_available

pytestmark = pytest.mark.skipif(not sandbox_available()[0], reason=f"no bubblewrap sandbox: {sandbox_available()[1]}")

CLAUDE_MD = "# tiny-ledger\n\nConventions: @docs/conventions.md\n\n- Keep answers short.\n"
CONVENTIONS = "IMPORTED-CONVENTIONS-7: money is in cents.\n"
# A SessionStart hook's output joins the model's context: it would show in the recorded requests had it run.
HOOK = {"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "echo PROJECT-HOOK-RAN-5"}]}]}}


@pytest.fixture
def project(homes: Homes, tmp_path: Path) -> Path:
    folder = make_project(tmp_path / "tiny-ledger")
    (folder / "CLAUDE.md").write_text(CLAUDE_MD)
    (folder / "AGENTS.md").write_text("# Agents\n\n- Keep diffs small.\n")
    (folder / "docs").mkdir()
    (folder / "docs/conventions.md").write_text(CONVENTIONS)
    (folder / ".claude/settings.json").write_text(json.dumps(HOOK))
    subprocess.run(["git", "-C", str(folder), "-c", "user.name=T", "-c", "user.email=t@example.invalid", "add", "-A"],
                   check=True)
    subprocess.run(["git", "-C", str(folder), "-c", "user.name=T", "-c", "user.email=t@example.invalid", "commit",
                    "-qm", "memory"], check=True)
    install_transcripts(homes.home, folder)
    return folder


@pytest.mark.parametrize("agents_gate", ["scripted", "codex"])
def test_the_real_claude_replays_the_claude_md_candidate_from_the_checkout(project: Path, tmp_path: Path, capsys,
                                                                           homes: Homes, agents_gate: str,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    before = state(project)
    with ModelEndpoint(install_plan()) as ep:
        if agents_gate == "codex":  # logged in and pointed at the endpoint: the AGENTS.md offer replays through it
            point("codex", ep, homes, monkeypatch, tmp_path)
        point("claude-code", ep, homes, monkeypatch, tmp_path)
        record = night(project, tmp_path, capsys)
        calls = ep.model_calls("anthropic")
        codex_calls = ep.model_calls("responses")
    parts = {p["name"]: p for p in record["skills"]}
    claude = parts["CLAUDE.md"]
    assert claude["replay"]["target"] == "claude-code" and claude["replay"]["mode"] == "actions", claude["replay"]
    assert claude["outcome"] == "staged", claude["reason"]
    assert state(project) == before
    assert git(project, "diff", "--name-only", "HEAD", claude["proposal"]["branch"]).split() == ["CLAUDE.md"]
    assert "+- Use pnpm, not npm in this repo." in git(project, "diff", "HEAD", claude["proposal"]["branch"])
    # The real CLI read CLAUDE.md from the checkout: the candidate's text (and the imported file) is in
    # the project-memory block of what it sent; the seed's text without the rule in the baseline's calls.
    block = "(project instructions, checked into the codebase)"
    memory = [json.dumps(c.body) for c in calls if block in json.dumps(c.body)]
    assert any("Use pnpm, not npm in this repo." in m and "IMPORTED-CONVENTIONS-7" in m for m in memory)
    assert any("Keep answers short." in m and "Use pnpm, not npm" not in m for m in memory)
    assert not any("PROJECT-HOOK-RAN-5" in json.dumps(c.body) for c in calls)  # memory, not project settings
    # the lesson offered to AGENTS.md, gated again: through the real codex, which read the candidate
    # AGENTS.md from the checkout itself, or (codex not logged in) the configured backend
    agents = parts["AGENTS.md"]
    assert agents["lesson_from"] == str(project / "CLAUDE.md") and agents["outcome"] == "staged", agents["reason"]
    assert agents["replay"]["target"] == agents_gate, agents["replay"]
    if agents_gate == "codex":
        seen = [json.dumps(c.body) for c in codex_calls if "AGENTS.md instructions" in json.dumps(c.body)]
        assert any("Use pnpm, not npm in this repo." in m for m in seen)
        assert any("Keep diffs small." in m and "Use pnpm, not npm" not in m for m in seen)
    assert git(project, "diff", "--name-only", "HEAD", agents["proposal"]["branch"]).split() == ["AGENTS.md"]
    # adopt and undo restore CLAUDE.md byte for byte
    live = (project / "CLAUDE.md").read_bytes()
    assert main(["adopt", claude["proposal"]["id"]]) == 0 and (project / "CLAUDE.md").read_bytes() != live
    assert main(["undo", claude["proposal"]["id"]]) == 0 and (project / "CLAUDE.md").read_bytes() == live


def night(project: Path, tmp_path: Path, capsys) -> dict:
    """A night for the whole project (no --skill: memory routing is for every skill's corrections)."""
    import yaml
    from test_replay_night import RULES

    # the AGENTS.md offer replays through the scripted backend (codex is not logged in here): its answer
    # follows what its context says
    chat = [{"stage": "rollout", "regex": "Use pnpm", "response": "I ran `pnpm install`."},
            {"stage": "rollout", "response": "I ran `npm install`."}]
    rules = tmp_path / "rules.yaml"
    rules.write_text(yaml.safe_dump({"rules": RULES["rules"] + chat}))
    code = main(["run", "--project", str(project), "--backend", "scripted", "--set", f"model.scripted={rules}",
                 "--set", "sleep.target_backend=claude-code", "--json"])
    out = capsys.readouterr().out
    assert code == 0, out
    return json.loads(out)


def test_the_real_gemini_reads_the_gemini_md_candidate_from_the_checkout(gemini, tmp_path: Path) -> None:  # noqa: F811
    """The candidate written at GEMINI.md in the checkout (request.document_path) is what the real Gemini CLI
    sends as its context; the committed GEMINI.md is aside for the call and back afterwards."""
    import asyncio

    from skillopt_core.backends.base import CompletionRequest
    from skillopt_core.backends.gemini_cli import GeminiCliBackend
    from sleep.replay.checkout import replay_checkout
    from test_real_gemini import MODEL, project as gemini_project

    root = tmp_path / "project"
    root.mkdir()
    (root / "GEMINI.md").write_text("COMMITTED-GEMINI-MEMORY\n")
    repo = gemini_project(root, tmp_path / "ran")
    candidate = "- CANDIDATE-GEMINI-MEMORY: use pnpm, not npm in this repo.\n"
    with ModelEndpoint(install_plan(note=None)) as ep:
        gemini(ep)
        backend = GeminiCliBackend(model=MODEL, role="target", options={"timeout": 120})
        with replay_checkout(repo) as work:
            asyncio.run(backend.complete(CompletionRequest.single(
                "Install the dependencies.", role="target", skill=candidate, cwd=str(work), document_path="GEMINI.md")))
            after = (work / "GEMINI.md").read_text()
        bodies = json.dumps([c.body for c in ep.model_calls("gemini")])
    assert "CANDIDATE-GEMINI-MEMORY" in bodies and "COMMITTED-GEMINI-MEMORY" not in bodies
    assert after == "COMMITTED-GEMINI-MEMORY\n"


def test_the_real_claude_reads_claude_md_only_through_add_dir_and_never_the_project_settings(tmp_path: Path) -> None:
    """Why the claude-code backend adds ``--add-dir <work>`` with CLAUDE_CODE_ADDITIONAL_DIRECTORIES_CLAUDE_MD=1:
    with ``--setting-sources user`` alone, Claude Code 2.1 sends no CLAUDE.md at all; with both it sends the
    folder's CLAUDE.md and its @import as project memory, and the folder's SessionStart hook still never runs."""
    import os

    from npm_clients import npm_tool

    from model_endpoint import say
    from skillopt_core.backends.claude_code import MEMORY_ENV, NO_PROJECT_SETTINGS

    folder = tmp_path / "proj"
    (folder / "docs").mkdir(parents=True)
    (folder / ".claude").mkdir()
    (folder / "CLAUDE.md").write_text(CLAUDE_MD)
    (folder / "docs/conventions.md").write_text(CONVENTIONS)
    (folder / ".claude/settings.json").write_text(json.dumps(HOOK))
    (tmp_path / "scratch-home").mkdir()
    seen = {}
    for label, extra, env in (("user only", [], {}), ("add-dir", ["--add-dir", str(folder)], MEMORY_ENV)):
        with ModelEndpoint(lambda turn: say("ok")) as ep:
            run_env = {**os.environ, **ep.anthropic_env(), "HOME": str(tmp_path / "scratch-home"), **env}
            run_env.pop("CLAUDE_CONFIG_DIR", None)
            subprocess.run([npm_tool("claude"), "-p", "--output-format", "json", "--no-session-persistence",
                            *NO_PROJECT_SETTINGS, *extra, "--max-turns", "1"], input="hello", text=True,
                           capture_output=True, cwd=folder, env=run_env, timeout=180, check=True)
            seen[label] = json.dumps([c.body for c in ep.model_calls("anthropic")])
    assert "Keep answers short." not in seen["user only"]
    assert f"Contents of {folder / 'CLAUDE.md'} (project instructions, checked into the codebase)" in seen["add-dir"]
    assert "IMPORTED-CONVENTIONS-7" in seen["add-dir"]
    assert "PROJECT-HOOK-RAN-5" not in seen["add-dir"] + seen["user only"]
