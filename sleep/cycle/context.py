"""What every part of a night is given (:class:`NightContext`), and what one skill's part is given (:class:`PartJob`).

The parts (:mod:`.skillqueue`, :mod:`.skillpart`, :mod:`.replaying`,
:mod:`.aftertraining`, :mod:`.staging`) take these and return their results;
only the night's :class:`~sleep.cycle.writer.NightWriter` writes the record.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from skillopt_core import events
from sleep.cycle.config import NightConfig
from sleep.cycle.multiskill import SkillGroup
from sleep.cycle.writer import NightWriter

Say = Callable[[str], None]


@dataclass(frozen=True)
class NightContext:
    project: Path
    config: NightConfig  # the night's (its fingerprint; each skill's part gets its budget share)
    writer: NightWriter  # the night record's one writer
    say: Say
    subscribers: Sequence[events.Subscriber] = ()
    skill: Path | None = None  # --skill: the one skill the night trains
    dry_run: bool = False
    wait: float = 0.0  # how long the harvest and the miner wait for the index


@dataclass(frozen=True)
class PartJob:
    """One skill's part of the night."""

    group: SkillGroup
    members: dict[str, list]  # task id -> its pool items (sleep.mine.store.PoolItem)
    config: NightConfig  # with this skill's share of the budget
    run_id: str
    last: tuple[str, str] | None = None  # (fingerprint, night id) of the skill's last completed part
