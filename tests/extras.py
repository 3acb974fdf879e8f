"""Skip-or-fail for tests that need an optional extra (tests/ is on sys.path)."""

from __future__ import annotations

import importlib.util
import os

import pytest


def require_extra(module: str, extra: str, flag: str) -> None:
    """Skip the test when ``module`` (from the ``[extra]`` extra) is not installed,
    or fail it when the environment variable ``flag`` is 1 (CI installs it)."""
    if importlib.util.find_spec(module) is not None:
        return
    if os.environ.get(flag) == "1":
        pytest.fail(f"{flag}=1 but {module} is not installed: pip install -e '.[{extra}]'", pytrace=False)
    pytest.skip(f"{module} is not installed (pip install -e '.[{extra}]')")
