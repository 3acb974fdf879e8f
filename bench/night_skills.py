"""What a night with N skills costs against N single-skill nights (issue 26).

Builds, in a scratch home, a project whose Claude Code sessions use two skills
(``run-tests`` and ``changelog``, two recurring tasks each, with consistent
corrections: the sessions of tests/sleep/test_cycle_multiskill.py), then runs

- one night without ``--skill`` (every skill, most used first);
- in a fresh data directory, one ``--skill`` night per skill (what the person
  had to do before);
- the every-skill night again, unchanged (every skill idle).

and prints model calls and tokens per skill side by side. The scripted backend
answers (control flow only: these are counts of calls, no evidence that a
skill improves). Wall time is printed too, with the load average: this is a
shared machine.

Usage::

    nice -n 15 python bench/night_skills.py [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "sleep"))


def _fresh(root: Path, name: str) -> None:
    """Point the data directory (the index, the nights) at ``root/name``, empty."""
    data = root / name
    shutil.rmtree(data, ignore_errors=True)
    os.environ["SKILLOPT_HOME"] = str(data)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    root = Path(tempfile.mkdtemp(prefix="skillopt-bench-skills-"))
    try:
        from sleep.cycle.demo import scratch_env

        os.environ.update(scratch_env(root))
        from sleep_testutil import Homes
        from test_cycle_multiskill import CHANGELOG, TESTS, make_repo, options, sessions_of, skill_text

        from sleep.cycle.night import run_night

        home = root / "home"
        homes = Homes(home, home / ".claude", home / ".codex", home / ".copilot", home / ".config/Code/User",
                      root / "skillopt")
        skills = {"run-tests": ".claude/skills/run-tests/SKILL.md", "changelog": ".claude/skills/changelog/SKILL.md"}
        project = make_repo(root / "tiny", {
            skills["run-tests"]: skill_text("run-tests", "Running the test suite and the linter."),
            skills["changelog"]: skill_text("changelog", "Changelog entries and release notes.")})
        n = sessions_of(homes, str(project), TESTS, 1)
        sessions_of(homes, str(project), CHANGELOG, n)
        quiet = lambda _: None  # noqa: E731
        rows: dict[str, dict] = {}

        _fresh(root, "every")
        started = time.perf_counter()
        every = run_night(options(project, root, dry_run=True), say=quiet)
        rows["one night, every skill"] = {"wall_s": round(time.perf_counter() - started, 2),
                                          "per_skill": {p["name"]: p["usage"] for p in every.skills},
                                          "total": every.usage}
        started = time.perf_counter()
        again = run_night(options(project, root), say=quiet)  # staged: the next one finds nothing changed
        idle = run_night(options(project, root), say=quiet)
        rows["the same night again, unchanged"] = {"wall_s": round(time.perf_counter() - started, 2),
                                                   "per_skill": {p["name"]: p["usage"] for p in idle.skills},
                                                   "total": idle.usage, "outcome": idle.outcome}
        _fresh(root, "single")
        per, total, started = {}, {"model_calls": 0, "tokens": 0}, time.perf_counter()
        for name, rel in skills.items():
            one = run_night(options(project, root, dry_run=True, skill=project / rel), say=quiet)
            per[name] = one.usage
            total = {k: total[k] + one.usage.get(k, 0) for k in total}
        rows[f"{len(skills)} single-skill nights (--skill)"] = {"wall_s": round(time.perf_counter() - started, 2),
                                                               "per_skill": per, "total": total}
        del again
    finally:
        shutil.rmtree(root, ignore_errors=True)
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    print(f"load average {os.getloadavg()[0]:.2f} (2 cores shared); scripted backend: calls, not quality")
    print(f"{'':<36} {'run-tests calls':>16} {'changelog calls':>16} {'total calls':>12} {'tokens':>8} {'wall s':>7}")
    for label, row in rows.items():
        per = row["per_skill"]
        print(f"{label:<36} {per.get('run-tests', {}).get('model_calls', 0):>16} "
              f"{per.get('changelog', {}).get('model_calls', 0):>16} {row['total'].get('model_calls', 0):>12} "
              f"{row['total'].get('tokens', 0):>8} {row['wall_s']:>7}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
