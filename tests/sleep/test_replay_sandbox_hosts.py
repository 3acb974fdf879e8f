"""The acting replay, in the real bubblewrap sandbox, through the gemini-cli, opencode and
cursor-agent backends (fakes in tests/sleep/replay_fakes_hosts.py that follow each CLI's
documented stream format and permission rules): the allowed program runs in a per-rollout
checkout, the changes come from that checkout, a command the policy does not allow is
refused where the CLI can refuse it, and the person's repository stays byte-identical."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import replay_fakes
import replay_fakes_hosts
from test_replay_sandbox import SKILL, repo, state  # noqa: F401

from skillopt_core import BackendSpec, CompletionRequest, create_backend
from sleep.replay.checkout import replay_checkout
from sleep.replay.backend import ActionReplayBackend
from sleep.replay.sandbox import BwrapLauncher, sandbox_available

pytestmark = pytest.mark.skipif(not sandbox_available()[0], reason=f"no bubblewrap sandbox: {sandbox_available()[1]}")
PNPM_SKILL = SKILL.replace("Install dependencies.", "Install dependencies with pnpm.")


@pytest.fixture
def fakes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    bin_dir = replay_fakes_hosts.install(tmp_path / "bin")
    replay_fakes.on_path(monkeypatch, bin_dir)
    return bin_dir


def acting(name: str) -> ActionReplayBackend:
    inner = create_backend(BackendSpec(name=name, model=None, role="target", options={"timeout": 60}))
    inner.act(BwrapLauncher(name), output_cap=100_000)
    return ActionReplayBackend(inner)


def request(cwd: Path, prompt: str, allowed: list[str]) -> CompletionRequest:
    return CompletionRequest.single(prompt, role="target", stage="rollout", skill=PNPM_SKILL, cwd=str(cwd),
                                    allowed_commands=tuple(allowed), checks=())


@pytest.mark.parametrize("name", ["gemini-cli", "opencode", "cursor-agent"])
def test_the_allowed_program_runs_in_the_rollouts_checkout_and_the_repository_is_untouched(
        name: str, repo: Path, fakes: Path) -> None:  # noqa: F811
    before = state(repo)
    with replay_checkout(repo) as template:
        completion = asyncio.run(acting(name).complete(request(template, "Install.", ["pnpm"])))
        assert not (template / "pnpm-lock.yaml").exists()
    assert [(c.command, c.exit_code) for c in completion.trajectory.commands()] == [("pnpm install", 0)]
    changed = {c.path for c in completion.trajectory.steps if c.kind == "file_change"}
    assert "pnpm-lock.yaml" in changed and not any(p.startswith(".") and "skills" in p for p in changed)
    assert state(repo) == before


@pytest.mark.parametrize("name", ["gemini-cli", "opencode"])
def test_a_program_the_policy_does_not_allow_is_refused_by_the_cli(name: str, repo: Path, fakes: Path) -> None:
    with replay_checkout(repo) as template:
        completion = asyncio.run(acting(name).complete(request(template, "Do it.\nATTACK: npm install", ["pnpm"])))
    (command,) = completion.trajectory.commands()
    assert command.command == "npm install" and command.exit_code is None
    assert not {c.path for c in completion.trajectory.steps if c.kind == "file_change"}
