"""VS Code Copilot Chat (.json v3, .jsonl logs, exports, every root) and Copilot CLI."""

from __future__ import annotations

import json
from pathlib import Path

import sleep_builders as b
import pytest
from sleep_testutil import Homes, run

from sleep.index import Index
from sleep.paths import vscode_user_dirs
from sleep.harvest.sources.copilot_vscode import apply_patch

CWD = "/work/web"


def _sessions(host: str) -> dict[str, object]:
    with Index.open() as idx:
        return {s.session_id: s for s in idx.sessions(host=host)}


def _check_basic(s) -> None:
    assert s.project_dir == CWD
    assert [p.text for p in s.prompts] == ["Write a unit test for parse_config", "don't use unittest, use pytest"]
    assert s.finals == ["Added `test_config.py` with three cases.", "Rewrote the tests with pytest."]
    assert s.tools == {"copilot_readFile": 1, "copilot_createFile": 1}
    assert s.skills == {"testing": 1}
    assert [f.kind for f in s.feedback] == ["correction", "approval"]


def test_copilot_v3_json_session(homes: Homes) -> None:
    chat = b.vscode_workspace(homes.vscode_user, "h1", CWD)
    (chat / "v1.json").write_text(json.dumps(b.copilot_session("v1", b.copilot_basic_requests())))
    run()
    _check_basic(_sessions("copilot-vscode")["v1"])


def test_copilot_jsonl_log_is_replayed_to_the_same_session(homes: Homes) -> None:
    chat = b.vscode_workspace(homes.vscode_user, "h1", CWD)
    b.write_jsonl(chat / "v2.jsonl", b.copilot_log_lines(b.copilot_session("v2", b.copilot_basic_requests())))
    run()
    s = _sessions("copilot-vscode")["v2"]
    _check_basic(s)
    assert s.ended_at == b.ts(60)


def test_copilot_log_patch_kinds_set_append_truncate_delete() -> None:
    state = {"requests": [1, 2, 3], "title": "a", "x": {"y": 1}}
    assert apply_patch(state, {"kind": 1, "k": ["title"], "v": "b"})
    assert apply_patch(state, {"kind": 2, "k": ["requests"], "v": [9], "i": 1})
    assert apply_patch(state, {"kind": 3, "k": ["x", "y"]})
    assert state == {"requests": [1, 9], "title": "b", "x": {}}
    assert not apply_patch(state, {"kind": 1, "k": ["nope", "deeper"], "v": 1})


def test_copilot_log_without_first_line_is_skipped_and_counted(homes: Homes) -> None:
    chat = b.vscode_workspace(homes.vscode_user, "h1", CWD)
    lines = b.copilot_log_lines(b.copilot_session("v3", b.copilot_basic_requests()))
    b.write_jsonl(chat / "v3.jsonl", lines[1:])
    report = run()
    assert report.skipped_files == {"copilot_log_without_snapshot": 1}
    assert report.sessions_new == 0


@pytest.mark.parametrize("root", [
    ".config/Code - Insiders/User", ".config/VSCodium/User", ".vscode-server/data/User",
    "Library/Application Support/Code/User",
])
def test_copilot_sessions_found_under_every_vscode_root(homes: Homes, root: str) -> None:
    chat = b.vscode_workspace(homes.home / root, "h2", CWD)
    (chat / "v4.json").write_text(json.dumps(b.copilot_session("v4", b.copilot_basic_requests())))
    run()
    assert "v4" in _sessions("copilot-vscode")


def test_copilot_windows_appdata_root_is_searched(homes: Homes, monkeypatch, tmp_path: Path) -> None:
    appdata = tmp_path / "AppData" / "Roaming"
    monkeypatch.setenv("APPDATA", str(appdata))
    (appdata / "Code" / "User").mkdir(parents=True)
    assert appdata / "Code" / "User" in vscode_user_dirs()


def test_copilot_workspace_file_maps_to_its_folder(homes: Homes) -> None:
    ws = homes.vscode_user / "workspaceStorage" / "h3"
    (ws / "chatSessions").mkdir(parents=True)
    (ws / "workspace.json").write_text(json.dumps({"workspace": "file:///work/multi/app.code-workspace"}))
    (ws / "chatSessions" / "v5.json").write_text(json.dumps(b.copilot_session("v5", b.copilot_basic_requests())))
    run()
    assert _sessions("copilot-vscode")["v5"].project_dir == "/work/multi"


def test_copilot_export_is_read_only_when_given(homes: Homes, tmp_path: Path) -> None:
    export = tmp_path / "export.json"
    data = b.copilot_session("ignored", b.copilot_basic_requests())
    export.write_text(json.dumps({k: data[k] for k in ("requesterUsername", "responderUsername",
                                                        "initialLocation", "requests")}))
    assert run().sessions_new == 0
    report = run(copilot_exports=[str(export)])
    assert report.sessions_new == 1
    (s,) = _sessions("copilot-vscode").values()
    assert s.session_id.startswith("export-") and len(s.prompts) == 2


def test_copilot_system_initiated_requests_are_not_prompts(homes: Homes) -> None:
    chat = b.vscode_workspace(homes.vscode_user, "h1", CWD)
    reqs = [b.copilot_request("Summarize the file", [b.md("Summary.")], 1, "r1"),
            b.copilot_request("Continue", [b.md("More.")], 2, "r2", isSystemInitiated=True)]
    (chat / "v6.json").write_text(json.dumps(b.copilot_session("v6", reqs)))
    run()
    assert [p.text for p in _sessions("copilot-vscode")["v6"].prompts] == ["Summarize the file"]


def test_copilot_prompt_after_an_unanswered_request_is_not_feedback(homes: Homes) -> None:
    # request 2 was cancelled before any answer (an empty response), so request 3 answers
    # nothing the agent said: only a prompt that follows an answered request is feedback.
    chat = b.vscode_workspace(homes.vscode_user, "h1", CWD)
    reqs = [b.copilot_request("Add a --verbose flag", [b.md("Added `--verbose`.")], 1, "r1"),
            b.copilot_request("Now document it", [], 2, "r2", isCanceled=True),
            b.copilot_request("no, that's wrong", [b.md("Fixed.")], 3, "r3"),
            b.copilot_request("no, not like that", [b.md("Changed it.")], 4, "r4")]
    b.write_jsonl(chat / "v7.jsonl", b.copilot_log_lines(b.copilot_session("v7", reqs)))
    run()
    s = _sessions("copilot-vscode")["v7"]
    assert len(s.prompts) == 4
    assert [(f.kind, f.prompt_index) for f in s.feedback] == [("correction", 3)]


def test_copilot_cli_events_session(homes: Homes) -> None:
    b.write_jsonl(homes.copilot_cli / "session-state" / "cli-1" / "events.jsonl",
                  b.copilot_cli_session("cli-1", CWD))
    run()
    s = _sessions("copilot-cli")["cli-1"]
    assert s.project_dir == CWD
    assert [p.text for p in s.prompts] == ["Rename the config loader", "no, keep the old name as an alias"]
    assert s.finals == ["Renamed it to load_settings.", "Kept `load_config` as an alias."]
    assert s.tools == {"edit": 1} and s.skills == {"refactoring": 1}
    assert [f.kind for f in s.feedback] == ["correction"]


def test_copilot_cli_legacy_history_session(homes: Homes) -> None:
    legacy = homes.copilot_cli / "history-session-state" / "session_old.json"
    legacy.parent.mkdir(parents=True)
    legacy.write_text(json.dumps({"sessionId": "old-1", "startTime": b.ts(0), "chatMessages": [
        {"role": "user", "content": "Bump the version"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "1", "type": "function",
                                                             "function": {"name": "bash", "arguments": "{}"}}]},
        {"role": "tool", "content": "ok", "tool_call_id": "1"},
        {"role": "assistant", "content": "Bumped to 1.2.0."}]}))
    run()
    s = _sessions("copilot-cli")["old-1"]
    assert [p.text for p in s.prompts] == ["Bump the version"]
    assert s.finals == ["Bumped to 1.2.0."] and s.tools == {"bash": 1}
