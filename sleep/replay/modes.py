"""Which replay mode a night runs, and the judges of a read-only replay.

``sleep.replay``: ``actions`` (the agent acts in a sandboxed checkout; the
default where a sandbox is available), ``read_only`` (the agent can only read,
so it describes what it would do), or ``auto`` (actions when a sandbox is
available, else read-only, and the night says why). A read-only replay cannot
be judged by what the agent did, so the rules of judges that read the trajectory
are turned into the text rules they stand for (:func:`as_text_judge`, each judge's
``as_text`` from its registration, :func:`skillopt_core.tasks.judges.spec.as_text`):
``ran pnpm`` → ``contains pnpm``, ``not_ran npm`` → the answer must not name ``npm``
as a word; ``touched``, ``not_touched`` and ``check`` are left out (the rubric still
reads the answer).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from skillopt_core.tasks.judges.spec import as_text as as_text_judge
from sleep.replay.sandbox import sandbox_available

MODES = ("auto", "actions", "read_only")


@dataclass(frozen=True)
class ReplayMode:
    mode: str  # "actions" or "read_only"
    why: str
    sandbox: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"mode": self.mode, "why": self.why, "sandbox": self.sandbox}


def choose_mode(setting: str, acting_backend: bool) -> ReplayMode:
    """The mode for ``setting`` when the target is (``acting_backend``) or is not an agent CLI."""
    if setting == "read_only":
        return ReplayMode("read_only", "sleep.replay is read_only")
    if not acting_backend:
        return ReplayMode("read_only", "the target backend is not an agent CLI, so it cannot act in a checkout")
    ok, why = sandbox_available()
    if ok:
        return ReplayMode("actions", f"sandbox available: {why}", "bubblewrap")
    if setting == "actions":
        return ReplayMode("read_only", f"sleep.replay is actions but no sandbox is available ({why}); "
                                       "replaying read-only instead")
    return ReplayMode("read_only", f"no sandbox available ({why}); replaying read-only")


__all__ = ["MODES", "ReplayMode", "as_text_judge", "choose_mode"]
