"""The watcher through real filesystem events in a temporary home, and the harvest's
use of what it noted: only the noted files once a scan has anchored the watch, the
full cursor scan after any gap (no watcher, a stopped or dead one, a new folder,
lost events), and files left for later by a ``--project`` harvest."""

from __future__ import annotations

from skillopt_core.timestamps import utc_now

import json
import logging
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import sleep_builders as b
from sleep_testutil import Homes, run

from sleep.index import Index
from sleep.harvest.reader import ParseStats
from sleep.scheduler.noted import live_epoch
from sleep.scheduler.roots import transcript_roots
from sleep.scheduler.watcher import Watcher
from sleep.harvest.sources import all_sources


def noted(homes: Homes) -> dict[str, tuple[str, int, str]]:
    with Index.open() as index:
        return {p: (h, v, s) for p, h, v, s in
                index.conn.execute("SELECT path, host, version, source FROM noted_files")}


def wait_for(predicate, timeout: float = 10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError("timed out waiting")


def claude_file(homes: Homes, project: Path, sid: str) -> Path:
    return b.write_jsonl(b.claude_session_path(homes.claude, str(project), sid), b.claude_basic_session(sid, str(project)))


def append(path: Path, sid: str, project: Path, text: str = "one more thing") -> None:
    b.write_jsonl(path, [b.claude_user(text, sid=sid, cwd=str(project), t=100)], mode="a")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    p = tmp_path / "app"
    p.mkdir()
    return p


@pytest.fixture
def watcher(homes: Homes):
    started: list[Watcher] = []

    def start(**kw) -> Watcher:
        kw.setdefault("coalesce_s", 0.2)
        w = Watcher(**kw).start()
        started.append(w)
        return w

    yield start
    for w in started:
        w.stop()


def test_every_discovered_file_lies_under_a_root_that_wants_it(homes: Homes, project: Path) -> None:
    claude_file(homes, project, "s1")
    b.write_jsonl(homes.claude / "history.jsonl", [{"display": "hi", "timestamp": b.ms(0), "project": str(project)}])
    b.write_jsonl(b.codex_rollout_path(homes.codex, "c1"), b.codex_basic_session("c1", str(project)))
    b.write_jsonl(homes.codex / "history.jsonl", [{"session_id": "c1", "ts": 1, "text": "hi"}])
    b.write_jsonl(homes.copilot_cli / "session-state" / "cli-1" / "events.jsonl", b.copilot_cli_session("cli-1", "/w"))
    (homes.copilot_cli / "history-session-state").mkdir(parents=True)
    (homes.copilot_cli / "history-session-state" / "old.json").write_text("{}")
    chat = b.vscode_workspace(homes.vscode_user, "h1", str(project))
    (chat / "v1.json").write_text(json.dumps(b.copilot_session("v1", b.copilot_basic_requests())))
    empty = homes.vscode_user / "globalStorage" / "emptyWindowChatSessions"
    empty.mkdir(parents=True)
    (empty / "e1.json").write_text(json.dumps(b.copilot_session("e1", [])))
    roots = transcript_roots()
    found = [f for src in all_sources().values() for f in src.discover(ParseStats())]
    assert {f.host for f in found} == {"claude-code", "codex", "copilot-cli", "copilot-vscode"}
    assert len(found) == 8
    for f in found:
        assert any(r.host == f.host and r.wants(f.path) for r in roots), f.path


def test_appended_lines_are_noted_through_real_file_events(homes: Homes, project: Path, watcher) -> None:
    path = claude_file(homes, project, "s1")
    w = watcher()
    append(path, "s1", project)
    assert wait_for(lambda: noted(homes).get(str(path)))[:3] == ("claude-code", 1, "watcher")
    assert w.stats["noted"] == 1


def test_a_burst_of_appends_is_one_note(homes: Homes, project: Path, watcher) -> None:
    path = claude_file(homes, project, "s1")
    w = watcher(coalesce_s=0.5)
    for i in range(300):
        append(path, "s1", project, f"line {i}")
    wait_for(lambda: noted(homes).get(str(path)))
    time.sleep(1.0)
    version = noted(homes)[str(path)][1]
    assert version <= 2 and w.stats["flushes"] <= 2, (version, w.stats)
    assert w.stats["events"] >= 10  # many events came in; few writes went out


def test_a_new_session_folder_and_its_files_are_noted(homes: Homes, project: Path, watcher) -> None:
    (homes.claude / "projects").mkdir(parents=True)
    watcher()
    path = claude_file(homes, project, "s2")  # creates the project's folder, then the file
    sub = path.parent / "s2" / "subagents" / "agent-1.jsonl"
    b.write_jsonl(sub, [b.claude_user("x", sid="s2", cwd=str(project))])
    wait_for(lambda: {str(path), str(sub)} <= set(noted(homes)))


def test_files_that_are_not_transcripts_are_not_noted(homes: Homes, project: Path, watcher) -> None:
    path = claude_file(homes, project, "s1")
    w = watcher()
    (homes.claude / "settings.json").write_text("{}")
    (path.parent / "notes.txt").write_text("x")
    (homes.claude / "todos").mkdir()
    (homes.claude / "todos" / "t.json").write_text("[]")
    time.sleep(1.0)
    assert noted(homes) == {} and w.stats["noted"] == 0


def test_a_symlinked_home_is_watched_under_the_name_the_harvest_uses(homes: Homes, project: Path, tmp_path: Path,
                                                                      watcher) -> None:
    real = tmp_path / "elsewhere" / "claude"
    real.mkdir(parents=True)
    homes.claude.symlink_to(real)
    path = claude_file(homes, project, "s1")
    watcher()
    append(path, "s1", project)
    wait_for(lambda: str(path) in noted(homes))


# ----- the harvest ----------------------------------------------------------------------------

def test_without_a_watcher_the_harvest_scans_as_always(homes: Homes, project: Path) -> None:
    claude_file(homes, project, "s1")
    report = run()
    assert report.files_read == 1
    assert report.watch["claude-code"] == "full scan: no watcher has run (start `skillopt-sleep daemon`)"


def test_once_anchored_the_harvest_reads_only_the_noted_files(homes: Homes, project: Path, watcher) -> None:
    a, c = claude_file(homes, project, "a"), claude_file(homes, project, "c")
    watcher()
    first = run()
    assert first.files_read == 2 and first.watch["claude-code"].startswith("full scan: first scan since")
    append(a, "a", project, "noted change")
    append(c, "c", project, "unseen change")
    wait_for(lambda: {str(a), str(c)} <= set(noted(homes)))
    with Index.open() as index:  # as if the watcher had not seen c change
        index.conn.execute("DELETE FROM noted_files WHERE path = ?", (str(c),))
    second = run()
    assert second.watch["claude-code"] == "noted files only (1 noted by the watcher)"
    assert (second.files_read, second.files_unchanged) == (1, 1)
    with Index.open() as index:
        assert [p.text for p in index.get_session("claude-code", "a").prompts][-1] == "noted change"
        assert "unseen change" not in [p.text for p in index.get_session("claude-code", "c").prompts]
    assert str(a) not in noted(homes)  # consumed


def test_after_the_watcher_stops_the_harvest_scans_again(homes: Homes, project: Path, watcher) -> None:
    c = claude_file(homes, project, "c")
    w = watcher()
    run()
    w.stop()
    append(c, "c", project, "while nobody watched")
    report = run()
    assert report.watch["claude-code"].startswith("full scan: the watcher stopped at ")
    assert report.files_read == 1
    with Index.open() as index:
        assert [p.text for p in index.get_session("claude-code", "c").prompts][-1] == "while nobody watched"


def test_a_watcher_that_died_without_closing_its_epoch_is_a_gap(homes: Homes, project: Path) -> None:
    claude_file(homes, project, "s1")
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    with Index.open() as index:
        index.conn.execute("INSERT INTO watch_epochs (pid, hostname, started_at, heartbeat_at, heartbeat_s, roots,"
                           " anchors) VALUES (?, ?, ?, ?, 60, '[]', '{\"claude-code\": \"9999\"}')",
                           (dead.pid, os.uname().nodename, utc_now(), utc_now()))
        epoch, why = live_epoch(index)
    assert epoch is None and why.startswith(f"the watcher (pid {dead.pid}) stopped without saying so")
    assert run().files_read == 1


def test_a_project_harvest_leaves_other_projects_files_for_later(homes: Homes, project: Path, tmp_path: Path,
                                                                 watcher) -> None:
    other = tmp_path / "other"
    other.mkdir()
    mine, theirs = claude_file(homes, project, "m"), claude_file(homes, other, "t")
    watcher()
    first = run(project=str(project))
    assert first.files_read == 1 and first.files_out_of_scope == 1
    assert noted(homes)[str(theirs)][2] == "harvest"
    second = run(project=str(other))
    assert second.watch["claude-code"] == "noted files only (1 noted by the watcher)"
    assert second.files_read == 1 and str(theirs) not in noted(homes)
    assert str(mine) not in noted(homes)


def test_a_transcript_folder_that_appears_is_scanned_until_watched(homes: Homes, project: Path, watcher) -> None:
    claude_file(homes, project, "s1")
    watcher(heartbeat_s=0.3)
    run()  # anchors claude-code; Codex has no folder yet
    b.write_jsonl(b.codex_rollout_path(homes.codex, "c1"), b.codex_basic_session("c1", str(project)))
    report = run()
    assert report.watch["claude-code"].startswith("noted files only")
    assert report.watch["codex"].startswith("full scan: the watcher does not watch ")
    assert report.sessions_new == 1  # the Codex session, found by the scan
    wait_for(lambda: any(r["host"] == "codex" for r in json.loads(_epoch_roots())))
    assert run().watch["codex"].startswith("full scan: first scan since")  # watched now: one scan anchors it
    assert run().watch["codex"].startswith("noted files only")


def _epoch_roots() -> str:
    with Index.open() as index:
        return index.conn.execute("SELECT roots FROM watch_epochs ORDER BY id DESC").fetchone()[0]


def test_lost_file_events_make_the_next_harvest_scan(homes: Homes, project: Path, watcher) -> None:
    claude_file(homes, project, "s1")
    w = watcher()
    run()
    assert run().watch["claude-code"].startswith("noted files only")
    logging.getLogger("watchdog.observers.inotify_c").warning("Inotify queue overflowed; filesystem events were lost")
    wait_for(lambda: w.stats["overflows"] == 1)
    time.sleep(0.05)
    assert run().watch["claude-code"].startswith("full scan: first scan since")
