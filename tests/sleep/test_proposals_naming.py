"""Branch names: the skill's name, sanitised for git; collisions get -2, -3, ..."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from proposal_testutil import CANDIDATE, SKILL, SKILL_TEXT, git, make_repo, report

from sleep.index import Index
from sleep.proposals import GitFailed, stage
from sleep.proposals.naming import MAX_NAME, branch_name, sanitize, skill_name_of

NIGHT = date(2026, 12, 1)
SAFE = set("abcdefghijklmnopqrstuvwxyz0123456789._-")


def _valid_ref(ref: str) -> bool:
    return subprocess.run(["git", "check-ref-format", ref], capture_output=True).returncode == 0


@pytest.mark.parametrize("path, name", [
    (".claude/skills/tests/SKILL.md", "tests"),
    (".agents/skills/deploy/skill.md", "deploy"),
    (".github/copilot-instructions.md", "copilot-instructions"),
    ("notes/review-guide.md", "review-guide"),
])
def test_skill_name_is_the_folder_of_skill_md_or_the_file_stem(path: str, name: str) -> None:
    assert skill_name_of(path) == name


@pytest.mark.parametrize("hostile", [
    "a b", "..", "a..b", "~user", "c:d", "x\x01y\x7f", "-rf", ".hidden", "name.lock", "name.lock.", "@",
    "a@{b}", "back\\slash", "q?*[", "ünïcødé", "/", "", "x" * 5000, "...lock", "-.-.-",
])
def test_hostile_skill_name_gives_a_valid_safe_ref(hostile: str) -> None:
    name = sanitize(hostile)
    assert name and set(name) <= SAFE and len(name) <= MAX_NAME
    assert not name.startswith(("-", ".")) and ".." not in name and not name.endswith((".lock", "."))
    assert _valid_ref(f"refs/heads/{branch_name(hostile, NIGHT, 3)}")


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=200))
def test_any_skill_name_gives_a_valid_ref(text: str) -> None:
    assert _valid_ref(f"refs/heads/{branch_name(text, NIGHT)}")


def test_second_proposal_of_a_night_gets_suffix_2_and_third_3(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "app")
    names = [stage(repo / SKILL, CANDIDATE + f"- v{i}\n", report(), night=NIGHT).branch for i in range(3)]
    assert names == ["skillopt/tests/2026-12-01", "skillopt/tests/2026-12-01-2", "skillopt/tests/2026-12-01-3"]


def test_an_existing_branch_of_the_person_is_never_overwritten(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "app")
    git(repo, "branch", "skillopt/tests/2026-12-01")
    theirs = git(repo, "rev-parse", "skillopt/tests/2026-12-01")
    p = stage(repo / SKILL, CANDIDATE, report(), night=NIGHT)
    assert p.branch == "skillopt/tests/2026-12-01-2"
    assert git(repo, "rev-parse", "skillopt/tests/2026-12-01") == theirs


def test_two_stagings_at_once_get_two_branches(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "app")
    script = ("import sys; from sleep.cli import main; "
              "raise SystemExit(main(['propose', '--skill', sys.argv[1], '--candidate', sys.argv[2],"
              " '--night', '2026-12-01', '--json']))")
    procs = []
    for i in range(2):
        cand = tmp_path / f"cand{i}.md"
        cand.write_text(CANDIDATE + f"- variant {i}\n")
        procs.append(subprocess.Popen([sys.executable, "-c", script, str(repo / SKILL), str(cand)],
                                      env=os.environ, stdout=subprocess.PIPE, stderr=subprocess.PIPE))
    results = [p.communicate(timeout=120) + (p.returncode,) for p in procs]
    assert [r[2] for r in results] == [0, 0], [r[1] for r in results]
    branches = git(repo, "for-each-ref", "--format=%(refname:short)", "refs/heads/skillopt/").split()
    assert sorted(branches) == ["skillopt/tests/2026-12-01", "skillopt/tests/2026-12-01-2"]
    with Index.open() as idx:
        assert idx.conn.execute("SELECT COUNT(*) FROM proposals").fetchone()[0] == 2
    notes = git(repo, "notes", "--ref=refs/notes/skillopt", "list").splitlines()
    assert len(notes) == 2


def test_hostile_skill_folder_stages_a_valid_branch_with_the_exact_file_path(tmp_path: Path) -> None:
    folder = "a b..c~d:e\x01 -x.lock"
    rel = f".claude/skills/{folder}/SKILL.md"
    repo = make_repo(tmp_path / "app", {rel: SKILL_TEXT})
    p = stage(repo / rel, CANDIDATE, report(), night=NIGHT)
    assert p.branch == "skillopt/a-b.c-d-e-x/2026-12-01"
    listed = subprocess.run(["git", "diff", "--name-only", "-z", "HEAD", p.commit], cwd=repo,
                            capture_output=True, check=True).stdout
    assert listed == rel.encode() + b"\0"


def test_a_branch_named_like_the_skill_folder_is_a_clear_error_and_leaves_nothing(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "app")
    git(repo, "branch", "skillopt/tests")  # a file where the ref folder must go
    refs = git(repo, "for-each-ref")
    with pytest.raises(GitFailed, match="skillopt/tests"):
        stage(repo / SKILL, CANDIDATE, report(), night=NIGHT)
    assert git(repo, "for-each-ref") == refs
    with Index.open() as idx:
        assert idx.conn.execute("SELECT COUNT(*) FROM proposals").fetchone()[0] == 0
