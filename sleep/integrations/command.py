"""Which executable the agents start: the ``skillopt-sleep`` the install script found.

Configurations get an absolute path: an agent started from a desktop (VS Code
from the dock, say) does not see a login shell's PATH, where pipx and
``uv tool`` put their executables. The path must be an executable file and not
one of the plugins' launcher shims, whose folder changes when Claude Code
updates the plugin. Relative PATH entries are ignored: nothing found through
the current directory is ever registered.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

EXECUTABLE = "skillopt-sleep"
# The plugins' launcher shims carry this word in their first lines (plugins/*/bin/skillopt-sleep).
SHIM_MARKER = "SKILLOPT_SLEEP_SHIM"
INSTALL_HINT = ("install SkillOpt with `pipx install PATH_TO_SKILLOPT_CLONE` (or `uv tool install ...`, "
                "or `pip install --user ...`), or set SKILLOPT_SLEEP_BIN to the executable's absolute path")


class CommandError(ValueError):
    """The executable to register is missing or unusable; the message says what to do."""


def is_shim(path: Path) -> bool:
    try:
        with open(path, "rb") as fh:
            return SHIM_MARKER.encode() in fh.read(4096)
    except OSError:
        return False


def absolute_path_entries(path_value: str | None = None) -> str:
    """``PATH`` without its relative entries (``.``, ``bin``, the empty entry)."""
    value = os.environ.get("PATH", "") if path_value is None else path_value
    return os.pathsep.join(p for p in value.split(os.pathsep) if p and os.path.isabs(p))


def resolve(explicit: str | None = None) -> str:
    """The absolute path to register: ``explicit`` if given, else ``skillopt-sleep`` on PATH."""
    if explicit:
        candidate = Path(explicit).expanduser()
        if not candidate.is_absolute():
            raise CommandError(f"--command {explicit}: give an absolute path")
    else:
        found = shutil.which(EXECUTABLE, path=absolute_path_entries())
        if not found:
            raise CommandError(f"`{EXECUTABLE}` is not on PATH: {INSTALL_HINT}")
        candidate = Path(found)
    if not candidate.is_file() or not os.access(candidate, os.X_OK):
        raise CommandError(f"{candidate} is not an executable file: {INSTALL_HINT}")
    if is_shim(candidate):
        raise CommandError(f"{candidate} is a SkillOpt plugin launcher, not the installed `{EXECUTABLE}`: "
                           f"{INSTALL_HINT}")
    return str(candidate)
