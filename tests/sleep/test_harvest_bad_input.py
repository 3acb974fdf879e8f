"""Bad input never stops a harvest: every case is skipped, counted by reason, and the rest harvested."""

from __future__ import annotations

import json
import os
import tracemalloc
from pathlib import Path

import sleep_builders as b
import pytest
from sleep_testutil import Homes, run

import sleep.harvest.pool as harvest_pool
from sleep.index import Index

CWD = "/work/app"


def _good(homes: Homes, sid: str = "good") -> Path:
    return b.write_jsonl(b.claude_session_path(homes.claude, CWD, sid), b.claude_basic_session(sid, CWD))


def _claude_file(homes: Homes, sid: str) -> Path:
    return b.claude_session_path(homes.claude, CWD, sid)


def _prompts(sid: str) -> list[str]:
    with Index.open() as idx:
        s = idx.get_session("claude-code", sid)
    return [p.text for p in s.prompts] if s else []


def _lines(sid: str, *extra: bytes) -> bytes:
    good = [b.dumps(r).encode() for r in b.claude_basic_session(sid, CWD)]
    return b"\n".join(good[:3] + list(extra) + good[3:]) + b"\n"


@pytest.mark.parametrize("bad, reason", [
    (b'{"type":"user","message":{"content":"half', "invalid_json"),
    (b'{"type":"user","cwd":"/work/app","message":{"content":"caf\xe9 \xff"}}', "non_utf8"),
    (b'{"type":"brand-new-record","timestamp":"2025-03-01T09:00:00Z"}', "unknown_record_type"),
    (b'[1, 2, 3]', "not_an_object"),
])
def test_bad_line_is_skipped_counted_and_the_rest_harvested(homes: Homes, bad: bytes, reason: str) -> None:
    _claude_file(homes, "s").parent.mkdir(parents=True)
    _claude_file(homes, "s").write_bytes(_lines("s", bad))
    report = run()
    assert report.skipped_lines == {reason: 1}
    assert _prompts("s") == ["Fix the failing build in the api package", "no, use pnpm instead of npm"]


def test_truncated_last_line_waits_and_is_counted(homes: Homes) -> None:
    path = _good(homes, "s")
    with open(path, "ab") as f:
        f.write(b'{"type":"user","message":{"content":"third pro')
    report = run()
    assert report.skipped_lines == {"incomplete_last_line": 1}
    assert len(_prompts("s")) == 2


def test_unknown_future_fields_are_ignored_and_counted(homes: Homes) -> None:
    rec = b.claude_user("Use the new field", sid="s", cwd=CWD, t=0, quantumEntanglement={"x": 1})
    b.write_jsonl(_claude_file(homes, "s"), [rec])
    report = run()
    assert _prompts("s") == ["Use the new field"]
    assert report.records_with_unknown_fields == 1 and report.skipped == {}


def test_empty_file_is_counted(homes: Homes) -> None:
    _claude_file(homes, "empty").parent.mkdir(parents=True)
    _claude_file(homes, "empty").write_bytes(b"")
    _good(homes)
    report = run()
    assert report.skipped_files == {"empty_file": 1} and report.sessions_new == 1
    assert run().skipped_files == {}  # unchanged since: not read or counted again


def test_unreadable_file_is_counted(homes: Homes, monkeypatch) -> None:
    locked = _good(homes, "locked")
    _good(homes, "open")
    real_open = harvest_pool.open_binary

    def fake_open(path: str):
        if path == str(locked):
            raise PermissionError(13, "Permission denied", path)
        return real_open(path)

    monkeypatch.setattr(harvest_pool, "open_binary", fake_open)
    report = run()
    assert report.skipped_files == {"unreadable_file": 1}
    assert report.sessions_new == 1


def test_pretty_printed_json_in_jsonl_is_skipped_as_a_file(homes: Homes) -> None:
    path = _claude_file(homes, "pretty")
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(b.claude_user("hi", sid="pretty", cwd=CWD), indent=2) + "\n")
    _good(homes)
    report = run()
    assert report.skipped_files == {"pretty_printed_json": 1}
    assert report.skipped_lines == {} and report.sessions_new == 1


def test_symlink_loops_are_counted(homes: Homes) -> None:
    _good(homes)
    loop = _claude_file(homes, "loop")
    os.symlink(loop, loop)  # a file symlink that points at itself
    day = homes.codex / "sessions" / "2025" / "03"
    day.mkdir(parents=True)
    os.symlink(homes.codex / "sessions", day / "again")  # a directory loop
    report = run()
    assert report.skipped_files == {"symlink_loop": 2}
    assert report.sessions_new == 1


def test_file_deleted_before_it_is_opened_is_counted(homes: Homes, monkeypatch) -> None:
    doomed = _good(homes, "doomed")
    _good(homes, "stays")
    real_open = harvest_pool.open_binary

    def delete_then_open(path: str):
        if path == str(doomed):
            os.unlink(path)
        return real_open(path)

    monkeypatch.setattr(harvest_pool, "open_binary", delete_then_open)
    report = run()
    assert report.skipped_files == {"file_vanished": 1}
    assert report.sessions_new == 1


def test_file_deleted_while_being_read_is_harvested_from_the_open_handle(homes: Homes, monkeypatch) -> None:
    doomed = _good(homes, "doomed")
    real_open = harvest_pool.open_binary

    def open_then_delete(path: str):
        f = real_open(path)
        os.unlink(path)
        return f

    monkeypatch.setattr(harvest_pool, "open_binary", open_then_delete)
    report = run()
    assert report.sessions_new == 1 and report.skipped == {}
    assert not doomed.exists()


def test_a_50mb_line_is_skipped_without_holding_it_in_memory(homes: Homes) -> None:
    path = _claude_file(homes, "huge")
    path.parent.mkdir(parents=True)
    good = [b.dumps(r).encode() for r in b.claude_basic_session("huge", CWD)]
    with open(path, "wb") as f:
        f.write(good[0] + b"\n" + good[1] + b"\n")
        f.write(b'{"type":"user","message":{"content":[{"type":"tool_result","content":"')
        chunk = b"x" * (1 << 20)
        for _ in range(50):
            f.write(chunk)
        f.write(b'"}]}}\n')
        f.write(b"\n".join(good[2:]) + b"\n")
    tracemalloc.start()
    try:
        report = run()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert report.skipped_lines == {"line_too_large": 1}
    assert len(_prompts("huge")) == 2
    assert peak < 40 * (1 << 20), f"peak {peak / 2**20:.0f} MiB for a 50 MiB line"


def test_every_bad_input_at_once_is_counted_and_the_good_sessions_kept(homes: Homes, monkeypatch) -> None:
    """The issue's list in one home; the harvest reports each reason and keeps every good session."""
    _good(homes, "good")
    _claude_file(homes, "mixed").write_bytes(_lines("mixed", b"{not json", b'{"type":"x-new"}',
                                                    b'{"type":"user","message":{"content":"\xff"}}'))
    _claude_file(homes, "empty").write_bytes(b"")
    (_claude_file(homes, "pretty")).write_text('{\n  "type": "user"\n}\n')
    os.symlink(_claude_file(homes, "loop"), _claude_file(homes, "loop"))
    with open(_claude_file(homes, "tail"), "wb") as f:
        f.write(_lines("tail") + b'{"type":"user"')
    chat = b.vscode_workspace(homes.vscode_user, "w", CWD)
    b.write_jsonl(chat / "nohead.jsonl", b.copilot_log_lines(b.copilot_session("x", b.copilot_basic_requests()))[1:])
    sid = b.uid("cx")
    b.write_jsonl(b.codex_rollout_path(homes.codex, sid), b.codex_basic_session(sid, CWD))
    report = run()
    assert report.skipped_lines == {"invalid_json": 1, "unknown_record_type": 1, "non_utf8": 1,
                                    "incomplete_last_line": 1}
    assert report.skipped_files == {"empty_file": 1, "pretty_printed_json": 1, "symlink_loop": 1,
                                    "copilot_log_without_snapshot": 1}
    assert report.sessions_new == 4  # good, mixed, tail, codex
    assert report.lines_total == report.lines_kept + report.lines_ignored + sum(report.skipped_lines.values())


def test_file_name_that_is_not_utf8_is_counted(homes: Homes) -> None:
    _good(homes)
    folder = os.fsencode(_claude_file(homes, "x").parent)
    with open(folder + b"/bad-\xff-name.jsonl", "wb") as f:
        f.write(_lines("bad"))
    report = run()
    assert report.skipped_files == {"undecodable_file_name": 1} and report.sessions_new == 1
