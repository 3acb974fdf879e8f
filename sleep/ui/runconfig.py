"""A run's ``config.yaml`` (the settings the trainer ran with), read for the runs table, the
config panel and the compare page.

The trainer writes the whole validated settings (``Settings.to_dict()``) to
``config.yaml`` when a run starts. The dashboard reads it through
:mod:`sleep.ui.runfiles` (inside the run directory only), with PyYAML's safe
loader (libyaml's when present: a 1,000-run list parses 1,000 configs), and
keeps the result until the file changes. Every text passes the outbound filter.

:class:`RunConfig` holds the settings flattened to dotted keys
(``optimizer.learning_rate``) in file order, plus the few the runs table shows
as columns (:data:`COLUMNS`). Keys that usually hold secrets or machine paths
(``model.api_key_env`` is a *name*, so it is shown) are shown as written: the
config never holds a key itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from sleep.ui.outbound import outbound
from sleep.ui.runfiles import FileCache, RunFileError

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
CACHE = FileCache(entries=4096)
MAX_CONFIG = 1 << 20


@dataclass(frozen=True)
class RunConfig:
    """The settings of one run (empty when ``config.yaml`` is missing, refused or not YAML)."""

    flat: tuple[tuple[str, str], ...] = ()  # dotted key -> value as shown, in file order
    problem: str = ""

    def get(self, key: str) -> str:
        for k, v in self.flat:
            if k == key:
                return v
        return ""

    # The runs table's config columns.
    @property
    def learning_rate(self) -> float | None:
        return _num(self.get("optimizer.learning_rate"))

    @property
    def schedule(self) -> str:
        name = self.get("optimizer.lr_scheduler")
        low = self.get("optimizer.min_learning_rate")
        return f"{name} (min {low})" if name and name != "constant" and low else name

    @property
    def gate_policy(self) -> str:
        if self.get("evaluation.use_gate") == "false":
            return "off"
        policy = self.get("evaluation.gate_policy")
        metric = self.get("evaluation.gate_metric")
        return f"{policy} · {metric}" if policy and metric else policy

    @property
    def models(self) -> str:
        """``target / optimizer`` as ``backend:model`` (``default`` for the backend's own)."""
        backend = self.get("model.backend")
        parts = []
        for role in ("target", "optimizer"):
            b = self.get(f"model.{role}_backend") or backend
            m = self.get(f"model.{role}")
            parts.append(f"{b}:{m}" if m else (b or "?"))
        return " / ".join(parts) if backend or any(p != "?" for p in parts) else ""

    @property
    def budget(self) -> str:
        calls, tokens = self.get("budget.max_calls"), self.get("budget.max_tokens")
        out = [f"{calls} calls" if calls else "", f"{tokens} tokens" if tokens else ""]
        return ", ".join(o for o in out if o) or ("none" if self.flat else "")


COLUMNS = (  # (key of the table, label, RunConfig attribute)
    ("lr", "LR", "learning_rate"),
    ("schedule", "Schedule", "schedule"),
    ("gate", "Gate", "gate_policy"),
    ("models", "Models (target / optimizer)", "models"),
    ("budget", "Budget", "budget"),
)


def _num(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _show(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ", ".join(_show(v) for v in value) if value else "[]"
    if isinstance(value, dict):
        return "{}"  # only empty mappings reach here: others are flattened
    return outbound(str(value))


def flatten(value: Any, prefix: str = "") -> list[tuple[str, str]]:
    """Dotted keys of nested mappings, in order; leaves shown as text."""
    if isinstance(value, dict) and value:
        out: list[tuple[str, str]] = []
        for k, v in value.items():
            out += flatten(v, f"{prefix}.{k}" if prefix else str(k))
        return out
    return [(outbound(prefix), _show(value))] if prefix else []


def _parse(data: bytes) -> RunConfig:
    try:
        value = yaml.load(data, Loader=_Loader)
    except yaml.YAMLError as exc:
        first = str(exc).splitlines()[0]
        return RunConfig(problem=f"config.yaml is not valid YAML ({first}); its settings are not shown")
    if not isinstance(value, dict):
        return RunConfig(problem="config.yaml does not hold a mapping of settings; they are not shown")
    return RunConfig(tuple(flatten(value)))


def read_config(run: Path) -> RunConfig:
    """The settings of the run at ``run`` (a catalogued real path)."""
    try:
        got = CACHE.build(run, "config.yaml", "config", _parse, limit=MAX_CONFIG)
    except RunFileError as exc:
        return RunConfig(problem=str(exc))
    return got if got is not None else RunConfig(problem="the run has no config.yaml")


def differing(configs: list[RunConfig]) -> list[tuple[str, list[str], bool]]:
    """Every key of any of ``configs`` (first run's order, then the others' new keys): its value per
    run and whether they differ."""
    keys: list[str] = []
    seen: set[str] = set()
    for cfg in configs:
        for k, _ in cfg.flat:
            if k not in seen:
                seen.add(k)
                keys.append(k)
    maps = [dict(cfg.flat) for cfg in configs]
    out = []
    for k in keys:
        values = [m.get(k, "–") for m in maps]
        out.append((k, values, len(set(values)) > 1))
    return out
