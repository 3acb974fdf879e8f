"""sleep.entry_point_probe: a harvest reads host plugins through importlib.metadata only
when some installed distribution names the ``skillopt.hosts`` group (the import costs
~30 ms a process), and never misses a plugin that importlib.metadata would load."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from sleep.entry_point_probe import may_declare

REPO = Path(__file__).resolve().parents[2]
GROUP = "skillopt.hosts"


def _dist(folder: Path, name: str, entry_points: str | None, suffix: str = ".dist-info") -> Path:
    d = folder / f"{name}-1.0{suffix}"
    d.mkdir(parents=True)
    (d / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    if entry_points is not None:
        (d / "entry_points.txt").write_text(entry_points)
    return d


@pytest.fixture
def bare(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """sys.path of one empty folder, importlib.metadata not loaded."""
    monkeypatch.delitem(sys.modules, "importlib.metadata", raising=False)
    monkeypatch.setattr(sys, "path", [str(tmp_path)])
    return tmp_path


def test_no_distribution_names_the_group(bare: Path) -> None:
    assert not may_declare(GROUP)
    _dist(bare, "tool", "[console_scripts]\ntool = tool:main\n")
    _dist(bare, "plain", None)
    assert not may_declare(GROUP)


def test_a_distribution_that_names_the_group_is_seen(bare: Path) -> None:
    _dist(bare, "toy", f"[{GROUP}]\ntoy = toy_host\n")
    assert may_declare(GROUP)


def test_egg_info_is_seen(bare: Path) -> None:
    _dist(bare, "old", f"[{GROUP}]\nold = old_host\n", suffix=".egg-info")
    assert may_declare(GROUP)


def test_what_it_cannot_look_into_counts_as_maybe(bare: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    archive = bare / "bundle.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("x.py", "")
    monkeypatch.setattr(sys, "path", [str(bare), str(archive)])
    assert may_declare(GROUP)


def test_an_already_loaded_importlib_metadata_is_asked(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import importlib.metadata  # noqa: F401

    monkeypatch.setattr(sys, "path", [str(tmp_path)])
    assert may_declare(GROUP)


def test_a_plugin_installed_as_a_distribution_is_loaded_by_a_fresh_process(tmp_path: Path) -> None:
    """End to end, as a user's machine has it: no patching, a real dist-info folder."""
    site = tmp_path / "site"
    _dist(site, "toy", f"[{GROUP}]\ntoy = toy_host\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(site), str(REPO / "tests" / "sleep"), str(REPO)]))
    code = ("import sys\nfrom sleep import hosts\nprint('toy' in [h.name for h in hosts.all_hosts()])\n"
            "print('importlib.metadata' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=str(tmp_path))
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "True"]
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "tests" / "sleep"), str(REPO)])
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=str(tmp_path))
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "False"]  # no plugin anywhere: importlib.metadata never loaded
