"""Evidence a reviewer can use: per val instance, what the agent did before and after.

Read from the run's rollout cache (each row names its task, sample and the
digest of the skill it ran under; the night holds it in memory, a run
directory's reader reads ``rollout_cache.jsonl``): for every val item, the rollouts
under the starting skill and under the best skill, with the commands run (exit
codes, denials), the files changed, the check results and the judge's verdict
and sentence. Everything in the cache passed the night's redactor at the
backend boundary. Written to ``replay_evidence.json`` in the run directory and
handed to the proposal's report (``ProposalReport.evidence``), which ``show``,
the dashboard and the MCP ``show_proposal`` display
(:mod:`sleep.proposals.evidence` reads them back). :func:`notes` gives one line
per instance for places that have room for no table.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from skillopt_core.backends.trajectory import Trajectory
from skillopt_core.skill.document import Skill

FILE_NAME = "replay_evidence.json"
MAX_NOTE_ITEMS = 12


def skill_texts(text: str) -> list[str]:
    """The texts a rollout under ``text`` may name: as given, and as the engine renders it."""
    out = [text]
    try:
        out.append(Skill.parse(text).render())
    except Exception:  # a skill that no longer parses still matches by its raw text
        pass
    return out


def _side(completion: dict[str, Any] | None, score: dict[str, Any] | None) -> dict[str, Any] | None:
    if completion is None:
        return None
    data = completion.get("trajectory")
    trajectory = Trajectory.from_dict(data) if isinstance(data, dict) else None
    side: dict[str, Any] = {"answer": str(completion.get("response", ""))[:300]}
    if trajectory is not None:
        side["commands"] = [{"command": c.command, "exit_code": c.exit_code, "denied": c.denied}
                            for c in trajectory.commands()]
        side["files"] = [{"path": f.path, "change": f.change} for f in trajectory.file_changes()]
        side["checks"] = [{"command": c.command, "passed": c.passed, "exit_code": c.exit_code}
                          for c in trajectory.checks()]
    if score is not None:
        side["passed"] = float(score.get("hard", 0)) >= 1.0
        side["score"] = score.get("soft")
        side["feedback"] = score.get("feedback", "")
    return side


def val_evidence(rollouts: Callable[[list[str], list[str]], Mapping[str, Mapping[str, Any]]], seed_text: str,
                 best_text: str, val_ids: list[str], prompts: dict[str, str]) -> list[dict[str, Any]]:
    """One record per val item: ``{task, prompt, before, after}``. ``rollouts(skill texts, item ids)``
    gives each item's completion and score under one of the texts: a training result's
    (:meth:`skillopt_core.run.api.TrainingResult.val_rollouts`, in memory) or a run reader's."""
    before = rollouts(skill_texts(seed_text), list(val_ids))
    after = rollouts(skill_texts(best_text), list(val_ids))

    def side(found: Mapping[str, Mapping[str, Any]], task: str) -> dict[str, Any] | None:
        slot = found.get(task) or {}
        return _side(slot.get("completion"), slot.get("score"))

    return [{"task": t, "prompt": prompts.get(t, "")[:200], "before": side(before, t), "after": side(after, t)}
            for t in val_ids]


def _brief(side: dict[str, Any] | None) -> str:
    if side is None:
        return "not replayed"
    passed = side.get("passed")
    verdict = "pass" if passed is True else "fail" if passed is False else "?"
    if "commands" not in side:  # a read-only replay: only the answer
        return f"answered ({verdict})"
    ran = [c["command"] for c in side.get("commands", []) if not c["denied"]]
    denied = [c["command"] for c in side.get("commands", []) if c["denied"]]
    parts = [("ran " + ", ".join(f"`{c[:60]}`" for c in ran[:3])) if ran else "ran nothing"]
    if denied:
        parts.append(f"{len(denied)} denied")
    if side.get("files"):
        parts.append(f"{len(side['files'])} file(s) changed")
    checks = side.get("checks") or []
    if checks:
        parts.append("checks " + ("passed" if all(c["passed"] for c in checks) else "failed"))
    return f"{'; '.join(parts)} ({verdict})"


def notes(records: list[dict[str, Any]]) -> list[str]:
    """Lines for the proposal's notes: ``val <task>: before ... → after ...``."""
    out = [f"val {r['task']}: before {_brief(r['before'])} → after {_brief(r['after'])}"
           for r in records[:MAX_NOTE_ITEMS]]
    if len(records) > MAX_NOTE_ITEMS:
        out.append(f"... and {len(records) - MAX_NOTE_ITEMS} more val items in {FILE_NAME}")
    return out


def write(run_dir: Path, records: list[dict[str, Any]]) -> Path:
    path = run_dir / FILE_NAME
    path.write_text(json.dumps(records, ensure_ascii=False, indent=1), encoding="utf-8")
    path.chmod(0o600)
    return path
