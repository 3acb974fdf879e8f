"""Issue 35 §7: side files (``~/.gemini/projects.json`` and the like) are read with a size cap,
never from a special file behind a link, and a bad one fails only its own source.

The harvest runs as the command line runs it, in a child process with a memory limit and a
time limit (what a scheduled night has): before, a ``projects.json`` linked to ``/dev/zero``
took the whole harvest down and a FIFO blocked it for ever.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest
import sleep_builders as b
from sleep_testutil import Homes

from sleep.harvest.side_files import SIDE_FILE_MAX_BYTES, SideFileError, read_side_file

CWD = "/work/garden"
MEMORY_LIMIT = 1 << 30  # bytes of address space for the child harvest
TIME_LIMIT = 120  # seconds


@pytest.fixture
def gemini(homes: Homes, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GEMINI_CLI_HOME", str(homes.home))
    g = homes.home / ".gemini"
    chats = g / "tmp" / "garden" / "chats"
    chats.mkdir(parents=True)
    (chats / "session-2025-03-01T09-00-abcd1234.json").write_text(json.dumps({
        "sessionId": "g1", "startTime": b.ts(0), "lastUpdated": b.ts(2), "messages": [
            {"id": "m1", "timestamp": b.ts(1), "type": "user", "content": "add a watering schedule page"},
            {"id": "m2", "timestamp": b.ts(2), "type": "gemini", "content": "Added it."}]}))
    b.write_jsonl(b.claude_session_path(homes.claude, CWD, "c1"), b.claude_basic_session("c1", CWD))
    return g


def _limit() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def _harvest() -> dict:
    code = "import sys; from sleep.cli import main; sys.exit(main(sys.argv[1:]))"
    done = subprocess.run([sys.executable, "-c", code, "harvest", "--all-projects", "--json"], capture_output=True,
                          text=True, env=os.environ, timeout=TIME_LIMIT, preexec_fn=_limit)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def test_a_good_projects_json_behind_a_link_is_read(gemini: Path, tmp_path: Path) -> None:
    real = tmp_path / "projects.json"
    real.write_text(json.dumps({"projects": {CWD: "garden"}}))
    (gemini / "projects.json").symlink_to(real)
    report = _harvest()
    assert report["sources_failed"] == {}
    assert report["sources"]["gemini-cli"]["sessions_new"] == 1 and report["sources"]["claude-code"]["sessions_new"] == 1


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_projects_json_linked_to_dev_zero_fails_only_gemini(gemini: Path) -> None:
    (gemini / "projects.json").symlink_to("/dev/zero")
    report = _harvest()
    why = report["sources_failed"]["gemini-cli"]
    assert "projects.json" in why and "character device" in why and "harvest again" in why
    assert report["sources"]["gemini-cli"]["sessions_new"] == 0
    assert report["sources"]["claude-code"]["sessions_new"] == 1
    assert list(report["sources_failed"]) == ["gemini-cli"]


def test_projects_json_that_is_a_fifo_does_not_block(gemini: Path) -> None:
    os.mkfifo(gemini / "projects.json")
    report = _harvest()
    assert "FIFO" in report["sources_failed"]["gemini-cli"]
    assert report["sources"]["claude-code"]["sessions_new"] == 1


def test_a_huge_projects_json_is_not_read_whole(gemini: Path) -> None:
    with open(gemini / "projects.json", "wb") as fh:
        fh.truncate(SIDE_FILE_MAX_BYTES + 1)  # sparse: no disk used
    report = _harvest()
    assert "more than" in report["sources_failed"]["gemini-cli"]
    assert report["sources"]["claude-code"]["sessions_new"] == 1


def test_the_text_report_says_which_source_read_nothing_and_why(gemini: Path) -> None:
    os.mkfifo(gemini / "projects.json")
    code = "import sys; from sleep.cli import main; sys.exit(main(sys.argv[1:]))"
    done = subprocess.run([sys.executable, "-c", code, "harvest", "--all-projects"], capture_output=True, text=True,
                          env=os.environ, timeout=TIME_LIMIT)
    assert done.returncode == 0
    assert "gemini-cli read nothing:" in done.stdout and "projects.json" in done.stdout


def test_read_side_file_refuses_directories_and_reads_small_files(tmp_path: Path) -> None:
    (tmp_path / "ok.json").write_text("{}")
    assert read_side_file(tmp_path / "ok.json") == b"{}"
    with pytest.raises(SideFileError, match="directory"):
        read_side_file(tmp_path)
    with pytest.raises(FileNotFoundError):
        read_side_file(tmp_path / "missing.json")
    (tmp_path / "big").write_bytes(b"x" * 11)
    with pytest.raises(SideFileError, match="more than the 10 bytes"):
        read_side_file(tmp_path / "big", max_bytes=10)
