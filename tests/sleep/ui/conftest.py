"""Fixtures of the dashboard tests: one real scripted training run, shared read-only."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from ui_testutil import scripted_run


@pytest.fixture(scope="session")
def toy_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished toy-world run directory (do not modify it: copy it with ``fresh_run``)."""
    tmp = tmp_path_factory.mktemp("toy-run")
    with pytest.MonkeyPatch.context() as mp:  # session scope: the per-test private home is not set up yet
        mp.setenv("HOME", str(tmp / "home"))
        mp.setenv("SKILLOPT_HOME", str(tmp / "skillopt-home"))
        return scripted_run(tmp)


@pytest.fixture
def fresh_run(toy_run: Path, tmp_path: Path) -> Path:
    """A private copy of the toy run at ``<tmp>/outputs/jsonl_tasks/run``."""
    dest = tmp_path / "outputs" / "jsonl_tasks" / "run"
    shutil.copytree(toy_run, dest)
    return dest
