"""The claude-code, codex and copilot backends against fake executables put first
on PATH (tests/backends/fakes/). The fakes record argv, cwd, environment, stdin
and the files in their working directory, and print output shaped like the real
CLIs' (claude -p --output-format stream-json --verbose, codex exec --json, copilot -p
--output-format json plus --usage-output-file)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from cli_fakes import CLIS, COMMANDS, SKILL, alive, fake_env, make, only_record, prompt_of, target_request  # noqa: F401
from cli_fakes import records as cli_records
from skillopt_core.backends import CompletionRequest, Message
from skillopt_core.backends.base import BackendConfigError, BackendError, RequestFailed, RequestRejected
from skillopt_core.backends.structured import complete_json

PROJECT = Path.cwd()


@pytest.fixture(autouse=True)
def _fakes(fake_env: Path) -> Path:
    return fake_env


# -- tools are read-only by default ------------------------------------------- #


async def test_claude_code_allows_only_read_only_tools_by_default(fake_env: Path) -> None:
    await make("claude-code").complete(target_request())
    argv = only_record(fake_env)["argv"]
    tools = argv[argv.index("--tools") + 1].split(",")
    assert set(tools) == {"Read", "Grep", "Glob", "Skill"}
    assert argv[argv.index("--allowedTools") + 1].split(",") == tools
    assert not {"Write", "Edit", "Bash", "NotebookEdit"} & set(tools)
    assert "--dangerously-skip-permissions" not in argv
    assert argv[:5] == ["-p", "--output-format", "stream-json", "--verbose", "--no-session-persistence"]


async def test_claude_code_optimizer_calls_get_no_tools(fake_env: Path) -> None:
    await make("claude-code", role="optimizer").complete(CompletionRequest.single("x", role="optimizer"))
    argv = only_record(fake_env)["argv"]
    assert argv[argv.index("--tools") + 1] == ""
    assert "--allowedTools" not in argv


async def test_claude_code_allowed_tools_option_replaces_the_list(fake_env: Path) -> None:
    await make("claude-code", allowed_tools=["Read", "WebFetch"], max_turns=3).complete(target_request())
    argv = only_record(fake_env)["argv"]
    assert argv[argv.index("--tools") + 1] == "Read,WebFetch"
    assert argv[argv.index("--max-turns") + 1] == "3"


async def test_codex_runs_in_read_only_sandbox(fake_env: Path) -> None:
    await make("codex").complete(target_request())
    record = only_record(fake_env)
    argv = record["argv"]
    assert argv[:2] == ["exec", "--json"]
    assert argv[argv.index("--sandbox") + 1] == "read-only"
    assert "--skip-git-repo-check" in argv and "--ephemeral" in argv
    assert argv[argv.index("-C") + 1] == record["cwd"]
    assert "--dangerously-bypass-approvals-and-sandbox" not in argv and "workspace-write" not in argv


async def test_copilot_denies_shell_and_write_tools_by_default(fake_env: Path) -> None:
    await make("copilot").complete(target_request())
    record = only_record(fake_env)
    argv = record["argv"]
    assert "--deny-tool=shell" in argv and "--deny-tool=write" in argv
    assert not {"--allow-all", "--yolo", "--allow-all-paths"} & set(argv)
    assert not [a for a in argv if a.startswith("--allow-tool=")]
    assert f"--add-dir={record['cwd']}" in argv
    assert argv[argv.index("--output-format") + 1] == "json"


async def test_copilot_allowed_tools_option_replaces_blanket_approval(fake_env: Path) -> None:
    await make("copilot", allowed_tools=["view", "grep"]).complete(target_request())
    argv = only_record(fake_env)["argv"]
    assert "--allow-tool=view" in argv and "--allow-tool=grep" in argv
    assert "--allow-all-tools" not in argv


@pytest.mark.parametrize("name, flag", [("claude-code", "--model"), ("codex", "-m"), ("copilot", "--model")])
async def test_model_name_is_passed_to_the_cli(name: str, flag: str, fake_env: Path) -> None:
    backend = make(name, model="some-model")
    await backend.complete(target_request())
    argv = only_record(fake_env)["argv"]
    assert argv[argv.index(flag) + 1] == "some-model"
    assert backend.model == "some-model"


# -- output, usage and cost ---------------------------------------------------- #


async def test_claude_code_parses_text_usage_and_reported_cost(fake_env: Path, monkeypatch) -> None:
    monkeypatch.setenv("FAKE_CLI_REPLY", "Paris")
    completion = await make("claude-code").complete(target_request())
    assert completion.text == "Paris"
    assert completion.usage.input_tokens == 12 + 300 + 1000
    assert completion.usage.output_tokens == 25
    assert completion.usage.cost_usd == pytest.approx(0.0123)
    assert completion.model == "claude-sonnet-4-6"


async def test_codex_takes_last_agent_message_and_turn_usage(fake_env: Path, monkeypatch) -> None:
    monkeypatch.setenv("FAKE_CLI_REPLY", "Paris")
    completion = await make("codex").complete(target_request())
    assert completion.text == "Paris"
    assert (completion.usage.input_tokens, completion.usage.output_tokens) == (2400, 40)
    assert completion.usage.cost_usd is None  # default model: price unknown


async def test_codex_error_item_is_kept_and_does_not_fail_the_answer(fake_env: Path, monkeypatch) -> None:
    monkeypatch.setenv("FAKE_CLI_MODEL_WARNING", "1")
    completion = await make("codex").complete(target_request())
    errors = [s for s in completion.trajectory.steps if getattr(s, "event_type", "") == "error"]
    assert completion.text == "fake answer" and "Model metadata" in errors[0].data
    assert completion.trajectory.unknown_events == 0
    assert [c.command for c in completion.trajectory.commands()] == ["ls .agents/skills"]


async def test_copilot_takes_last_assistant_message_and_usage_file(fake_env: Path, monkeypatch) -> None:
    monkeypatch.setenv("FAKE_CLI_REPLY", "Paris")
    completion = await make("copilot").complete(target_request())
    assert completion.text == "Paris"
    assert (completion.usage.input_tokens, completion.usage.output_tokens) == (5100, 61)
    assert completion.usage.cost_usd is None
    assert completion.model == "claude-sonnet-4.6"


@pytest.mark.parametrize("name", CLIS)
async def test_json_reply_is_returned_as_it_came_and_read_by_the_engine(name: str, fake_env: Path, monkeypatch) -> None:
    reply = 'Here it is:\n```json\n{"answer": "Paris"}\n```'
    monkeypatch.setenv("FAKE_CLI_REPLY", reply)
    schema = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}
    backend = make(name, role="optimizer")
    completion = await backend.complete(CompletionRequest.single("Capital?", json_schema=schema, role="optimizer"))
    assert completion.text == reply  # no extraction or repair in the backend
    assert "JSON Schema" in prompt_of(only_record(fake_env))
    parsed = await complete_json(backend, CompletionRequest.single("Capital?", role="optimizer"), schema)
    assert parsed.ok and parsed.data == {"answer": "Paris"} and parsed.attempts == 1


# -- failures: this item only, or the whole run --------------------------------- #


@pytest.mark.timeout(60)
@pytest.mark.parametrize("name", CLIS)
async def test_hung_process_is_killed_at_the_timeout_and_fails_only_this_item(name: str, fake_env: Path, monkeypatch) -> None:
    monkeypatch.setenv("FAKE_CLI_MODE", "hang")
    started = time.monotonic()
    with pytest.raises(RequestFailed, match=r"did not finish within 1 s"):
        await make(name, timeout=1).complete(target_request())
    assert time.monotonic() - started < 15
    record = only_record(fake_env)
    for _ in range(50):
        if not alive(record["pid"]) and not alive(record["child_pid"]):
            break
        time.sleep(0.1)
    assert not alive(record["pid"]), "the CLI process survived the timeout"
    assert not alive(record["child_pid"]), "a process the CLI started survived the timeout"
    assert not Path(record["cwd"]).exists()


@pytest.mark.parametrize("name", CLIS)
async def test_nonzero_exit_fails_only_this_item_with_clear_error(name: str, fake_env: Path, monkeypatch) -> None:
    monkeypatch.setenv("FAKE_CLI_MODE", "fail")
    with pytest.raises(RequestFailed) as info:
        await make(name).complete(target_request())
    message = str(info.value)
    assert f"`{COMMANDS[name]}` exited with code 3" in message
    assert "something went wrong talking to the service" in message
    assert "log in" in message
    assert not Path(only_record(fake_env)["cwd"]).exists()


@pytest.mark.parametrize("name, expected", [
    ("claude-code", "API Error: 500"),
    ("codex", "stream disconnected"),
    ("copilot", "503 Service Unavailable"),
])
async def test_failed_model_call_reported_by_the_cli_fails_only_this_item(name: str, expected: str, fake_env: Path, monkeypatch) -> None:
    monkeypatch.setenv("FAKE_CLI_MODE", "api_error")
    with pytest.raises(RequestFailed, match=expected):
        await make(name).complete(target_request())


@pytest.mark.parametrize("name", CLIS)
async def test_output_without_an_answer_fails_only_this_item(name: str, fake_env: Path, monkeypatch) -> None:
    monkeypatch.setenv("FAKE_CLI_MODE", "no_answer")
    with pytest.raises(RequestFailed):
        await make(name).complete(target_request())


@pytest.mark.parametrize("name, expected", [
    ("claude-code", "Not logged in"),
    ("codex", "401 Unauthorized"),
    ("copilot", "Not logged in"),
])
async def test_login_failure_is_systemic_not_per_item(name: str, expected: str, fake_env: Path, monkeypatch) -> None:
    monkeypatch.setenv("FAKE_CLI_MODE", "error")
    with pytest.raises(BackendConfigError, match=expected) as info:
        await make(name).complete(target_request())
    assert not isinstance(info.value, RequestFailed)
    assert "not logged in" in str(info.value)


async def test_unknown_model_is_systemic_not_per_item(fake_env: Path, monkeypatch) -> None:
    monkeypatch.setenv("FAKE_CLI_MODE", "bad_model")
    with pytest.raises(BackendConfigError, match="model") as info:
        await make("claude-code", model="claude-bogus").complete(target_request())
    assert not isinstance(info.value, RequestFailed)
    assert "model.target" in str(info.value)


async def test_claude_max_turns_fails_only_this_item_and_carries_its_usage(fake_env: Path, monkeypatch) -> None:
    monkeypatch.setenv("FAKE_CLI_MODE", "max_turns")
    with pytest.raises(RequestFailed, match="max_turns") as info:
        await make("claude-code").complete(target_request())
    usage = info.value.usage
    assert usage is not None and (usage.input_tokens, usage.output_tokens, usage.cost_usd) == (10, 5, 0.01)


async def test_cli_that_cannot_be_started_is_systemic(fake_env: Path) -> None:
    backend = make("codex")
    Path(backend._exe).unlink()  # removed after the backend was built
    with pytest.raises(BackendError, match="could not start") as info:
        await backend.complete(target_request())
    assert not isinstance(info.value, RequestFailed)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux caps one argument at 128 KiB")
async def test_copilot_prompt_too_long_for_argv_rejects_only_this_request(fake_env: Path) -> None:
    request = CompletionRequest(messages=(Message("user", "x" * 200_000),), system=SKILL, role="target")
    with pytest.raises(RequestRejected, match="too long"):
        await make("copilot").complete(request)


@pytest.mark.parametrize("name", ["claude-code", "codex"])
async def test_long_prompt_goes_through_stdin(name: str, fake_env: Path) -> None:
    request = CompletionRequest(messages=(Message("user", "x" * 200_000),), system=SKILL, role="target")
    await make(name).complete(request)
    assert "x" * 200_000 in only_record(fake_env)["stdin"]


@pytest.mark.parametrize("name, command", [("claude-code", "claude"), ("codex", "codex"), ("copilot", "copilot")])
def test_missing_cli_is_config_error_naming_the_command(name: str, command: str, monkeypatch, tmp_path: Path) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    with pytest.raises(BackendConfigError, match=f"`{command}` command is not on PATH"):
        make(name)


async def test_a_cli_outside_the_sandbox_gets_no_other_services_secrets(fake_env: Path, monkeypatch) -> None:
    """Issue 35 §2: a read-only replay's CLI runs on the host; its environment keeps the CLI's own
    key and drops every other credential-named variable and the SSH agent socket."""
    for name, value in {"ANTHROPIC_API_KEY": "sk-ant-own", "GITHUB_TOKEN": "ghp_other", "AWS_SECRET_ACCESS_KEY": "a",
                        "STRIPE_API_KEY": "sk_live_x", "DB_PASSWORD": "pw", "SSH_AUTH_SOCK": "/tmp/agent.sock",
                        "MY_SETTING": "kept"}.items():
        monkeypatch.setenv(name, value)
    await make("claude-code").complete(target_request())
    env = only_record(fake_env)["env"]
    assert env["ANTHROPIC_API_KEY"] == "sk-ant-own" and env["MY_SETTING"] == "kept" and env["HOME"]
    assert not {"GITHUB_TOKEN", "STRIPE_API_KEY", "DB_PASSWORD", "SSH_AUTH_SOCK", "AWS_SECRET_ACCESS_KEY"} & set(env)
    await make("codex").complete(target_request())
    codex_env = [r for r in cli_records(fake_env) if r["name"] == "codex"][0]["env"]
    assert "ANTHROPIC_API_KEY" not in codex_env and "GITHUB_TOKEN" not in codex_env
    monkeypatch.setenv("CLAUDE_CODE_USE_BEDROCK", "1")  # Bedrock: its AWS credentials are the CLI's own
    await make("claude-code").complete(target_request())
    bedrock = [r["env"] for r in cli_records(fake_env) if r["env"].get("CLAUDE_CODE_USE_BEDROCK")][0]
    assert bedrock["AWS_SECRET_ACCESS_KEY"] == "a" and "GITHUB_TOKEN" not in bedrock
