"""Issue 19 §1: the data dir holds what transcripts said and what models replied, so only
its owner may read it: created 0700, its files 0600, even under a umask of 022, and a
looser one found later is tightened when the index is opened."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
import sleep_builders as b
from sleep_testutil import Homes, run

from sleep import paths
from sleep.cycle.demo import install_transcripts, make_project
from sleep.cycle.night import run_night
from sleep.index import Index

CWD = "/work/app"


@pytest.fixture(autouse=True)
def umask_022():
    old = os.umask(0o022)
    yield
    os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_fresh_data_dir_is_0700_and_its_files_0600(homes: Homes) -> None:
    b.write_jsonl(b.claude_session_path(homes.claude, CWD, "m"), [
        b.claude_user("mysql -u deploy -pQx7vR2mLk9Zt4Wn ledger", sid="m", cwd=CWD, t=0)])
    run()
    with Index.open() as index:
        index.conn.execute("SELECT COUNT(*) FROM sessions").fetchone()
        files = {p.name: mode(p) for p in homes.skillopt.iterdir() if p.is_file()}
    assert mode(homes.skillopt) == 0o700
    assert {"sleep.sqlite3", "sleep.sqlite3-wal", "sleep.sqlite3-shm", "harvest.lock", paths.SECRET_KEY_FILE} <= set(files)
    assert files == {name: 0o600 for name in files}


def test_a_looser_data_dir_and_index_are_tightened_when_opened(homes: Homes) -> None:
    homes.skillopt.mkdir(mode=0o755)
    Index.open().close()
    for p in (homes.skillopt, homes.index, homes.skillopt / paths.SECRET_KEY_FILE):
        if p == homes.skillopt / paths.SECRET_KEY_FILE:
            p.write_bytes(b"k" * 32)
        p.chmod(0o755 if p.is_dir() else 0o644)
    with Index.open():
        assert mode(homes.skillopt) == 0o700
        assert mode(homes.index) == 0o600 and mode(homes.skillopt / paths.SECRET_KEY_FILE) == 0o600
        assert mode(Path(f"{homes.index}-wal")) == 0o600


def test_an_index_opened_by_path_leaves_the_persons_folder_as_it_is(tmp_path: Path) -> None:
    folder = tmp_path / "my-project"
    folder.mkdir(mode=0o755)
    Index.open(folder / "copy.sqlite3").close()
    assert mode(folder) == 0o755 and mode(folder / "copy.sqlite3") == 0o600


def test_every_file_of_a_night_run_is_0600_and_every_folder_0700(homes: Homes, tmp_path: Path) -> None:
    from test_cycle_night import options

    project = make_project(tmp_path / "tiny-ledger")
    install_transcripts(homes.home, project)
    night = run_night(options(project, tmp_path), say=lambda _: None)
    assert night.outcome == "staged", night.reason
    run_dir = Path(night.run_dir)
    assert (run_dir / "evidence.jsonl").is_file() and (run_dir / "events.jsonl").is_file()
    loose = [f"{oct(mode(p))} {p}" for p in homes.skillopt.rglob("*")
             if not p.is_symlink() and ".git" not in p.relative_to(homes.skillopt).parts
             and mode(p) != (0o700 if p.is_dir() else 0o600)]
    assert loose == []


def test_the_skills_repository_in_the_data_dir_is_owner_only(homes: Homes) -> None:
    from proposal_testutil import CANDIDATE, SKILL_TEXT, write

    from sleep.proposals import stage
    from sleep.proposals.locate import skills_repo_dir

    skill = write(homes.claude / "skills" / "tests" / "SKILL.md", SKILL_TEXT)
    stage(skill, CANDIDATE)
    repo = skills_repo_dir()
    assert any(p.is_file() for p in (repo / "objects").rglob("*"))
    shared = [f"{oct(mode(p))} {p}" for p in [repo, *repo.rglob("*")] if mode(p) & 0o077]
    assert shared == []
