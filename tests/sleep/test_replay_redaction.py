"""What an acting replay did passes the redactor at the backend boundary, like its answer."""

from __future__ import annotations

from skillopt_core import Completion
from skillopt_core.backends.trajectory import CheckRun, CommandRun, TextStep, ToolResult, Trajectory
from sleep.cycle.backends import redact_completion
from sleep.redact import Redactor

TOKEN = "ghp_R8cY2mK7qT4wZ9xN3vB6jH1sD5fL0pA8eU2i"


def test_secrets_in_commands_tool_output_and_checks_are_redacted() -> None:
    trajectory = Trajectory((CommandRun(f"gh auth login --with-token {TOKEN}", 0, f"token {TOKEN}"),
                             ToolResult("t1", f"cat .env: GITHUB_TOKEN={TOKEN}"), TextStep("done"),
                             CheckRun("pytest -q", 1, f"E   assert '{TOKEN}' == ''")))
    redactor = Redactor(collect=True)
    out = redact_completion(Completion("done", trajectory=trajectory), redactor)
    assert TOKEN not in repr(out.trajectory) and TOKEN in redactor.values
    assert [s.kind for s in out.trajectory.steps] == ["command", "tool_result", "text", "check"]
    assert out.trajectory.steps[0].exit_code == 0 and out.trajectory.steps[3].exit_code == 1
