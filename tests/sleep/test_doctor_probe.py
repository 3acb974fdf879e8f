"""`skillopt-sleep doctor --probe`: one real replay per ready host in the sandbox, before any night.

Real binaries: the npm `claude` and `codex`, pointed at the scripted model endpoint on loopback
(tests/sleep/model_endpoint.py) as a person points them at a gateway; skipped without them or
without bubblewrap."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest
from model_endpoint import ModelEndpoint, run, say, script, write
from npm_clients import npm_tool
from sleep_testutil import Homes

from sleep import doctor
from sleep.replay.probe import PROBE_FILE, probe_host, probe_ready_hosts
from sleep.replay.sandbox import sandbox_available

pytestmark = pytest.mark.skipif(not sandbox_available()[0], reason=f"no bubblewrap sandbox: {sandbox_available()[1]}")


def only_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *names: str) -> None:
    """These npm CLIs, and no other agent CLI, on PATH."""
    folder = tmp_path / "clis"
    folder.mkdir()
    for name in names:
        (folder / name).symlink_to(npm_tool(name))
    monkeypatch.setenv("PATH", os.pathsep.join([str(folder), "/usr/local/bin", "/usr/bin", "/bin"]))
    for name in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)


def test_probe_says_the_real_claude_reaches_runs_writes_and_what_was_refused(
        tmp_path: Path, homes: Homes, monkeypatch: pytest.MonkeyPatch) -> None:
    only_on_path(tmp_path, monkeypatch, "claude")
    with ModelEndpoint(script(run("ls"), run("pnpm install"), write(PROBE_FILE, "ok\n"), say("done"))) as ep:
        for key, value in ep.anthropic_env().items():
            monkeypatch.setenv(key, value)
        results = probe_ready_hosts()
    assert [r.host for r in results] == ["claude-code"]
    r = results[0]
    assert r.reached and r.ran == ["ls"] and r.wrote and r.works, r
    assert r.denied == ["pnpm install"] and r.refused_hosts == []
    assert len(ep.model_calls("anthropic")) >= 4 and ep.unknown() == []
    assert "reached its endpoint" in r.describe() and "refused: command `pnpm install`" in r.describe()


def test_probe_with_the_real_codex_through_its_custom_provider(
        tmp_path: Path, homes: Homes, monkeypatch: pytest.MonkeyPatch) -> None:
    only_on_path(tmp_path, monkeypatch, "codex")
    with ModelEndpoint(script(run("ls"), write(PROBE_FILE, "ok\n"), say("done"))) as ep:
        homes.codex.mkdir(parents=True, exist_ok=True)
        (homes.codex / "config.toml").write_text(ep.codex_config())
        monkeypatch.setenv("OPENAI_API_KEY", "sk-scripted")
        results = probe_ready_hosts()
    assert [r.host for r in results] == ["codex"]
    assert results[0].works and results[0].ran == ["ls"], results[0]
    assert ep.model_calls("responses")


def test_probe_names_the_host_the_sandbox_refused(tmp_path: Path, homes: Homes,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Codex (no per-command list) runs a command that tries a loopback service the egress never allows."""
    only_on_path(tmp_path, monkeypatch, "codex")
    with ModelEndpoint() as other, ModelEndpoint(script(
            run(f"curl -s -m 5 {other.url}/exfiltrate"), run("ls"), write(PROBE_FILE, "ok\n"))) as ep:
        homes.codex.mkdir(parents=True, exist_ok=True)
        (homes.codex / "config.toml").write_text(ep.codex_config())
        monkeypatch.setenv("OPENAI_API_KEY", "sk-scripted")
        r = probe_ready_hosts()[0]
        assert other.requests == []
    assert r.works and r.refused_hosts == [f"127.0.0.1:{other.port}"], r
    assert f"refused: host 127.0.0.1:{other.port}" in r.describe()


def test_doctor_fails_a_host_whose_endpoint_cannot_be_reached(tmp_path: Path, homes: Homes,
                                                              monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    only_on_path(tmp_path, monkeypatch, "claude")
    homes.skillopt.mkdir(parents=True, exist_ok=True)
    (homes.skillopt / "sleep.yaml").write_text("model:\n  timeout: 15\n")
    with ModelEndpoint(script(run("ls"), write(PROBE_FILE, "ok\n"))) as ep:
        for key, value in ep.anthropic_env().items():
            monkeypatch.setenv(key, value)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", "https://api.example.invalid")
        monkeypatch.setattr(doctor, "_local", lambda probe: doctor.Check("local model", "ok", "skipped here"))
        code = doctor.cmd_doctor(doctor.argparse.Namespace(probe=True, json=True))
    found = {c["name"]: c for c in json.loads(capsys.readouterr().out)}
    probe = found["probe claude-code"]
    assert code == 1 and probe["status"] == "fail"
    assert "did not answer" in probe["detail"] and "could not reach: api.example.invalid:443" in probe["detail"]
    assert "reach api.example.invalid:443 (unreachable: does not resolve" in probe["fix"]


def test_probe_with_the_real_gemini_through_its_base_url(tmp_path: Path, homes: Homes,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    only_on_path(tmp_path, monkeypatch, "gemini")
    (homes.home / ".gemini").mkdir(parents=True, exist_ok=True)
    (homes.home / ".gemini" / "settings.json").write_text(json.dumps({"security": {"auth": {
        "selectedType": "gemini-api-key"}}}))
    with ModelEndpoint(script(run("ls"), write(PROBE_FILE, "ok\n"), say("done"))) as ep:
        monkeypatch.setenv("GEMINI_API_KEY", "scripted-key")
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", ep.url)
        results = [asyncio.run(probe_host("gemini-cli", "gemini-cli", "gemini-2.5-flash", {"timeout": 120}))]
    assert results[0].works and results[0].ran == ["ls"], results[0]
    assert ep.model_calls("gemini") and ep.unknown() == []


def test_probe_with_the_real_opencode_and_a_provider_in_its_inline_config(tmp_path: Path, homes: Homes,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    only_on_path(tmp_path, monkeypatch, "opencode")
    with ModelEndpoint(script(run("ls"), write(PROBE_FILE, "ok\n"), say("done"))) as ep:
        monkeypatch.setenv("OPENCODE_CONFIG_CONTENT", json.dumps({"provider": {"scripted": {
            "npm": "@ai-sdk/openai-compatible", "name": "Scripted endpoint",
            "options": {"baseURL": f"{ep.url}/v1", "apiKey": "sk-scripted"}, "models": {"m": {"name": "m"}}}}}))
        r = asyncio.run(probe_host("opencode", "opencode", "scripted/m", {"timeout": 120}))
    assert r.works and r.ran == ["ls"], r
    assert ep.model_calls("chat") and ep.unknown() == []
