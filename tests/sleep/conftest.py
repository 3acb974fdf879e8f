"""Every test here runs against a private, empty home: no real transcripts, no real index."""

from __future__ import annotations

import socket
import threading
from pathlib import Path

import pytest
from sleep_testutil import Homes

from sleep.cycle.demo import install_transcripts, make_project


@pytest.fixture(autouse=True)
def homes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Homes:
    home = tmp_path / "home"
    h = Homes(home=home, claude=home / ".claude", codex=home / ".codex",
              copilot_cli=home / ".copilot", vscode_user=home / ".config" / "Code" / "User",
              skillopt=tmp_path / "skillopt-home")
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("USERPROFILE", str(home))
    monkeypatch.setenv("SKILLOPT_HOME", str(h.skillopt))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(h.claude))
    monkeypatch.setenv("CODEX_HOME", str(h.codex))
    monkeypatch.setenv("COPILOT_HOME", str(h.copilot_cli))
    monkeypatch.setenv("SKILLOPT_REPLAY_ROOT", str(tmp_path / "replays" / "skillopt-replay"))
    monkeypatch.delenv("APPDATA", raising=False)
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.delenv("SKILLOPT_CURSOR_IDE_HOME", raising=False)
    for name in ("PI_CODING_AGENT_DIR", "PI_CODING_AGENT_SESSION_DIR", "DSH_HOME", "GOOSE_PATH_ROOT", "HERMES_HOME"):
        monkeypatch.delenv(name, raising=False)
    # Where the plugins look for skillopt-sleep besides PATH (tests set them when they mean to).
    for name in ("SKILLOPT_SLEEP_BIN", "PIPX_BIN_DIR", "UV_TOOL_BIN_DIR", "XDG_BIN_HOME"):
        monkeypatch.delenv(name, raising=False)
    return h


@pytest.fixture
def project(homes: Homes, tmp_path: Path) -> Path:
    """The demo's project (a git repository with its starting skill) and the team's two weeks of
    sessions for it in the private home. A test file with another project defines its own."""
    folder = make_project(tmp_path / "tiny-ledger")
    install_transcripts(homes.home, folder)
    return folder


@pytest.fixture
def server():
    """A TCP server on the host's loopback: (port, hits), one hit per connection it accepted (what a
    sandboxed command must never reach)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    hits: list[int] = []

    def serve() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            hits.append(1)
            conn.close()

    threading.Thread(target=serve, daemon=True).start()
    yield listener.getsockname()[1], hits
    listener.close()
