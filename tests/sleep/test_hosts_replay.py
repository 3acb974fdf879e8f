"""Gemini CLI, OpenCode, Cursor and Pi as full hosts on the replay side: their sessions are
replayed through their own CLI once it is installed and logged in (sleep.hosts.ready,
sleep.cycle.backends.target_backend), the sandbox knows their logins and API hosts."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from sleep_testutil import Homes

from skillopt_core import load_settings
from sleep.cycle.backends import cli_ready, target_backend
from sleep.hosts import replaying
from sleep.replay.sandbox import BwrapLauncher

CASES = [  # (source, family, backend, executable, login file under HOME, key variable)
    ("gemini-cli", "gemini", "gemini-cli", "gemini", ".gemini/oauth_creds.json", "GEMINI_API_KEY"),
    ("opencode", "opencode", "opencode", "opencode", ".local/share/opencode/auth.json", "OPENAI_API_KEY"),
    ("cursor-agent", "cursor", "cursor-agent", "cursor-agent", ".config/cursor/auth.json", "CURSOR_API_KEY"),
    ("pi", "pi", "pi", "pi", ".pi/agent/auth.json", "ANTHROPIC_API_KEY"),
]
KEYS = ("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI", "ANTHROPIC_API_KEY", "OPENAI_API_KEY",
        "OPENCODE_API_KEY", "CURSOR_API_KEY", "GEMINI_CLI_HOME", "XDG_DATA_HOME", "PI_CODING_AGENT_DIR",
        "OPENROUTER_API_KEY")


@pytest.fixture(autouse=True)
def _no_keys(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for key in KEYS:
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    monkeypatch.setattr("sys.platform", "linux")


def _exe(folder: Path, name: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text("#!/bin/sh\nexit 0\n")
    (folder / name).chmod(0o755)


@pytest.mark.parametrize("source, family, backend, exe, login, key", CASES)
def test_sessions_replay_through_the_hosts_own_cli_once_it_is_ready(source, family, backend, exe, login, key,
                                                                    tmp_path: Path, homes: Homes, monkeypatch) -> None:
    settings = load_settings(None, ["model.backend=scripted"])
    ready, why = cli_ready(family)
    assert not ready and f"`{exe}` is not on PATH" in why
    assert target_backend(Counter({source: 2}), "host", settings)[0] == "scripted"
    _exe(tmp_path / "bin", exe)
    ready, why = cli_ready(family)
    assert not ready and "not logged in" in why
    (homes.home / login).parent.mkdir(parents=True, exist_ok=True)
    (homes.home / login).write_text("{}")
    assert cli_ready(family)[0]
    assert target_backend(Counter({source: 2, "claude-code": 1}), "host", settings)[0] == backend
    (homes.home / login).unlink()
    monkeypatch.setenv(key, "k")
    assert cli_ready(family)[0]


@pytest.mark.parametrize("backend", [c[2] for c in CASES])
def test_the_sandbox_copies_the_login_and_keeps_the_key_of_each(backend: str, homes: Homes, tmp_path: Path,
                                                               monkeypatch) -> None:
    host = replaying(backend)
    folder, inside, key = host.sandbox.folder, host.sandbox.auth_files, host.sandbox.key_vars[0]
    (homes.home / folder).mkdir(parents=True)
    (homes.home / folder / inside[0]).write_text('{"token": "login"}')
    launcher = BwrapLauncher(backend, home=homes.home)
    scratch = launcher.scratch_home(tmp_path)
    assert (scratch / folder / inside[0]).read_text() == '{"token": "login"}'
    monkeypatch.setenv(key, "secret")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "other")
    env = launcher.environment(dict(__import__("os").environ), scratch)
    assert env[key] == "secret" and "AWS_SECRET_ACCESS_KEY" not in env
    assert "" not in env and host.api_hosts


def test_pis_custom_provider_endpoint_is_let_through(homes: Homes, monkeypatch) -> None:
    from sleep.replay.endpoints import configured_endpoints

    agent = homes.home / ".pi" / "agent"
    agent.mkdir(parents=True)
    (agent / "models.json").write_text('{"providers": {"gw": {"baseUrl": "http://gateway.internal:8080/v1", '
                                       '"api": "openai-completions", "apiKey": "k", "models": [{"id": "m"}]}}}')
    found = configured_endpoints("pi", {}, homes.home)
    assert [(e.host, e.port) for e in found] == [("gateway.internal", 8080)]
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(homes.home / "elsewhere"))
    assert configured_endpoints("pi", dict(__import__("os").environ), homes.home) == ()


def test_a_new_replaying_host_is_one_description(homes: Homes, tmp_path: Path, monkeypatch) -> None:
    """Its ready check, login files, key variables, quiet settings, endpoints and API hosts reach
    the login check, the sandbox and the egress proxy without an edit anywhere else."""
    from sleep import hosts
    from sleep.hosts import Home, Host, Sandbox, Source
    from sleep.replay.egress import EgressProxy
    from sleep.replay.endpoints import configured_endpoints

    host = Host(name="toyr", label="Toy replaying agent",
                sources=(Source("toyr-chats", "sleep_testutil:Homes", Home(None, {"*": ".toyr"})),),
                replay="toyr-cli", ready=lambda: (True, "`toyr` is ready"),  # type: ignore[arg-type]
                sandbox=Sandbox(folder=".toyr", folder_env="TOYR_HOME", auth_files=("auth.json",),
                                key_vars=("TOYR_KEY",), extra_env=(("TOYR_TELEMETRY", "0"),),
                                endpoints=lambda env, home: [env.get("TOYR_BASE_URL", "")]),  # type: ignore[arg-type]
                api_hosts=("api.toyr.example",))
    hosts.register(host)
    try:
        assert cli_ready("toyr") == (True, "`toyr` is ready")
        (homes.home / ".toyr").mkdir()
        (homes.home / ".toyr" / "auth.json").write_text("{}")
        launcher = BwrapLauncher("toyr-cli", home=homes.home)
        scratch = launcher.scratch_home(tmp_path)
        assert (scratch / ".toyr" / "auth.json").is_file()
        env = launcher.environment({"TOYR_KEY": "k", "OTHER_KEY": "o", "PATH": "/bin"}, scratch)
        assert env["TOYR_KEY"] == "k" and "OTHER_KEY" not in env
        assert env["TOYR_HOME"] == str(scratch / ".toyr") and env["TOYR_TELEMETRY"] == "0"
        assert [e.port for e in configured_endpoints("toyr", {"TOYR_BASE_URL": "http://127.0.0.1:9"}, homes.home)] == [9]
        proxy = EgressProxy.for_cli("toyr-cli", env={}, home=homes.home)
        try:
            assert proxy.hosts == ("api.toyr.example",)
        finally:
            proxy.close()
    finally:
        hosts.unregister("toyr")
