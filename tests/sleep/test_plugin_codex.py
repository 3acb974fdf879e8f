"""`bash plugins/codex/install.sh` with the real Codex CLI (`@openai/codex`) in the test's
private HOME and CODEX_HOME: the server shows in `codex mcp list`, the skill is
installed, a second run changes nothing, and `--uninstall` gives config.toml back
byte for byte, both through `codex mcp add` and through the TOML edit used when
`codex` is not on PATH."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
import yaml
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters
from npm_clients import QUIET, client_env, npm_tool, run
from plugin_testutil import CODEX_INSTALL, CODEX_SKILL, SYSTEM_PATH, bash, toml_loads, tree
from sleep_testutil import Homes

pytestmark = pytest.mark.timeout(300)

EXE = str(Path(sys.executable).parent / "skillopt-sleep")
THEIRS = ('# my Codex settings\nmodel = "o3"  # keep\n\n[profiles.fast]\nmodel = "gpt-5"\n\n'
          '[mcp_servers.docs]\ncommand = "docs-server"\nargs = ["--stdio"]\n')


def env_with(codex_on_path: bool) -> dict[str, str]:
    """The venv's skillopt-sleep on PATH, and the npm codex too when asked."""
    folders = [str(Path(sys.executable).parent)]
    if codex_on_path:
        folders.append(str(Path(npm_tool("codex")).parent))
    return {**client_env(), **QUIET, "PATH": os.pathsep.join([*folders, SYSTEM_PATH])}


def codex_servers(env: dict[str, str], cwd: Path) -> dict[str, dict]:
    listed = run([npm_tool("codex"), "mcp", "list", "--json"], cwd, env=env)
    assert listed.returncode == 0, listed.stderr[-2000:]
    return {e["name"]: e for e in json.loads(listed.stdout)}


def snapshot(homes: Homes) -> dict[str, tuple[bytes, int]]:
    """Bytes and modification times of config.toml, the skill and SkillOpt's records."""
    files = [homes.codex / "config.toml", homes.home / ".agents" / "skills" / "skillopt-sleep" / "SKILL.md",
             *sorted((homes.skillopt / "integrations").glob("*.json"))]
    return {str(f): (f.read_bytes(), f.stat().st_mtime_ns) for f in files}


def test_install_with_codex_on_path_then_again_then_uninstall(tmp_path: Path, homes: Homes) -> None:
    env = env_with(codex_on_path=True)
    homes.codex.mkdir(parents=True)
    config = homes.codex / "config.toml"
    config.write_text(THEIRS)
    skill = homes.home / ".agents" / "skills" / "skillopt-sleep" / "SKILL.md"

    first = bash(CODEX_INSTALL, env=env, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert "by `codex mcp add`" in first.stdout
    entry = codex_servers(env, tmp_path)["skillopt"]
    assert (entry["enabled"], entry["transport"]["type"], entry["transport"]["command"],
            entry["transport"]["args"]) == (True, "stdio", EXE, ["mcp"])
    assert "docs" in codex_servers(env, tmp_path)
    assert skill.read_bytes() == CODEX_SKILL.read_bytes()

    before = snapshot(homes)
    second = bash(CODEX_INSTALL, env=env, cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    assert [line.rsplit(": ", 1)[1].split(" ")[0] for line in second.stdout.splitlines()] == ["unchanged"] * 2
    assert snapshot(homes) == before

    undone = bash(CODEX_INSTALL, "--uninstall", env=env, cwd=tmp_path)
    assert undone.returncode == 0, undone.stderr
    assert config.read_bytes() == THEIRS.encode()
    assert not (homes.home / ".agents").exists()
    assert "skillopt" not in codex_servers(env, tmp_path)


def test_without_codex_on_path_config_toml_is_edited_and_codex_reads_it(tmp_path: Path, homes: Homes) -> None:
    env = env_with(codex_on_path=False)
    out = bash(CODEX_INSTALL, env=env, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "created ([mcp_servers.skillopt] runs" in out.stdout and "by a TOML edit" in out.stdout
    config = homes.codex / "config.toml"
    from sleep.mcp.launch import SERVER_ENV_VARS, TOOL_TIMEOUT_S

    assert toml_loads(config.read_text()) == {"mcp_servers": {"skillopt": {
        "command": EXE, "args": ["mcp"], "env_vars": list(SERVER_ENV_VARS), "tool_timeout_sec": TOOL_TIMEOUT_S}}}
    assert codex_servers(env_with(codex_on_path=True), tmp_path)["skillopt"]["transport"]["command"] == EXE

    assert bash(CODEX_INSTALL, "--uninstall", env=env, cwd=tmp_path).returncode == 0
    assert not config.exists()  # it did not exist before the install


def test_the_toml_edit_keeps_the_persons_file_and_uninstall_restores_it(tmp_path: Path, homes: Homes) -> None:
    env = env_with(codex_on_path=False)
    homes.codex.mkdir(parents=True)
    config = homes.codex / "config.toml"
    config.write_text(THEIRS)
    config.chmod(0o600)

    assert bash(CODEX_INSTALL, env=env, cwd=tmp_path).returncode == 0
    assert config.read_text().startswith(THEIRS)
    assert set(codex_servers(env_with(codex_on_path=True), tmp_path)) == {"docs", "skillopt"}
    assert bash(CODEX_INSTALL, "--uninstall", env=env, cwd=tmp_path).returncode == 0
    assert config.read_bytes() == THEIRS.encode() and (config.stat().st_mode & 0o777) == 0o600


@pytest.mark.parametrize("codex_on_path", [True, False], ids=["codex-mcp-add", "toml-edit"])
def test_codex_home_is_honoured(tmp_path: Path, homes: Homes, codex_on_path: bool) -> None:
    elsewhere = tmp_path / "codex-home"
    env = {**env_with(codex_on_path), "CODEX_HOME": str(elsewhere)}
    assert bash(CODEX_INSTALL, env=env, cwd=tmp_path).returncode == 0
    assert "skillopt" in toml_loads((elsewhere / "config.toml").read_text())["mcp_servers"]
    assert not (homes.codex / "config.toml").exists()
    assert codex_servers({**env_with(True), "CODEX_HOME": str(elsewhere)}, tmp_path)["skillopt"]
    assert bash(CODEX_INSTALL, "--uninstall", env=env, cwd=tmp_path).returncode == 0
    assert not (elsewhere / "config.toml").exists()
    # the install made the folder; uninstall removes it unless Codex keeps something else there
    assert not elsewhere.exists() or any(elsewhere.iterdir())


def test_a_broken_config_toml_is_refused_and_nothing_changes(tmp_path: Path, homes: Homes) -> None:
    homes.codex.mkdir(parents=True)
    (homes.codex / "config.toml").write_text('model = "o3\n')
    before = tree(homes.home)
    out = bash(CODEX_INSTALL, env=env_with(codex_on_path=True), cwd=tmp_path)
    assert out.returncode == 2
    assert "config.toml is not valid TOML" in out.stderr and "Nothing was changed" in out.stderr
    assert tree(homes.home) == before


async def test_the_registered_server_answers_when_started_as_codex_starts_it(tmp_path: Path, homes: Homes) -> None:
    assert bash(CODEX_INSTALL, env=env_with(codex_on_path=False), cwd=tmp_path).returncode == 0
    entry = toml_loads((homes.codex / "config.toml").read_text())["mcp_servers"]["skillopt"]
    params = StdioServerParameters(command=entry["command"], args=entry["args"], env=client_env(), cwd=str(tmp_path))
    async with Client(params, mode="legacy") as client:
        tools = {t.name for t in (await client.list_tools()).tools}
        prompts = {p.name for p in (await client.list_prompts()).prompts}
    assert {"list_proposals", "show_proposal", "adopt_proposal", "reject_proposal", "sleep_status"} <= tools
    assert "morning-review" in prompts


def test_codex_shows_the_installed_skill_to_its_model_and_not_after_uninstall(tmp_path: Path, homes: Homes) -> None:
    # `codex debug prompt-input` renders what the model would see (no login, no network).
    env = env_with(codex_on_path=True)
    project = tmp_path / "project"
    project.mkdir()
    description = yaml.safe_load(CODEX_SKILL.read_text().split("---")[1])["description"]

    def model_sees() -> str:
        out = run([npm_tool("codex"), "debug", "prompt-input"], project, env=env)
        assert out.returncode == 0, out.stderr[-2000:]
        return json.dumps(json.loads(out.stdout))

    assert bash(CODEX_INSTALL, env=env, cwd=tmp_path).returncode == 0
    seen = model_sees()
    assert json.dumps(f"- skillopt-sleep: {description} (file: ")[1:-1] in seen
    assert "/skillopt-sleep/SKILL.md)" in seen  # the skill's file, under the skills root Codex names
    assert bash(CODEX_INSTALL, "--uninstall", env=env, cwd=tmp_path).returncode == 0
    assert "skillopt-sleep: " not in model_sees()


# ----- what Codex gives the server it starts ---------------------------------------------

# A model provider on a closed loopback port: `codex exec` starts the MCP servers, then fails
# to reach the model (no network, no login). Codex's provider keys: model_providers.<id>.
OFFLINE_PROVIDER = ('model = "gpt-test"\nmodel_provider = "offline"\n\n[model_providers.offline]\n'
                    'name = "offline"\nbase_url = "http://127.0.0.1:9/v1"\nwire_api = "responses"\n'
                    'env_key = "OFFLINE_KEY"\nrequest_max_retries = 0\nstream_max_retries = 0\n')
RECORDER = """#!/bin/sh
# Records the environment Codex starts the server with, then runs the real server.
env > "{log}"
exec "{exe}" "$@"
"""


def _codex_starts_the_server(tmp_path: Path, env: dict[str, str], recorded: Path) -> dict[str, str]:
    """Run `codex exec` until it has started the registered server; the environment the server got."""
    import signal
    import subprocess
    import time

    proc = subprocess.Popen([npm_tool("codex"), "exec", "--skip-git-repo-check", "say hi"], cwd=tmp_path, env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while not (recorded.exists() and recorded.read_text().endswith("\n")) and time.monotonic() < deadline:
            assert proc.poll() is None or recorded.exists(), proc.stderr.read().decode()[-2000:] if proc.stderr else ""
            time.sleep(0.2)
        time.sleep(0.5)  # the recorder has finished writing
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(timeout=30)
    assert recorded.exists(), "codex exec never started the server"
    return dict(line.split("=", 1) for line in recorded.read_text().splitlines() if "=" in line)


async def test_codex_starts_the_server_with_the_data_dir_and_it_sees_the_same_proposals(
        tmp_path: Path, homes: Homes) -> None:
    from proposal_testutil import CANDIDATE, SKILL, make_repo, report

    from sleep.proposals import stage

    staged = stage(make_repo(tmp_path / "app") / SKILL, CANDIDATE, report())  # in this test's SKILLOPT_HOME
    recorded = tmp_path / "server-env.txt"
    recorder = tmp_path / "bin" / "skillopt-sleep-recorder"
    recorder.parent.mkdir()
    recorder.write_text(RECORDER.format(log=recorded, exe=EXE))
    recorder.chmod(0o755)
    homes.codex.mkdir(parents=True)
    (homes.codex / "config.toml").write_text(OFFLINE_PROVIDER)
    env = {**env_with(codex_on_path=True), "XDG_DATA_HOME": str(tmp_path / "xdg-data"),
           "XDG_CONFIG_HOME": str(tmp_path / "xdg-config"), "NOT_FOR_THE_SERVER": "1", "OFFLINE_KEY": "x"}
    out = run([EXE, "integrate", "codex", "--command", str(recorder), "--skill", str(CODEX_SKILL)], tmp_path,
              env=env)
    assert out.returncode == 0, out.stderr

    seen = _codex_starts_the_server(tmp_path, env, recorded)

    assert "NOT_FOR_THE_SERVER" not in seen  # Codex forwards only its short list and env_vars
    assert {k: seen.get(k) for k in ("SKILLOPT_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "CODEX_HOME",
                                     "CLAUDE_CONFIG_DIR")} == {k: env[k] for k in (
        "SKILLOPT_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "CODEX_HOME", "CLAUDE_CONFIG_DIR")}
    params = StdioServerParameters(command=EXE, args=["mcp"], env=seen, cwd=str(tmp_path))
    async with Client(params, mode="legacy") as client:
        listed = (await client.call_tool("list_proposals", {})).structured_content
    assert [p["id"] for p in listed["proposals"]] == [staged.id]


def test_codex_reads_the_tool_timeout_and_the_forwarded_names(tmp_path: Path, homes: Homes) -> None:
    from sleep.mcp.launch import MAX_WAIT_S, SERVER_ENV_VARS

    env = env_with(codex_on_path=True)
    assert bash(CODEX_INSTALL, env=env, cwd=tmp_path).returncode == 0
    got = run([npm_tool("codex"), "mcp", "get", "skillopt", "--json"], tmp_path, env=env)
    assert got.returncode == 0, got.stderr[-2000:]
    entry = json.loads(got.stdout)
    assert entry["transport"]["env_vars"] == list(SERVER_ENV_VARS)
    assert entry["tool_timeout_sec"] > MAX_WAIT_S  # evaluate_skill waits 60 s, Codex's default timeout
