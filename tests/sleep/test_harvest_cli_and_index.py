"""The CLI surface and the index's schema migrations."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys

import sleep_builders as b
from sleep_testutil import Homes

from sleep.cli import main
from sleep.harvest.harvester import parse_duration
from sleep.index import MIGRATIONS, Index, Migration

CWD = "/work/app"


def _home_with_every_host(homes: Homes) -> None:
    b.write_jsonl(b.claude_session_path(homes.claude, CWD, "s"), b.claude_basic_session("s", CWD))
    sid = b.uid("c")
    b.write_jsonl(b.codex_rollout_path(homes.codex, sid), b.codex_basic_session(sid, CWD))
    chat = b.vscode_workspace(homes.vscode_user, "w", CWD)
    (chat / "v.json").write_text(json.dumps(b.copilot_session("v", b.copilot_basic_requests())))
    b.write_jsonl(homes.copilot_cli / "session-state" / "c" / "events.jsonl", b.copilot_cli_session("c", CWD))
    with open(b.claude_session_path(homes.claude, CWD, "bad"), "wb") as f:
        f.write(b'{"type":"user","message":{"content":"x"\n')


def test_console_script_done_when_scenario(homes: Homes) -> None:
    """`skillopt-sleep harvest --all-projects --json` reports every session, counts bad input, then reads nothing."""
    _home_with_every_host(homes)
    cmd = [sys.executable, "-m", "sleep.cli", "harvest", "--all-projects", "--json"]
    first = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True, env=os.environ).stdout)
    assert first["sessions_new"] == 4
    assert first["skipped"] == {"invalid_json": 1}
    assert set(first["sources"]) == {"claude-code", "codex", "copilot-vscode", "copilot-cli", "gemini-cli",
                                     "opencode", "cursor-agent", "cursor-ide", "pi", "dsh", "goose",
                                     "amp", "hermes"}
    second = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True, env=os.environ).stdout)
    assert (second["files_read"], second["bytes_read"], second["sessions_new"]) == (0, 0, 0)


def test_harvest_text_report_names_counts(homes: Homes, capsys) -> None:
    _home_with_every_host(homes)
    assert main(["harvest", "--all-projects"]) == 0
    out = capsys.readouterr().out
    assert "5 files seen, 5 read" in out and "4 new" in out
    assert "skipped: invalid_json 1" in out and "secrets redacted: 0" in out and "MB/s" in out


def test_harvest_defaults_to_the_current_directory_project(homes: Homes, capsys, monkeypatch, tmp_path) -> None:
    here = tmp_path / "proj"
    here.mkdir()
    b.write_jsonl(b.claude_session_path(homes.claude, str(here), "mine"), b.claude_basic_session("mine", str(here)))
    b.write_jsonl(b.claude_session_path(homes.claude, CWD, "other"), b.claude_basic_session("other", CWD))
    monkeypatch.chdir(here)
    assert main(["harvest", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["sessions_new"] == 1 and report["scope"] == f"project {here}"


def test_sessions_lists_what_is_stored(homes: Homes, capsys) -> None:
    _home_with_every_host(homes)
    main(["harvest", "--all-projects", "--json"])
    capsys.readouterr()
    assert main(["sessions", "--all-projects", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert {s["host"] for s in listed} == {"claude-code", "codex", "copilot-vscode", "copilot-cli"}
    assert all("state" not in s for s in listed)
    assert main(["sessions", "--project", "/elsewhere", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []
    assert main(["sessions", "--all-projects"]) == 0
    assert "Fix the failing build" in capsys.readouterr().out


def test_sessions_cover_the_current_folder_by_default_as_every_command_does(homes: Homes, capsys,
                                                                           tmp_path, monkeypatch) -> None:
    _home_with_every_host(homes)
    main(["harvest", "--all-projects", "--json"])
    capsys.readouterr()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert main(["sessions", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []
    assert main(["sessions"]) == 0
    out = capsys.readouterr().out
    assert f"No sessions stored for {elsewhere}" in out and "--all-projects" in out


def test_sessions_before_any_harvest_says_what_to_do(homes: Homes, capsys) -> None:
    assert main(["sessions"]) == 0
    assert "run `skillopt-sleep harvest` first" in capsys.readouterr().err


def test_bad_since_is_a_usage_error(homes: Homes, capsys) -> None:
    try:
        main(["harvest", "--since", "3 fortnights"])
    except SystemExit as exc:
        assert exc.code == 2
    assert "e.g. 72h" in capsys.readouterr().err
    assert parse_duration("72h").total_seconds() == 72 * 3600


def test_index_is_wal_with_versioned_schema(homes: Homes) -> None:
    with Index.open() as idx:
        assert idx.schema_version == MIGRATIONS[-1].version
        assert idx.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_a_later_migration_extends_the_schema_once(homes: Homes) -> None:
    extra = Migration(MIGRATIONS[-1].version + 1, "a later table", "CREATE TABLE later_things (id TEXT PRIMARY KEY)")
    with Index.open() as idx:
        assert idx.migrate(MIGRATIONS + [extra]) == [extra.version]
        assert idx.migrate(MIGRATIONS + [extra]) == []
        assert idx.schema_version == extra.version
    conn = sqlite3.connect(homes.index)
    assert conn.execute("SELECT name FROM sqlite_master WHERE name='tasks'").fetchone()
