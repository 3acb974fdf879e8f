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

from skillopt_core.backends.claude_code import model_from_result, parse_stream
from skillopt_core.backends.codex import parse_events
from skillopt_core.backends.copilot import parse_output
from skillopt_core.backends.trajectory import (
    MAX_OUTPUT_CHARS, MAX_STEPS, CheckRun, CommandRun, FileChange, RawStep, TextStep, ToolCall, Trajectory,
    TrajectoryBuilder,
)


def lines(*events: dict) -> str:
    return "\n".join(json.dumps(e) for e in events) + "\n"


def claude_user(*blocks: dict, extra: object = None) -> dict:
    """A `user` event as Claude Code 2.1.197 prints it: the tool results, and beside the
    message the tool's own structured result (`tool_use_result`)."""
    event = {"type": "user", "message": {"role": "user", "content": list(blocks)}, "session_id": "s1"}
    if extra is not None:
        event["tool_use_result"] = extra
    return event


def claude_use(tool_id: str, name: str, **tool_input: object) -> dict:
    return {"type": "assistant", "message": {"role": "assistant", "content": [
        {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}]}, "session_id": "s1"}


# Shaped after a capture of the real `claude` 2.1.197 against a scripted endpoint (written anew here):
# a successful tool result has no `is_error` key; refusals and failures are `is_error: true` with the
# CLI's own words; a Write reports `tool_use_result.type` create or update, an Edit no type.
CLAUDE = lines(
    {"type": "system", "subtype": "init", "session_id": "s1", "tools": ["Bash", "Edit", "Read", "Write"],
     "model": "claude-sonnet-4-5[1m]", "claude_code_version": "2.1.197"},
    {"type": "assistant", "message": {"content": [
        {"type": "text", "text": "Installing dependencies."},
        {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "pnpm install"}}]}},
    claude_user({"tool_use_id": "t1", "type": "tool_result", "content": "Done in 2s", "is_error": False},
                extra={"stdout": "Done in 2s", "stderr": "", "interrupted": False}),
    claude_use("t2", "Bash", command="pnpm test"),
    claude_user({"type": "tool_result", "content": "Exit code 1\n1 failing", "is_error": True, "tool_use_id": "t2"},
                extra="Error: Exit code 1\n1 failing"),
    claude_use("t3", "Edit", file_path="/work/co/src/app.ts", old_string="a", new_string="b"),
    claude_user({"type": "tool_result", "content": "<tool_use_error>File has not been read yet. Read it first "
                                                   "before writing to it.</tool_use_error>", "is_error": True,
                 "tool_use_id": "t3"}, extra="Error: File has not been read yet. Read it first before writing to it."),
    claude_use("t4", "Read", file_path="/work/co/src/app.ts"),
    claude_user({"tool_use_id": "t4", "type": "tool_result", "content": "1\ta\n"},
                extra={"type": "text", "file": {"filePath": "/work/co/src/app.ts", "content": "a\n"}}),
    claude_use("t5", "Edit", file_path="/work/co/src/app.ts", old_string="a", new_string="b"),
    claude_user({"tool_use_id": "t5", "type": "tool_result", "content": "The file /work/co/src/app.ts has been "
                                                                      "updated successfully."},
                extra={"filePath": "/work/co/src/app.ts", "oldString": "a", "newString": "b"}),
    claude_use("t6", "Write", file_path="/work/co/NOTES.md", content="notes\n"),
    claude_user({"tool_use_id": "t6", "type": "tool_result", "content": "File created successfully at: "
                                                                      "/work/co/NOTES.md"},
                extra={"type": "create", "filePath": "/work/co/NOTES.md", "content": "notes\n"}),
    claude_use("t7", "Bash", command="curl https://example.com", description="fetch"),
    claude_user({"type": "tool_result", "content": "This command requires approval", "is_error": True,
                 "tool_use_id": "t7"}, extra="Error: This command requires approval"),
    claude_use("t8", "Bash", command="yarn install", description="install"),
    claude_user({"type": "tool_result", "content": "Exit code 127\n/bin/bash: line 1: yarn: command not found",
                 "is_error": True, "tool_use_id": "t8"}),
    claude_use("t9", "Skill", skill="deploy"),
    claude_user({"type": "tool_result", "tool_use_id": "t9", "content": "Launching skill: deploy"},
                extra={"success": True, "commandName": "deploy"}),
    claude_user({"type": "text", "text": "Base directory for this skill: /work/co/.claude/skills/deploy\n\nSteps."}),
    {"type": "brand_new_event", "payload": {"x": 1}},
    {"type": "result", "subtype": "success", "is_error": False, "result": "Installed and fixed.",
     "permission_denials": [{"tool_name": "Bash", "tool_use_id": "t7",
                             "tool_input": {"command": "curl https://example.com", "description": "fetch"}}],
     "modelUsage": {"claude-sonnet-4-5[1m]": {"inputTokens": 5, "outputTokens": 7}},
     "usage": {"input_tokens": 5, "output_tokens": 7}},
)


def test_claude_stream_gives_commands_with_exit_codes_and_the_result() -> None:
    result, trajectory = parse_stream(CLAUDE, Path("/work/co"))
    assert result is not None and result["result"] == "Installed and fixed."
    commands = trajectory.commands()
    assert [(c.command, c.exit_code, c.denied) for c in commands] == [
        ("pnpm install", 0, False), ("pnpm test", 1, False), ("curl https://example.com", None, True),
        ("yarn install", 127, False)]


def test_claude_file_changes_come_only_from_successful_results() -> None:
    _, trajectory = parse_stream(CLAUDE, Path("/work/co"))
    # The refused Edit (not read yet) changed nothing; the one after the Read did; Write create is a new file.
    assert trajectory.file_changes() == [FileChange("src/app.ts", "modified"), FileChange("NOTES.md", "added")]
    assert any(isinstance(s, TextStep) and s.text == "Installing dependencies." for s in trajectory.steps)
    assert [s.name for s in trajectory.steps if isinstance(s, ToolCall)] == [
        "Bash", "Bash", "Edit", "Read", "Edit", "Write", "Bash", "Bash", "Skill"]


def test_claude_write_over_an_existing_file_is_a_modification() -> None:
    stream = lines(claude_use("w", "Write", file_path="/work/co/a.txt", content="x"),
                   claude_user({"tool_use_id": "w", "type": "tool_result", "content": "updated"},
                               extra={"type": "update", "filePath": "/work/co/a.txt"}))
    assert parse_stream(stream, Path("/work/co"))[1].file_changes() == [FileChange("a.txt", "modified")]


def test_claude_model_name_loses_its_context_suffix() -> None:
    result, _ = parse_stream(CLAUDE, Path("/work/co"))
    assert model_from_result(result, "default") == "claude-sonnet-4-5"
    assert model_from_result({}, "claude-opus-4-1[1m]") == "claude-opus-4-1"


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
    assert [(c.command, c.exit_code, c.output) for c in t.commands()] == [("npm install", 0, "added 3 packages")]
    assert t.file_changes() == [FileChange("package-lock.json", "modified"), FileChange("NOTES.md", "added")]
    assert [s.name for s in t.steps if isinstance(s, ToolCall)] == ["docs.search"]
    assert t.unknown_events == 1  # the unknown item type, kept raw


def test_codex_paths_are_relative_failed_patches_dropped_errors_kept_and_shell_unwrapped() -> None:
    found = parse_events(lines(
        {"type": "item.completed", "item": {"id": "i0", "type": "command_execution",
                                            "command": "/bin/bash -lc 'pnpm install --frozen-lockfile'",
                                            "aggregated_output": "done", "exit_code": 0, "status": "completed"}},
        {"type": "item.completed", "item": {"id": "i1", "type": "file_change", "status": "completed",
                                            "changes": [{"path": "/work/co/src/a.ts", "kind": "update"},
                                                        {"path": "/work/co/NEW.md", "kind": "add"}]}},
        {"type": "item.completed", "item": {"id": "i2", "type": "file_change", "status": "failed",
                                            "changes": [{"path": "/work/co/src/b.ts", "kind": "update"}]}},
        {"type": "item.completed", "item": {"id": "i3", "type": "error",
                                            "message": "command timed out after 10000 milliseconds"}},
        {"type": "item.completed", "item": {"id": "i4", "type": "agent_message", "text": "ok"}},
    ), Path("/work/co"))
    t = found.trajectory
    assert [c.command for c in t.commands()] == ["pnpm install --frozen-lockfile"]
    assert t.file_changes() == [FileChange("src/a.ts", "modified"), FileChange("NEW.md", "added")]
    assert found.failed_changes == 1
    assert [(s.event_type, s.data) for s in t.steps if isinstance(s, RawStep)] == [
        ("error", "command timed out after 10000 milliseconds")]
    assert t.unknown_events == 0 and found.errors == ["command timed out after 10000 milliseconds"]


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
