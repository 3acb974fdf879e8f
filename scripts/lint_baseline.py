"""Run ruff and mypy and hold their findings to a baseline that only shrinks.

``python scripts/lint_baseline.py`` runs ``ruff check`` and ``mypy`` with the
settings in pyproject.toml and counts the findings per file and rule. It fails
(exit 1) when a file has more findings of a rule than scripts/lint_baseline.json
allows, naming each one, and when the baseline allows findings in a folder that
must be clean (skillopt_core/, tests/). A count that fell below the baseline is
reported; ``--update`` then writes the lower counts. ``--update`` never raises a
count or adds a file: a new finding is fixed, not baselined.
(docs/contributing.md tells the whole procedure.)
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASELINE = ROOT / "scripts" / "lint_baseline.json"
# Folders that hold no finding at all: a baseline entry under them is itself an error.
CLEAN = ("skillopt_core/", "tests/")
MYPY_LINE = re.compile(r"^(?P<file>[^:\n]+):\d+: error: .*\[(?P<code>[a-z0-9-]+)\]$")

Counts = dict[str, dict[str, int]]  # tool -> "file::rule" -> count


def ruff_findings() -> Counter[str]:
    proc = subprocess.run([sys.executable, "-m", "ruff", "check", "--output-format", "json", "--exit-zero",
                           "skillopt_core", "sleep", "tests"], cwd=ROOT, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"lint: ruff did not run (exit {proc.returncode}): {proc.stderr.strip()}")
    found: Counter[str] = Counter()
    for item in json.loads(proc.stdout or "[]"):
        path = Path(item["filename"]).resolve().relative_to(ROOT).as_posix()
        found[f"{path}::{item['code'] or 'syntax'}"] += 1
    return found


def mypy_findings() -> Counter[str]:
    proc = subprocess.run([sys.executable, "-m", "mypy", "--no-error-summary", "--show-error-codes", "--no-pretty"],
                          cwd=ROOT, capture_output=True, text=True)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"lint: mypy did not run (exit {proc.returncode}): {proc.stderr.strip() or proc.stdout[-2000:]}")
    found: Counter[str] = Counter()
    for line in proc.stdout.splitlines():
        match = MYPY_LINE.match(line.strip())
        if match:
            found[f"{Path(match['file']).as_posix()}::{match['code']}"] += 1
        elif ": error:" in line:  # an error without a code (a syntax error, a bad config): never baselined
            found[f"{line.split(':', 1)[0]}::no-code"] += 1
    return found


def load_baseline() -> Counts:
    if not BASELINE.exists():
        return {"ruff": {}, "mypy": {}}
    data = json.loads(BASELINE.read_text(encoding="utf-8"))
    return {tool: dict(data.get(tool, {})) for tool in ("ruff", "mypy")}


def compare(tool: str, found: Counter[str], allowed: dict[str, int]) -> tuple[list[str], list[str]]:
    """(over, under): findings beyond the baseline, and baseline entries that shrank."""
    over = [f"{tool}: {key} has {n} finding{'s' if n != 1 else ''}, the baseline allows {allowed.get(key, 0)}"
            for key, n in sorted(found.items()) if n > allowed.get(key, 0)]
    under = [f"{tool}: {key} is down to {found.get(key, 0)} from {n}"
             for key, n in sorted(allowed.items()) if found.get(key, 0) < n]
    return over, under


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--update", action="store_true", help="lower the baseline to the counts found now")
    parser.add_argument("--init", action="store_true",
                        help="write a first baseline from today's findings outside the clean folders "
                             "(only when scripts/lint_baseline.json does not exist)")
    args = parser.parse_args(argv)
    found = {"ruff": ruff_findings(), "mypy": mypy_findings()}
    if args.init:
        if BASELINE.exists():
            print(f"lint: {BASELINE.relative_to(ROOT)} exists; --init writes only a first baseline")
            return 1
        first = {tool: {key: n for key, n in sorted(found[tool].items()) if not key.startswith(CLEAN)}
                 for tool in found}
        BASELINE.write_text(json.dumps(first, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        print(f"lint: first baseline written ({sum(map(len, first.values()))} file/rule groups)")
        return 0
    baseline = load_baseline()
    problems: list[str] = []
    shrunk: list[str] = []
    for tool in ("ruff", "mypy"):
        problems += [f"{tool}: {key} is in the baseline, but {key.split('/')[0]}/ must have no finding"
                     for key in baseline[tool] if key.startswith(CLEAN)]
        over, under = compare(tool, found[tool], baseline[tool])
        problems += over
        shrunk += under
    for line in problems:
        print(line)
    if problems:
        print(f"lint: {len(problems)} finding group(s) over the baseline: fix them (run `ruff check FILE` or `mypy` "
              "to see each); the baseline (scripts/lint_baseline.json) only shrinks.")
        return 1
    if args.update:
        lowered = {tool: {key: min(n, found[tool].get(key, 0)) for key, n in sorted(baseline[tool].items())
                          if found[tool].get(key, 0)} for tool in ("ruff", "mypy")}
        BASELINE.write_text(json.dumps(lowered, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        print(f"lint: baseline lowered ({len(shrunk)} group(s) shrank)")
        return 0
    for line in shrunk:
        print(line)
    if shrunk:
        print("lint: fewer findings than the baseline: run `python scripts/lint_baseline.py --update` and commit it.")
    total = {tool: sum(found[tool].values()) for tool in found}
    print(f"lint: ok (ruff {total['ruff']}, mypy {total['mypy']} findings, all within the baseline)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
