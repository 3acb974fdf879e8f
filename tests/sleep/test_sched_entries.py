"""schedule / unschedule against a fake crontab, temporary systemd unit and launchd
folders: idempotent (twice is one entry), removing only ours, and leaving the
crontab and the folders byte for byte as they were. ``--print`` changes nothing."""

from __future__ import annotations

import plistlib
from pathlib import Path

import pytest
from sched_testutil import Fakes, fake_tools, tree

from sleep.scheduler import api
from sleep.scheduler.entries import cron
from sleep.scheduler.model import ModeUnavailable, ScheduleError, project_key

OTHER_LINES = ("# my own jobs\nMAILTO=me@example.com\n*/5 * * * * /usr/bin/backup --quiet 50%\n"
               "0 9 * * 1 echo 'monday' >> /tmp/log\n")


@pytest.fixture
def fakes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Fakes:
    return fake_tools(tmp_path, monkeypatch, cron=True, systemd=True, launchd=True)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    p = tmp_path / "code" / "my api"
    p.mkdir(parents=True)
    return p


# ----- cron -------------------------------------------------------------------------------

def test_cron_schedule_twice_is_one_entry_and_keeps_the_other_lines(fakes: Fakes, project: Path) -> None:
    fakes.crontab.write_text(OTHER_LINES)
    api.schedule(project, "02:30", "cron")
    first = fakes.crontab.read_text()
    again = api.schedule(project, "02:30", "cron")
    assert fakes.crontab.read_text() == first
    assert again.changes == [f"kept the nightly run at 02:30 for {project} in your crontab (already as requested)"]
    assert first.startswith(OTHER_LINES)
    tab = cron.parse(first)
    assert tab.keys() == [project_key(str(project))] and tab.before == OTHER_LINES and tab.after == ""
    assert sum(1 for ln in first.splitlines() if ln.startswith("30 2 * * * ")) == 1


def test_cron_new_time_replaces_the_line_in_place(fakes: Fakes, project: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    api.schedule(project, "02:30", "cron")
    api.schedule(other, "04:00", "cron")
    api.schedule(project, "01:05", "cron")
    lines = [ln for ln in fakes.crontab.read_text().splitlines() if not ln.startswith("#")]
    assert [ln.split(" ", 2)[:2] for ln in lines] == [["5", "1"], ["0", "4"]]
    assert str(project) in lines[0] and str(other) in lines[1]


@pytest.mark.parametrize("before", [None, "", OTHER_LINES, "0 1 * * * /bin/true"],
                         ids=["no-crontab", "empty", "other-lines", "no-final-newline"])
def test_cron_unschedule_restores_the_crontab_byte_for_byte(fakes: Fakes, project: Path, before: str | None) -> None:
    if before is not None:
        fakes.crontab.write_bytes(before.encode())
    api.schedule(project, "03:17", "cron")
    assert cron.parse(fakes.crontab.read_text()).keys()
    out = api.unschedule(project)
    if before is None:
        assert not fakes.crontab.exists()
        assert fakes.crontab_calls()[-1] == "-r"
    else:
        assert fakes.crontab.read_bytes() == before.encode()
    assert out.removed == [str(project)]


def test_cron_unschedule_keeps_lines_added_after_our_block(fakes: Fakes, project: Path) -> None:
    fakes.crontab.write_text(OTHER_LINES)
    api.schedule(project, "03:17", "cron")
    fakes.crontab.write_text(fakes.crontab.read_text() + "15 4 * * * /usr/bin/later\n")
    api.unschedule(project)
    assert fakes.crontab.read_text() == OTHER_LINES + "15 4 * * * /usr/bin/later\n"


def test_cron_refuses_a_non_posix_shell_and_changes_nothing(fakes: Fakes, project: Path) -> None:
    fakes.crontab.write_text("SHELL=/usr/bin/fish\n" + OTHER_LINES)
    with pytest.raises(ScheduleError, match="SHELL=/usr/bin/fish, which is not a POSIX shell"):
        api.schedule(project, "03:17", "cron")
    assert fakes.crontab.read_text() == "SHELL=/usr/bin/fish\n" + OTHER_LINES
    assert api.list_schedules() == []


def test_cron_broken_markers_are_reported_not_guessed(fakes: Fakes, project: Path) -> None:
    fakes.crontab.write_text(OTHER_LINES + cron.BEGIN + " >>>\n30 2 * * * something\n")
    with pytest.raises(ScheduleError, match="marker lines are broken"):
        api.schedule(project, "03:17", "cron")
    assert fakes.crontab.read_text().startswith(OTHER_LINES)


def test_cron_unschedule_all_removes_an_entry_whose_record_is_gone(fakes: Fakes, project: Path) -> None:
    fakes.crontab.write_text(OTHER_LINES)
    api.schedule(project, "03:17", "cron")
    from sleep import paths

    paths.index_path().unlink()  # the index was wiped; the crontab still has our line
    out = api.unschedule(everything=True)
    assert fakes.crontab.read_text() == OTHER_LINES
    assert out.changes == ["removed the cron entry (the rest of your crontab is unchanged)"]


# ----- systemd ----------------------------------------------------------------------------

def test_systemd_writes_a_service_and_timer_and_enables_the_timer(fakes: Fakes, project: Path) -> None:
    out = api.schedule(project, "02:30", "systemd")
    key = project_key(str(project))
    timer = (fakes.units / f"skillopt-sleep-{key}.timer").read_text()
    service = (fakes.units / f"skillopt-sleep-{key}.service").read_text()
    assert "OnCalendar=*-*-* 02:30:00" in timer and "Persistent=true" in timer and "AccuracySec=1s" in timer
    assert "Type=oneshot" in service and "SuccessExitStatus=3" in service
    assert (fakes.units / "timers.target.wants" / f"skillopt-sleep-{key}.timer").is_symlink()
    assert fakes.tool_calls()[-2:] == ["systemctl --user daemon-reload",
                                       f"systemctl --user enable --now skillopt-sleep-{key}.timer"]
    assert out.schedule is not None and out.schedule.mode == "systemd"


@pytest.mark.parametrize("existed", [False, True], ids=["no-unit-folder", "unit-folder-with-other-units"])
def test_systemd_unschedule_leaves_the_unit_folder_byte_for_byte(fakes: Fakes, project: Path,
                                                                 existed: bool) -> None:
    if existed:
        (fakes.units / "timers.target.wants").mkdir(parents=True)
        (fakes.units / "mine.service").write_text("[Service]\nExecStart=/bin/true\n")
        (fakes.units / "timers.target.wants" / "mine.timer").symlink_to("../mine.timer")
    config = fakes.units.parent.parent
    before = (config.exists(), tree(config))
    api.schedule(project, "03:17", "systemd")
    assert (fakes.units / "timers.target.wants").is_dir()
    api.schedule(project, "03:18", "systemd")
    api.unschedule(project)
    assert (config.exists(), tree(config)) == before


def test_systemd_never_overwrites_a_unit_it_did_not_write(fakes: Fakes, project: Path) -> None:
    key = project_key(str(project))
    fakes.units.mkdir(parents=True)
    (fakes.units / f"skillopt-sleep-{key}.timer").write_text("[Timer]\nOnCalendar=daily\n")
    with pytest.raises(ScheduleError, match="was not written by skillopt-sleep"):
        api.schedule(project, "03:17", "systemd")
    assert (fakes.units / f"skillopt-sleep-{key}.timer").read_text() == "[Timer]\nOnCalendar=daily\n"


def test_systemd_mode_without_a_user_manager_is_refused(fakes: Fakes, project: Path, monkeypatch) -> None:
    monkeypatch.setenv("FAKE_SYSTEMD_DOWN", "1")
    with pytest.raises(ModeUnavailable, match="--mode systemd is not usable here: no systemd user manager"):
        api.schedule(project, "03:17", "systemd")
    assert not fakes.units.exists()


# ----- launchd ----------------------------------------------------------------------------

def test_launchd_writes_a_plist_loads_it_and_unschedule_restores_the_folder(fakes: Fakes, project: Path) -> None:
    library = fakes.agents.parent
    before = (library.exists(), tree(library))
    api.schedule(project, "02:30", "launchd")
    key = project_key(str(project))
    plist = plistlib.loads((fakes.agents / f"com.skillopt.sleep.{key}.plist").read_bytes())
    assert plist["StartCalendarInterval"] == {"Hour": 2, "Minute": 30}
    assert plist["ProgramArguments"][1:] == ["run", "--project", str(project)]
    assert fakes.launchd_state.read_text() == f'["com.skillopt.sleep.{key}"]'
    api.schedule(project, "02:30", "launchd")  # reloads, still one agent
    assert fakes.launchd_state.read_text() == f'["com.skillopt.sleep.{key}"]'
    api.unschedule(project)
    assert fakes.launchd_state.read_text() == "[]"
    assert (library.exists(), tree(library)) == before


# ----- modes ------------------------------------------------------------------------------

def test_changing_mode_removes_the_old_entry(fakes: Fakes, project: Path) -> None:
    fakes.crontab.write_text(OTHER_LINES)
    api.schedule(project, "03:17", "cron")
    out = api.schedule(project, "03:17", "systemd")
    assert fakes.crontab.read_text() == OTHER_LINES
    assert out.changes[0] == "removed the cron entry (the rest of your crontab is unchanged)"
    assert [s.mode for s in api.list_schedules()] == ["systemd"]


def test_auto_picks_the_systemd_user_manager_then_cron(fakes: Fakes, project: Path, monkeypatch) -> None:
    assert api.plan(project).schedule.mode == "systemd"
    monkeypatch.setenv("FAKE_SYSTEMD_DOWN", "1")
    assert api.plan(project).schedule.mode == "cron"


def test_without_cron_systemd_or_launchd_the_schedule_goes_to_the_daemon(tmp_path: Path, monkeypatch,
                                                                         project: Path) -> None:
    fake_tools(tmp_path, monkeypatch, cron=False, systemd=False, launchd=False)
    out = api.schedule(project)
    assert out.schedule is not None and (out.schedule.mode, out.schedule.at) == ("daemon", "03:17")
    assert out.notes[0].startswith("no cron, systemd or launchd is usable on this machine (a container?): ")
    assert "keep it running under a process supervisor" in out.notes[0]
    assert "cron: no `crontab` command on PATH" in out.notes[0]


def test_print_changes_nothing(fakes: Fakes, project: Path) -> None:
    fakes.crontab.write_text(OTHER_LINES)
    before = tree(fakes.crontab.parent)
    for mode in ("cron", "systemd", "launchd", "daemon"):
        p = api.plan(project, "02:30", mode)
        assert p.schedule.mode == mode
    assert tree(fakes.crontab.parent) == before | {"tools.log": fakes.tool_log.read_bytes()}
    assert all("show-environment" in c for c in fakes.tool_calls())  # probes only
    assert api.list_schedules() == []


def test_print_shows_the_cron_line_that_schedule_installs(fakes: Fakes, project: Path) -> None:
    shown = api.plan(project, "02:30", "cron").rendered
    api.schedule(project, "02:30", "cron")
    assert shown is not None
    assert list(shown.files.values())[0] in fakes.crontab.read_text()


def test_a_missing_project_folder_is_refused(fakes: Fakes, tmp_path: Path) -> None:
    with pytest.raises(ScheduleError, match="is not a directory; pass --project with the folder you work in"):
        api.schedule(tmp_path / "nope", "03:17", "cron")


def test_unschedule_of_nothing_changes_nothing(fakes: Fakes, project: Path) -> None:
    fakes.crontab.write_text(OTHER_LINES)
    out = api.unschedule(project)
    assert out.changes == [] and out.notes == [f"nothing was scheduled for {project}; nothing changed"]
    assert fakes.crontab.read_text() == OTHER_LINES


def test_jitter_is_the_daemons_only_and_says_so(fakes: Fakes, project: Path) -> None:
    p = api.plan(project, "03:17", "cron", jitter_s=60)
    assert p.schedule.jitter_s == 0
    assert "--jitter applies to the daemon only; the cron entry runs at exactly 03:17" in p.notes
    assert api.plan(project, "03:17", "daemon", jitter_s=60).schedule.jitter_s == 60


def test_a_project_whose_folder_is_gone_can_be_unscheduled(fakes: Fakes, project: Path) -> None:
    fakes.crontab.write_text(OTHER_LINES)
    api.schedule(project, "03:17", "cron")
    project.rmdir()
    out = api.unschedule(project)
    assert out.removed == [str(project)] and fakes.crontab.read_text() == OTHER_LINES
