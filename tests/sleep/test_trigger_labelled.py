"""The labelled trigger set (tests/sleep/trigger_labelled.py) and the figures bench/triggers.py reports
on it: every label names a listed skill (or none), each skill has requests in varied wording, and the
lexical reference decider, run through the night's own listing and decision code, finds the real
descriptions easier to trigger from than the weak ones (the set separates by what a description says)."""

from __future__ import annotations

import asyncio
import importlib.util
from pathlib import Path

from trigger_labelled import QUERIES, SKILLS, WEAK

BENCH = Path(__file__).resolve().parents[2] / "bench" / "triggers.py"


def _bench():
    spec = importlib.util.spec_from_file_location("bench_triggers", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_set_is_well_formed() -> None:
    assert set(WEAK) == set(SKILLS)
    texts = [q for q, _ in QUERIES]
    assert len(texts) == len(set(texts))
    for name in SKILLS:
        assert sum(label == name for _, label in QUERIES) >= 5
    assert sum(label is None for _, label in QUERIES) >= 5
    assert {label for _, label in QUERIES} - {None} == set(SKILLS)


def test_the_lexical_reference_figures() -> None:
    bench = _bench()
    real = bench._total(asyncio.run(bench._figures(bench.Lexical(), SKILLS)))
    weak = bench._total(asyncio.run(bench._figures(bench.Lexical(), WEAK)))
    assert real["asked"] == weak["asked"] == len(SKILLS) * len(QUERIES) and real["unread"] == 0
    assert real["recall"] > weak["recall"] and real["precision"] > weak["precision"]
    assert (real["precision"], real["recall"]) == (0.885, 0.958)  # the figures docs/sleep-skill-changes.md cites
