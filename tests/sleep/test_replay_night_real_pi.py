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
import os
from pathlib import Path

import pytest
import replay_fakes
from model_endpoint import ModelEndpoint, install_plan
from npm_clients import npm_tool
from sleep_testutil import Homes
from test_replay_night import git, rollouts, state
from test_replay_night_real import _bin, night, project  # noqa: F401 (fixture)

from sleep.replay.sandbox import sandbox_available

pytestmark = pytest.mark.skipif(not sandbox_available()[0], reason=f"no bubblewrap sandbox: {sandbox_available()[1]}")


def test_a_real_pi_night_stages_the_correction_it_really_ran(project: Path, tmp_path: Path, capsys, homes: Homes,  # noqa: F811
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    before = state(project)
    with ModelEndpoint(install_plan()) as ep:
        exe = npm_tool("pi")
        programs = _bin(tmp_path / "project-tools", {"pnpm": replay_fakes.PACKAGE_MANAGER,
                                                      "npm": replay_fakes.PACKAGE_MANAGER})
        clis = tmp_path / "clis"
        clis.mkdir()
        (clis / "pi").symlink_to(exe)
        monkeypatch.setenv("PATH", os.pathsep.join([str(programs), str(clis), "/usr/local/bin", "/usr/bin", "/bin"]))
        for name in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy", "NO_PROXY"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("PI_OFFLINE", "1")
        agent = homes.home / ".pi" / "agent"
        agent.mkdir(parents=True)
        (agent / "models.json").write_text(json.dumps({"providers": {"scripted": {
            "baseUrl": f"{ep.url}/v1", "api": "openai-completions", "apiKey": "sk-scripted",
            "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
            "models": [{"id": "m"}]}}}))
        record = night(project, tmp_path, capsys, "pi", "--set", "model.target=scripted/m")
    assert record["replay"]["mode"] == "actions" and record["replay"]["sandbox"] == "bubblewrap"
    assert record["outcome"] == "staged", record["reason"]
    assert state(project) == before
    assert "+- Use pnpm, not npm in this repo." in git(project, "diff", "HEAD", record["proposal"]["branch"])
    ran = [(s["command"], s.get("exit_code"), bool(s.get("denied")))
           for r in rollouts(Path(record["run_dir"])) for s in (r.get("trajectory") or {}).get("steps", [])
           if s["kind"] == "command"]
    assert ("pnpm install", 0, False) in ran and ("npm install", 0, False) in ran, ran
    assert ep.unknown() == [] and ep.model_calls()
    assert not record["replay"].get("refused_hosts")
    assert not (agent / "sessions").exists()  # the replays left no Pi session in the person's home
