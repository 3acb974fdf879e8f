"""Typed values of the proposal library: the night's report and the proposal.

:class:`ProposalReport` is what the caller (the nightly cycle, ``propose``)
hands to :func:`sleep.proposals.stage`; staging fills the fields about the
live file (``trained_from_sha256``, ``candidate_sha256``,
``uncommitted_changes``) and stores the whole report, redacted, in the index
and as a git note. Task intents and edit rationales live only in the report,
never in a commit message.

:class:`Proposal` is one staged proposal as the index knows it, with its
effective ``state``: ``pending``, ``stale`` (a pending proposal whose live file
or branch changed; ``stale_reason`` says how), ``adopted``, ``rejected`` or ``undone`` (an adoption
``skillopt-sleep undo`` reversed).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any, Literal

State = Literal["pending", "stale", "adopted", "rejected", "undone"]
STATES: tuple[str, ...] = ("pending", "stale", "adopted", "rejected", "undone")
Store = Literal["project", "skills-repo"]
Source = Literal["cycle", "candidate", "run"]


@dataclass(frozen=True)
class EditRecord:
    """One edit the night applied: ``op`` add/delete/replace, with its rationale."""

    op: str
    target: str = ""
    content: str = ""
    rationale: str = ""
    anchor: str | None = None
    status: str = "applied"
    step: int | None = None

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EditRecord:
        return cls(**_known(cls, data))


@dataclass(frozen=True)
class RunScores:
    """The scores of the ``skillopt train`` run a proposal came from (``--from-run``)."""

    run_id: str
    run_dir: str
    status: str | None = None
    steps_done: int | None = None
    initial_val: float | None = None
    best_val: float | None = None
    initial_test: float | None = None
    best_test: float | None = None
    accepted: int | None = None
    rejected: int | None = None

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunScores:
        return cls(**_known(cls, data))


@dataclass(frozen=True)
class ProposalReport:
    """The evidence behind a proposal.

    ``baseline_val`` / ``candidate_val``: val scores (0..1) of the skill the
    night started from and of the candidate; ``policy``: the gate policy;
    ``gate_accept``: its decision; ``n_val_items``: val items compared.
    ``task_deltas``: candidate - baseline per val task id. ``task_intents``:
    what each task asks (prompt-derived: report only). ``models``: role ->
    model name. ``usage``: calls, input_tokens, output_tokens, cost_usd.
    ``evidence``: per val instance, what the agent did under the starting skill
    and under the candidate (the night's ``replay_evidence.json`` records; read
    them with :func:`sleep.proposals.evidence.instances`).
    """

    baseline_val: float | None = None
    candidate_val: float | None = None
    policy: str | None = None
    gate_accept: bool | None = None
    gate_reason: str = ""
    n_val_items: int | None = None
    task_deltas: dict[str, float] = field(default_factory=dict)
    task_intents: dict[str, str] = field(default_factory=dict)
    edits: list[EditRecord] = field(default_factory=list)
    models: dict[str, str] = field(default_factory=dict)
    usage: dict[str, Any] = field(default_factory=dict)
    cycle_id: str | None = None
    source: str = "cycle"
    run: RunScores | None = None
    notes: list[str] = field(default_factory=list)
    evidence: list[dict[str, Any]] = field(default_factory=list)
    lesson_evidence: str | None = None  # a digest of the corrections and tasks behind it (sleep.proposals.lesson)
    # What the proposal does to the skill: "edit" (its text), "retire" (deletes the file), "create" (a new
    # skill), "description" (its front matter's description only); ``paired``: the with/without-skill
    # comparison behind a retire or create proposal; ``triggers``: trigger figures before/after.
    kind: str = "edit"
    paired: dict[str, Any] = field(default_factory=dict)
    triggers: dict[str, Any] = field(default_factory=dict)
    # kind "package": the other files of the skill folder the proposal changes (sleep.proposals.package)
    package: dict[str, Any] = field(default_factory=dict)
    # Filled in by stage():
    lesson_sha256: str | None = None  # the candidate after whitespace normalisation (one proposal per lesson)
    trained_from_sha256: str | None = None
    candidate_sha256: str | None = None
    uncommitted_changes: bool = False

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ProposalReport:
        known = _known(cls, data)
        known["edits"] = [EditRecord.from_dict(e) for e in known.get("edits") or []]
        if known.get("run"):
            known["run"] = RunScores.from_dict(known["run"])
        return cls(**known)

    def with_(self, **changes: Any) -> ProposalReport:
        return replace(self, **changes)


@dataclass(frozen=True)
class Proposal:
    """One staged proposal. ``project`` is the repository's work tree (None for a
    skill versioned in SkillOpt's own skills repository, ``store="skills-repo"``);
    ``repo`` is where the branch lives; ``tree_path`` the file's path in its tree."""

    id: str
    state: str
    created_at: str
    night: str
    store: str
    project: str | None
    repo: str
    skill_path: str
    tree_path: str
    skill_name: str
    branch: str
    commit: str
    parent: str
    trained_from_sha256: str | None
    candidate_sha256: str
    baseline_val: float | None
    candidate_val: float | None
    n_edits: int
    cycle_id: str | None
    report: ProposalReport
    stale_reason: str | None = None
    decided_at: str | None = None
    decided_by: str | None = None
    reason: str | None = None
    adopted_commit: str | None = None
    branch_deleted: bool = False

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["report"] = self.report.to_dict()
        return out


def _known(cls: type, data: dict[str, Any]) -> dict[str, Any]:
    """The keys of ``data`` that ``cls`` has (reports written by newer versions load)."""
    names = {f.name for f in fields(cls)}
    return {k: v for k, v in dict(data).items() if k in names}
