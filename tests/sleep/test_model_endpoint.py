"""The scripted model endpoint (tests/sleep/model_endpoint.py): its wire formats, and the real
`claude` and `codex` from npm driven by it outside any sandbox (the contract the replay relies on).

Tests marked "real binary" run the npm CLIs (skipped, naming the tool, when it is missing;
CI sets SKILLOPT_NPM_TOOLS so they run there)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from model_endpoint import ModelEndpoint, Turn, install_plan, read, run, script, tool_call, write
from npm_clients import npm_tool

PROGRAM = r'''
import os, sys
name = os.path.basename(sys.argv[0])
open(".ran", "a").write(name + " " + " ".join(sys.argv[1:]) + "\n")
print(f"{name}: installed")
'''


def programs(folder: Path) -> Path:
    """Fake `pnpm` and `npm` (the project's tools, not the CLI's) that note what ran in `.ran`."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("pnpm", "npm"):
        path = folder / name
        path.write_text(f"#!{sys.executable}\n{PROGRAM}", encoding="utf-8")
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return folder


def post(url: str, body: dict, headers: dict | None = None) -> tuple[int, bytes]:
    request = urllib.request.Request(url, json.dumps(body).encode(), {"content-type": "application/json",
                                                                      **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def events(raw: bytes) -> list[tuple[str | None, object]]:
    out = []
    for chunk in raw.decode().split("\n\n"):
        if not chunk.strip():
            continue
        kind = next((line[7:] for line in chunk.splitlines() if line.startswith("event: ")), None)
        data = next(line[6:] for line in chunk.splitlines() if line.startswith("data: "))
        out.append((kind, data if data == "[DONE]" else json.loads(data)))
    return out


BASH = {"name": "Bash", "input_schema": {"type": "object", "properties": {"command": {"type": "string"},
                                                                         "description": {"type": "string"}}}}


def test_anthropic_stream_carries_the_tool_call_as_partial_json_in_the_documented_order() -> None:
    with ModelEndpoint(script(run("npm install"))) as ep:
        status, raw = post(f"{ep.url}/v1/messages?beta=true", {
            "model": "m", "stream": True, "tools": [BASH],
            "messages": [{"role": "user", "content": "install"}]})
    assert status == 200
    got = events(raw)
    assert [k for k, _ in got] == ["message_start", "content_block_start", "ping", "content_block_delta",
                                   "content_block_delta", "content_block_stop", "message_delta", "message_stop"]
    assert got[1][1]["content_block"]["input"] == {} and got[1][1]["content_block"]["name"] == "Bash"
    partial = "".join(d["delta"]["partial_json"] for k, d in got if k == "content_block_delta")
    assert json.loads(partial) == {"command": "npm install", "description": "npm install"}
    assert got[6][1]["delta"]["stop_reason"] == "tool_use"
    assert ep.commands == ["npm install"] and ep.model_calls("anthropic")[0].body["model"] == "m"


def test_anthropic_text_answer_count_tokens_and_non_streaming() -> None:
    with ModelEndpoint(script()) as ep:
        status, raw = post(f"{ep.url}/v1/messages", {"model": "m", "messages": [{"role": "user", "content": "hi"}]})
        assert status == 200
        message = json.loads(raw)
        assert message["content"] == [{"type": "text", "text": "done"}] and message["stop_reason"] == "end_turn"
        status, raw = post(f"{ep.url}/v1/messages/count_tokens", {"messages": []})
        assert status == 200 and json.loads(raw)["input_tokens"] > 0


def test_the_install_plan_follows_the_conversation_pnpm_only_when_it_is_named() -> None:
    plan = install_plan(skill=".claude/skills/s/SKILL.md", note=None)
    turn = Turn("anthropic", "m", "", ["install"], [], {"Read": {}, "Bash": {}}, "/w")
    assert plan(turn) == read(".claude/skills/s/SKILL.md")
    turn.results.append("Install with npm.")
    assert plan(turn) == run("npm install")
    turn.results[0] = "Install with pnpm, never npm."
    assert plan(turn) == run("pnpm install")
    turn.results.append("ok")
    assert plan(turn).kind == "say"


def test_tool_mapping_follows_each_clis_tool_names_and_schemas() -> None:
    codex = Turn("responses", "m", "", [], [], {"exec_command": {"properties": {"cmd": {"type": "string"},
                                                                                 "workdir": {}}},
                                                "apply_patch": {"_custom": True}}, "/w")
    assert tool_call(run("pnpm install"), codex) == ("exec_command", {"cmd": "pnpm install", "workdir": "/w"})
    assert tool_call(read("a.md"), codex) == ("exec_command", {"cmd": "cat a.md", "workdir": "/w"})
    name, patch = tool_call(write("n.md", "x\n"), codex)
    assert name == "apply_patch" and patch == "*** Begin Patch\n*** Add File: n.md\n+x\n*** End Patch\n"
    opencode = Turn("chat", "m", "", [], [], {"read": {"properties": {"filePath": {}}},
                                              "write": {"properties": {"filePath": {}, "content": {}}}}, "/w")
    assert tool_call(read("a.md"), opencode) == ("read", {"filePath": "/w/a.md"})
    assert tool_call(write("b", "t"), opencode) == ("write", {"filePath": "/w/b", "content": "t"})
    assert tool_call(run("ls"), opencode) is None  # no shell offered: the endpoint answers in text


def test_responses_stream_and_chat_and_gemini_shapes() -> None:
    with ModelEndpoint(script(run("npm install"), write("n.md", "x"))) as ep:
        tools = [{"type": "function", "name": "exec_command",
                  "parameters": {"properties": {"cmd": {"type": "string"}}}},
                 {"type": "custom", "name": "apply_patch"}]
        status, raw = post(f"{ep.url}/v1/responses", {"model": "m", "stream": True, "tools": tools,
                                                      "input": [{"type": "message", "role": "user",
                                                                 "content": [{"type": "input_text",
                                                                              "text": "go"}]}]})
        got = events(raw)
        assert status == 200 and [k for k, _ in got] == [
            "response.created", "response.in_progress", "response.output_item.added",
            "response.function_call_arguments.delta", "response.function_call_arguments.done",
            "response.output_item.done", "response.completed"]
        assert all(d["type"] == k for k, d in got) and [d["sequence_number"] for _, d in got] == list(range(7))
        item = got[5][1]["item"]
        assert item["type"] == "function_call" and json.loads(item["arguments"]) == {"cmd": "npm install"}
        assert got[6][1]["response"]["usage"]["total_tokens"] == 120
        # the second call (one tool result back): Codex's free-form apply_patch is a custom_tool_call
        status, raw = post(f"{ep.url}/v1/responses", {"model": "m", "stream": True, "tools": tools, "input": [
            {"type": "function_call_output", "call_id": "c", "output": "ok"}]})
        assert [d for k, d in events(raw) if k == "response.output_item.done"][0]["item"]["type"] == "custom_tool_call"

        status, raw = post(f"{ep.url}/v1/chat/completions", {"model": "m", "stream": True, "messages": [
            {"role": "user", "content": "go"}, {"role": "tool", "content": "1"}, {"role": "tool", "content": "2"}]})
        chunks = events(raw)
        assert chunks[-1][1] == "[DONE]" and chunks[-2][1]["choices"][0]["finish_reason"] == "stop"
        assert chunks[1][1]["choices"][0]["delta"]["content"] == "done"

        status, raw = post(f"{ep.url}/v1beta/models/gemini-x:streamGenerateContent?alt=sse", {
            "contents": [{"role": "user", "parts": [{"text": "go"}]}],
            "tools": [{"functionDeclarations": [{"name": "run_shell_command",
                                                 "parameters": {"properties": {"command": {}}}}]}]})
        part = events(raw)[0][1]["candidates"][0]["content"]["parts"][0]
        assert part == {"functionCall": {"name": "run_shell_command", "args": {"command": "npm install"}}}


def test_unknown_routes_and_wrong_keys_are_refused_and_recorded() -> None:
    with ModelEndpoint(key="sk-right") as ep:
        assert post(f"{ep.url}/v1/other", {}, {"x-api-key": "sk-right"})[0] == 404
        assert post(f"{ep.url}/v1/messages", {"messages": []}, {"x-api-key": "sk-wrong"})[0] == 401
        assert [r.path for r in ep.unknown()] == ["/v1/other"]
        assert len(ep.requests) == 2 and ep.model_calls() == []


# ----------------------------------------------------------------------------- real binaries


def _skill(work: Path, folder: str, body: str) -> str:
    path = work / folder / "setup" / "SKILL.md"
    path.parent.mkdir(parents=True)
    path.write_text(f"---\nname: setup\ndescription: Setting up this project\n---\n{body}\n", encoding="utf-8")
    return path.relative_to(work).as_posix()


@pytest.mark.parametrize("says, program", [("Install with pnpm install.", "pnpm"),
                                           ("Install the dependencies.", "npm")])
def test_real_claude_follows_the_skill_through_the_endpoint(tmp_path: Path, says: str, program: str) -> None:
    """Real binary: `claude -p --output-format stream-json` pointed at the endpoint with ANTHROPIC_BASE_URL."""
    exe = npm_tool("claude")
    work = tmp_path / "work"
    work.mkdir()
    skill = _skill(work, ".claude/skills", says)
    env = {"PATH": f"{programs(tmp_path / 'bin')}{os.pathsep}/usr/bin:/bin", "HOME": str(tmp_path / "h")}
    with ModelEndpoint(install_plan(skill=skill)) as ep:
        env.update(ep.anthropic_env())
        started = time.monotonic()

        done = subprocess.run([exe, "-p", "--output-format", "stream-json", "--verbose", "--no-session-persistence",
                               "--tools", "Read,Write,Edit,Bash", "--allowedTools",
                               "Read,Write,Edit,Bash(pnpm:*),Bash(npm:*)", "--max-turns", "8"],
                              input="Install the dependencies.", cwd=work, env=env, capture_output=True, text=True,
                              timeout=180)
        wall = time.monotonic() - started
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert done.returncode == 0, done.stderr[-2000:]
    assert (work / ".ran").read_text() == f"{program} install\n"
    assert (work / "NOTES.md").read_text() == "installed\n"
    result = lines[-1]
    assert result["type"] == "result" and result["subtype"] == "success" and result["permission_denials"] == []
    # What the real stream says that the old fakes did not: a created file's result is typed `create`.
    created = [m["tool_use_result"] for m in lines if isinstance(m.get("tool_use_result"), dict)
               and m["tool_use_result"].get("type") == "create"]
    assert created and created[0]["filePath"] == str(work / "NOTES.md")
    assert ep.commands == [f"{program} install"] and ep.unknown() == []
    assert all(r.headers.get("x-api-key") == "sk-ant-scripted" for r in ep.model_calls())
    assert wall < 120


@pytest.mark.parametrize("says, program", [("Install with pnpm install.", "pnpm"),
                                           ("Install the dependencies.", "npm")])
def test_real_codex_follows_the_skill_through_a_custom_provider(tmp_path: Path, says: str, program: str) -> None:
    """Real binary: `codex exec --json` with a `[model_providers.x]` (wire_api = "responses") at the endpoint.
    Outside bubblewrap and with `allow_login_shell=false`, so the PATH given here is the commands' PATH."""
    exe = npm_tool("codex")
    work = tmp_path / "work"
    work.mkdir()
    skill = _skill(work, ".agents/skills", says)
    codex_home = tmp_path / "codex-home"
    codex_home.mkdir()
    env = {"PATH": f"{programs(tmp_path / 'bin')}{os.pathsep}/usr/bin:/bin", "HOME": str(tmp_path / "h"),
           "CODEX_HOME": str(codex_home), "OPENAI_API_KEY": "sk-scripted"}
    with ModelEndpoint(install_plan(skill=skill)) as ep:
        (codex_home / "config.toml").write_text(ep.codex_config(), encoding="utf-8")

        done = subprocess.run([exe, "exec", "--json", "--skip-git-repo-check", "--sandbox", "danger-full-access",
                               "--ephemeral", "-c", "allow_login_shell=false", "-C", str(work), "-"],
                              input="Install the dependencies.", cwd=work, env=env, capture_output=True, text=True,
                              timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    items = [e["item"] for e in lines if e["type"] == "item.completed"]
    commands = [i for i in items if i["type"] == "command_execution"]
    assert [c["command"] for c in commands] == [f"/bin/bash -c 'cat {skill}'", f"/bin/bash -c '{program} install'"]
    assert commands[1]["exit_code"] == 0 and commands[1]["status"] == "completed"
    changes = [i for i in items if i["type"] == "file_change"]
    assert changes[0]["changes"] == [{"path": str(work / "NOTES.md"), "kind": "add"}]  # absolute, as Codex reports
    assert (work / ".ran").read_text() == f"{program} install\n"
    assert ep.commands == [f"{program} install"]
    assert all(r.headers.get("authorization") == "Bearer sk-scripted" for r in ep.model_calls())


# Codex 0.171.0's own stream when every model call fails (captured from the real binary against
# ModelEndpoint(fail=400)): a failed turn with no items.
FAILED_TURN = "\n".join([
    '{"type":"thread.started","thread_id":"01a2499e-b8ad-7ca1-9bc5-ece99db1b031"}',
    '{"type":"turn.started"}',
    '{"type":"error","message":"{\\"type\\": \\"error\\", \\"error\\": {\\"type\\": \\"api_error\\"}}"}',
    '{"type":"turn.failed","error":{"message":"{\\"type\\": \\"error\\", \\"error\\": {\\"type\\": \\"api_error\\"}}"}}'])


def test_a_codex_turn_that_failed_with_no_items_is_a_named_blind_spot() -> None:
    from skillopt_core.backends.codex import _blind_spot, parse_events

    assert "left out of it" in (_blind_spot(parse_events(FAILED_TURN)) or "")
    ran = FAILED_TURN.replace('{"type":"turn.started"}', '{"type":"turn.started"}\n{"type":"item.completed","item":'
                              '{"id":"item_0","type":"command_execution","command":"/bin/bash -c \'npm install\'",'
                              '"aggregated_output":"","exit_code":0,"status":"completed"}}')
    assert _blind_spot(parse_events(ran)) is None
    assert _blind_spot(parse_events(FAILED_TURN.replace("turn.failed", "turn.completed").split("\n{\"type\":\"error\"")[0])) is None


def test_real_codex_reports_a_failing_endpoint_as_a_failed_turn_with_no_items(tmp_path: Path) -> None:
    """Real binary: what Codex prints when its provider answers 400 (the blind-spot shape above)."""
    exe = npm_tool("codex")
    codex_home = tmp_path / "codex-home"
    codex_home.mkdir()
    with ModelEndpoint(fail=400) as ep:
        (codex_home / "config.toml").write_text(ep.codex_config(), encoding="utf-8")
        done = subprocess.run([exe, "exec", "--json", "--skip-git-repo-check", "--sandbox", "danger-full-access",
                               "--ephemeral", "-c", "allow_login_shell=false", "-C", str(tmp_path), "-"],
                              input="Install.", cwd=tmp_path, capture_output=True, text=True, timeout=180,
                              env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "CODEX_HOME": str(codex_home),
                                   "OPENAI_API_KEY": "sk-scripted"})
    kinds = [json.loads(line)["type"] for line in done.stdout.splitlines() if line.startswith("{")]
    assert done.returncode != 0 and "turn.failed" in kinds and not [k for k in kinds if k.startswith("item.")]
