"""Every git call SkillOpt makes near the person's repository or a replay checkout runs with the protective
settings of :mod:`sleep.gitsafe`: one test per setting, each with a repository (or a global configuration)
that names a program which leaves a marker if git runs it (issue 35, item 1)."""

from __future__ import annotations

import os
from pathlib import Path

import git as gitpython
import pytest
from proposal_testutil import git, make_repo

from sleep import gitsafe
from sleep.replay.checkout import replay_checkout
from sleep.project import repository_root
from sleep.proposals import gitobjects as g


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "project", {"a.txt": "one\n"})


@pytest.fixture
def marker(tmp_path: Path) -> Path:
    return tmp_path / "ran"


def program(path: Path, marker: Path) -> Path:
    """An executable that appends its name to ``marker`` (and passes stdin through, for a textconv)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\necho {path.name} >> {marker}\ncat \"$1\" 2>/dev/null\nexit 0\n")
    os.chmod(path, 0o755)
    return path


def test_no_fsmonitor(repo: Path, marker: Path, tmp_path: Path) -> None:
    git(repo, "config", "core.fsmonitor", str(program(tmp_path / "fsmonitor", marker)))
    (repo / "a.txt").write_text("two\n")
    g.run(gitpython.Repo(repo), "add", "--", "a.txt")  # the index refresh asks a monitor
    repository_root(repo)
    assert not marker.exists()


def test_no_hooks_in_the_persons_repository(repo: Path, marker: Path) -> None:
    program(repo / ".git" / "hooks" / "reference-transaction", marker)
    head = git(repo, "rev-parse", "HEAD").strip()
    assert g.create_ref(gitpython.Repo(repo), "refs/heads/skillopt/x", head, "test")
    assert not marker.exists()


def test_no_hooks_from_the_persons_global_configuration_in_a_replay_checkout(repo: Path, marker: Path,
                                                                            tmp_path: Path, monkeypatch) -> None:
    hooks = tmp_path / "global-hooks"
    for name in ("post-checkout", "reference-transaction", "post-index-change"):
        program(hooks / name, marker)
    config = tmp_path / "gitconfig"
    config.write_text(f"[core]\n\thooksPath = {hooks}\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    with replay_checkout(repo) as work:
        assert (work / "a.txt").read_text() == "one\n"
    assert not marker.exists()


def test_the_persons_own_commit_keeps_their_hooks(repo: Path, marker: Path) -> None:
    """``adopt --commit`` commits for the person: their pre-commit hook runs, as with their own commit."""
    program(repo / ".git" / "hooks" / "pre-commit", marker)
    (repo / "a.txt").write_text("two\n")
    repo_ = gitpython.Repo(repo)
    g.run(repo_, "add", "--", "a.txt")
    g.run(repo_, "commit", "-q", "-m", "x", identity=True)
    assert marker.read_text() == "pre-commit\n"


def test_no_external_diff(repo: Path, marker: Path, tmp_path: Path, monkeypatch) -> None:
    git(repo, "config", "diff.external", str(program(tmp_path / "external", marker)))
    (repo / "a.txt").write_text("two\n")
    out = str(g.run(gitpython.Repo(repo), "diff", "HEAD"))
    assert "+two" in out and not marker.exists()


def test_no_textconv(repo: Path, marker: Path, tmp_path: Path) -> None:
    (repo / ".gitattributes").write_text("*.txt diff=x\n")
    git(repo, "config", "diff.x.textconv", str(program(tmp_path / "textconv", marker)))
    (repo / "a.txt").write_text("two\n")
    out = str(g.run(gitpython.Repo(repo), "diff", "HEAD", "--", "a.txt"))
    assert "+two" in out and not marker.exists()


def test_no_pager(repo: Path, marker: Path, tmp_path: Path) -> None:
    """git pages only to a terminal: run under a pseudo-terminal with the repository's pager set."""
    import pty

    git(repo, "config", "core.pager", str(program(tmp_path / "pager", marker)))
    pid, fd = pty.fork()
    if pid == 0:  # the child: the same call as the product makes, its stdout a terminal
        os.chdir(repo)
        os.execvpe("git", gitsafe.git_argv("log", "-1"), gitsafe.protective_env({**os.environ, "PAGER": "less"}))
    while True:
        try:
            if not os.read(fd, 4096):
                break
        except OSError:
            break
    os.waitpid(pid, 0)
    assert not marker.exists()


def test_the_settings_and_environment(monkeypatch) -> None:
    monkeypatch.setenv("GIT_EXTERNAL_DIFF", "/bin/evil")
    monkeypatch.setenv("GIT_DIR", "/elsewhere")
    env = gitsafe.protective_env()
    assert "GIT_EXTERNAL_DIFF" not in env and "GIT_DIR" not in env
    assert (env["GIT_PAGER"], env["PAGER"], env["GIT_TERMINAL_PROMPT"]) == ("cat", "cat", "0")
    args = gitsafe.git_argv("status")
    assert args[0] == "git" and args[-1] == "status"
    assert {args[i + 1] for i in range(1, len(args) - 1, 2)} == {
        "core.fsmonitor=false", f"core.hooksPath={os.devnull}", "diff.external=", "core.pager=cat"}
