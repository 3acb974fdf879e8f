"""The one writer of a night's record (:class:`sleep.nightstore.NightRecord`, the index's ``cycles`` row).

The night's parts return their results; only this writer sets the record's
fields and saves it, at defined points: when the night starts, at each stage,
when a skill's part knows its run directory and its preflight estimate, after
each step after training (its :class:`~sleep.cycle.stepresult.StepResult`), after
each model call (its spend: a busy or full index is skipped there, the end
records the totals) and at the end. A night killed between two saves keeps
what the last one wrote (:func:`sleep.nightstore.settle_dead`).
"""

from __future__ import annotations

import secrets
import sqlite3
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, cast

from skillopt_core.timestamps import utc_now
from sleep import nightstore
from sleep.cycle import multiskill
from sleep.cycle.multiskill import SkillGroup
from sleep.cycle.stepresult import Spent, StepResult
from sleep.index import Index
from sleep.nightstore import NightRecord, NightSkill, NightUsage, SkillPart
from sleep.storage import StorageError

Say = Callable[[str], None]


def new_night_id() -> str:
    return datetime.now(timezone.utc).strftime("n%Y%m%d-%H%M%S-") + secrets.token_hex(3)


class NightWriter:
    """See the module docstring. ``parts``: the summaries of the skills' parts done so far."""

    def __init__(self, night: NightRecord) -> None:
        self.night = night
        self.parts: list[dict[str, Any]] = []
        self.started = time.perf_counter()

    @classmethod
    def start(cls, project: Path, dry_run: bool, say: Say) -> NightWriter:
        """A new night of ``project`` (recorded ``running``); earlier nights left running are marked
        interrupted (call with the project's night lock held)."""
        with Index.open() as index:
            if nightstore.mark_interrupted(index, str(project)):
                say("[Night] an earlier night of this project was interrupted; it is recorded as such")
            night = NightRecord(new_night_id(), str(project), utc_now(), dry_run=dry_run)
            nightstore.save(index, night)
        return cls(night)

    def save(self) -> None:
        with Index.open() as index:
            nightstore.save(index, self.night)

    def stage(self, name: str) -> None:
        self.night.stage = name
        self.save()

    def harvested(self, sessions_new: int, sessions_updated: int) -> None:
        self.night.harvest = {"sessions_new": sessions_new, "sessions_updated": sessions_updated}

    def mined(self, tasks_new: int, tasks_updated: int, tasks_total: int) -> None:
        self.night.mine = {"tasks_new": tasks_new, "tasks_updated": tasks_updated, "tasks_total": tasks_total}

    def progress(self, group: SkillGroup, part: SkillPart, stage: str | None = None) -> None:
        """Save the night with the skill part under way (``stage``: the night enters it)."""
        night = self.night
        night.skills = [*self.parts, _summary(group, part)]
        night.usage = multiskill.total_usage(night.skills)
        night.run_dir = night.run_dir or part.run_dir  # a killed night keeps its (first) run directory
        if stage:
            self.stage(stage)
        else:
            self.save()

    def spent(self, group: SkillGroup, part: SkillPart, usage: dict[str, Any]) -> None:
        """Save the part's spend after a model call (:class:`sleep.cycle.spend.SpendMeter`'s totals, the
        :class:`~sleep.nightstore.NightUsage` keys); a busy or full index must not stop the replay
        (the end records the totals)."""
        part.usage = cast(NightUsage, usage)
        try:
            self.progress(group, part)
        except sqlite3.Error:
            pass

    def step_done(self, group: SkillGroup, part: SkillPart, step: StepResult) -> None:
        """Record a step after training (:mod:`sleep.cycle.stepresult`) in the part's field of its name."""
        setattr(part, step.name, step.to_dict())
        self.progress(group, part)

    def spent_in_all(self, part: SkillPart, ledger: dict[str, Any], steps: list[StepResult],
                     before: Spent | None = None) -> None:
        """The part's spend: the core's ledger (authoritative once the run ended), the steps' calls and
        what was spent ``before`` the run (the model judge probe, :mod:`sleep.cycle.judgeprobe`)."""
        total = sum((s.spent for s in steps if s.spent is not None), Spent.of_ledger(ledger) + (before or Spent()))
        part.usage = cast(NightUsage, total.usage())

    def part_done(self, group: SkillGroup, part: SkillPart) -> dict[str, Any]:
        summary = _summary(group, part)
        self.parts.append(summary)
        return summary

    def settle(self) -> None:
        """The night's own fields over its skills: the first staged skill (else the first) fills the
        single-skill fields that history, review and the MCP tools read; ``skills`` lists them all."""
        night, parts = self.night, self.parts
        night.skills = parts
        lead = next((p for p in parts if p["outcome"] == "staged"), parts[0] if parts else None)
        if lead is not None:
            night.skill = NightSkill(path=lead["path"], name=lead["name"], host=lead["host"], managed=lead["managed"],
                                     why=lead["why"])
            for key in ("tasks", "scores", "corrections", "proposal", "run_dir", "fingerprint", "replay", "paired",
                        "triggers", "package", "judge_probe"):
                setattr(night, key, lead[key])
        night.outcome, night.reason = multiskill.night_outcome(parts)
        night.usage = multiskill.total_usage(parts)
        night.preflight = night_preflight([p["preflight"] for p in parts if p.get("preflight")])

    def failed(self, reason: str) -> None:
        self.night.outcome, self.night.reason = "failed", reason

    def interrupted(self) -> None:
        self.night.outcome = "interrupted"
        self.night.reason = f"stopped during the {self.night.stage} stage; nothing was staged"

    def finish(self) -> None:
        self.night.finished_at = utc_now()
        self.night.wall_s = round(time.perf_counter() - self.started, 3)
        self.save()

    def finish_if_possible(self) -> None:
        """Record the failed night if the index can still be written; else its record stays
        ``running`` and shows as interrupted once this process is gone (its spend is kept)."""
        try:
            self.finish()
        except (StorageError, sqlite3.Error, OSError):
            pass


def _summary(group: SkillGroup, part: SkillPart) -> dict[str, Any]:
    return multiskill.part_summary(group.choice, part, group.uses, group.lesson_from, group)


def night_preflight(estimates: list[dict[str, Any]]) -> dict[str, Any]:
    """The night's preflight estimate: its skills' (each made just before that skill's replay), summed."""
    if len(estimates) <= 1:
        return estimates[0] if estimates else {}
    return {"calls": sum(e.get("calls", 0) for e in estimates),
            "usd": round(sum(e.get("usd", 0.0) for e in estimates), 4),
            "tokens": sum(e.get("tokens", 0) for e in estimates),
            "unpriced_roles": sorted({r for e in estimates for r in e.get("unpriced_roles", [])}),
            "warnings": [w for e in estimates for w in e.get("warnings", [])], "skills": len(estimates)}
