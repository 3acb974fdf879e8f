"""No test touches the real home directory or real credentials: every test runs
with a private HOME and SkillOpt home, and without provider keys in the
environment. (tests/sleep adds its own, richer fixture on top.)"""

import pytest

_KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "AZURE_OPENAI_API_KEY", "AZURE_OPENAI_ENDPOINT", "OPENAI_BASE_URL")


@pytest.fixture(autouse=True)
def private_home(tmp_path_factory, monkeypatch):
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("SKILLOPT_HOME", str(home / ".skillopt"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / ".claude"))
    monkeypatch.setenv("CODEX_HOME", str(home / ".codex"))
    monkeypatch.setenv("SKILLOPT_REPLAY_ROOT", str(home / "replays" / "skillopt-replay"))
    for key in _KEYS:
        monkeypatch.delenv(key, raising=False)
    return home
