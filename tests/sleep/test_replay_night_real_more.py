"""Real binaries: a night replayed by the real `gemini` and `opencode` from npm, each pointed at the
scripted model endpoint (tests/sleep/model_endpoint.py) the way its documentation says a custom
endpoint is used (Gemini CLI: `GOOGLE_GEMINI_BASE_URL` with the API-key auth; OpenCode: a provider
with a `baseURL`, here in `OPENCODE_CONFIG_CONTENT`, the form that reaches the sandbox), acting in
the bubblewrap sandbox. The same night as tests/sleep/test_replay_night_real.py: the person
corrected "use pnpm not npm", the seed skill does not say it, and the proposal that adds it is
staged because the real CLI really ran `pnpm install` under it and `npm install` under the seed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from model_endpoint import ModelEndpoint
from npm_clients import npm_tool
from sleep_testutil import Homes
from test_replay_night import rollouts
from test_replay_night_real import only_on_path, project, staged_night  # noqa: F401 (fixture)

from sleep.replay.sandbox import sandbox_available

pytestmark = pytest.mark.skipif(not sandbox_available()[0], reason=f"no bubblewrap sandbox: {sandbox_available()[1]}")

MODEL = {"gemini-cli": "gemini-2.5-flash", "opencode": "scripted/m"}
EXTRA_HOSTS = {"gemini-cli": "play.googleapis.com:443", "opencode": "registry.npmjs.org:443"}


def point(target: str, ep: ModelEndpoint, homes: Homes, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    only_on_path(npm_tool({"gemini-cli": "gemini", "opencode": "opencode"}[target]), tmp_path, monkeypatch)
    if target == "gemini-cli":
        (homes.home / ".gemini").mkdir(parents=True, exist_ok=True)
        (homes.home / ".gemini" / "settings.json").write_text(json.dumps({"security": {"auth": {
            "selectedType": "gemini-api-key"}}}))
        monkeypatch.setenv("GEMINI_API_KEY", "scripted-key")
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", ep.url)
    else:
        monkeypatch.setenv("OPENCODE_CONFIG_CONTENT", json.dumps({"provider": {"scripted": {
            "npm": "@ai-sdk/openai-compatible", "name": "Scripted endpoint",
            "options": {"baseURL": f"{ep.url}/v1", "apiKey": "sk-scripted"}, "models": {"m": {"name": "m"}}}}}))


@pytest.mark.parametrize("target", ["gemini-cli", "opencode"])
def test_a_real_cli_night_stages_the_correction_it_really_ran(project: Path, tmp_path: Path, capsys, homes: Homes,
                                                              monkeypatch: pytest.MonkeyPatch, target: str) -> None:
    record, ep, wall = staged_night(project, tmp_path, capsys, target,
                                    lambda ep: point(target, ep, homes, monkeypatch, tmp_path),
                                    "--set", f"model.target={MODEL[target]}")
    run_dir = Path(record["run_dir"])
    allowed = {t["id"]: t["metadata"]["allowed_commands"]
               for t in map(json.loads, (run_dir / "tasks.jsonl").read_text().splitlines())}
    ran = [(s["command"], s.get("exit_code"), bool(s.get("denied")), allowed[r["task_id"]])
           for r in rollouts(run_dir) for s in (r.get("trajectory") or {}).get("steps", []) if s["kind"] == "command"]
    pnpm = [c for c in ran if c[0] == "pnpm install"]
    npm = [c for c in ran if c[0] == "npm install"]
    assert npm and pnpm, ran
    # the corrected task (its sessions ran npm, its judge requires pnpm) may run both, and really did;
    # the others were refused what their own sessions never ran (the policy, recorded as denials)
    for command, code, denied, may in pnpm + npm:
        program = command.split()[0]
        assert (code == 0 and not denied) if program in may else (denied and code is None), ran
    assert any(not denied for _, _, denied, _ in pnpm) and any(not denied for _, _, denied, _ in npm)
    assert ep.unknown() == [] and ep.model_calls()
    # Besides its endpoint, Gemini CLI 0.61 posts usage statistics to play.googleapis.com (Clearcut) unless
    # the person's settings turn them off, and OpenCode 1.18 asks the npm registry for its provider package
    # (it has a copy); the sandbox refuses those and records them, nothing else
    assert set(record["replay"].get("refused_hosts") or []) <= {EXTRA_HOSTS[target]}
    calls = len(rollouts(run_dir))
    print(f"{target}: {calls} rollouts in {wall:.1f} s ({wall / max(calls, 1):.1f} s per rollout)")
