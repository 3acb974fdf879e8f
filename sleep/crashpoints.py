"""Named points where the crash tests kill the process, the way a power cut or ``kill -9`` would.

Steps that are not a git command call :func:`reached` right after they
finish: staging's index row, adoption's write of the live file, each model
call of a night (git commands are killed after by wrapping the git runner,
which works on any version of the code). When ``SKILLOPT_TEST_KILL_AT`` names
the point, the process sends itself SIGKILL there: no ``finally`` block, no
atexit handler, no flush runs. Unset (always, outside the tests),
:func:`reached` only reads one environment variable.
"""

from __future__ import annotations

import os
import signal

ENV = "SKILLOPT_TEST_KILL_AT"


def reached(point: str) -> None:
    """The step ``point`` just finished; die here if the crash tests asked for it."""
    if os.environ.get(ENV) == point:
        os.kill(os.getpid(), getattr(signal, "SIGKILL", signal.SIGTERM))
