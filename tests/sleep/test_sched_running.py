"""The scheduler ``auto`` picks must be running (issue 23 §3): a ``crontab`` binary
without a cron daemon is not a schedule; ``--print --mode systemd`` shows the unit even
where no user manager runs; the refusal reads as two lines."""

from __future__ import annotations

from pathlib import Path

import pytest
from sched_testutil import fake_tools

from sleep.cli import main
from sleep.scheduler import api


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    p = tmp_path / "app"
    p.mkdir()
    monkeypatch.chdir(p)
    return p


def test_auto_skips_a_crontab_without_a_running_cron_daemon(tmp_path: Path, monkeypatch, project: Path) -> None:
    fake_tools(tmp_path, monkeypatch, cron=True, cron_daemon=False)
    p = api.plan(project)
    assert p.schedule.mode == "daemon"
    assert "no cron daemon is running" in p.notes[0]


def test_auto_picks_cron_when_its_daemon_runs(tmp_path: Path, monkeypatch, project: Path) -> None:
    fake_tools(tmp_path, monkeypatch, cron=True, cron_daemon=True)
    assert api.plan(project).schedule.mode == "cron"


def test_an_explicit_cron_schedule_without_a_daemon_says_it_will_not_fire(tmp_path: Path, monkeypatch,
                                                                           project: Path, capsys) -> None:
    fake_tools(tmp_path, monkeypatch, cron=True, cron_daemon=False)
    assert main(["schedule", "--mode", "cron"]) == 0
    assert "no cron daemon is running" in capsys.readouterr().out
    assert main(["status"]) == 0
    out = capsys.readouterr().out
    assert "nightly at 03:17 (cron)" in out and "WARNING:    `crontab` exists but no cron daemon" in out


def test_print_mode_systemd_shows_the_unit_without_a_user_manager(tmp_path: Path, monkeypatch, project: Path,
                                                                  capsys) -> None:
    fakes = fake_tools(tmp_path, monkeypatch, cron=False, systemd=True)
    monkeypatch.setenv("FAKE_SYSTEMD_DOWN", "1")
    assert main(["schedule", "--print", "--mode", "systemd"]) == 0
    out = capsys.readouterr().out
    assert "[Timer]" in out and "OnCalendar=" in out and "not usable on this machine" in out
    assert not fakes.units.exists()


def test_the_systemd_refusal_is_one_line_ending_in_a_full_stop_and_points_to_print(
        tmp_path: Path, monkeypatch, project: Path, capsys) -> None:
    fake_tools(tmp_path, monkeypatch, cron=False, systemd=True)
    monkeypatch.setenv("FAKE_SYSTEMD_DOWN", "1")
    assert main(["schedule", "--mode", "systemd"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.endswith("shows the entry anyway.\n")
    assert "no systemd user manager is running" in err and "--print --mode systemd" in err


def test_a_subfolder_of_a_repository_schedules_the_repository(tmp_path: Path, monkeypatch) -> None:
    import subprocess

    fake_tools(tmp_path, monkeypatch, cron=True)
    repo = tmp_path / "ledgerline-api"
    (repo / "app").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    assert api.plan(repo / "app").schedule.project == str(repo.resolve())
