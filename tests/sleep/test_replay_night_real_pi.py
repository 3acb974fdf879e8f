"""Real binary: a night replayed by the real `pi` from npm (`@mariozechner/pi-coding-agent`), pointed
at the scripted model endpoint the way Pi's documentation adds a gateway (a provider with a `baseUrl`
in `~/.pi/agent/models.json`, which the sandbox copies into its scratch home), acting in the
bubblewrap sandbox. The same night as tests/sleep/test_replay_night_real.py: the person corrected
"use pnpm not npm", the seed skill does not say it, and the proposal that adds it is staged because
pi really ran `pnpm install` under it and `npm install` under the seed. Pi's shell tool has no
per-command list, so (as with Codex) a command outside a task's allowed programs is recorded, not
refused: the sandbox is the restriction."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from model_endpoint import ModelEndpoint
from npm_clients import npm_tool
from sleep_testutil import Homes
from test_replay_night_real import commands_of, only_on_path, project, staged_night  # noqa: F401 (fixture)

from sleep.replay.sandbox import sandbox_available

pytestmark = pytest.mark.skipif(not sandbox_available()[0], reason=f"no bubblewrap sandbox: {sandbox_available()[1]}")


def test_a_real_pi_night_stages_the_correction_it_really_ran(project: Path, tmp_path: Path, capsys, homes: Homes,  # noqa: F811
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    agent = homes.home / ".pi" / "agent"

    def point(ep: ModelEndpoint) -> None:
        only_on_path(npm_tool("pi"), tmp_path, monkeypatch)
        monkeypatch.setenv("PI_OFFLINE", "1")
        agent.mkdir(parents=True)
        (agent / "models.json").write_text(json.dumps({"providers": {"scripted": {
            "baseUrl": f"{ep.url}/v1", "api": "openai-completions", "apiKey": "sk-scripted",
            "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
            "models": [{"id": "m"}]}}}))

    record, ep, _ = staged_night(project, tmp_path, capsys, "pi", point, "--set", "model.target=scripted/m")
    ran = commands_of(record)
    assert ("pnpm install", 0, False) in ran and ("npm install", 0, False) in ran, ran
    assert ep.unknown() == [] and ep.model_calls()
    assert not record["replay"].get("refused_hosts")
    assert not (agent / "sessions").exists()  # the replays left no Pi session in the person's home
