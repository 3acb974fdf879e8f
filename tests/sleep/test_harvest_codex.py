"""Codex rollouts: each user turn once, injected context never a prompt."""

from __future__ import annotations

import sleep_builders as b
from sleep_testutil import Homes, run

from skillopt_core.replay import REPLAY_MARKER
from sleep.index import Index

CWD = "/work/cli"


def _only_session():
    with Index.open() as idx:
        (s,) = idx.sessions(host="codex")
    return s


def test_codex_session_prompts_finals_tools_skills_feedback(homes: Homes) -> None:
    sid = b.uid("codex-1")
    b.write_jsonl(b.codex_rollout_path(homes.codex, sid), b.codex_basic_session(sid, CWD))
    run()
    s = _only_session()
    assert s.session_id == sid and s.project_dir == CWD
    assert [p.text for p in s.prompts] == ["Add a --verbose flag to the CLI", "perfect, thanks"]
    assert s.finals == ["Added --verbose; it prints each step.", "Glad it helps."]
    assert s.tools == {"shell": 1, "apply_patch": 1}
    assert s.skills == {"cli-style": 1}
    assert [(f.kind, f.prompt_index) for f in s.feedback] == [("approval", 1)]
    assert s.model == "gpt-5-codex"


def test_codex_double_logged_turns_count_once_and_injected_text_is_not_a_prompt(homes: Homes) -> None:
    sid = b.uid("codex-2")
    lines = [b.codex_meta(sid, CWD), *b.codex_injected(CWD, 0.1)]
    for i in range(3):
        lines += b.codex_user_turn(f"step {i}", 1 + i)
        lines += b.codex_assistant(f"done {i}", 1.5 + i)
    b.write_jsonl(b.codex_rollout_path(homes.codex, sid), lines)
    run()
    s = _only_session()
    assert [p.text for p in s.prompts] == ["step 0", "step 1", "step 2"]
    assert s.finals == ["done 0", "done 1", "done 2"]


def test_codex_archived_sessions_are_harvested(homes: Homes) -> None:
    sid = b.uid("codex-3")
    b.write_jsonl(b.codex_rollout_path(homes.codex, sid, archived=True), b.codex_basic_session(sid, CWD))
    report = run()
    assert report.sessions_new == 1
    assert _only_session().session_id == sid


def test_codex_legacy_rollout_without_envelope_uses_user_messages(homes: Homes) -> None:
    sid = b.uid("codex-4")
    lines = [
        {"id": sid, "timestamp": b.ts(0), "instructions": None},
        {"record_type": "state"},
        {"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": "<environment_context>\n<cwd>/x</cwd>\n</environment_context>"}]},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Explain this repo"}]},
        {"type": "function_call", "name": "shell", "arguments": "{\"command\":[\"ls\"]}", "call_id": "c"},
        {"type": "function_call_output", "call_id": "c", "output": "{}"},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "It is a CLI."}]},
    ]
    b.write_jsonl(b.codex_rollout_path(homes.codex, sid), lines)
    run()
    s = _only_session()
    assert [p.text for p in s.prompts] == ["Explain this repo"]
    assert s.finals == ["It is a CLI."] and s.tools == {"shell": 1}


def test_codex_subagent_rollout_is_marked(homes: Homes) -> None:
    sid = b.uid("codex-5")
    lines = [b.codex_meta(sid, CWD, source={"subagent": {"parent_thread_id": "parent-1"}}),
             *b.codex_user_turn("review the diff", 1)]
    b.write_jsonl(b.codex_rollout_path(homes.codex, sid), lines)
    run()
    s = _only_session()
    assert s.is_subagent and s.parent_session_id == "parent-1"


def test_codex_replays_are_skipped_by_cwd_and_by_marker(homes: Homes, tmp_path) -> None:
    replay_cwd = str(tmp_path / "replays" / "skillopt-replay" / "r")
    a, c = b.uid("replay-a"), b.uid("replay-c")
    b.write_jsonl(b.codex_rollout_path(homes.codex, a), [b.codex_meta(a, replay_cwd), *b.codex_user_turn("x", 1)])
    b.write_jsonl(b.codex_rollout_path(homes.codex, c, t=5),
                  [b.codex_meta(c, CWD, originator="codex_exec"), *b.codex_user_turn(REPLAY_MARKER + "\ntask", 1)])
    report = run()
    assert report.replay_sessions_skipped == 2 and report.sessions_new == 0


def test_codex_history_lines_are_typed_prompts(homes: Homes) -> None:
    b.write_jsonl(homes.codex / "history.jsonl", [{"session_id": "abc", "ts": 1740819600, "text": "run the linter"}])
    report = run()
    assert report.history_prompts == 1
    with Index.open() as idx:
        (h,) = idx.history("codex")
    assert (h.text, h.session_id, h.at) == ("run the linter", "abc", "2025-03-01T09:00:00.000Z")
