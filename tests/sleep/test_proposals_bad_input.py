"""Bad input: one clear line on stderr, exit 2, no traceback, and nothing half-written."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from proposal_testutil import CANDIDATE, SKILL, SKILL_TEXT, git, make_repo, report, write

from sleep.cli import main
from sleep.index import Index
from sleep.proposals import stage, store

NIGHT = "2026-12-01"


def _propose(skill: Path, candidate: Path, *extra: str) -> int:
    return main(["propose", "--skill", str(skill), "--candidate", str(candidate), "--night", NIGHT, *extra])


def _candidate(tmp_path: Path, text: str = CANDIDATE) -> Path:
    return write(tmp_path / "candidate.md", text)


def _rows() -> int:
    with Index.open() as idx:
        return idx.conn.execute("SELECT COUNT(*) FROM proposals").fetchone()[0]


def _refs_resolve(repo: Path) -> bool:
    """Every ref points at an object that exists (no ref to a missing commit)."""
    for line in git(repo, "for-each-ref", "--format=%(objectname)").splitlines():
        if subprocess.run(["git", "cat-file", "-e", line], cwd=repo).returncode != 0:
            return False
    return True


def _one_error_line(capsys: pytest.CaptureFixture[str], *needles: str) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.count("\n") == 1, err
    for needle in needles:
        assert needle in err, err
    return err


def test_skill_inside_a_bare_repository_is_refused(tmp_path: Path, capsys) -> None:
    bare = tmp_path / "srv.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    assert _propose(bare / "skills" / "SKILL.md", _candidate(tmp_path)) == 2
    _one_error_line(capsys, "bare repository")
    assert git(bare, "for-each-ref") == ""


def test_a_broken_git_link_is_not_a_repository_error(tmp_path: Path, capsys) -> None:
    app = tmp_path / "app"
    write(app / ".git", "gitdir: /nonexistent/worktrees/app\n")
    write(app / SKILL, SKILL_TEXT)
    assert _propose(app / SKILL, _candidate(tmp_path)) == 2
    _one_error_line(capsys, "cannot open as a repository")
    assert _rows() == 0


def test_skill_path_outside_the_project_is_refused(tmp_path: Path, capsys) -> None:
    repo = make_repo(tmp_path / "app")
    other = make_repo(tmp_path / "other")
    assert _propose(other / SKILL, _candidate(tmp_path), "--project", str(repo)) == 2
    _one_error_line(capsys, "outside the project")
    assert git(other, "for-each-ref", "refs/heads/skillopt") == ""


def test_a_symlink_leading_out_of_the_repository_is_refused(tmp_path: Path, capsys) -> None:
    repo = make_repo(tmp_path / "app", {"README.md": "x\n"})
    outside = write(tmp_path / "elsewhere" / "SKILL.md", SKILL_TEXT)
    (repo / ".claude").mkdir()
    (repo / ".claude" / "SKILL.md").symlink_to(outside)
    assert _propose(repo / ".claude" / "SKILL.md", _candidate(tmp_path)) == 2
    _one_error_line(capsys, "symlink that leads out of the repository")
    assert outside.read_text() == SKILL_TEXT


def test_a_path_inside_dot_git_is_refused(tmp_path: Path, capsys) -> None:
    repo = make_repo(tmp_path / "app")
    assert _propose(repo / ".git" / "description", _candidate(tmp_path)) == 2
    _one_error_line(capsys, ".git folder")


def test_a_folder_as_skill_path_is_refused(tmp_path: Path, capsys) -> None:
    repo = make_repo(tmp_path / "app")
    assert _propose(repo / ".claude" / "skills" / "tests", _candidate(tmp_path)) == 2
    _one_error_line(capsys, "is a folder")


def test_a_missing_candidate_file_is_refused(tmp_path: Path, capsys) -> None:
    repo = make_repo(tmp_path / "app")
    assert _propose(repo / SKILL, tmp_path / "nope.md") == 2
    _one_error_line(capsys, "no such file")


def test_a_candidate_identical_to_the_live_file_is_refused(tmp_path: Path, capsys) -> None:
    repo = make_repo(tmp_path / "app")
    assert _propose(repo / SKILL, _candidate(tmp_path, SKILL_TEXT)) == 2
    _one_error_line(capsys, "nothing to propose")


def test_a_candidate_identical_to_the_committed_file_is_refused(tmp_path: Path, capsys) -> None:
    repo = make_repo(tmp_path / "app")
    write(repo / SKILL, SKILL_TEXT + "- uncommitted\n")
    assert _propose(repo / SKILL, _candidate(tmp_path, SKILL_TEXT)) == 2
    _one_error_line(capsys, "identical to the committed")
    assert git(repo, "for-each-ref", "refs/heads/skillopt") == ""


def test_a_candidate_with_a_new_secret_is_refused_before_anything_is_written(tmp_path: Path, capsys) -> None:
    repo = make_repo(tmp_path / "app")
    objects = git(repo, "count-objects", "-v")
    leaked = CANDIDATE + "- Authenticate with token ghp_Zq8wN3vK5tR7yB2mX4cL6pD9sF1gH0jQ2eT8\n"
    assert _propose(repo / SKILL, _candidate(tmp_path, leaked)) == 2
    _one_error_line(capsys, "looks like a secret", "line 10")
    assert git(repo, "count-objects", "-v") == objects


def test_a_run_dir_that_is_not_a_run_is_refused(tmp_path: Path, capsys) -> None:
    repo = make_repo(tmp_path / "app")
    (tmp_path / "notarun").mkdir()
    assert main(["propose", "--skill", str(repo / SKILL), "--from-run", str(tmp_path / "notarun")]) == 2
    _one_error_line(capsys, "not a finished `skillopt train` run")


@pytest.mark.parametrize("cmd", [["show", "deadbeef"], ["adopt", "deadbeef"], ["reject", "deadbeef"]])
def test_an_unknown_proposal_id_is_refused(cmd: list[str], capsys) -> None:
    assert main(cmd) == 2
    _one_error_line(capsys, "no proposal 'deadbeef'")


def test_adopt_on_a_deleted_branch_exits_2_and_writes_nothing(tmp_path: Path, capsys) -> None:
    repo = make_repo(tmp_path / "app")
    p = stage(repo / SKILL, CANDIDATE, report())
    git(repo, "branch", "-D", p.branch)
    assert main(["adopt", p.id]) == 2
    _one_error_line(capsys, "no longer exists")
    assert (repo / SKILL).read_text() == SKILL_TEXT


def test_show_when_the_repository_is_gone_exits_2(tmp_path: Path, capsys) -> None:
    repo = make_repo(tmp_path / "app")
    p = stage(repo / SKILL, CANDIDATE, report())
    subprocess.run(["rm", "-rf", str(repo / ".git")], check=True)
    assert main(["show", p.id]) == 2
    _one_error_line(capsys, "no longer a git repository")


def test_adopt_commit_with_the_index_locked_exits_2_and_writes_nothing(tmp_path: Path, capsys) -> None:
    repo = make_repo(tmp_path / "app")
    p = stage(repo / SKILL, CANDIDATE, report())
    write(repo / ".git" / "index.lock", "")
    assert main(["adopt", p.id, "--commit"]) == 2
    _one_error_line(capsys, "index.lock")
    assert (repo / SKILL).read_text() == SKILL_TEXT


def test_a_failure_after_the_branch_is_created_removes_branch_and_note(tmp_path: Path, monkeypatch) -> None:
    repo = make_repo(tmp_path / "app")

    def index_write_fails(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(store, "insert", index_write_fails)
    with pytest.raises(OSError, match="disk full"):
        stage(repo / SKILL, CANDIDATE, report())
    assert git(repo, "for-each-ref", "refs/heads/skillopt", "refs/notes") == ""
    assert _refs_resolve(repo)
    assert _rows() == 0


def test_adopt_when_a_file_stands_where_the_skill_folder_must_be_exits_2(tmp_path: Path, capsys) -> None:
    repo = make_repo(tmp_path / "app")
    new = repo / ".agents" / "skills" / "deploy" / "SKILL.md"
    p = stage(new, "Deploy with make.\n", report())
    write(repo / ".agents" / "skills" / "deploy", "a file, not a folder\n")
    assert main(["adopt", p.id]) == 2
    _one_error_line(capsys, "nothing was changed")
    assert (repo / ".agents" / "skills" / "deploy").read_text() == "a file, not a folder\n"
