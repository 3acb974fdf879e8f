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
"""

from sleep.proposals.decide import Decision, adopt, reject
from sleep.proposals.errors import (BranchMissing, CandidateSecretError, GitFailed, IndexBusy,
                                    LiveFileChanged, NotARepositoryError, NothingToPropose,
                                    ProposalDecided, ProposalError, RunDirError, SkillPathError,
                                    UnknownProposal)
from sleep.proposals.fromrun import report_from_run
from sleep.proposals.model import STATES, EditRecord, Proposal, ProposalReport, RunScores
from sleep.proposals.review import ProposalView, get, list_proposals, show
from sleep.proposals.stage import stage

__all__ = [
    "BranchMissing", "CandidateSecretError", "Decision", "EditRecord", "GitFailed", "IndexBusy",
    "LiveFileChanged", "NotARepositoryError", "NothingToPropose", "Proposal", "ProposalDecided",
    "ProposalError", "ProposalReport", "ProposalView", "RunDirError", "RunScores", "STATES",
    "SkillPathError", "UnknownProposal", "adopt", "get", "list_proposals", "reject", "report_from_run",
    "show", "stage",
]
