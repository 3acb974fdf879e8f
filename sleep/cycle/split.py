"""The night's train/val split of its tasks: never one that leaves train or val empty.

The split is the core's (:func:`skillopt_core.split_tasks`, stable by task id);
the core already fills an empty train or val split from three tasks on. With
two tasks (``sleep.min_tasks=2`` is allowed) both may hash to the same split:
then the one of lower id goes to train and the other to val. A configuration
that gives train or val no share at all cannot gate a night, and is refused
before the night starts (:func:`check_ratio`).
"""

from __future__ import annotations

from collections.abc import Sequence

from skillopt_core import ConfigError, Dataset, Task, split_tasks


def check_ratio(ratio: Sequence[int]) -> None:
    """Refuse an ``env.split_ratio`` without a train or a val share (what a night needs)."""
    train, val = int(ratio[0]), int(ratio[1])
    if train <= 0 or val <= 0:
        raise ConfigError(f"env.split_ratio is {list(ratio)}: a night needs a train share (tasks the optimizer "
                          "learns from) and a val share (tasks the gate scores, never shown to the optimizer). "
                          "Use e.g. --set env.split_ratio=[1,1,0].")


def night_split(tasks: Sequence[Task], seed: int, ratio: Sequence[int]) -> Dataset:
    """``tasks`` split train/val(/test) with train and val non-empty (needs two tasks)."""
    if len(tasks) < 2:
        raise ValueError(f"a night needs at least two tasks (one to learn from, one to gate on); got {len(tasks)}")
    data = split_tasks(list(tasks), seed=seed, ratio=tuple(ratio))  # type: ignore[arg-type]
    if data.train and data.val:
        return data
    ordered = sorted(tasks, key=lambda t: t.id)
    first, rest = ordered[0], ordered[1:]
    return Dataset((first,), tuple(t for t in tasks if t in rest), ())
