"""A read-only or unwritable data directory, a damaged index and a full disk: every command
says what happened, which file and what to do in one line, exits 2, and loses nothing.

Read-only: the data directory is bind-mounted read-only with bubblewrap when the tests run as
root (root ignores file modes), else its modes are taken away. Full disk: SQLite's own page
limit (``PRAGMA max_page_count``) everywhere, and, as root, a real 2-8 MB tmpfs that is filled.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest
import yaml
from cycle_testutil import rules
from proposal_testutil import CANDIDATE, NIGHT, SKILL, cli, make_repo, report, write
from sleep_builders import claude_basic_session, claude_session_path, write_jsonl
from sleep_testutil import Homes

import sleep.index
from sleep.cli import main
from sleep.cycle.demo import install_transcripts, make_project
from sleep.index import Index
from sleep.proposals import stage

ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


def _rules(beside: Path) -> Path:
    """An empty scripted rules file (a night without one exits 2 before it touches the data folder)."""
    path = beside.parent / "rules.yaml"
    path.write_text("rules: []\n")
    return path


def _commands(repo: Path, pid: str, candidate: Path) -> list[list[str]]:
    return [["harvest", "--all-projects"], ["sessions"], ["mine", "--all-projects"], ["tasks"],
            ["propose", "--skill", str(repo / SKILL), "--candidate", str(candidate)], ["review"], ["show", pid],
            ["adopt", pid], ["reject", pid],
            ["run", "--project", str(repo), "--backend", "scripted", "--set", f"model.scripted={_rules(candidate)}"],
            ["history"], ["status"], ["schedule", "--project", str(repo), "--at", "03:00", "--mode", "daemon"],
            ["unschedule", "--project", str(repo)]]


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _one_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


@pytest.fixture
def data_with_a_proposal(homes: Homes, tmp_path: Path):
    repo = make_repo(tmp_path / "app")
    p = stage(repo / SKILL, CANDIDATE, report(), night=NIGHT)
    write_jsonl(claude_session_path(homes.claude, str(repo), "s-1"), claude_basic_session("s-1", str(repo)))
    assert main(["harvest", "--all-projects"]) == 0
    return repo, p.id, write(tmp_path / "candidate.md", CANDIDATE + "- more\n")


def test_every_command_on_a_read_only_data_dir_says_so_in_one_line(homes: Homes, data_with_a_proposal) -> None:
    repo, pid, candidate = data_with_a_proposal
    data = homes.skillopt
    before = _tree(data)
    if ROOT:
        if shutil.which("bwrap") is None:
            pytest.skip("bubblewrap is needed to make a folder read-only for root")
        prefix: tuple[str, ...] = ("bwrap", "--dev-bind", "/", "/", "--ro-bind", str(data), str(data))
    else:
        prefix = ()
        for p in [data, *data.rglob("*")]:
            p.chmod(0o500 if p.is_dir() else 0o400)
    try:
        for args in _commands(repo, pid, candidate):
            out = cli(*args, prefix=prefix)
            line = _one_line(out.stderr)
            assert out.returncode == 2, (args, out.stderr)
            assert str(data) in line and "SKILLOPT_HOME" in line, (args, line)
    finally:
        for p in [data, *data.rglob("*")]:
            p.chmod(0o700 if p.is_dir() else 0o600)
    assert _tree(data) == before


def test_a_data_dir_that_cannot_be_created_is_one_line_that_says_what_to_do(homes: Homes, tmp_path: Path) -> None:
    nowhere = Path("/proc/skillopt-cannot-be-here")  # /proc takes no new folders, even from root
    for args in (["review"], ["harvest", "--all-projects"], ["run", "--project", str(tmp_path)],
                 ["schedule", "--project", str(tmp_path), "--at", "03:00", "--mode", "daemon"]):
        out = cli(*args, home=nowhere)
        line = _one_line(out.stderr)
        assert out.returncode == 2 and str(nowhere) in line and "SKILLOPT_HOME" in line, (args, line)


@pytest.mark.parametrize("damage", ["not a database", "truncated"])
def test_a_damaged_index_is_one_line_for_every_command_and_left_as_it_was(homes: Homes, data_with_a_proposal,
                                                                          damage: str) -> None:
    repo, pid, candidate = data_with_a_proposal
    if damage == "not a database":
        homes.index.write_bytes(os.urandom(8192))
    else:
        os.truncate(homes.index, homes.index.stat().st_size // 3)
    before = homes.index.read_bytes()
    for args in _commands(repo, pid, candidate):
        out = cli(*args)
        line = _one_line(out.stderr)
        assert out.returncode == 2 and "damaged" in line and f"mv {homes.index}" in line, (args, line)
    assert homes.index.read_bytes() == before


def test_a_full_index_during_a_harvest_says_full_and_keeps_what_was_stored(homes: Homes, tmp_path: Path,
                                                                           monkeypatch, capsys) -> None:
    write_jsonl(claude_session_path(homes.claude, "/work/app", "s-1"), claude_basic_session("s-1", "/work/app"))
    assert main(["harvest", "--all-projects"]) == 0
    for n in range(2, 60):  # more than the pages left
        write_jsonl(claude_session_path(homes.claude, "/work/app", f"s-{n}"), claude_basic_session(f"s-{n}", "/work/app"))
    real = sqlite3.connect

    def no_room(*args, **kwargs):  # the disk is full: the file may not grow by one page
        conn = real(*args, **kwargs)
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        conn.execute(f"PRAGMA max_page_count = {max(pages, 1)}")
        return conn

    monkeypatch.setattr(sleep.index.sqlite3, "connect", no_room)
    capsys.readouterr()
    assert main(["harvest", "--all-projects"]) == 2
    line = _one_line(capsys.readouterr().err)
    assert "is full" in line and str(homes.index) in line and "cannot rollback" not in line
    monkeypatch.setattr(sleep.index.sqlite3, "connect", real)
    with Index.open() as index:
        assert index.session_count() == 1 and index.get_session("claude-code", "s-1") is not None


# ----- a real full disk (root: a small tmpfs) --------------------------------------------

@pytest.fixture
def small_disk(tmp_path: Path, monkeypatch):
    """A tmpfs of 8 MB as SKILLOPT_HOME (root only); ``fill(left_kb)`` leaves that much free."""
    if not ROOT or shutil.which("mount") is None:
        pytest.skip("mounting a small tmpfs needs root")
    where = tmp_path / "small-disk"
    where.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(where)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    monkeypatch.setenv("SKILLOPT_HOME", str(where / "data"))

    def fill(left_kb: int) -> None:
        free = shutil.disk_usage(where).free - left_kb * 1024
        with open(where / "filler", "wb") as fh:
            fh.write(b"\0" * max(0, free))

    try:
        yield where, fill
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def test_a_harvest_on_a_real_full_disk_is_one_line_and_keeps_what_was_stored(homes: Homes, small_disk) -> None:
    where, fill = small_disk
    write_jsonl(claude_session_path(homes.claude, "/work/app", "s-1"), claude_basic_session("s-1", "/work/app"))
    assert cli("harvest", "--all-projects").returncode == 0
    for n in range(2, 400):
        write_jsonl(claude_session_path(homes.claude, "/work/app", f"s-{n}"), claude_basic_session(f"s-{n}", "/work/app"))
    fill(left_kb=100)
    out = cli("harvest", "--all-projects")
    line = _one_line(out.stderr)
    assert out.returncode == 2 and "full" in line and "cannot rollback" not in line
    (where / "filler").unlink()
    with Index.open() as index:
        assert index.get_session("claude-code", "s-1") is not None


def test_a_night_on_a_full_disk_is_one_line_and_keeps_the_index(homes: Homes, small_disk, tmp_path: Path) -> None:
    where, fill = small_disk
    project = make_project(tmp_path / "tiny-ledger")
    install_transcripts(homes.home, project)
    assert cli("harvest", "--project", str(project)).returncode == 0
    assert cli("mine", "--project", str(project)).returncode == 0
    script = write(tmp_path / "rules.yaml", yaml.safe_dump(rules()))
    fill(left_kb=200)
    out = cli("run", "--project", str(project), "--backend", "scripted", "--set", f"model.scripted={script}",
              "--skill", str(project / ".claude/skills/ledger-dev/SKILL.md"))
    line = _one_line(out.stderr)
    assert out.returncode == 2 and "full" in line and str(where / "data") in line, line
    (where / "filler").unlink()
    history = cli("history", "--json", "--project", str(project))
    assert history.returncode == 0
    (night,) = json.loads(history.stdout)
    assert night["outcome"] in ("failed", "interrupted") and night["stage"] in ("harvest", "mine", "tasks", "replay")
    with Index.open() as index:
        assert index.session_count() > 0


def test_opening_a_new_index_waits_for_another_process_creating_it(tmp_path: Path) -> None:
    """Two commands creating the index at once (two `propose` started together): SQLite answers the
    second one's switch to WAL ``database is locked`` at once, not after its busy timeout, while the
    first holds the new file's write lock. The open waits for it instead of refusing."""
    import threading
    import time

    path = tmp_path / "index.db"
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")  # the other process, midway through creating the index
    other.execute("CREATE TABLE being_created (x)")
    done = threading.Timer(0.5, lambda: other.execute("COMMIT"))
    done.start()
    started = time.monotonic()
    try:
        with Index.open(path) as index:
            assert index.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
            assert index.conn.execute("SELECT COUNT(*) FROM proposals").fetchone()[0] == 0
    finally:
        done.join()
        other.close()
    assert time.monotonic() - started >= 0.4  # it waited for the other one's commit
