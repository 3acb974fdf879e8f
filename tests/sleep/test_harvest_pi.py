"""Pi (npm ``@mariozechner/pi-coding-agent``) sessions under ``~/.pi/agent/sessions`` (issue 31 §3).

The fixtures are written in the shape pi 0.73.1 writes (seen by running the real CLI against
tests/sleep/model_endpoint.py, the last test here) and pi-mono's
``packages/coding-agent/docs/session.md`` describes (badlogic/pi-mono 25754f0 for version 1,
the v3 tree in zhy0216/pigo d05ede9's copy): a ``session`` header, ``model_change`` and
``thinking_level_change`` entries, ``message`` entries with ``user`` / ``assistant`` /
``toolResult`` / ``bashExecution`` messages linked by ``id``/``parentId``, a branch as a
second child of an earlier entry, and the entries that hold nothing typed.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import sleep_builders as b
from sleep_testutil import Homes, run

from sleep.harvest.reader import ParseStats
from sleep.harvest.sources.pi import PiSource, folder_name
from sleep.index import Index

CWD = "/work/kiln"
SID = "01a24a2c-a119-71c7-a329-9ac52f019803"


@pytest.fixture
def pi(homes: Homes) -> Path:
    return homes.home / ".pi" / "agent"


def _sessions():
    with Index.open() as idx:
        return idx.sessions(host="pi")


def _entry(kind: str, eid: str, parent: str | None, t: float, **kw) -> dict:
    return {"type": kind, "id": eid, "parentId": parent, "timestamp": b.ts(t), **kw}


def _msg(eid: str, parent: str | None, t: float, message: dict) -> dict:
    return _entry("message", eid, parent, t, message={**message, "timestamp": b.ms(t)})


def _assistant(content: list, stop: str = "toolUse") -> dict:
    return {"role": "assistant", "content": content, "api": "openai-completions", "provider": "acme",
            "model": "kiln-large", "usage": {"input": 10, "output": 2, "totalTokens": 12}, "stopReason": stop}


def _session_lines() -> list[dict]:
    return [
        {"type": "session", "version": 3, "id": SID, "timestamp": b.ts(0), "cwd": CWD},
        _entry("model_change", "e1", None, 0, provider="acme", modelId="kiln-large"),
        _entry("thinking_level_change", "e2", "e1", 0, thinkingLevel="off"),
        _msg("u1", "e2", 1, {"role": "user", "content": [{"type": "text", "text": "glaze the test pots"}]}),
        _msg("a1", "u1", 2, _assistant([{"type": "thinking", "thinking": "plan"},
                                        {"type": "toolCall", "id": "c1", "name": "bash",
                                         "arguments": {"command": "pytest -q tests/pots"}}])),
        _msg("r1", "a1", 3, {"role": "toolResult", "toolCallId": "c1", "toolName": "bash",
                             "content": [{"type": "text", "text": "3 passed"}], "isError": False}),
        _msg("a2", "r1", 4, _assistant([{"type": "toolCall", "id": "c2", "name": "read",
                                         "arguments": {"path": ".pi/skills/glazing/SKILL.md"}},
                                        {"type": "toolCall", "id": "c3", "name": "write",
                                         "arguments": {"path": f"{CWD}/src/glaze.py", "content": "x"}}])),
        _msg("a3", "a2", 5, _assistant([{"type": "text", "text": "Glazed three pots."}], stop="stop")),
        _msg("x1", "a3", 6, {"role": "bashExecution", "command": "git status", "output": "clean", "exitCode": 0,
                             "cancelled": False, "truncated": False}),
        _entry("custom_message", "cm", "x1", 6, customType="reminder", content="injected by an extension",
               display=False),
        _entry("session_info", "si", "cm", 6, name="Pottery"),
        _msg("u2", "si", 7, {"role": "user", "content": "no, use the kiln at 1200 degrees"}),
        _msg("a4", "u2", 8, _assistant([{"type": "text", "text": "Set to 1200."}], stop="stop")),
        # The person went back to the first answer and branched: a second child of a3.
        _entry("branch_summary", "bs", "a3", 9, fromId="a4", summary="Tried 1200 degrees."),
        _msg("u3", "bs", 10, {"role": "user", "content": [{"type": "text", "text": "fire them twice instead"},
                                                          {"type": "image", "data": "iVBO", "mimeType": "image/png"}]}),
        _entry("compaction", "cp", "u3", 11, summary="...", firstKeptEntryId="u3", tokensBefore=5000),
        _msg("cs", "cp", 11, {"role": "compactionSummary", "summary": "earlier", "tokensBefore": 5000}),
    ]


def _write(pi: Path, lines: list[dict], cwd: str = CWD, sid: str = SID) -> Path:
    return b.write_jsonl(pi / "sessions" / folder_name(cwd) / f"2026-12-06T07-06-08-550Z_{sid}.jsonl", lines)


def test_a_pi_session_is_read_as_pi_writes_it(pi: Path) -> None:
    _write(pi, _session_lines())
    report = run(source="pi")
    assert not report.skipped
    [s] = _sessions()
    assert s.session_id == SID and s.project_dir == CWD
    assert [p.text for p in s.prompts] == ["glaze the test pots", "no, use the kiln at 1200 degrees",
                                           "fire them twice instead"]
    assert s.finals == ["Glazed three pots.", "Set to 1200.", None]
    assert s.prompts[0].shell == ["pytest -q", "git status"]  # the model's and the person's own `!git status`
    assert s.prompts[0].files == [".pi/skills/glazing/SKILL.md", "src/glaze.py"]
    assert s.skills == {"glazing": 1}
    assert s.tools == {"bash": 1, "read": 1, "write": 1}
    assert s.model == "kiln-large"
    assert [f.kind for f in s.feedback] == ["correction"]


def test_appended_lines_are_read_once_and_a_second_harvest_adds_only_them(pi: Path) -> None:
    lines = _session_lines()
    path = _write(pi, lines[:8])
    run(source="pi")
    b.write_jsonl(path, lines[8:], mode="a")
    run(source="pi")
    [s] = _sessions()
    assert [p.text for p in s.prompts] == ["glaze the test pots", "no, use the kiln at 1200 degrees",
                                           "fire them twice instead"]


def test_a_fork_stores_only_what_was_typed_after_the_fork(pi: Path) -> None:
    """``pi --fork`` / ``/fork`` copy the parent's entries, ids and all, into a new file whose
    header names the parent file (seen with pi 0.73.1, the last test): the copies are the
    parent's prompts, stored once, in the parent's session."""
    parent = _write(pi, _session_lines()[:8])
    fork_id = "01a24a42-ea22-7052-83f9-5081f5965c15"
    _write(pi, [{"type": "session", "version": 3, "id": fork_id, "timestamp": b.ts(20), "cwd": CWD,
                 "parentSession": str(parent)}, *_session_lines()[1:8],
                _msg("f1", "a3", 21, {"role": "user", "content": [{"type": "text", "text": "fire them in the new kiln"}]})],
           sid=fork_id)
    run(source="pi")
    got = {s.session_id: (s.parent_session_id, [p.text for p in s.prompts]) for s in _sessions()}
    assert got == {SID: (None, ["glaze the test pots"]), fork_id: (SID, ["fire them in the new kiln"])}


def test_a_fork_whose_parent_is_gone_keeps_its_copies(pi: Path) -> None:
    _write(pi, [{"type": "session", "version": 3, "id": "f", "timestamp": b.ts(20), "cwd": CWD,
                 "parentSession": str(pi / "sessions" / "gone_x.jsonl")}, *_session_lines()[1:4]], sid="f")
    report = run(source="pi")
    assert [p.text for s in _sessions() for p in s.prompts] == ["glaze the test pots"]
    assert report.actions.get("fork_parent_missing") == 1


def test_folder_names_and_the_project_scope(pi: Path) -> None:
    assert folder_name("/work/kiln") == "--work-kiln--"
    assert folder_name("C:\\Users\\me\\app") == "--C--Users-me-app--"
    _write(pi, _session_lines())
    _write(pi, [{"type": "session", "version": 3, "id": "other", "timestamp": b.ts(0), "cwd": "/elsewhere"},
                _msg("u", None, 1, {"role": "user", "content": "hello"})], cwd="/elsewhere", sid="other")
    src = PiSource()
    files = list(src.discover(ParseStats()))
    assert len(files) == 2
    assert [src.scope_hint(f, CWD) for f in files] == [False, None]  # sorted: --elsewhere-- first
    run(source="pi", project=CWD)
    assert [s.session_id for s in _sessions()] == [SID]


def test_unknown_entries_are_counted_and_a_title_line_before_the_header_is_passed(pi: Path) -> None:
    _write(pi, [{"type": "title", "v": 1, "title": ""}, *_session_lines()[:4],
                _entry("hologram", "h", "u1", 3, data=1)])
    report = run(source="pi")
    [s] = _sessions()
    assert s.project_dir == CWD and [p.text for p in s.prompts] == ["glaze the test pots"]
    assert report.skipped.get("unknown_record_type") == 1


def test_the_session_dir_override(homes: Homes, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PI_CODING_AGENT_SESSION_DIR", str(tmp_path / "elsewhere"))
    b.write_jsonl(tmp_path / "elsewhere" / folder_name(CWD) / f"x_{SID}.jsonl", _session_lines()[:4])
    run(source="pi")
    assert [p.text for s in _sessions() for p in s.prompts] == ["glaze the test pots"]


def test_the_real_pi_cli_writes_what_the_reader_reads(homes: Homes, tmp_path: Path) -> None:
    """pi from npm (``@mariozechner/pi-coding-agent``) run headless (``pi -p``, then ``pi -c -p``)
    against the scripted endpoint as a custom provider in ``models.json``: both typed prompts
    are stored exactly, once, in one session with its project, with the command pi ran; a fork
    (``pi --fork <id>``) holds only what was typed after it."""
    from model_endpoint import ModelEndpoint, say, script
    from model_endpoint import run as run_cmd
    from npm_clients import npm_tool
    from npm_clients import run as run_cli

    pi_bin = npm_tool("pi")
    project = tmp_path / "kiln"
    project.mkdir()
    agent = homes.home / ".pi" / "agent"
    agent.mkdir(parents=True)
    prompts = ["run the kiln check", "no, use pnpm instead of npm"]
    with ModelEndpoint(script(run_cmd("echo kiln-ok"), say("Checked."))) as ep:
        (agent / "models.json").write_text(json.dumps({"providers": {"skillopt": {
            "baseUrl": f"{ep.url}/v1", "api": "openai-completions", "apiKey": "sk-scripted",
            "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
            "models": [{"id": "scripted-model"}]}}}))
        env = {**os.environ, "HOME": str(homes.home), "PI_OFFLINE": "1", "NO_UPDATE_NOTIFIER": "1"}
        for extra, prompt in zip(([], ["-c"]), prompts):
            done = run_cli([pi_bin, "--provider", "skillopt", "--model", "scripted-model", *extra, "-p", prompt],
                           cwd=project, env=env)
            assert done.returncode == 0, done.stderr[-2000:]
        [log] = (agent / "sessions").rglob("*.jsonl")
        assert log.parent.name == folder_name(str(project))
        parent_id = log.stem.rpartition("_")[2]
        # A fork copies the parent's entries into a new file; only what is typed after it is its own.
        done = run_cli([pi_bin, "--provider", "skillopt", "--model", "scripted-model", "--fork", parent_id,
                        "-p", "and log the kiln temperature"], cwd=project, env=env)
        assert done.returncode == 0, done.stderr[-2000:]
    assert len(list((agent / "sessions").rglob("*.jsonl"))) == 2
    report = run(source="pi")
    assert not report.skipped
    by_id = {s.session_id: s for s in _sessions()}
    s = by_id.pop(parent_id)
    assert s.project_dir == str(project) and s.model == "scripted-model"
    assert [p.text for p in s.prompts] == prompts
    assert s.tools == {"bash": 1}
    assert [f.kind for f in s.feedback] == ["correction"]
    [fork] = by_id.values()
    assert fork.parent_session_id == parent_id and [p.text for p in fork.prompts] == ["and log the kiln temperature"]


def test_the_watcher_watches_the_files_the_reader_reads(pi: Path) -> None:
    from sleep.scheduler.roots import transcript_roots

    _write(pi, _session_lines())
    found = list(PiSource().discover(ParseStats()))
    roots = [r for r in transcript_roots() if r.host == "pi"]
    assert len(found) == 1 and all(any(r.wants(f.path) for r in roots) for f in found)
