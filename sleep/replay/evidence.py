"""Evidence a reviewer can use: per val instance, what the agent did before and after.

Read from the run directory's rollout cache (each row names its task, sample
and the digest of the skill it ran under): for every val item, the rollouts
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
from pathlib import Path
from typing import Any

from skillopt_core.backends.trajectory import Trajectory
from skillopt_core.evaluation.cache import skill_digest
from skillopt_core.skill.document import Skill

FILE_NAME = "replay_evidence.json"
MAX_NOTE_ITEMS = 12


def _digests(text: str) -> set[str]:
    out = {skill_digest(text)}
    try:
        out.add(skill_digest(Skill.parse(text).render()))
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


def val_evidence(run_dir: Path, seed_text: str, best_text: str, val_ids: list[str],
                 prompts: dict[str, str]) -> list[dict[str, Any]]:
    """One record per val item: ``{task, prompt, before, after}``."""
    cache = run_dir / "rollout_cache.jsonl"
    rows = []
    if cache.is_file():
        for line in cache.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                row = json.loads(line)
            except ValueError:
                continue
            if isinstance(row, dict) and row.get("task") in val_ids:
                rows.append(row)
    before, after = _digests(seed_text), _digests(best_text)

    def pick(task: str, digests: set[str]) -> dict[str, Any] | None:
        completion = next((r for r in rows if r["task"] == task and r.get("skill") in digests and "response" in r), None)
        score = next((r for r in rows if r["task"] == task and r.get("skill") in digests and "hard" in r), None)
        return _side(completion, score)

    return [{"task": t, "prompt": prompts.get(t, "")[:200], "before": pick(t, before), "after": pick(t, after)}
            for t in val_ids]


def _brief(side: dict[str, Any] | None) -> str:
    if side is None:
        return "not replayed"
    verdict = {True: "pass", False: "fail"}.get(side.get("passed"), "?")
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
