"""DeepSeek Harness (``dsh``) event logs under ``~/.dsh/sessions`` (issue 31 §3).

The fixtures are written in the shape of the harness's own snapshot logs
(zsagi1368/deepseek-harness-zDSH: ``snapshots/sdk/bash-tool/session.v3.jsonl`` at d128b28,
``snapshots/sdk/dynamic-tool-updates/session.v4.jsonl`` at 1dd6c6a,
``snapshots/sdk/subagent-continuable/session.1.v3.jsonl`` at 85e854e) and of the notes people
wrote on the logs on their disks (``~/.dsh/sessions/<project key>/<session id>/session.v3.jsonl.zstd``,
one zstd frame per flush, ``seq``/``time`` on each record; docs/genuine-files.md).
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
import sleep_builders as b
import zstandard
from sleep_testutil import Homes, run

from sleep.harvest.sources import dsh as dsh_source
from sleep.index import Index

CWD = "/work/loom"
SID = "session-4a220f8c"
KEY = "--work-loom--"


@pytest.fixture
def dsh(homes: Homes) -> Path:
    return homes.home / ".dsh"


def _sessions():
    with Index.open() as idx:
        return idx.sessions(host="dsh")


def _frames(path: Path, records: list, *, cut: int = 0, mode: str = "wb") -> Path:
    """One zstd frame per record, as the harness flushes; ``cut`` bytes off the last frame."""
    path.parent.mkdir(parents=True, exist_ok=True)
    comp = zstandard.ZstdCompressor()
    data = b"".join(comp.compress(orjson.dumps(r) + b"\n") for r in records)
    with open(path, mode) as f:
        f.write(data[:len(data) - cut] if cut else data)
    return path


def _rec(seq: int, rtype: str, data: dict | None = None) -> dict:
    rec = {"type": rtype, "seq": seq, "time": b.ms(seq)}
    if data is not None:
        rec["data"] = data
    return rec


def _user(seq: int, mid: str, text: str, kind: str = "user") -> dict:
    return _rec(seq, "user/message", {"content": [{"type": "text", "text": text}], "source": {"kind": kind},
                                      "role": "user", "id": mid})


def _assistant(seq: int, turn: int, step: int, content: list) -> dict:
    return _rec(seq, "assistant/message", {"turn": turn, "step": step, "message": {
        "role": "assistant", "content": content,
        "source": {"kind": "model", "provider": "deepseek-official", "model": "deepseek-v4-flash"}, "id": f"m{seq}"},
        "usage": {"inputTokens": 10, "outputTokens": 5}})


def _log() -> list[dict]:
    call = '{"command": "cargo test -q", "description": "run the tests"}'
    return [
        {"type": "session", "version": 3, "id": SID, "createdAt": b.ms(0), "cwd": CWD, "isSeeded": False,
         "delegationDepth": 0},
        _rec(1, "permission/preset", {"preset": "workspace-write"}),
        _rec(2, "agent/inbox/spliced", {"target": "next-turn", "start": 0, "inserted": [
            {"content": [{"type": "text", "text": "weave the test fixtures"}], "source": {"kind": "user"},
             "role": "user", "id": "msg-1"}]}),
        _rec(3, "turn/start", {"turn": 1}),
        _rec(4, "step/start", {"turn": 1, "step": 1}),
        _rec(5, "system/message", {"turn": 1, "step": 1, "message": {"role": "system", "content": [
            {"type": "text", "text": "system prompt"}], "source": {"kind": "plugin"}}}),
        _user(6, "msg-1", "weave the test fixtures"),
        _user(7, "msg-2", "Current runtime context. This snapshot supersedes earlier runtime-context snapshots.",
              kind="plugin"),
        _rec(8, "request/header", {"header": {"config": {"provider": "deepseek-official"}}, "reason": "initial"}),
        _rec(9, "session/title", {"title": "weave the test", "messageSeqs": [6], "source": {"kind": "fallback"}}),
        _assistant(10, 1, 1, [{"type": "reasoning", "text": "run the tests first"},
                              {"type": "tool-call", "id": "call_1", "name": "bash", "arguments": call}]),
        _rec(11, "tool/call", {"turn": 1, "step": 1, "callId": "call_1", "name": "bash", "arguments": call}),
        _rec(12, "tool/result", {"turn": 1, "step": 1, "message": {"source": {"kind": "tool", "callId": "call_1"},
                                                                   "content": [], "role": "user"}}),
        _assistant(13, 1, 2, [{"type": "tool-call", "id": "call_2", "name": "write",
                               "arguments": '{"file_path": "/work/loom/tests/fixtures.rs", "content": "x"}'}]),
        _assistant(14, 1, 3, [{"type": "text", "text": "Wove four fixtures."}]),
        _rec(15, "turn/end", {"turn": 1, "reason": {"kind": "completed"}}),
        _user(16, "msg-3", "Agent session-77 sent a message: done", kind="agent-message"),
        _user(17, "msg-4", "no, keep them in one file"),
        _assistant(18, 2, 1, [{"type": "text", "text": "Merged."}]),
        _rec(19, "turn/end", {"turn": 2, "reason": {"kind": "aborted", "reason": {"kind": "user"}}}),
    ]


def test_a_dsh_session_is_read_across_its_zstd_frames(dsh: Path) -> None:
    _frames(dsh / "sessions" / KEY / SID / "session.v3.jsonl.zstd", _log())
    report = run(source="dsh")
    assert not report.skipped
    [s] = _sessions()
    assert s.session_id == SID and s.project_dir == CWD and not s.is_subagent
    assert [p.text for p in s.prompts] == ["weave the test fixtures", "no, keep them in one file"]
    assert s.finals == ["Wove four fixtures.", "Merged."]
    assert s.prompts[0].shell == ["cargo test"]
    assert s.prompts[0].files == ["tests/fixtures.rs"]
    assert s.tools == {"bash": 1, "write": 1}
    assert s.model == "deepseek-v4-flash"
    assert [f.kind for f in s.feedback] == ["correction", "interruption"]
    assert s.started_at == b.ts(0)


def test_an_unfinished_last_frame_is_read_up_to_its_last_whole_line(dsh: Path) -> None:
    path = _frames(dsh / "sessions" / KEY / SID / "session.v3.jsonl.zstd", _log()[:17], cut=3)
    run(source="dsh")
    [s] = _sessions()
    assert [p.text for p in s.prompts] == ["weave the test fixtures"]  # the cut frame held the second prompt
    _frames(path, _log(), mode="wb")  # the harness finished writing it
    run(source="dsh")
    [s] = _sessions()
    assert [p.text for p in s.prompts] == ["weave the test fixtures", "no, keep them in one file"]


def test_the_generations_of_a_session_are_one_session_and_a_message_counts_once(dsh: Path) -> None:
    folder = dsh / "sessions" / KEY / SID
    log = _log()
    _frames(folder / "session.jsonl.zstd", log[:16])
    # The upgraded log repeats the first turn's message (same id) and goes on.
    _frames(folder / "session.v4.jsonl.zstd", [{**log[0], "version": 4}, log[6], *log[16:]])
    b.write_jsonl(folder / "unrelated.jsonl", [{"type": "session"}])
    report = run(source="dsh")
    assert not report.skipped
    [s] = _sessions()
    assert [p.text for p in s.prompts] == ["weave the test fixtures", "no, keep them in one file"]


def test_a_subagent_log_is_a_subagent_session_of_its_parent(dsh: Path) -> None:
    _frames(dsh / "sessions" / KEY / SID / "session.v3.jsonl.zstd", _log())
    child = "session-9b1c"
    _frames(dsh / "sessions" / KEY / child / "session.v3.jsonl.zstd", [
        {"type": "session", "version": 3, "id": child, "createdAt": b.ms(20), "cwd": CWD, "parentSession": SID,
         "isSeeded": False, "origin": "subagent", "delegationDepth": 1},
        _rec(21, "subagent/descriptor", {"version": 3, "mode": "continuable", "label": "count the threads"}),
        _user(22, "msg-9", "count the threads in src/"),
        _assistant(23, 1, 1, [{"type": "text", "text": "12 threads."}])])
    run(source="dsh")
    people = [s for s in _sessions() if not s.is_subagent]
    [sub] = [s for s in _sessions() if s.is_subagent]
    assert [s.session_id for s in people] == [SID]
    assert sub.parent_session_id == SID and [p.text for p in sub.prompts] == ["count the threads in src/"]


def test_plain_jsonl_logs_and_the_project_scope(dsh: Path) -> None:
    b.write_jsonl(dsh / "sessions" / KEY / SID / "session.v3.jsonl", _log())
    b.write_jsonl(dsh / "sessions" / "--elsewhere--" / "session-2" / "session.v3.jsonl",
                  [{**_log()[0], "id": "session-2", "cwd": "/elsewhere"}, _user(6, "m", "hello")])
    run(source="dsh", project=CWD)
    assert [s.session_id for s in _sessions()] == [SID]


def test_without_a_zstd_decoder_the_log_is_skipped_and_counted(dsh: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _frames(dsh / "sessions" / KEY / SID / "session.v3.jsonl.zstd", _log())
    monkeypatch.setattr(dsh_source, "_zstandard", None)
    monkeypatch.setattr(dsh_source.shutil, "which", lambda name: None)
    report = run(source="dsh")
    assert report.skipped == {"zstd_unavailable": 1} and _sessions() == []


def test_the_zstd_program_reads_the_frames_when_the_module_is_missing(dsh: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    if dsh_source.shutil.which("zstd") is None:
        pytest.skip("the zstd program is not installed")
    _frames(dsh / "sessions" / KEY / SID / "session.v3.jsonl.zstd", _log(), cut=2)
    monkeypatch.setattr(dsh_source, "_zstandard", None)
    run(source="dsh")
    [s] = _sessions()
    assert [p.text for p in s.prompts] == ["weave the test fixtures", "no, keep them in one file"]
    assert [f.kind for f in s.feedback] == ["correction"]  # the cut last frame held the turn's end


def test_the_watcher_watches_the_logs_the_reader_reads(dsh: Path) -> None:
    from sleep.harvest.reader import ParseStats
    from sleep.scheduler.roots import transcript_roots

    _frames(dsh / "sessions" / KEY / SID / "session.v3.jsonl.zstd", _log())
    b.write_jsonl(dsh / "sessions" / KEY / "session-2" / "session.jsonl", _log()[:1])
    found = list(dsh_source.DshSource().discover(ParseStats()))
    roots = [r for r in transcript_roots() if r.host == "dsh"]
    assert len(found) == 2 and all(any(r.wants(f.path) for r in roots) for f in found)
