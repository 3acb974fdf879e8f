"""What the agent did, kept per turn: shell signatures, project-relative files, entry point."""

from __future__ import annotations

import json

import sleep_builders as b
from sleep_testutil import Homes, run

from sleep.index import Index
from sleep.harvest.sources.actions import patch_files, project_path

CWD = "/work/app"


def _session(host: str, sid: str):
    with Index.open() as idx:
        s = idx.get_session(host, sid)
    assert s is not None
    return s


def _actions(s) -> list[tuple[list[str], list[str]]]:
    return [(p.shell, p.files) for p in s.prompts]


def test_claude_code_turns_keep_shell_signatures_and_project_files(homes: Homes) -> None:
    b.write_jsonl(b.claude_session_path(homes.claude, CWD, "a1"), b.claude_actions_session("a1", CWD))
    report = run()
    s = _session("claude-code", "a1")
    assert _actions(s) == [
        (["pytest -q", "git status"], ["src/api.py"]),
        (["ruff check", "curl -H"], ["src/new.py", "nb/explore.ipynb", "src", "keys/[REDACTED:github-token].txt"]),
    ]
    assert report.actions["file_outside_project"] == 1  # /etc/hosts
    assert s.entrypoint == "cli" and not s.scripted
    stored = b"".join(p.read_bytes() for p in homes.skillopt.iterdir() if p.is_file())
    assert b"Gl.gHysW0t" not in stored and b"ghp_R4nd0m" not in stored


def test_claude_code_sdk_entrypoint_marks_the_session_scripted(homes: Homes) -> None:
    b.write_jsonl(b.claude_session_path(homes.claude, CWD, "a2"), b.claude_actions_session("a2", CWD, "sdk-cli"))
    run()
    s = _session("claude-code", "a2")
    assert s.entrypoint == "sdk-cli" and s.scripted
    with Index.open() as idx:
        row = idx.conn.execute("SELECT entrypoint, scripted FROM sessions WHERE session_id = 'a2'").fetchone()
    assert row == ("sdk-cli", 1)


def test_codex_turns_keep_exec_shell_local_shell_and_patched_files(homes: Homes) -> None:
    sid = b.uid("codex-actions")
    b.write_jsonl(b.codex_rollout_path(homes.codex, sid), b.codex_actions_session(sid, CWD))
    report = run()
    s = _session("codex", sid)
    assert _actions(s) == [(["pytest -q", "npm run build", "cargo test"],
                            ["src/cli.py", "tests/test_cli.py", "old.py"])]
    assert s.entrypoint == "codex_cli_rs" and not s.scripted
    assert s.model == "gpt-5.1-codex"  # from the undecoded second turn_context
    assert report.lines_skipped_undecoded >= 5  # outputs, the user-turn copy, a turn_context


def test_codex_exec_originator_marks_the_session_scripted(homes: Homes) -> None:
    sid = b.uid("codex-exec")
    b.write_jsonl(b.codex_rollout_path(homes.codex, sid), b.codex_actions_session(sid, CWD, "codex_exec"))
    run()
    s = _session("codex", sid)
    assert s.entrypoint == "codex_exec" and s.scripted


def test_copilot_vscode_terminal_commands_file_tools_and_edit_groups(homes: Homes) -> None:
    chat = b.vscode_workspace(homes.vscode_user, "w1", CWD)
    (chat / "v1.json").write_text(json.dumps(b.copilot_session("v1", b.copilot_actions_requests(CWD))))
    report = run()
    s = _session("copilot-vscode", "v1")
    assert _actions(s) == [(["npm test"], ["src/a.ts", "src/b.ts", "src/c.ts"]), (["pytest -x"], [])]
    assert report.actions["file_outside_project"] >= 1  # ~/.bashrc
    assert s.entrypoint is None and not s.scripted


def test_copilot_vscode_log_skips_unused_patches_undecoded_and_keeps_actions(homes: Homes) -> None:
    chat = b.vscode_workspace(homes.vscode_user, "w2", CWD)
    lines = b.copilot_log_lines(b.copilot_session("v2", b.copilot_actions_requests(CWD)))
    lines.insert(3, {"kind": 1, "k": ["requests", 0, "result"], "v": {"metadata": {"toolCallRounds": ["x" * 5000]}}})
    lines.insert(4, {"kind": 2, "k": ["requests", 0, "contentReferences"], "v": [{"reference": "y"}]})
    b.write_jsonl(chat / "v2.jsonl", lines)
    report = run()
    s = _session("copilot-vscode", "v2")
    assert _actions(s)[0] == (["npm test"], ["src/a.ts", "src/b.ts", "src/c.ts"])
    assert report.lines_skipped_undecoded == 2


def test_copilot_cli_tool_requests_give_shell_and_files_once_per_call(homes: Homes) -> None:
    b.write_jsonl(homes.copilot_cli / "session-state" / "c1" / "events.jsonl", b.copilot_cli_actions_session("c1", CWD))
    report = run()
    s = _session("copilot-cli", "c1")
    assert _actions(s) == [(["make test"], ["README.md", "docs/index.md", "src/cli.py", "tests/test_cli.py"])]
    assert report.actions["shell_commands"] == 1  # the execution_start repeats request k1


def test_project_path_relative_inside_dropped_outside() -> None:
    assert project_path("/work/app/src/a.py", "/work/app") == "src/a.py"
    assert project_path("./src/../lib/b.py", "/work/app") == "lib/b.py"
    assert project_path("src/a.py", "/work/app", cwd="/work/app/web") == "web/src/a.py"
    assert project_path("file:///work/app/x%20y.md", "/work/app") == "x y.md"
    assert project_path("C:\\Users\\dev\\proj\\src\\Main.cs", "c:\\users\\dev\\proj") == "src/Main.cs"
    for outside in ("/work/application/a.py", "/etc/hosts", "~/.bashrc", "../other/a.py", "/work/app", ""):
        assert project_path(outside, "/work/app") is None, outside
    assert project_path("/work/app/a.py", None) is None


def test_patch_files_reads_every_header_kind() -> None:
    patch = b.PATCH + "\n*** Delete File: gone.py\n*** Update File: a.py\n*** Move to: b.py\n"
    assert patch_files(patch) == ["src/cli.py", "tests/test_cli.py", "gone.py", "a.py", "b.py"]
    assert patch_files("no patch here") == [] and patch_files(None) == []
