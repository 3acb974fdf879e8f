"""SkillOpt-Sleep proposals: each gated skill improvement staged as a git branch.

The library the nightly cycle, the MCP server, the dashboard and the CLI share::

    from sleep.proposals import ProposalReport, stage, list_proposals, show, adopt, reject

    p = stage(skill_path, candidate_text, report, trained_from_text=text_the_night_started_from)
    list_proposals()                  # pending and stale, oldest first
    show(p.id).diff                   # the staged commit's diff
    adopt(p.id, commit=False)         # the candidate becomes the live skill file
    reject(p.id, reason="too long")   # branch and note deleted, record kept

Errors are :class:`ProposalError` subclasses whose messages say what to do.
See docs/sleep-proposals.md.

The names load on first use (``git`` comes with them), so importing the
package, or its light modules (errors, model, render), costs no GitPython:
``skillopt-sleep mcp`` and every other subcommand start without it.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any

from sleep.proposals.errors import (
    BranchMissing,
    CandidateSecretError,
    GitFailed,
    IndexBusy,
    LiveFileChanged,
    NotARepositoryError,
    NothingToPropose,
    ProposalDecided,
    ProposalError,
    RunDirError,
    SkillPathError,
    UnknownProposal,
)
from sleep.proposals.model import STATES, EditRecord, Proposal, ProposalReport, RunScores

# public name -> the module (in this package) that defines it; loaded on first use
_LAZY = {
    "Decision": "decide", "adopt": "decide", "reject": "decide",
    "report_from_run": "fromrun",
    "ProposalView": "review", "get": "review", "list_proposals": "review", "show": "review",
    "stage": "stage", "undo": "undo",
}

__all__ = [
    "STATES",
    "BranchMissing",
    "CandidateSecretError",
    "Decision",
    "EditRecord",
    "GitFailed",
    "IndexBusy",
    "LiveFileChanged",
    "NotARepositoryError",
    "NothingToPropose",
    "Proposal",
    "ProposalDecided",
    "ProposalError",
    "ProposalReport",
    "ProposalView",
    "RunDirError",
    "RunScores",
    "SkillPathError",
    "UnknownProposal",
    "adopt",
    "get",
    "list_proposals",
    "reject",
    "report_from_run",
    "show",
    "stage",
    "undo",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'sleep.proposals' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"sleep.proposals.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


class _Package(types.ModuleType):
    """``sleep.proposals.stage`` is the function: importing the submodule of the same name
    (which the import system would bind here) must not replace it."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "stage" and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
