"""The Claude Code plugin (plugins/claude-code): its files checked against FORMATS.md,
then the real Claude Code CLI (`@anthropic-ai/claude-code`) validating it strictly,
adding the marketplace from this clone, installing, listing and removing the
plugin, and health-checking the plugin's MCP server, all in the test's private
HOME and CLAUDE_CONFIG_DIR, without a login or the network."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from npm_clients import QUIET, client_env, npm_tool, run
from plugin_testutil import CLAUDE_PLUGIN, PLUGINS, REPO, SHIM, SYSTEM_PATH, cli_has, toml_loads
from sleep_testutil import Homes


pytestmark = pytest.mark.timeout(300)

SUBCOMMANDS = ["review", "run", "dry-run", "status", "show", "adopt", "reject", "schedule", "unschedule"]
# Commands that the scheduler branch adds (issue 10); until then the tests that need them skip.
SCHEDULER = {"status", "schedule", "unschedule", "hook"}
SKILL_KEYS = {"name", "description", "license", "compatibility", "metadata", "allowed-tools"}
SKILL_NAME = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


def front_matter(path: Path) -> tuple[dict, str]:
    text = path.read_text(encoding="utf-8")
    match = re.match(r"^---\n(.*?)\n---\n(.*)$", text, re.S)
    assert match, f"{path}: no YAML front matter"
    return yaml.safe_load(match.group(1)), match.group(2)


# ----- the files ------------------------------------------------------------------------

@pytest.mark.parametrize("skill", sorted(PLUGINS.rglob("SKILL.md")), ids=lambda p: str(p.relative_to(PLUGINS)))
def test_each_skill_file_follows_formats(skill: Path) -> None:
    meta, body = front_matter(skill)
    assert set(meta) <= SKILL_KEYS, f"unknown keys {set(meta) - SKILL_KEYS}"
    name = meta["name"]
    assert SKILL_NAME.match(name) and len(name) <= 64 and name == skill.parent.name
    assert 1 <= len(meta["description"]) <= 1024
    assert body.strip()


def test_the_plugins_skill_and_command_have_different_names() -> None:
    # A skill and a command of one name collide in Claude Code (the skill wins `/skillopt-sleep`).
    skills = {p.parent.name for p in (CLAUDE_PLUGIN / "skills").glob("*/SKILL.md")}
    commands = {p.stem for p in (CLAUDE_PLUGIN / "commands").glob("*.md")}
    assert commands == {"skillopt-sleep"} and skills and not skills & commands


# Decisions the person confirms in Claude Code's own permission prompt, never pre-approved.
ASK_FIRST = {"adopt", "reject"}


def test_the_command_offers_each_subcommand_and_pre_approves_only_skillopt_sleep_reads_and_runs() -> None:
    meta, body = front_matter(CLAUDE_PLUGIN / "commands" / "skillopt-sleep.md")
    hint_words = re.findall(r"[a-z][a-z-]+", meta["argument-hint"])
    assert [w for w in hint_words if w in SUBCOMMANDS] == SUBCOMMANDS
    rules = [r.strip() for r in meta["allowed-tools"].split(",")]
    allowed = [re.fullmatch(r"Bash\(skillopt-sleep ([a-z-]+):\*\)", r) for r in rules]
    assert all(allowed), f"a rule beyond `skillopt-sleep SUBCOMMAND`: {rules}"
    allowed_subs = {m.group(1) for m in allowed}
    run_in_body = set(re.findall(r"`skillopt-sleep ([a-z-]+)", body))
    assert allowed_subs == run_in_body - ASK_FIRST, "every command the body runs is allowed, but adopt and reject"
    for sub in SUBCOMMANDS:
        assert f"- `{sub}" in body, f"no instructions for `{sub}`"
    assert "$ARGUMENTS" in body


def test_only_the_person_can_invoke_the_command() -> None:
    # Claude Code 2.1.197's own schema: "disable-model-invocation: If true, the model cannot invoke
    # this via the Skill tool; only users can type the slash command."
    meta, _ = front_matter(CLAUDE_PLUGIN / "commands" / "skillopt-sleep.md")
    assert meta["disable-model-invocation"] is True


def _cli_mentions() -> list[tuple[str, str, list[str]]]:
    """Every `skillopt-sleep SUB ...` the plugins tell an agent (or a hook) to run: (file, SUB, --flags)."""
    found = []
    for path in PLUGINS.rglob("*.md"):
        for sub, rest in re.findall(r"`skillopt-sleep ([a-z][a-z-]*)([^`]*)`", path.read_text()):
            found.append((str(path.relative_to(PLUGINS)), sub, re.findall(r"--[a-z][a-z-]*", rest)))
    for group in json.loads((CLAUDE_PLUGIN / "hooks" / "hooks.json").read_text())["hooks"].values():
        for hook in (h for g in group for h in g["hooks"]):
            for sub, rest in re.findall(r'bin/skillopt-sleep"? ([a-z][a-z-]*)([^|]*)', hook["command"]):
                found.append(("claude-code/hooks/hooks.json", sub, re.findall(r"--[a-z][a-z-]*", rest)))
    return found


def _check_mentions(mentions: list[tuple[str, str, list[str]]]) -> None:
    from sleep.cli import build_parser

    parser = build_parser()
    [subparsers] = [a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction"]
    for where, sub, flags in mentions:
        assert sub in subparsers.choices, f"{where}: `skillopt-sleep {sub}` is not a command"
        options = subparsers.choices[sub]._option_string_actions
        for flag in flags:
            assert flag in options, f"{where}: `skillopt-sleep {sub}` has no {flag}"


def test_every_command_the_plugins_run_exists_with_its_flags() -> None:
    mentions = [m for m in _cli_mentions() if m[1] not in SCHEDULER]
    assert {m[1] for m in mentions} >= {"review", "show", "adopt", "reject", "run", "history"}
    _check_mentions(mentions)


def test_the_scheduler_commands_the_plugins_run_exist_with_their_flags() -> None:
    mentions = [m for m in _cli_mentions() if m[1] in SCHEDULER]
    assert {m[1] for m in mentions} == SCHEDULER
    missing = sorted(s for s in SCHEDULER if not cli_has(s))
    if missing:
        pytest.skip(f"`skillopt-sleep {'`, `'.join(missing)}` not in this install yet (the scheduler, issue 10)")
    _check_mentions(mentions)


def test_the_mcp_server_and_the_hook_start_through_the_launcher() -> None:
    servers = json.loads((CLAUDE_PLUGIN / ".mcp.json").read_text())["mcpServers"]
    assert servers == {"skillopt": {"command": "${CLAUDE_PLUGIN_ROOT}/bin/skillopt-sleep", "args": ["mcp"]}}
    [group] = json.loads((CLAUDE_PLUGIN / "hooks" / "hooks.json").read_text())["hooks"]["SessionEnd"]
    [hook] = group["hooks"]
    assert hook["type"] == "command" and hook["timeout"] <= 10
    assert hook["command"] == '"${CLAUDE_PLUGIN_ROOT}/bin/skillopt-sleep" hook session-end || true'
    assert SHIM.stat().st_mode & 0o111


def test_the_manifests_agree_on_name_and_version() -> None:
    plugin = json.loads((CLAUDE_PLUGIN / ".claude-plugin" / "plugin.json").read_text())
    market = json.loads((CLAUDE_PLUGIN / ".claude-plugin" / "marketplace.json").read_text())
    version = toml_loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    [entry] = market["plugins"]
    assert (market["name"], entry["name"], entry["source"]) == ("skillopt", plugin["name"], "./")
    assert plugin["name"] == "skillopt-sleep" and entry["version"] == plugin["version"] == version


# ----- the real Claude Code CLI ------------------------------------------------------------

@pytest.mark.parametrize("what", [".", ".claude-plugin/plugin.json"], ids=["marketplace", "plugin"])
def test_claude_validates_it_strictly(tmp_path: Path, what: str) -> None:
    claude = npm_tool("claude")
    out = run([claude, "plugin", "validate", "--strict", str(CLAUDE_PLUGIN / what)], tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Validation passed" in out.stdout


def _install(claude: str, env: dict[str, str] | None = None) -> None:
    added = run([claude, "plugin", "marketplace", "add", "./plugins/claude-code"], REPO, env=env)
    assert added.returncode == 0, added.stdout + added.stderr
    installed = run([claude, "plugin", "install", "skillopt-sleep@skillopt"], REPO, env=env)
    assert installed.returncode == 0, installed.stdout + installed.stderr


def test_marketplace_add_and_install_from_the_clone_list_the_plugin_with_its_parts(tmp_path: Path) -> None:
    claude = npm_tool("claude")
    _install(claude)
    listed = run([claude, "plugin", "list", "--json"], tmp_path)
    [plugin] = json.loads(listed.stdout)
    assert (plugin["id"], plugin["enabled"], plugin["scope"]) == ("skillopt-sleep@skillopt", True, "user")
    details = run([claude, "plugin", "details", "skillopt-sleep@skillopt"], tmp_path).stdout
    [skills] = [line for line in details.splitlines() if "Skills (" in line]
    assert "Skills (2)" in skills and set(re.findall(r"[a-z-]+", skills.split(")", 1)[1])) == {
        "skillopt-sleep", "skillopt-sleep-guide"}, details
    assert re.search(r"Hooks \(1\)\s+SessionEnd", details) and re.search(r"MCP servers \(1\)\s+skillopt", details)


def test_uninstall_and_marketplace_remove_leave_nothing_installed(tmp_path: Path) -> None:
    claude = npm_tool("claude")
    _install(claude)
    removed = run([claude, "plugin", "uninstall", "skillopt-sleep@skillopt"], tmp_path)
    assert removed.returncode == 0, removed.stdout + removed.stderr
    gone = run([claude, "plugin", "marketplace", "remove", "skillopt"], tmp_path)
    assert gone.returncode == 0, gone.stdout + gone.stderr
    assert json.loads(run([claude, "plugin", "list", "--json"], tmp_path).stdout) == []
    assert "skillopt" not in run([claude, "plugin", "marketplace", "list"], tmp_path).stdout


class _RecordingModelServer:
    """A stand-in for the Anthropic API on loopback that records each request and refuses it,
    so `claude -p` shows what it would send the model without a login or the network."""

    def __init__(self) -> None:
        import http.server
        import threading

        self.bodies: list[bytes] = []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                outer.bodies.append(self.rfile.read(int(self.headers.get("content-length", 0))))
                reply = json.dumps({"type": "error", "error": {"type": "invalid_request_error",
                                                               "message": "offline test"}}).encode()
                self.send_response(400)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_the_model_is_offered_the_guide_but_not_the_command(tmp_path: Path) -> None:
    claude = npm_tool("claude")
    _install(claude)
    model = _RecordingModelServer()
    try:
        env = {**client_env(), "ANTHROPIC_BASE_URL": model.url, "ANTHROPIC_API_KEY": "sk-ant-offline-test"}
        run([claude, "-p", "hello", "--max-turns", "1"], tmp_path, env=env, timeout=180)
    finally:
        model.close()
    sent = b"\n".join(model.bodies).decode("utf-8", "replace")
    assert "skillopt-sleep:skillopt-sleep-guide" in sent, "claude -p never listed the plugin's skills"
    assert not re.search(r"skillopt-sleep:skillopt-sleep(?!-guide)", sent), "the model is offered /skillopt-sleep"


@pytest.mark.parametrize("found_by", ["PATH", "SKILLOPT_SLEEP_BIN"])
def test_the_plugins_mcp_server_reports_connected_in_claude_mcp_list(tmp_path: Path, homes: Homes,
                                                                    found_by: str) -> None:
    import sys

    claude = npm_tool("claude")
    env = client_env()  # the venv's bin first on PATH
    if found_by == "SKILLOPT_SLEEP_BIN":
        env = {**env, **QUIET, "PATH": SYSTEM_PATH, "SKILLOPT_SLEEP_BIN": str(Path(sys.executable).parent /
                                                                                "skillopt-sleep")}
    _install(claude, env)
    project = tmp_path / "project"
    project.mkdir()
    listed = run([claude, "mcp", "list"], project, env=env)
    assert listed.returncode == 0, listed.stdout + listed.stderr
    assert re.search(r"plugin:skillopt-sleep:skillopt: \S+/bin/skillopt-sleep mcp - ✔ Connected", listed.stdout), \
        listed.stdout
