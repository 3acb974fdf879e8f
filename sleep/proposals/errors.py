"""Typed errors of the proposal library. Every message says what was wrong and
what to do next; the CLI prints it and exits 2 (a user error), never a traceback."""

from __future__ import annotations


class ProposalError(Exception):
    """Base class: bad input or a refused operation. Nothing was half-written."""


class NotARepositoryError(ProposalError):
    """The path is not in a usable git repository (bare, missing, unreadable)."""


class SkillPathError(ProposalError):
    """The skill path is unusable: a directory, outside the project, a symlink out of it."""


class NothingToPropose(ProposalError):
    """The candidate is identical to the live or the committed skill."""


class DuplicateProposal(NothingToPropose):
    """The candidate is the lesson of a pending, adopted or rejected proposal of the same skill."""

    def __init__(self, message: str, existing: object) -> None:
        super().__init__(message)
        self.existing = existing


class NothingToAdopt(ProposalError):
    """Adopt refused: the live file already has the proposal's text; adopting it changes nothing."""


class CandidateSecretError(ProposalError):
    """The candidate holds something that looks like a secret the live skill did not."""


class RunDirError(ProposalError):
    """``--from-run`` names a folder that is not a finished ``skillopt train`` run."""


class UnknownProposal(ProposalError):
    """No proposal (or more than one) matches the id the person gave."""


class ProposalDecided(ProposalError):
    """The proposal was already adopted or rejected."""


class BranchMissing(ProposalError):
    """The proposal's branch (or its commit) no longer exists in the repository."""


class LiveFileChanged(ProposalError):
    """Adopt refused: the live skill file no longer has the text the night trained from."""


class IndexBusy(ProposalError):
    """``adopt --commit`` refused: the repository's index is locked or has other staged changes."""


class GitFailed(ProposalError):
    """A git command failed for a reason the person must look at (git's message is included)."""
