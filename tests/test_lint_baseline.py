"""scripts/lint_baseline.py: a file that gains findings over the baseline fails; the clean folders allow none;
--update only lowers counts. The tools' output is replaced, so this runs neither ruff nor mypy."""

from __future__ import annotations

import importlib.util
import json
from collections import Counter
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "lint_baseline.py"


@pytest.fixture
def lint(tmp_path, monkeypatch):
    spec = importlib.util.spec_from_file_location("lint_baseline", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "BASELINE", tmp_path / "baseline.json")
    found = {"ruff": Counter(), "mypy": Counter()}
    monkeypatch.setattr(module, "ruff_findings", lambda: found["ruff"])
    monkeypatch.setattr(module, "mypy_findings", lambda: found["mypy"])
    module.found = found
    return module


def write(lint, ruff=None, mypy=None):
    lint.BASELINE.write_text(json.dumps({"ruff": ruff or {}, "mypy": mypy or {}}))


def test_findings_within_the_baseline_pass(lint, capsys):
    write(lint, ruff={"sleep/a.py::E501": 2})
    lint.found["ruff"].update({"sleep/a.py::E501": 2})
    assert lint.main([]) == 0
    assert "lint: ok" in capsys.readouterr().out


def test_a_file_gaining_a_finding_fails_and_is_named(lint, capsys):
    write(lint, ruff={"sleep/a.py::E501": 2})
    lint.found["ruff"].update({"sleep/a.py::E501": 3, "sleep/b.py::F401": 1})
    assert lint.main([]) == 1
    out = capsys.readouterr().out
    assert "sleep/a.py::E501 has 3 findings, the baseline allows 2" in out
    assert "sleep/b.py::F401 has 1 finding, the baseline allows 0" in out


def test_the_clean_folders_allow_no_baseline(lint, capsys):
    write(lint, mypy={"skillopt_core/x.py::arg-type": 1})
    lint.found["mypy"].update({"skillopt_core/x.py::arg-type": 1})
    assert lint.main([]) == 1
    assert "skillopt_core/ must have no finding" in capsys.readouterr().out


def test_update_only_lowers(lint):
    write(lint, ruff={"sleep/a.py::E501": 3, "sleep/b.py::B905": 1})
    lint.found["ruff"].update({"sleep/a.py::E501": 1})
    assert lint.main(["--update"]) == 0
    assert json.loads(lint.BASELINE.read_text())["ruff"] == {"sleep/a.py::E501": 1}
    lint.found["ruff"].update({"sleep/a.py::E501": 1})  # now 2: over the lowered baseline
    assert lint.main(["--update"]) == 1
    assert json.loads(lint.BASELINE.read_text())["ruff"] == {"sleep/a.py::E501": 1}
