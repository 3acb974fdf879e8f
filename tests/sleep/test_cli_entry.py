"""`python -m sleep.cli` and the console script list the same subcommands."""

import os
import subprocess
import sys


def test_module_entry_lists_subcommands_registered_elsewhere():
    out = subprocess.run([sys.executable, "-m", "sleep.cli", "--help"], capture_output=True, text=True,
                         env=os.environ, check=True).stdout
    for name in ("harvest", "sessions", "propose", "review", "show", "adopt", "reject"):
        assert f"    {name}" in out, name
