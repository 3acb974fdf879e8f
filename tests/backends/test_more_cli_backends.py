"""The gemini-cli, opencode and cursor-agent backends against fake executables put
first on PATH (tests/backends/fakes/gemini, opencode, cursor-agent). The fakes speak
the formats the CLIs document; sources:

- Gemini CLI headless mode, ``gemini -p <prompt> --output-format stream-json``: event
  types init, message (role, content, delta), tool_use (tool_name, tool_id, parameters),
  tool_result (tool_id, status, output, error), error (severity, message), result
  (status, stats, error); exit codes 0, 1, 42, 53
  (https://geminicli.com/docs/cli/headless/; the event interfaces of the CLI's
  ``nonInteractiveCli`` stream formatter). ``--approval-mode default|auto_edit|yolo``,
  ``--allowed-tools``, ``-m``, ``--skip-trust`` (the CLI's ``--help``,
  https://geminicli.com/docs/cli/cli-reference/, https://geminicli.com/docs/cli/trusted-folders/).
- OpenCode, ``opencode run --format json``: JSONL events step_start, text, tool_use,
  step_finish (tokens, cost), error, each with type, timestamp, sessionID, part
  (https://opencode.ai/docs/cli/; a captured stream in anomalyco/opencode#26855, whose
  last step_finish was missing). Inline config in ``OPENCODE_CONFIG_CONTENT``
  (https://opencode.ai/docs/config/), permission rules allow/ask/deny with the last
  matching pattern winning (https://opencode.ai/docs/permissions/).
- Cursor CLI, ``cursor-agent -p --output-format stream-json``: system init, user,
  assistant (one line per message), tool_call started/completed with a
  ``<kind>ToolCall`` object (args, result.success), terminal result (subtype,
  is_error, result, duration_ms, session_id); on failure a non-zero exit with the
  message on stderr (https://cursor.com/docs/cli/reference/output-format);
  ``--mode ask`` read-only, ``--force``, ``--model``
  (https://cursor.com/docs/cli/reference/parameters).

These test control flow only, never that a replay improves a skill.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_fakes import fake_env, make, only_record, target_request  # noqa: F401
from skillopt_core.backends import CompletionRequest, available_backends
from skillopt_core.backends.base import BackendConfigError, RequestFailed
from skillopt_core.backends.trajectory import CommandRun, FileChange
from skillopt_core.replay import REPLAY_MARKER

NEW = ["gemini-cli", "opencode", "cursor-agent"]
SKILL_DIRS = {"gemini-cli": ".gemini/skills", "opencode": ".opencode/skills", "cursor-agent": ".cursor/skills"}


@pytest.fixture(autouse=True)
def _fakes(fake_env: Path) -> Path:
    return fake_env


def prompt(record: dict) -> str:
    if record["name"] == "gemini":
        return record["argv"][record["argv"].index("-p") + 1]
    if record["name"] == "cursor-agent":
        return record["argv"][-1]
    return record["stdin"]


def opencode_config(record: dict) -> dict:
    return json.loads(record["env"]["OPENCODE_CONFIG_CONTENT"])


class PassThrough:
    """A launcher that starts the command as it is (the sandbox is tested in tests/sleep)."""

    name = "pass-through"

    def __init__(self) -> None:
        self.wrapped: list[list[str]] = []

    def wrap(self, argv, cwd, env, writable=()):
        self.wrapped.append(list(argv))
        return argv, env


def test_the_three_are_registered() -> None:
    assert set(NEW) <= set(available_backends())


@pytest.mark.parametrize("name", NEW)
async def test_prompt_is_marked_and_the_skill_installed_where_the_host_reads_it(name: str, fake_env: Path) -> None:
    await make(name).complete(target_request())
    record = only_record(fake_env)
    assert prompt(record).startswith(REPLAY_MARKER)
    assert "answer-style" in record["files"][f"{SKILL_DIRS[name]}/answer-style/SKILL.md"]
    assert record["env"]["SKILLOPT_REPLAY"] == "1"


# -- read-only by default ------------------------------------------------------------ #


async def test_gemini_runs_headless_with_default_approval_so_nothing_mutates(fake_env: Path) -> None:
    await make("gemini-cli").complete(target_request())
    argv = only_record(fake_env)["argv"]
    assert argv[0] == "-p" and argv[argv.index("--output-format") + 1] == "stream-json"
    assert argv[argv.index("--approval-mode") + 1] == "default" and "--skip-trust" in argv
    assert not {"--yolo", "-y", "--allowed-tools"} & set(argv)


async def test_gemini_allowed_tools_option_is_passed(fake_env: Path) -> None:
    await make("gemini-cli", allowed_tools=["run_shell_command(git status)"]).complete(target_request())
    argv = only_record(fake_env)["argv"]
    assert argv[argv.index("--allowed-tools") + 1] == "run_shell_command(git status)"


async def test_opencode_denies_edit_bash_and_webfetch_through_inline_config(fake_env: Path) -> None:
    await make("opencode").complete(target_request())
    record = only_record(fake_env)
    assert record["argv"][:3] == ["run", "--format", "json"]
    assert opencode_config(record) == {"permission": {"edit": "deny", "bash": "deny", "webfetch": "deny"}}


async def test_opencode_allowed_tools_option_allows_those_permissions(fake_env: Path) -> None:
    await make("opencode", allowed_tools=["webfetch"]).complete(target_request())
    assert opencode_config(only_record(fake_env))["permission"]["webfetch"] == "allow"


async def test_cursor_runs_in_ask_mode_without_force(fake_env: Path) -> None:
    await make("cursor-agent").complete(target_request())
    argv = only_record(fake_env)["argv"]
    assert argv[argv.index("--mode") + 1] == "ask"
    assert "--force" not in argv and argv[argv.index("--output-format") + 1] == "stream-json"


@pytest.mark.parametrize("name, flag", [("gemini-cli", "-m"), ("opencode", "-m"), ("cursor-agent", "--model")])
async def test_model_name_is_passed_to_the_cli(name: str, flag: str, fake_env: Path) -> None:
    backend = make(name, model="some/model")
    await backend.complete(target_request())
    argv = only_record(fake_env)["argv"]
    assert argv[argv.index(flag) + 1] == "some/model"


# -- acting through a launcher --------------------------------------------------------- #


def _acting(name: str) -> tuple[object, PassThrough]:
    backend = make(name)
    launcher = PassThrough()
    backend.act(launcher, output_cap=100_000)
    return backend, launcher


def _checkout() -> Path:
    import os

    work = Path(os.environ["SKILLOPT_REPLAY_ROOT"]) / "checkouts" / "c1"
    work.mkdir(parents=True)
    (work / "app.py").write_text("print(1)\n")
    return work


async def test_acting_gemini_approves_edits_and_only_the_named_programs(fake_env: Path) -> None:
    backend, launcher = _acting("gemini-cli")
    await backend.complete(target_request(cwd=str(_checkout()), allowed_commands=("pnpm", "git")))
    argv = only_record(fake_env)["argv"]
    assert argv[argv.index("--approval-mode") + 1] == "auto_edit"
    i = argv.index("--allowed-tools")  # one comma-separated value: gemini 0.61 reads a second as a prompt
    assert argv[i + 1] == "run_shell_command(pnpm),run_shell_command(git)"
    assert i + 2 == len(argv) or argv[i + 2].startswith("-")
    assert "--yolo" not in argv and len(launcher.wrapped) == 1


async def test_acting_opencode_allows_edits_and_only_the_named_programs(fake_env: Path) -> None:
    backend, launcher = _acting("opencode")
    await backend.complete(target_request(cwd=str(_checkout()), allowed_commands=("pnpm",)))
    rules = opencode_config(only_record(fake_env))["permission"]
    assert rules["edit"] == "allow"
    assert list(rules["bash"].items()) == [("*", "deny"), ("pnpm", "allow"), ("pnpm *", "allow")]
    assert len(launcher.wrapped) == 1


async def test_acting_cursor_forces_inside_the_launcher(fake_env: Path) -> None:
    backend, launcher = _acting("cursor-agent")
    await backend.complete(target_request(cwd=str(_checkout()), allowed_commands=("pnpm",)))
    argv = only_record(fake_env)["argv"]
    assert "--force" in argv and "--mode" not in argv
    assert launcher.wrapped and launcher.wrapped[0][0].endswith("cursor-agent")


# (flag, value) a trigger run inside the launcher carries: the CLI's read-only mode, or (codex) its own sandbox off
TRIGGER_FLAGS = {"gemini-cli": ("--approval-mode", "default"), "cursor-agent": ("--mode", "ask"),
                 "codex": ("--sandbox", "danger-full-access"), "claude-code": None, "opencode": None}


@pytest.mark.parametrize("name", [*NEW, "codex", "claude-code"])
async def test_trigger_calls_of_an_acting_backend_run_inside_its_launcher_without_acting(name: str,
                                                                                        fake_env: Path) -> None:
    """The night's trigger step runs the agent on a person's request: through the sandbox like a rollout
    (codex with its own sandbox off, which cannot start inside bubblewrap), with read-only permissions."""
    backend, launcher = _acting(name)
    work = _checkout()
    await backend.complete(CompletionRequest.single("deploy the app", role="trigger", stage="trigger", cwd=str(work),
                                                    skill="---\nname: s\ndescription: d\n---\nbody\n"))
    assert len(launcher.wrapped) == 1
    argv = only_record(fake_env)["argv"]
    sign = TRIGGER_FLAGS[name]
    if sign is not None:
        assert argv[argv.index(sign[0]) + 1] == sign[1], argv
    if name == "opencode":
        assert opencode_config(only_record(fake_env))["permission"].get("edit") != "allow"
    assert "--force" not in argv and "--yolo" not in argv
    launcher.wrapped.clear()
    await backend.complete(CompletionRequest.single("deploy the app", role="trigger"))  # no folder: not a run
    assert not launcher.wrapped


@pytest.mark.parametrize("name", NEW)
async def test_optimizer_calls_do_not_act_even_after_act(name: str, fake_env: Path) -> None:
    backend, launcher = _acting(name)
    await backend.complete(CompletionRequest.single("x", role="optimizer"))
    assert not launcher.wrapped


# -- output, usage and the trajectory ------------------------------------------------ #


async def test_gemini_joins_the_last_turns_chunks_and_reads_stats(fake_env: Path, monkeypatch) -> None:
    monkeypatch.setenv("FAKE_CLI_REPLY", "Paris is the capital")
    completion = await make("gemini-cli").complete(target_request())
    assert completion.text == "Paris is the capital"
    assert (completion.usage.input_tokens, completion.usage.output_tokens) == (1500, 40)
    assert completion.model == "gemini-2.5-pro"
    steps = completion.trajectory.steps
    assert [s.command for s in steps if isinstance(s, CommandRun)] == ["ls -a"]
    assert not [s for s in steps if isinstance(s, FileChange)]  # the denied write_file changed nothing
    assert [s.is_error for s in steps if s.kind == "tool_result"] == [False, False, True]


async def test_opencode_takes_the_last_steps_text_and_sums_tokens_and_cost(fake_env: Path, monkeypatch) -> None:
    monkeypatch.setenv("FAKE_CLI_REPLY", "Paris")
    completion = await make("opencode").complete(target_request())
    assert completion.text == "Paris"
    assert completion.usage.input_tokens == 1000 + 500 + 200 + 100
    assert completion.usage.output_tokens == 20 + 5 + 30
    assert completion.usage.cost_usd == pytest.approx(0.012)
    commands = completion.trajectory.commands()
    assert [(c.command, c.exit_code) for c in commands] == [("ls -a", 0)]


async def test_opencode_answer_counts_when_the_last_step_finish_is_missing(fake_env: Path, monkeypatch) -> None:
    monkeypatch.setenv("FAKE_CLI_MODE", "no_finish")
    monkeypatch.setenv("FAKE_CLI_REPLY", "Paris")
    completion = await make("opencode").complete(target_request())
    assert completion.text == "Paris" and completion.usage.input_tokens == 1500


async def test_cursor_answer_is_the_text_after_the_last_tool_call(fake_env: Path, monkeypatch) -> None:
    monkeypatch.setenv("FAKE_CLI_REPLY", "Paris")
    completion = await make("cursor-agent").complete(target_request())
    assert completion.text == "Paris"  # not "Reading the skill.Paris", the result's concatenation
    assert (completion.usage.input_tokens, completion.usage.output_tokens) == (1000, 25)
    assert completion.model == "Claude 4 Sonnet"
    steps = completion.trajectory.steps
    assert [(s.command, s.exit_code) for s in steps if isinstance(s, CommandRun)] == [("ls -a", 0)]
    assert [(s.path, s.change) for s in steps if isinstance(s, FileChange)] == [("out.md", "added")]


# -- failures ---------------------------------------------------------------------------- #


@pytest.mark.parametrize("name", NEW)
async def test_a_login_problem_stops_the_run(name: str, fake_env: Path, monkeypatch) -> None:
    monkeypatch.setenv("FAKE_CLI_MODE", "error")
    with pytest.raises(BackendConfigError, match="not logged in"):
        await make(name).complete(target_request())


@pytest.mark.parametrize("name", NEW)
async def test_an_api_failure_fails_this_item_only(name: str, fake_env: Path, monkeypatch) -> None:
    monkeypatch.setenv("FAKE_CLI_MODE", "api_error")
    with pytest.raises(RequestFailed) as info:
        await make(name).complete(target_request())
    assert not isinstance(info.value, BackendConfigError)


@pytest.mark.parametrize("name", NEW)
async def test_no_answer_fails_this_item(name: str, fake_env: Path, monkeypatch) -> None:
    monkeypatch.setenv("FAKE_CLI_MODE", "no_answer")
    with pytest.raises(RequestFailed):
        await make(name).complete(target_request())


async def test_gemini_turn_limit_exit_says_so(fake_env: Path, monkeypatch) -> None:
    monkeypatch.setenv("FAKE_CLI_MODE", "max_turns")
    with pytest.raises(RequestFailed, match="turn limit"):
        await make("gemini-cli").complete(target_request())


async def test_cursor_unknown_model_in_an_error_result_is_systemic(fake_env: Path, monkeypatch) -> None:
    monkeypatch.setenv("FAKE_CLI_MODE", "result_error")
    with pytest.raises(BackendConfigError, match="model is not available"):
        await make("cursor-agent").complete(target_request())


@pytest.mark.parametrize("name", NEW)
async def test_missing_executable_says_how_to_install(name: str, monkeypatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(BackendConfigError, match="not on PATH"):
        make(name)


def test_opencode_counts_a_tool_call_once_though_it_comes_once_per_state() -> None:
    from skillopt_core.backends.opencode import parse_events

    def tool(status: str) -> str:
        state = {"status": status, "input": {"command": "ls"}}
        if status == "completed":
            state["output"] = "a\n"
        return json.dumps({"type": "tool_use", "timestamp": 1, "sessionID": "ses_1",
                           "part": {"type": "tool", "tool": "bash", "callID": "call_1", "state": state}})

    out = parse_events("\n".join([tool("pending"), tool("running"), tool("completed")]))
    assert [(c.command, c.exit_code) for c in out.trajectory.commands()] == [("ls", 0)]
    assert [s.kind for s in out.trajectory.steps] == ["tool_call", "tool_result", "command"]


def test_cursor_deltas_followed_by_their_whole_message_count_once() -> None:
    """The shape of a captured cursor-agent stream (GPT-5.1 Medium): each assistant delta as
    its own event, then the whole message again; parallel grep calls started before either
    completed; thinking events; a call_id holding a newline."""
    from skillopt_core.backends.cursor_agent import parse_stream

    def say(text: str) -> dict:
        return {"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": text}]},
                "session_id": "s"}

    def grep(call_id: str, subtype: str) -> dict:
        call = {"args": {"pattern": "Clear", "path": "/w", "toolCallId": call_id}}
        if subtype == "completed":
            call["result"] = {"success": {"pattern": "Clear", "workspaceResults": {"/w": {"content": {"matches": []}}}}}
        return {"type": "tool_call", "subtype": subtype, "call_id": call_id, "tool_call": {"grepToolCall": call},
                "session_id": "s"}

    events = [{"type": "system", "subtype": "init", "model": "GPT-5.1 Medium", "session_id": "s"},
              say("I"), say("’ll look"), say(" first."), say("I’ll look first."),
              grep("call_a\nfc_1", "started"), grep("call_b\nfc_2", "started"),
              grep("call_b\nfc_2", "completed"), grep("call_a\nfc_1", "completed"),
              {"type": "thinking", "subtype": "delta", "text": "hm"}, {"type": "thinking", "subtype": "completed"},
              say("Renamed"), say(" it."), say("Renamed it."),
              {"type": "result", "subtype": "success", "is_error": False, "session_id": "s",
               "result": "I’ll look first.Renamed it."}]
    out = parse_stream("\n".join(json.dumps(e) for e in events))
    assert out.final_text == "Renamed it."
    texts = [s.text for s in out.trajectory.steps if s.kind == "text"]
    assert texts == ["I’ll look first.", "Renamed it."]
    assert [s.id for s in out.trajectory.steps if s.kind == "tool_result"] == ["call_b\nfc_2", "call_a\nfc_1"]
    assert out.trajectory.unknown_events == 0


def test_gemini_stream_without_tool_ids_pairs_results_with_their_calls() -> None:
    """Some recorded Gemini CLI streams carry no tool_id; the result follows its call."""
    from skillopt_core.backends.gemini_cli import parse_stream

    events = [{"type": "message", "timestamp": "t", "role": "assistant", "content": "Checking.", "delta": True},
              {"type": "tool_use", "timestamp": "t", "tool_name": "run_shell_command", "parameters": {"command": "ls"}},
              {"type": "tool_result", "timestamp": "t", "status": "success", "output": "a.txt"},
              {"type": "result", "timestamp": "t", "status": "success", "response": "Only a.txt."}]
    out = parse_stream("\n".join(json.dumps(e) for e in events))
    assert [(c.command, c.exit_code, c.output) for c in out.trajectory.commands()] == [("ls", 0, "a.txt")]
    assert out.text == "Only a.txt."  # a result that carries the answer wins over the streamed narration
    out = parse_stream(json.dumps({"type": "result", "status": "success", "response": "Only a.txt."}))
    assert out.text == "Only a.txt."
