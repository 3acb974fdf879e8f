"""The real-model tests skip where the [local] extra is missing, but fail where
CI says they must run (SKILLOPT_REQUIRE_LOCAL_MODEL=1), so a CI machine without
the extra can never pass by skipping them. Checked by running pytest in a
child process in which llama_cpp cannot be found."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
# A None entry in sys.modules makes importlib.util.find_spec("llama_cpp") return None.
_WITHOUT_LLAMA = ("import sys; sys.modules['llama_cpp'] = None; import pytest; "
                  "sys.exit(pytest.main(['-q', '-p', 'no:cacheprovider', '-rs', "
                  "'tests/backends/test_local.py', '-k', 'plain_completion']))")


def _run_without_llama(require: bool) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("SKILLOPT_REQUIRE_LOCAL_MODEL", "PYTEST_ADDOPTS")}
    if require:
        env["SKILLOPT_REQUIRE_LOCAL_MODEL"] = "1"
    return subprocess.run([sys.executable, "-c", _WITHOUT_LLAMA], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=240)


@pytest.mark.timeout(300)
def test_missing_extra_skips_the_real_model_tests_outside_ci():
    done = _run_without_llama(require=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 skipped" in done.stdout and "llama-cpp-python is not installed" in done.stdout


@pytest.mark.timeout(300)
def test_missing_extra_fails_the_real_model_tests_when_ci_requires_them():
    done = _run_without_llama(require=True)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "1 error" in done.stdout
    assert "SKILLOPT_REQUIRE_LOCAL_MODEL=1" in done.stdout and 'pip install -e ".[local,server,dev]"' in done.stdout
