"""The claude-code, codex and copilot backends against fake executables put first
on PATH (tests/backends/fakes/). The fakes record argv, cwd, environment, stdin
and the files in their working directory, and print output shaped like the real
CLIs' (claude -p --output-format json, codex exec --json, copilot -p
--output-format json plus --usage-output-file)."""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from skillopt_core.backends import BackendSpec, CompletionRequest, Message, create_backend
from skillopt_core.backends.base import BackendConfigError, BackendError, RequestRejected
from skillopt_core.replay import REPLAY_MARKER, is_replay_path, is_replay_prompt

FAKES = Path(__file__).parent / "fakes"
CLIS = ["claude-code", "codex", "copilot"]
SKILL_DIRS = {"claude-code": ".claude/skills", "codex": ".agents/skills", "copilot": ".github/skills"}
SKILL = "---\nname: answer-style\ndescription: How to answer trivia questions.\n---\n\n# Answer style\n\nAnswer in one word.\n"
PROJECT = Path.cwd()


@pytest.fixture(autouse=True)
def fake_env(monkeypatch, tmp_path: Path) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for item in FAKES.iterdir():
        if item.is_file():
            shutil.copy(item, bin_dir / item.name)
            (bin_dir / item.name).chmod(0o755)
    records = tmp_path / "records"
    records.mkdir()
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("SKILLOPT_NO_DOTENV", "1")
    monkeypatch.setenv("SKILLOPT_REPLAY_ROOT", str(tmp_path / "skillopt-replay"))
    monkeypatch.setenv("FAKE_CLI_RECORD_DIR", str(records))
    monkeypatch.delenv("FAKE_CLI_MODE", raising=False)
    monkeypatch.delenv("FAKE_CLI_REPLY", raising=False)
    return records


def make(name: str, role: str = "target", model: str | None = None, **options: Any):
    return create_backend(BackendSpec(name, model, role, {"timeout": 30, **options}))


def target_request(**kwargs: Any) -> CompletionRequest:
    return CompletionRequest(messages=(Message("user", "Capital of France?"),), system=SKILL, role="target", **kwargs)


def records(record_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted(record_dir.glob("*.json"))]


def only_record(record_dir: Path) -> dict[str, Any]:
    found = records(record_dir)
    assert len(found) == 1, found
    return found[0]


def prompt_of(record: dict[str, Any]) -> str:
    if record["name"] == "copilot":
        return record["argv"][record["argv"].index("-p") + 1]
    return record["stdin"]


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        return state not in ("Z", "X")
    except (FileNotFoundError, IndexError):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True


# -- where a call runs --------------------------------------------------------- #


@pytest.mark.parametrize("name", CLIS)
async def test_skill_is_installed_where_the_host_reads_it(name: str, fake_env: Path) -> None:
    await make(name).complete(target_request())
    files = only_record(fake_env)["files"]
    assert files == {f"{SKILL_DIRS[name]}/answer-style/SKILL.md": SKILL}


@pytest.mark.parametrize("name", CLIS)
async def test_cwd_is_a_fresh_replay_dir_outside_the_project(name: str, fake_env: Path) -> None:
    backend = make(name)
    await backend.complete(target_request())
    await backend.complete(target_request())
    first, second = (Path(r["cwd"]) for r in records(fake_env))
    assert first != second
    root = Path(os.environ["SKILLOPT_REPLAY_ROOT"]).resolve()
    for cwd in (first, second):
        assert cwd.resolve().is_relative_to(root)
        assert not PROJECT.resolve().is_relative_to(cwd.resolve()) and not cwd.resolve().is_relative_to(PROJECT.resolve())
        assert is_replay_path(cwd)  # what the transcript harvester checks


@pytest.mark.parametrize("name", CLIS)
async def test_working_dir_is_removed_afterwards(name: str, fake_env: Path) -> None:
    await make(name).complete(target_request())
    cwd = Path(only_record(fake_env)["cwd"])
    assert not cwd.exists() and not cwd.parent.exists()
    assert list(Path(os.environ["SKILLOPT_REPLAY_ROOT"]).iterdir()) == []


@pytest.mark.parametrize("name", CLIS)
async def test_prompt_is_marked_and_carries_the_task_not_the_skill(name: str, fake_env: Path) -> None:
    await make(name).complete(target_request())
    prompt = prompt_of(only_record(fake_env))
    assert prompt.startswith(REPLAY_MARKER) and is_replay_prompt(prompt)
    assert "Capital of France?" in prompt
    assert "Answer in one word." not in prompt  # the skill is a file, not prompt text
    assert f"{SKILL_DIRS[name]}/answer-style/SKILL.md" in prompt


@pytest.mark.parametrize("name", CLIS)
async def test_optimizer_role_gets_system_text_in_prompt_and_no_skill(name: str, fake_env: Path) -> None:
    request = CompletionRequest.single("Propose edits.", system="You improve skills.", role="optimizer")
    await make(name, role="optimizer").complete(request)
    record = only_record(fake_env)
    assert record["files"] == {}
    prompt = prompt_of(record)
    assert prompt.startswith(REPLAY_MARKER)
    assert prompt.index("You improve skills.") < prompt.index("Propose edits.")


@pytest.mark.parametrize("name", CLIS)
async def test_skill_without_front_matter_is_installed_under_default_name(name: str, fake_env: Path) -> None:
    request = CompletionRequest(messages=(Message("user", "Hi"),), system="Always be brief.", role="target")
    await make(name).complete(request)
    files = only_record(fake_env)["files"]
    (path, text), = files.items()
    assert path == f"{SKILL_DIRS[name]}/skillopt-skill/SKILL.md"
    assert text.startswith("---\nname: skillopt-skill\ndescription: ")
    assert text.rstrip().endswith("Always be brief.")


async def test_invalid_skill_name_is_cleaned_in_folder_and_front_matter(fake_env: Path) -> None:
    skill = "---\nname: My Skill_v2!\ndescription: d\n---\nbody\n"
    request = CompletionRequest(messages=(Message("user", "Hi"),), system=skill, role="target")
    await make("claude-code").complete(request)
    (path, text), = only_record(fake_env)["files"].items()
    assert path == ".claude/skills/my-skill-v2/SKILL.md"
    assert "name: my-skill-v2" in text and text.rstrip().endswith("body")


# -- tools are read-only by default ------------------------------------------- #


async def test_claude_code_allows_only_read_only_tools_by_default(fake_env: Path) -> None:
    await make("claude-code").complete(target_request())
    argv = only_record(fake_env)["argv"]
    tools = argv[argv.index("--tools") + 1].split(",")
    assert set(tools) == {"Read", "Grep", "Glob", "Skill"}
    assert argv[argv.index("--allowedTools") + 1].split(",") == tools
    assert not {"Write", "Edit", "Bash", "NotebookEdit"} & set(tools)
    assert "--dangerously-skip-permissions" not in argv
    assert argv[:4] == ["-p", "--output-format", "json", "--no-session-persistence"]


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


async def test_copilot_takes_last_assistant_message_and_usage_file(fake_env: Path, monkeypatch) -> None:
    monkeypatch.setenv("FAKE_CLI_REPLY", "Paris")
    completion = await make("copilot").complete(target_request())
    assert completion.text == "Paris"
    assert (completion.usage.input_tokens, completion.usage.output_tokens) == (5100, 61)
    assert completion.usage.cost_usd is None
    assert completion.model == "claude-sonnet-4.6"


@pytest.mark.parametrize("name", CLIS)
async def test_json_reply_is_extracted_from_surrounding_prose(name: str, fake_env: Path, monkeypatch) -> None:
    monkeypatch.setenv("FAKE_CLI_REPLY", 'Here it is:\n```json\n{"answer": "Paris"}\n```')
    schema = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}
    completion = await make(name).complete(target_request(json_schema=schema))
    assert json.loads(completion.text) == {"answer": "Paris"}
    assert "JSON Schema" in prompt_of(only_record(fake_env))


# -- failures ------------------------------------------------------------------ #


@pytest.mark.timeout(60)
@pytest.mark.parametrize("name", CLIS)
async def test_hung_process_is_killed_at_the_timeout(name: str, fake_env: Path, monkeypatch) -> None:
    monkeypatch.setenv("FAKE_CLI_MODE", "hang")
    started = time.monotonic()
    with pytest.raises(BackendError, match=r"did not finish within 1 s"):
        await make(name, timeout=1).complete(target_request())
    assert time.monotonic() - started < 15
    record = only_record(fake_env)
    for _ in range(50):
        if not _alive(record["pid"]) and not _alive(record["child_pid"]):
            break
        time.sleep(0.1)
    assert not _alive(record["pid"]), "the CLI process survived the timeout"
    assert not _alive(record["child_pid"]), "a process the CLI started survived the timeout"
    assert not Path(record["cwd"]).exists()


@pytest.mark.parametrize("name, command", [("claude-code", "claude"), ("codex", "codex"), ("copilot", "copilot")])
async def test_nonzero_exit_becomes_clear_error(name: str, command: str, fake_env: Path, monkeypatch) -> None:
    monkeypatch.setenv("FAKE_CLI_MODE", "fail")
    with pytest.raises(BackendError) as info:
        await make(name).complete(target_request())
    message = str(info.value)
    assert f"`{command}` exited with code 3" in message
    assert "something went wrong talking to the service" in message
    assert "log in" in message
    assert not Path(only_record(fake_env)["cwd"]).exists()


async def test_claude_error_result_is_reported_with_its_message(fake_env: Path, monkeypatch) -> None:
    monkeypatch.setenv("FAKE_CLI_MODE", "error")
    with pytest.raises(BackendError, match=r"claude reported an error: Not logged in"):
        await make("claude-code").complete(target_request())


async def test_claude_max_turns_rejects_only_this_request(fake_env: Path, monkeypatch) -> None:
    monkeypatch.setenv("FAKE_CLI_MODE", "max_turns")
    with pytest.raises(RequestRejected, match="max_turns"):
        await make("claude-code").complete(target_request())


@pytest.mark.parametrize("name, expected", [("codex", "401 Unauthorized"), ("copilot", "Not logged in")])
async def test_cli_reported_error_is_surfaced(name: str, expected: str, fake_env: Path, monkeypatch) -> None:
    monkeypatch.setenv("FAKE_CLI_MODE", "error")
    with pytest.raises(BackendError, match=expected):
        await make(name).complete(target_request())


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
