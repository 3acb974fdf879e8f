"""``import skillopt`` (the seed's import name) is the core's public API."""

from __future__ import annotations

import subprocess
import sys

import pytest

import skillopt
import skillopt_core


def test_the_seed_check_prints_ready() -> None:
    proc = subprocess.run([sys.executable, "-c", "import skillopt; print('Ready!')"],
                          capture_output=True, text=True, timeout=60)
    assert (proc.returncode, proc.stdout.strip()) == (0, "Ready!"), proc.stderr


def test_skillopt_exports_exactly_the_core_public_names() -> None:
    assert skillopt.__all__ == skillopt_core.__all__
    assert skillopt.__version__ == skillopt_core.__version__


@pytest.mark.parametrize("name", ["Task", "Skill", "prepare_training", "load_settings", "events", "create_backend"])
def test_names_are_the_same_objects_as_in_the_core(name: str) -> None:
    assert getattr(skillopt, name) is getattr(skillopt_core, name)


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'Trainerr'"):
        skillopt.Trainerr  # noqa: B018
