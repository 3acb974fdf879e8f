"""`adopt ID & reject ID` as two real processes, many times: one decision per proposal,
and the live file, the branch and the record always agree on it."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from proposal_testutil import CANDIDATE, NIGHT, SKILL, SKILL_TEXT, git, make_repo, report

from sleep.proposals import get, stage

TRIES = 20

# Both processes import everything first, then wait for the same start signal, so the two
# decisions really overlap (Python's start-up would otherwise order them).
RACER = r"""
import os, sys, time
from sleep.cli import main
import sleep.proposals.decide  # noqa: F401  (loaded before the start signal)
go = sys.argv[1]
open(f"{go}.{sys.argv[2]}", "w").close()  # ready
while not os.path.exists(go):
    time.sleep(0.001)
raise SystemExit(main(sys.argv[2:]))
"""


def _race(p_id: str, go: Path) -> list[tuple[int, str]]:
    """(exit code, stderr) of ``adopt`` and of ``reject``."""
    procs = [subprocess.Popen([sys.executable, "-c", RACER, str(go), verb, p_id], env=os.environ,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for verb in ("adopt", "reject")]
    deadline = time.monotonic() + 120
    while not all(Path(f"{go}.{verb}").exists() for verb in ("adopt", "reject")) and time.monotonic() < deadline:
        time.sleep(0.01)
    go.write_text("go")
    errs = [proc.communicate(timeout=120)[1] for proc in procs]
    return [(proc.returncode, err) for proc, err in zip(procs, errs)]


def test_adopt_and_reject_at_once_make_one_decision_that_file_branch_and_record_agree_on(tmp_path: Path) -> None:
    outcomes = []
    for n in range(TRIES):
        repo = make_repo(tmp_path / f"app{n}")
        p = stage(repo / SKILL, CANDIDATE, report(), night=NIGHT)
        (adopt_code, adopt_err), (reject_code, reject_err) = _race(p.id, tmp_path / f"go{n}")
        state = get(p.id).state
        live = (repo / SKILL).read_text()
        branch = git(repo, "branch", "--list", p.branch)
        codes = (adopt_code, reject_code)
        detail = f"try {n}: {state}, codes {codes}, stderr {adopt_err!r} {reject_err!r}"
        assert sorted(codes) == [0, 2], detail  # one decided, the other was told it was already decided
        if state == "adopted":
            assert codes == (0, 2) and live == CANDIDATE and not branch, detail  # adopt deletes it
        else:
            assert state == "rejected" and codes == (2, 0) and live == SKILL_TEXT and not branch, detail
        loser = reject_err if state == "adopted" else adopt_err
        assert "already" in loser and "Traceback" not in loser, detail
        outcomes.append(state)
    assert len(outcomes) == TRIES
