"""Shared helpers for the harvest tests (kept out of conftest.py so imports are unambiguous)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sleep.harvest.harvester import HarvestOptions, HarvestReport, harvest


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


def run(**kw) -> HarvestReport:
    """A harvest of every project with detect-secrets on (the product default)."""
    kw.setdefault("project", None)
    return harvest(HarvestOptions(**kw))
