"""``backend: auto`` resolution and key lookup (environment, then .env). PATH and
HOME point at temporary directories; nothing is executed or sent."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from skillopt_core.backends import BackendSpec, create_backend
from skillopt_core.backends import auto
from skillopt_core.backends.base import BackendConfigError
from skillopt_core.backends.keys import lookup, reset_dotenv_cache

REAL_LOCAL_MODEL = auto.local_model  # the fixture replaces it; one test checks the real one


@pytest.fixture(autouse=True)
def clean_env(monkeypatch, tmp_path: Path) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("SKILLOPT_NO_DOTENV", "1")
    for var in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "CLAUDE_CONFIG_DIR", "CLAUDE_CODE_OAUTH_TOKEN",
                "SKILLOPT_DOTENV", "AZURE_OPENAI_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(auto, "local_model", lambda options: (False, "not installed (test)"))
    reset_dotenv_cache()
    yield tmp_path
    reset_dotenv_cache()


def install_claude(tmp_path: Path) -> None:
    exe = tmp_path / "bin" / "claude"
    exe.write_text("#!/bin/sh\nexit 0\n")
    exe.chmod(0o755)


def log_in_claude(tmp_path: Path) -> None:
    creds = tmp_path / "home" / ".claude" / ".credentials.json"
    creds.parent.mkdir(parents=True, exist_ok=True)
    creds.write_text('{"claudeAiOauth": {}}')


def test_logged_in_claude_cli_is_chosen_first(clean_env: Path, monkeypatch) -> None:
    install_claude(clean_env)
    log_in_claude(clean_env)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-aaaaaaaaaaaa")
    name, reason = auto.choose("target", {})
    assert name == "claude-code"
    assert ".credentials.json" in reason


def test_claude_on_path_without_login_is_passed_over(clean_env: Path, monkeypatch) -> None:
    install_claude(clean_env)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-aaaaaaaaaaaa")
    assert auto.choose("target", {})[0] == "anthropic"


def test_login_without_claude_on_path_is_passed_over(clean_env: Path) -> None:
    log_in_claude(clean_env)
    ok, why = auto.claude_login()
    assert not ok and "not on PATH" in why


def test_claude_config_dir_variable_is_honoured(clean_env: Path, monkeypatch) -> None:
    install_claude(clean_env)
    config = clean_env / "elsewhere"
    config.mkdir()
    (config / ".credentials.json").write_text("{}")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    assert auto.claude_login()[0]


def test_oauth_account_in_claude_json_counts_as_login(clean_env: Path) -> None:
    install_claude(clean_env)
    (clean_env / "home" / ".claude.json").write_text('{"numStartups": 3, "oauthAccount": {"emailAddress": "a@b.c"}}')
    assert auto.choose("target", {})[0] == "claude-code"


def test_claude_json_without_login_does_not_count(clean_env: Path) -> None:
    install_claude(clean_env)
    (clean_env / "home" / ".claude.json").write_text('{"numStartups": 3}')
    assert not auto.claude_login()[0]


def test_anthropic_key_comes_before_openai_key(monkeypatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-aaaaaaaaaaaa")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-bbbbbbbbbbbb")
    assert auto.choose("optimizer", {})[0] == "anthropic"


def test_openai_key_is_used_when_no_anthropic_key(monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-bbbbbbbbbbbb")
    assert auto.choose("target", {}) == ("openai", "OPENAI_API_KEY is set")


def test_local_model_is_the_last_resort(monkeypatch) -> None:
    monkeypatch.setattr(auto, "local_model", lambda options: (True, "the bundled model x.gguf is installed"))
    assert auto.choose("target", {})[0] == "local"


def test_base_url_selects_openai_even_with_claude_logged_in(clean_env: Path) -> None:
    install_claude(clean_env)
    log_in_claude(clean_env)
    assert auto.choose("target", {"base_url": "http://127.0.0.1:8080/v1"}) == ("openai", "model.base_url is set")


def test_role_override_wins_over_auto(monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-bbbbbbbbbbbb")
    assert auto.choose("judge", {"judge_backend": "scripted"})[0] == "scripted"
    assert auto.choose("judge", {"judge_backend": "auto"})[0] == "openai"


def test_nothing_configured_error_lists_every_way() -> None:
    with pytest.raises(BackendConfigError) as info:
        auto.choose("target", {})
    message = str(info.value)
    for needle in ("claude", "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "model.base_url", ".[local]",
                   "codex", "copilot", "not on PATH", "not installed (test)"):
        assert needle in message


def test_local_model_needs_llama_cpp(monkeypatch) -> None:
    monkeypatch.setattr(auto.importlib.util, "find_spec", lambda name: None)
    ok, why = REAL_LOCAL_MODEL({"model_path": "/models/x.gguf"})
    assert not ok and "llama-cpp-python" in why


def test_auto_factory_delegates_and_logs_its_choice(monkeypatch, caplog) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-bbbbbbbbbbbb")
    caplog.set_level(logging.INFO, logger="skillopt_core.backends.auto")
    backend = create_backend(BackendSpec("auto", "gpt-4.1-mini", "optimizer", {}))
    assert backend.name == "openai" and backend.model == "gpt-4.1-mini"
    assert "role optimizer: using openai (OPENAI_API_KEY is set)" in caplog.text
    assert "sk-openai-bbbbbbbbbbbb" not in caplog.text


# -- keys: environment first, then .env ---------------------------------------- #


def test_key_from_dotenv_file_is_found_without_touching_environ(clean_env: Path, monkeypatch) -> None:
    dotenv = clean_env / ".env"
    dotenv.write_text("ANTHROPIC_API_KEY=sk-ant-from-dotenv-123456\n")
    monkeypatch.delenv("SKILLOPT_NO_DOTENV")
    monkeypatch.setenv("SKILLOPT_DOTENV", str(dotenv))
    reset_dotenv_cache()
    assert auto.choose("target", {})[0] == "anthropic"
    assert lookup("ANTHROPIC_API_KEY") == "sk-ant-from-dotenv-123456"
    assert "ANTHROPIC_API_KEY" not in os.environ  # not passed on to CLI subprocesses


def test_real_environment_variable_beats_dotenv(clean_env: Path, monkeypatch) -> None:
    dotenv = clean_env / ".env"
    dotenv.write_text("OPENAI_API_KEY=sk-from-file-123456789\n")
    monkeypatch.delenv("SKILLOPT_NO_DOTENV")
    monkeypatch.setenv("SKILLOPT_DOTENV", str(dotenv))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env-123456789")
    reset_dotenv_cache()
    assert lookup("OPENAI_API_KEY") == "sk-from-env-123456789"


def test_dotenv_in_working_directory_is_read_by_default(clean_env: Path, monkeypatch) -> None:
    (clean_env / ".env").write_text("OPENAI_API_KEY=sk-cwd-dotenv-123456789\n")
    monkeypatch.delenv("SKILLOPT_NO_DOTENV")
    monkeypatch.chdir(clean_env)
    reset_dotenv_cache()
    assert lookup("OPENAI_API_KEY") == "sk-cwd-dotenv-123456789"
