"""Trajectories read from the hosts' streaming formats.

The event shapes follow the hosts' documentation:

- Claude Code, `claude -p --output-format stream-json --verbose`: the headless docs
  (https://code.claude.com/docs/en/headless, "Stream responses"; the Agent SDK message
  types: `system` `init`, `assistant` / `user` messages whose `content` holds `text`,
  `tool_use` {id, name, input} and `tool_result` {tool_use_id, content, is_error}
  blocks, and the final `result` with `permission_denials` [{tool_name, tool_use_id,
  tool_input}]).
- Codex, `codex exec --json`: openai/codex docs/exec.md ("JSON output mode") and the
  event list of openai/codex PR 4525 (`thread.started`, `turn.started`,
  `turn.completed` with `usage`, `turn.failed`, `item.started` / `item.updated` /
  `item.completed`; item types `agent_message`, `reasoning`, `command_execution`
  {command, aggregated_output, exit_code, status}, `file_change` {changes: [{path,
  kind: add|delete|update}]}, `mcp_tool_call` {server, tool, arguments, result, error},
  `web_search`, `todo_list`, `error`).
- Copilot CLI, `copilot -p --output-format json`: JSONL session events
  (`assistant.message` {content}, `tool.execution_start` {toolCallId, toolName,
  arguments}, `tool.execution_complete` {toolCallId, success, result {content},
  error {message, code?}}, `permission.requested` {requestId, permissionRequest {kind,
  toolCallId, ...}}, `permission.completed` {requestId, toolCallId?, result {kind}} with the
  denied kinds `denied-by-rules`, `denied-no-approval-rule-and-could-not-request-from-user`,
  ...), as the Copilot CLI's session events are described in GitHub's Copilot SDK
  (github/copilot-sdk `nodejs/src/generated/session-events.ts`, `docs/features/streaming-events.md`;
  error codes `denied` / `rejected` from its ToolResultType and `nodejs/test/e2e/tool_results.e2e.test.ts`;
  the CLI's refusal "Permission denied and could not request permission from user" from
  github/copilot-cli issues 549 and 4433); GitHub does not document them as a stable CLI
  contract, so the parser is tolerant.
"""

from __future__ import annotations

import json
from pathlib import Path

from skillopt_core.backends.claude_code import parse_stream
from skillopt_core.backends.codex import parse_events
from skillopt_core.backends.copilot import parse_output
from skillopt_core.backends.trajectory import (
    MAX_OUTPUT_CHARS, MAX_STEPS, CheckRun, CommandRun, FileChange, RawStep, TextStep, ToolCall, Trajectory,
    TrajectoryBuilder,
)


def lines(*events: dict) -> str:
    return "\n".join(json.dumps(e) for e in events) + "\n"


CLAUDE = lines(
    {"type": "system", "subtype": "init", "session_id": "s1", "tools": ["Read", "Bash", "Edit"], "model": "m"},
    {"type": "assistant", "message": {"content": [
        {"type": "text", "text": "Installing dependencies."},
        {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "pnpm install"}}]}},
    {"type": "user", "message": {"content": [
        {"type": "tool_result", "tool_use_id": "t1", "content": "Done in 2s", "is_error": False}]}},
    {"type": "assistant", "message": {"content": [
        {"type": "tool_use", "id": "t2", "name": "Bash", "input": {"command": "pnpm test"}}]}},
    {"type": "user", "message": {"content": [
        {"type": "tool_result", "tool_use_id": "t2", "content": "Exit code 1\n1 failing", "is_error": True}]}},
    {"type": "assistant", "message": {"content": [
        {"type": "tool_use", "id": "t3", "name": "Edit",
         "input": {"file_path": "/work/co/src/app.ts", "old_string": "a", "new_string": "b"}},
        {"type": "tool_use", "id": "t4", "name": "Bash", "input": {"command": "curl https://example.com"}}]}},
    {"type": "user", "message": {"content": [
        {"type": "tool_result", "tool_use_id": "t3", "content": [{"type": "text", "text": "edited"}]},
        {"type": "tool_result", "tool_use_id": "t4", "content": "Claude requested permissions to use Bash, "
                                                                 "but you haven't granted it yet.", "is_error": True}]}},
    {"type": "brand_new_event", "payload": {"x": 1}},
    {"type": "result", "subtype": "success", "is_error": False, "result": "Installed and fixed.",
     "permission_denials": [{"tool_name": "Bash", "tool_use_id": "t4", "tool_input": {"command": "curl https://example.com"}}],
     "usage": {"input_tokens": 5, "output_tokens": 7}},
)


def test_claude_stream_gives_commands_with_exit_codes_and_the_result() -> None:
    result, trajectory = parse_stream(CLAUDE, Path("/work/co"))
    assert result is not None and result["result"] == "Installed and fixed."
    commands = trajectory.commands()
    assert [(c.command, c.exit_code, c.denied) for c in commands] == [
        ("pnpm install", 0, False), ("pnpm test", 1, False), ("curl https://example.com", None, True)]


def test_claude_stream_edit_tool_becomes_a_relative_file_change() -> None:
    _, trajectory = parse_stream(CLAUDE, Path("/work/co"))
    assert trajectory.file_changes() == [FileChange("src/app.ts", "modified")]
    assert any(isinstance(s, TextStep) and s.text == "Installing dependencies." for s in trajectory.steps)
    assert [s.name for s in trajectory.steps if isinstance(s, ToolCall)] == ["Bash", "Bash", "Edit", "Bash"]


def test_claude_unknown_event_is_kept_and_counted_not_fatal() -> None:
    _, trajectory = parse_stream(CLAUDE, Path("/work/co"))
    assert trajectory.unknown_events == 1
    raw = [s for s in trajectory.steps if isinstance(s, RawStep)]
    assert raw[0].event_type == "brand_new_event"


CODEX = lines(
    {"type": "thread.started", "thread_id": "0199"},
    {"type": "turn.started"},
    {"type": "item.completed", "item": {"id": "item_0", "type": "reasoning", "text": "**Plan**"}},
    {"type": "item.started", "item": {"id": "item_1", "type": "command_execution", "command": "bash -lc 'npm install'",
                                      "aggregated_output": "", "exit_code": None, "status": "in_progress"}},
    {"type": "item.completed", "item": {"id": "item_1", "type": "command_execution", "command": "bash -lc 'npm install'",
                                        "aggregated_output": "added 3 packages", "exit_code": 0, "status": "completed"}},
    {"type": "item.completed", "item": {"id": "item_2", "type": "file_change", "status": "completed",
                                        "changes": [{"path": "package-lock.json", "kind": "update"},
                                                    {"path": "NOTES.md", "kind": "add"}]}},
    {"type": "item.completed", "item": {"id": "item_3", "type": "mcp_tool_call", "server": "docs", "tool": "search",
                                        "arguments": {"q": "x"}, "result": {"content": []}, "status": "completed"}},
    {"type": "item.completed", "item": {"id": "item_4", "type": "hologram", "text": "?"}},
    {"type": "item.completed", "item": {"id": "item_5", "type": "agent_message", "text": "Installed with npm."}},
    {"type": "turn.completed", "usage": {"input_tokens": 100, "cached_input_tokens": 20, "output_tokens": 9}},
)


def test_codex_items_become_commands_file_changes_and_tool_calls() -> None:
    found = parse_events(CODEX)
    assert found.text == "Installed with npm."
    assert (found.input_tokens, found.output_tokens) == (100, 9)
    t = found.trajectory
    assert [(c.command, c.exit_code, c.output) for c in t.commands()] == [("bash -lc 'npm install'", 0, "added 3 packages")]
    assert t.file_changes() == [FileChange("package-lock.json", "modified"), FileChange("NOTES.md", "added")]
    assert [s.name for s in t.steps if isinstance(s, ToolCall)] == ["docs.search"]
    assert t.unknown_events == 1  # the unknown item type, kept raw


def test_codex_declined_command_is_recorded_as_denied() -> None:
    found = parse_events(lines({"type": "item.completed", "item": {
        "id": "i", "type": "command_execution", "command": "git push", "aggregated_output": "", "exit_code": None,
        "status": "declined"}}))
    assert found.trajectory.commands()[0].denied


def test_copilot_tool_events_give_commands_and_writes() -> None:
    out = parse_output(lines(
        {"type": "session.start", "data": {"sessionId": "x"}},
        {"type": "tool.execution_start", "data": {"toolCallId": "c1", "toolName": "bash",
                                                  "arguments": {"command": "pnpm install"}}},
        {"type": "tool.execution_complete", "data": {"toolCallId": "c1", "success": True,
                                                     "result": {"content": "ok"}}},
        {"type": "tool.execution_start", "data": {"toolCallId": "c2", "toolName": "edit",
                                                  "arguments": {"path": "README.md"}}},
        {"type": "tool.execution_complete", "data": {"toolCallId": "c2", "success": True}},
        {"type": "assistant.message", "data": {"content": "Done."}},
        {"type": "odd.event", "data": {}},
    ))
    assert out.text == "Done."
    assert [(c.command, c.exit_code) for c in out.trajectory.commands()] == [("pnpm install", 0)]
    assert out.trajectory.file_changes() == [FileChange("README.md", "modified")]
    assert out.trajectory.unknown_events == 1


def _copilot_bash(call_id: str, command: str, complete: dict, *before: dict) -> list[dict]:
    return [{"type": "tool.execution_start", "data": {"toolCallId": call_id, "toolName": "bash",
                                                      "arguments": {"command": command}}},
            *before, {"type": "tool.execution_complete", "data": {"toolCallId": call_id, **complete}}]


def test_copilot_command_the_rules_refused_is_denied_by_its_permission_result() -> None:
    out = parse_output(lines(*_copilot_bash(
        "c1", "npm install", {"success": False, "error": {"message": "not run"}},
        {"type": "permission.requested", "data": {"requestId": "r1", "permissionRequest": {
            "kind": "shell", "fullCommandText": "npm install", "toolCallId": "c1"}}},
        {"type": "permission.completed", "data": {"requestId": "r1", "result": {
            "kind": "denied-by-rules", "rules": [{"kind": "shell", "argument": "npm"}]}}})))
    assert out.trajectory.commands() == [CommandRun("npm install", None, "not run", denied=True)]
    assert out.trajectory.unknown_events == 0
    assert "(denied)" in out.trajectory.summary()


def test_copilot_refusal_is_read_from_the_error_code_or_the_clis_words() -> None:
    for error in ({"code": "denied", "message": "Access denied"}, {"code": "rejected", "message": "no"},
                  {"message": "Permission denied and could not request permission from user"}):
        out = parse_output(lines(*_copilot_bash("c1", "curl x", {"success": False, "error": error})))
        assert out.trajectory.commands()[0].denied, error


def test_copilot_command_that_ran_and_failed_is_not_denied() -> None:
    out = parse_output(lines(*_copilot_bash("c1", "pytest", {"success": False, "error": {"message": "exit code 1"}}),
                             {"type": "permission.completed", "data": {"requestId": "r", "toolCallId": "c1",
                                                                       "result": {"kind": "approved"}}}))
    assert out.trajectory.commands() == [CommandRun("pytest", None, "exit code 1", denied=False)]


def test_copilot_refused_write_changes_no_file() -> None:
    out = parse_output(lines(
        {"type": "tool.execution_start", "data": {"toolCallId": "w1", "toolName": "edit",
                                                  "arguments": {"path": "a.md"}}},
        {"type": "permission.completed", "data": {"requestId": "r", "toolCallId": "w1", "result": {
            "kind": "denied-no-approval-rule-and-could-not-request-from-user"}}},
        {"type": "tool.execution_complete", "data": {"toolCallId": "w1", "success": False,
                                                     "error": {"message": "Permission denied"}}}))
    assert out.trajectory.file_changes() == []


def test_tool_output_is_bounded_and_steps_are_capped() -> None:
    huge = "x" * (MAX_OUTPUT_CHARS * 5)
    found = parse_events(lines({"type": "item.completed", "item": {
        "id": "i", "type": "command_execution", "command": "pytest", "aggregated_output": huge, "exit_code": 1}}))
    assert len(found.trajectory.commands()[0].output) <= MAX_OUTPUT_CHARS
    builder = TrajectoryBuilder()
    for i in range(MAX_STEPS + 7):
        builder.add(TextStep(str(i)))
    built = builder.build()
    assert len(built.steps) == MAX_STEPS and built.dropped == 7


def test_trajectory_round_trips_through_its_dict() -> None:
    t = Trajectory((TextStep("hi"), CommandRun("pnpm i", 0, "ok"), FileChange("a.txt", "added"),
                    CheckRun("pytest -q", 1, "1 failed"), RawStep("x", "{}")), unknown_events=1)
    assert Trajectory.from_dict(json.loads(json.dumps(t.to_dict()))) == t


def test_summary_names_commands_and_files_but_not_check_commands() -> None:
    t = Trajectory((CommandRun("npm install", 0), FileChange("package-lock.json", "modified"),
                    CheckRun("pytest -q --secret-flag", 1)))
    text = t.summary()
    assert "npm install" in text and "package-lock.json" in text
    assert "--secret-flag" not in text and "verification command failed" in text
