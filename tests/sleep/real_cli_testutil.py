"""The opening the real-CLI replay tests share (test_real_pi, test_real_opencode, test_real_gemini,
test_replay_read_only): the project a replay checks out, the launcher that runs a CLI as it is, and
one replay of a backend in a checkout against the scripted endpoint, read-only or acting."""

from __future__ import annotations

import asyncio
import os
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from model_endpoint import ModelEndpoint, install_plan, run, script, write

from skillopt_core.backends.base import Completion, CompletionRequest
from skillopt_core.backends.trajectory import FileChange
from sleep.replay.checkout import replay_checkout

SKILL = "---\nname: setup\ndescription: Setting up this project\n---\nInstall with pnpm install.\n"
INSTALL = "Install the dependencies."


@dataclass
class Direct:
    """A launcher that starts the CLI as it is (no sandbox): the acting argv and rules, alone."""

    name: str = "direct"

    def wrap(self, argv, cwd, env, writable=()):
        return argv, env


def commit_project(root: Path) -> Path:
    """Make ``root`` (its files written) a git repository holding them in one commit."""
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(root)]
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "project"], check=True)
    return root


def first_on_path(monkeypatch: pytest.MonkeyPatch, *folders: Path) -> None:
    monkeypatch.setenv("PATH", os.pathsep.join([*map(str, folders), os.environ["PATH"]]))


def start_elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run from an empty folder, as a night started somewhere else (cwd and ``$PWD``: opencode 1.18 takes
    its folder from ``$PWD``); a test asserts it stays empty."""
    started_in = tmp_path / "where-the-night-started"
    started_in.mkdir()
    monkeypatch.chdir(started_in)
    monkeypatch.setenv("PWD", str(started_in))
    return started_in


def target(backend_class: Any, model: str | None = None) -> Any:
    """A target backend of ``backend_class`` that gives its CLI two minutes."""
    return backend_class(model=model, role="target", options={"timeout": 120})


def replay_read_only(backend: Any, repo: Path, point: Callable[[ModelEndpoint], None]) -> tuple[Completion, ModelEndpoint]:
    """One target call of ``backend``, given the skill, in a read-only replay checkout of ``repo``, against a
    scripted endpoint (``point`` points the CLI at it) that reads the skill and plans the install; the
    endpoint comes back closed, its calls kept."""
    with ModelEndpoint(install_plan(note=None)) as ep, replay_checkout(repo) as work:
        point(ep)
        return asyncio.run(backend.complete(CompletionRequest.single(INSTALL, role="target", cwd=str(work),
                                                                     skill=SKILL))), ep


def act(backend: Any, tmp_path: Path, prompt: str, allowed: tuple[str, ...]) -> Completion:
    """One acting target call of ``backend`` (launched by :class:`Direct`) in a checkout of an empty
    folder, allowed ``allowed``; the scripted model has it write NOTES.md ("ok"), checked in the checkout."""
    (tmp_path / "work").mkdir()
    backend.act(Direct())
    with replay_checkout(tmp_path / "work") as work:
        completion = asyncio.run(backend.complete(CompletionRequest.single(
            prompt, role="target", cwd=str(work), allowed_commands=allowed)))
        assert (work / "NOTES.md").read_text() == "ok\n"
    return completion


def offered_tools(ep: Any) -> set[str]:
    """The tool names the CLI offered the model (Chat Completions) over the endpoint's calls."""
    return {t["function"]["name"] for c in ep.model_calls("chat") for t in c.body.get("tools") or []}


def act_and_deny(backend: Any, tmp_path: Path, point: Callable[[ModelEndpoint], None]) -> None:
    """:func:`act` allowed pnpm and nosuchprog, the scripted model (``point`` points the CLI at it)
    running `pnpm install`, `curl`, writing NOTES.md, running `nosuchprog`: the allowed ones ran (the
    missing program 127), curl is recorded as denied, NOTES.md as added, no event or request unknown."""
    with ModelEndpoint(script(run("pnpm install"), run("curl http://example.com"), write("NOTES.md", "ok\n"),
                              run("nosuchprog"))) as ep:
        point(ep)
        t = act(backend, tmp_path, INSTALL, ("pnpm", "nosuchprog")).trajectory
    assert [(c.command, c.exit_code, c.denied) for c in t.commands()] == [
        ("pnpm install", 0, False), ("curl http://example.com", None, True), ("nosuchprog", 127, False)]
    assert t.file_changes() == [FileChange("NOTES.md", "added")]
    assert t.unknown_events == 0 and ep.unknown() == []
