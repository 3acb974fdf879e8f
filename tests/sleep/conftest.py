"""Every test here runs against a private, empty home: no real transcripts, no real index."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from sleep.harvest import HarvestOptions, HarvestReport, harvest


@dataclass
class Homes:
    home: Path
    claude: Path
    codex: Path
    copilot_cli: Path
    vscode_user: Path
    skillopt: Path

    @property
    def index(self) -> Path:
        return self.skillopt / "sleep.sqlite3"


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
    return h


def run(**kw) -> HarvestReport:
    """A harvest of every project with detect-secrets on (the product default)."""
    kw.setdefault("project", None)
    return harvest(HarvestOptions(**kw))
