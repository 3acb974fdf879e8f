"""The commands a person types: schedule → status → unschedule, --print, the container
message, status with nights and proposals, bad input as one line and exit 2, and the
SessionEnd hook that never fails."""

from __future__ import annotations

import io
import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from proposal_testutil import CANDIDATE, SKILL, make_repo, report
from sched_testutil import Fakes, fake_tools
from sleep_testutil import Homes

from sleep import paths
from sleep.cli import main
from sleep.index import Index
from sleep.scheduler import hook


@pytest.fixture
def fakes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Fakes:
    return fake_tools(tmp_path, monkeypatch, cron=True)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    p = tmp_path / "app"
    p.mkdir()
    monkeypatch.chdir(p)
    return p


def cli(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_schedule_then_status_shows_the_next_night_and_unschedule_restores(fakes: Fakes, project: Path,
                                                                          capsys) -> None:
    code, out, _ = cli(capsys, "schedule")
    assert code == 0 and out.startswith(f"Scheduled {project}: nightly at 03:17 (cron).")
    code, out, _ = cli(capsys, "status")
    assert code == 0
    assert f"{project}\n  schedule:   nightly at 03:17 (cron)\n  next night: " in out
    assert "  last night: no nights yet\n  proposals:  0 pending\n" in out
    assert "daemon:  not running" in out
    data = json.loads(cli(capsys, "status", "--json")[1])
    (p,) = data["projects"]
    assert p["schedule"] == {"mode": "cron", "at": "03:17", "jitter_s": 0, "installed": True,
                             "since": p["schedule"]["since"], "not_firing": None}
    assert p["next_run"][11:16] == "03:17" and p["last_night_note"] == "no nights yet"
    code, out, _ = cli(capsys, "unschedule")
    assert code == 0 and "- removed the cron entry; your crontab had not existed before, so it was removed" in out
    assert not fakes.crontab.exists()


def test_status_warns_when_the_os_entry_went_missing(fakes: Fakes, project: Path, capsys) -> None:
    cli(capsys, "schedule", "--at", "1:05")
    fakes.crontab.unlink()  # someone ran `crontab -r`
    out = cli(capsys, "status")[1]
    assert "  schedule:   nightly at 01:05 (cron)\n  WARNING:    the cron entry is missing; run `skillopt-sleep " \
           "schedule` again" in out


def test_print_shows_the_entry_and_changes_nothing(fakes: Fakes, project: Path, capsys) -> None:
    code, out, _ = cli(capsys, "schedule", "--print", "--at", "02:30")
    assert code == 0
    assert out.startswith(f"Would schedule {project}: nightly at 02:30 (cron). Nothing was changed.\n"
                          "--- crontab (between the skillopt-sleep markers) ---\n")
    assert "30 2 * * * " in out and f"'--project' '{project}'" in out
    assert not fakes.crontab.exists() and not paths.index_path().exists()


def test_in_a_container_schedule_says_so_and_suggests_the_daemon(tmp_path: Path, monkeypatch, project: Path,
                                                                 capsys) -> None:
    fake_tools(tmp_path, monkeypatch, cron=False)
    code, out, _ = cli(capsys, "schedule")
    assert code == 0 and out.startswith(f"Scheduled {project}: nightly at 03:17 (daemon).")
    assert "note: no cron, systemd or launchd is usable on this machine (a container?)" in out
    assert "nights run only while `skillopt-sleep daemon` runs, so keep it running under a process supervisor" in out
    status = cli(capsys, "status")[1]
    assert "(only if `skillopt-sleep daemon` is running: it is not)" in status


@pytest.mark.parametrize("args,message", [
    (["schedule", "--at", "25:00"], "--at '25:00': give a local time as HH:MM, 00:00 to 23:59 (e.g. 03:17)"),
    (["schedule", "--project", "/nonexistent/x"], "/nonexistent/x is not a directory; pass --project"),
    (["schedule", "--mode", "systemd"], "--mode systemd is not usable here: no `systemctl` command on PATH"),
])
def test_bad_input_is_one_line_and_exit_2(fakes: Fakes, project: Path, capsys, args, message) -> None:
    code, out, err = cli(capsys, *args)
    assert code == 2 and out == "" and err.startswith("skillopt-sleep: " + message) and err.count("\n") == 1
    assert "Traceback" not in err


def test_status_reads_the_last_night_and_pending_proposals(fakes: Fakes, tmp_path: Path, capsys,
                                                           monkeypatch) -> None:
    from sleep.proposals import stage

    repo = make_repo(tmp_path / "repo")
    monkeypatch.chdir(repo)
    proposal = stage(repo / SKILL, CANDIDATE, report())
    with Index.open() as index:
        index.conn.execute("INSERT INTO cycles (id, project, started_at, finished_at, stage, outcome, reason,"
                           " proposal_id) VALUES (?,?,?,?,?,?,?,?)",
                           ("n20250101-031700-abc", str(repo), "2025-01-01T03:17:00.000Z", "2025-01-01T03:40:00.000Z",
                            "stage", "staged", f"staged as branch {proposal.branch}", proposal.id))
    data = json.loads(cli(capsys, "status", "--json")[1])
    (p,) = data["projects"]
    assert p["last_night"] == {"id": "n20250101-031700-abc", "project": str(repo),
                               "started_at": "2025-01-01T03:17:00.000Z", "finished_at": "2025-01-01T03:40:00.000Z",
                               "outcome": "staged", "reason": f"staged as branch {proposal.branch}",
                               "proposal_id": proposal.id}
    assert p["proposals"] == {"pending": 1, "stale": 0, "note": ""}
    out = cli(capsys, "status")[1]
    assert f"  last night: 2025-01-01 03:17 UTC, staged, proposal {proposal.id}\n" in out
    assert "  proposals:  1 pending (`skillopt-sleep review`)" in out


def test_status_before_anything_exists(project: Path, capsys) -> None:
    data = json.loads(cli(capsys, "status", "--json")[1])
    assert data["projects"][0]["last_night_note"] == "no nights yet"
    assert data["daemon"]["running"] is False and data["watcher"]["running"] is False
    assert not paths.index_path().exists()  # status writes nothing


# ----- the SessionEnd hook ------------------------------------------------------------------

HOOK = {"session_id": "s1", "transcript_path": "/home/me/.claude/projects/-w/s1.jsonl", "cwd": "/w",
        "hook_event_name": "SessionEnd", "reason": "exit"}


def run_hook(text: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sleep.cli", "hook", "session-end"], input=text,
                          capture_output=True, text=True, timeout=60)


def test_the_hook_notes_the_transcript(homes: Homes) -> None:
    Index.open().close()  # the index exists (a first harvest made it); without one the note is spooled
    proc = run_hook(json.dumps(HOOK))
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    with Index.open() as index:
        rows = index.conn.execute("SELECT path, host, version, source FROM noted_files").fetchall()
    assert rows == [(HOOK["transcript_path"], "claude-code", 1, "hook")]


@pytest.mark.parametrize("text,why", [
    ("not json", "ignored: not JSON"),
    ("[1, 2]", "ignored: not a JSON object (list)"),
    (json.dumps({"session_id": "s1"}), "ignored: no transcript_path"),
    (json.dumps({"transcript_path": "relative/s1.jsonl"}), "ignored: transcript_path is not an absolute path"),
    ("", "ignored: not JSON"),
])
def test_the_hook_never_fails_and_logs_what_it_could_not_use(homes: Homes, text: str, why: str) -> None:
    proc = run_hook(text)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    assert why in (paths.data_dir() / "logs" / "hook.log").read_text()


def test_a_busy_index_spools_the_note_and_the_next_harvest_reads_it(homes: Homes) -> None:
    with Index.open():
        pass
    blocker = sqlite3.connect(str(paths.index_path()), isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")  # a harvest is writing
    try:
        assert hook.session_end(io.StringIO(json.dumps(HOOK))) == 0
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    spool = paths.data_dir() / hook.SPOOL
    assert json.loads(spool.read_text())["path"] == HOOK["transcript_path"]
    from sleep_testutil import run

    run()
    assert not spool.exists()
    with Index.open() as index:  # the harvest took the note in (no such file: consumed)
        assert index.conn.execute("SELECT COUNT(*) FROM noted_files").fetchone()[0] == 0


def test_the_hook_run_by_hand_says_what_it_is_for(monkeypatch, capsys) -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert hook.session_end(Tty()) == 0
    assert "reads a Claude Code SessionEnd hook's JSON on stdin" in capsys.readouterr().err
