"""The acting replay's sandbox, for real (bubblewrap): what a rollout may not do fails,
is recorded, and leaves the person's repository byte-identical."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import threading
import os
from pathlib import Path

import pytest
import replay_fakes
from sleep_testutil import Homes

from skillopt_core import BackendSpec, CompletionRequest, create_backend
from skillopt_core.backends.cli_common import run_cli
from skillopt_core.backends.trajectory import CheckRun
from skillopt_core.replay import replay_root
from sleep.replay.checkout import replay_checkout
from sleep.replay.backend import ActionReplayBackend
from sleep.replay.policy import READ_ONLY_BASICS, allowed_commands
from sleep.replay.sandbox import BwrapLauncher, sandbox_available

pytestmark = pytest.mark.skipif(not sandbox_available()[0], reason=f"no bubblewrap sandbox: {sandbox_available()[1]}")

SKILL = "---\nname: deps\ndescription: installing dependencies\n---\n\n# Deps\n\nInstall dependencies.\n"


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout


def state(repo: Path) -> tuple:
    files = sorted((p.relative_to(repo).as_posix(), p.read_bytes()) for p in repo.rglob("*")
                   if p.is_file() and ".git" not in p.relative_to(repo).parts)
    refs = sorted(p.relative_to(repo / ".git").as_posix() for p in (repo / ".git" / "refs").rglob("*") if p.is_file())
    return (git(repo, "rev-parse", "HEAD"), git(repo, "symbolic-ref", "HEAD"), (repo / ".git/index").read_bytes(),
            git(repo, "status", "--porcelain=v2"), git(repo, "stash", "list"), git(repo, "remote", "-v"), files, refs)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = tmp_path / "project"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "package.json").write_text('{"name": "p"}\n')
    git(repo, "add", "package.json")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init")
    (repo / "wip.txt").write_text("uncommitted work\n")
    git(repo, "stash", "push", "-q", "--include-untracked", "-m", "kept")
    (repo / "wip.txt").write_text("more uncommitted work\n")
    return repo


@pytest.fixture
def fakes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    bin_dir = replay_fakes.install(tmp_path / "bin")
    replay_fakes.on_path(monkeypatch, bin_dir)
    return bin_dir


def sandboxed(argv: list[str], cwd: Path, family: str = "claude-code"):
    return asyncio.run(run_cli(argv, cwd=cwd, timeout=30, backend="test", launcher=BwrapLauncher(family)))


def test_a_command_can_write_in_the_checkout_only(tmp_path: Path) -> None:
    work = replay_root() / "w"
    work.mkdir(parents=True)
    in_tmp = tmp_path / "outside.txt"  # /tmp is a private tmpfs inside: a write there vanishes
    visible = Path(__file__).parent / ".sandbox-escape-probe"  # the read-only rest of the file system
    code = (f"open('inside.txt','w').write('x')\n"
            f"open({str(in_tmp)!r},'w').write('x')\n"
            f"try:\n open({str(visible)!r},'w').write('x')\nexcept OSError as e: print('refused', e.errno)")
    result = sandboxed(["python3", "-c", code], work)
    assert (work / "inside.txt").read_text() == "x"
    assert not in_tmp.exists() and not visible.exists()
    assert "refused 30" in result.stdout  # EROFS


def test_the_hosts_loopback_is_out_of_reach(server, tmp_path: Path) -> None:
    port, hits = server
    socket.create_connection(("127.0.0.1", port), timeout=2).close()  # reachable from outside the sandbox
    work = replay_root() / "w"
    work.mkdir(parents=True)
    code = f"import socket\ntry:\n socket.create_connection(('127.0.0.1',{port}),timeout=3); print('reached')\nexcept OSError as e: print('refused')"
    assert sandboxed(["python3", "-c", code], work).stdout.strip() == "refused"
    assert len(hits) == 1


def test_the_home_and_its_keys_are_hidden_and_the_environment_scrubbed(homes: Homes, monkeypatch) -> None:
    (homes.home / ".ssh").mkdir()
    (homes.home / ".ssh" / "id_ed25519").write_text("PRIVATE KEY\n")
    homes.claude.mkdir(parents=True)
    (homes.claude / ".credentials.json").write_text('{"token": "login"}')
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "aws-secret-value")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-own-key")
    work = replay_root() / "w"
    work.mkdir(parents=True)
    code = (f"import os\nprint(os.path.exists({str(homes.home / '.ssh' / 'id_ed25519')!r}))\n"
            "print(sorted(k for k in os.environ if 'KEY' in k))\n"
            "print(open(os.path.join(os.environ['CLAUDE_CONFIG_DIR'], '.credentials.json')).read())")
    lines = sandboxed(["python3", "-c", code], work).stdout.splitlines()
    assert lines[0] == "False"
    assert lines[1] == "['ANTHROPIC_API_KEY']"
    assert lines[2] == '{"token": "login"}'


def acting_claude() -> ActionReplayBackend:
    inner = create_backend(BackendSpec(name="claude-code", model=None, role="target", options={"timeout": 60}))
    inner.act(BwrapLauncher("claude-code"), output_cap=100_000)
    return ActionReplayBackend(inner)


def request(cwd: Path, prompt: str, allowed: list[str], checks: tuple[str, ...] = ()) -> CompletionRequest:
    return CompletionRequest.single(prompt, role="target", stage="rollout", skill=SKILL, cwd=str(cwd),
                                    allowed_commands=tuple(allowed), checks=checks)


def test_forbidden_actions_fail_are_recorded_and_the_repository_is_untouched(repo: Path, fakes: Path, server,
                                                                            homes: Homes, tmp_path: Path) -> None:
    port, hits = server
    (homes.home / ".ssh").mkdir()
    (homes.home / ".ssh" / "id_ed25519").write_text("PRIVATE KEY\n")
    before = state(repo)
    outside = Path(__file__).parent / ".escape-probe"  # outside the checkout, on the read-only file system
    attacks = [
        f"python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=3)\"",
        f"python3 -c \"open('{outside}', 'w').write('x')\"",
        f"cat {homes.home / '.ssh' / 'id_ed25519'}",
        f"python3 -c \"open('{repo / 'package.json'}', 'w').write('overwritten')\"",
        "git push origin HEAD:main",
        "curl http://example.com",
    ]
    prompt = "Do it.\n" + "\n".join(f"ATTACK: {a}" for a in attacks)
    with replay_checkout(repo) as template:
        completion = asyncio.run(acting_claude().complete(request(template, prompt, ["python3", "cat", "git push"])))
    commands = completion.trajectory.commands()
    assert [c.command for c in commands] == attacks
    # Network, a write outside the checkout, the SSH key and the push fail inside the sandbox. (The repository
    # lives under /tmp here, the sandbox's private tmpfs: a write to its path lands there and vanishes.)
    assert [c.exit_code == 0 for c in commands[:5]] == [False, False, False, True, False], \
        [(c.exit_code, c.command) for c in commands]
    assert commands[5].denied  # curl was never allowed
    assert not outside.exists() and not hits
    assert state(repo) == before


def test_a_command_copilots_rules_refuse_is_recorded_as_denied(repo: Path, fakes: Path) -> None:
    """The fake `copilot` refuses a program no --allow-tool=shell(...) names the way the CLI reports it
    (permission.requested / permission.completed denied, then a failed tool.execution_complete)."""
    inner = create_backend(BackendSpec(name="copilot", model=None, role="target", options={"timeout": 60}))
    inner.act(BwrapLauncher("copilot"), output_cap=100_000)
    before = state(repo)
    with replay_checkout(repo) as template:
        completion = asyncio.run(ActionReplayBackend(inner).complete(
            request(template, "Do it.\nATTACK: curl http://example.com\nATTACK: npm install", ["npm"])))
    curl, npm = completion.trajectory.commands()
    assert (curl.command, curl.denied, curl.exit_code) == ("curl http://example.com", True, None)
    assert "could not request permission" in curl.output
    assert (npm.command, npm.denied, npm.exit_code) == ("npm install", False, 0)
    assert completion.trajectory.unknown_events == 0
    assert state(repo) == before


def test_each_rollout_gets_its_own_checkout_and_changes_come_from_it(repo: Path, fakes: Path) -> None:
    with replay_checkout(repo) as template:
        backend = acting_claude()
        first = asyncio.run(backend.complete(request(template, "Install.", ["npm"])))
        second = asyncio.run(backend.complete(request(template, "Install.", ["npm"])))
        assert not (template / "package-lock.json").exists()
    for completion in (first, second):
        assert [c.command for c in completion.trajectory.commands()] == ["npm install"]
        changed = {c.path: (c.change, c.lines_added) for c in completion.trajectory.file_changes()}
        assert changed == {"package-lock.json": ("added", 1), "node_modules/.installed-by-npm": ("added", 1)}
        assert "package-lock.json (added, +1 -0)" in completion.trajectory.summary()


def test_checks_run_after_the_agent_in_the_same_sandbox(repo: Path, fakes: Path) -> None:
    with replay_checkout(repo) as template:
        completion = asyncio.run(acting_claude().complete(
            request(template, "Install.", ["npm"], checks=("pytest -q", "rm -rf /"))))
    checks = completion.trajectory.checks()
    assert [c.command for c in checks] == ["pytest -q", "rm -rf /"]
    assert checks[0].exit_code not in (None, 0)  # no tests in this checkout: pytest fails, but it ran
    assert checks[1] == CheckRun("rm -rf /", None, "not an allowed verification runner; not run")


def test_allowed_commands_are_the_sessions_programs_plus_read_only_basics() -> None:
    allowed = allowed_commands(["pnpm install", "pytest -q", "git commit", "git", "sudo rm", "terraform apply"])
    assert allowed[: len(READ_ONLY_BASICS)] == list(READ_ONLY_BASICS)
    assert {"pnpm", "pytest", "git commit", "terraform apply"} <= set(allowed)
    assert "git" not in allowed and "sudo" not in allowed


PROXIED = """
import os, socket, sys
proxy = os.environ["HTTPS_PROXY"].rsplit(":", 1)
def via_proxy(port):
    s = socket.create_connection(("127.0.0.1", int(proxy[1])), timeout=5)
    s.sendall(f"CONNECT 127.0.0.1:{port} HTTP/1.1\\r\\nHost: 127.0.0.1:{port}\\r\\n\\r\\n".encode())
    return s.recv(200).split(b"\\r\\n")[0].decode()
print(via_proxy(int(sys.argv[1])))
print(via_proxy(int(sys.argv[2])))
try:
    socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=3); print("direct reached")
except OSError:
    print("direct refused")
"""


def test_the_cli_reaches_only_its_api_hosts_through_the_egress_proxy(server) -> None:
    from sleep.replay.egress import EgressProxy, Endpoint

    port, hits = server
    # the test server stands in for the model API: configured exactly (a loopback name pattern would be refused)
    egress = EgressProxy((), endpoints=(Endpoint("https", "127.0.0.1", port),))
    try:
        work = replay_root() / "w"
        work.mkdir(parents=True)
        launcher = BwrapLauncher("claude-code", egress=egress)
        result = asyncio.run(run_cli(["python3", "-c", PROXIED, str(port), str(port + 1)], cwd=work, timeout=30,
                                     backend="test", launcher=launcher))
        assert result.stdout.splitlines() == ["HTTP/1.1 200 Connection Established", "HTTP/1.1 403 Forbidden",
                                              "direct refused"], result.stderr
        assert len(hits) == 1 and egress.refused == [f"127.0.0.1:{port + 1}"]
    finally:
        egress.close()


def test_the_api_allow_list_matches_hosts_and_ports() -> None:
    from sleep.hosts import replaying
    from sleep.replay.egress import allowed

    api_hosts = replaying("claude-code").api_hosts
    assert allowed("api.anthropic.com", 443, api_hosts, (443,))
    assert not allowed("api.anthropic.com", 80, api_hosts, (443,))
    assert not allowed("evil.example.com", 443, api_hosts, (443,))
    assert not allowed("api.openai.com", 443, api_hosts, (443,))


def test_a_rollout_over_its_time_is_ended_with_everything_it_started() -> None:
    import time

    from skillopt_core.backends.base import RequestFailed

    work = replay_root() / "w"
    work.mkdir(parents=True)
    marker = "61.25"  # a sleep length no other process uses
    code = f"import subprocess, time\nsubprocess.Popen(['sleep', '{marker}'])\ntime.sleep(60)"

    def left() -> list[str]:
        found = []
        for proc in Path("/proc").iterdir():
            try:
                if proc.name.isdigit() and marker in (proc / "cmdline").read_bytes().decode(errors="replace"):
                    found.append(proc.name)
            except OSError:
                continue
        return found

    outcome: list[BaseException] = []

    def rollout() -> None:
        try:
            asyncio.run(run_cli(["python3", "-c", code], cwd=work, timeout=4, backend="test",
                                launcher=BwrapLauncher("claude-code")))
        except BaseException as exc:  # noqa: BLE001 - handed to the test thread
            outcome.append(exc)

    thread = threading.Thread(target=rollout)
    thread.start()
    deadline = time.monotonic() + 4
    while not left() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert left(), "the rollout's child process never started"
    thread.join(30)
    assert outcome and isinstance(outcome[0], RequestFailed) and "did not finish" in str(outcome[0])
    deadline = time.monotonic() + 5
    while left() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert left() == []


def test_observed_changes_carry_the_diff_stat(repo: Path) -> None:
    from sleep.replay.backend import observed_changes, with_diff_stat

    with replay_checkout(repo) as work:
        (work / "package.json").write_text('{"name": "p",\n "private": true}\n')
        (work / "NOTES.md").write_text("a\nb\nc\n")
        changes = {c.path: c for c in with_diff_stat(work, observed_changes(work, None))}
    assert (changes["package.json"].change, changes["package.json"].lines_added,
            changes["package.json"].lines_removed) == ("modified", 2, 1)
    assert (changes["NOTES.md"].change, changes["NOTES.md"].lines_added) == ("added", 3)


def test_a_cli_linked_into_a_hidden_folder_runs_behind_the_egress_bridge(tmp_path: Path) -> None:
    """An npm-style link on PATH whose package lives in a hidden folder not on PATH (as CI's
    ~/.cache/.../node_modules/.bin/gemini): the package is bound back though the bridge is argv[0]."""
    from sleep.replay.egress import EgressProxy

    package = tmp_path / "tools" / "node_modules" / "pkg" / "bin"
    package.mkdir(parents=True)
    (package / "cli.py").write_text("#!/usr/bin/env python3\nprint('the cli ran')\n", encoding="utf-8")
    (package / "cli.py").chmod(0o755)
    links = tmp_path / "links"
    links.mkdir()
    (links / "some-cli").symlink_to(package / "cli.py")
    egress = EgressProxy(())
    try:
        work = replay_root() / "w"
        work.mkdir(parents=True)
        launcher = BwrapLauncher("claude-code", egress=egress)
        env_path = os.pathsep.join([str(links), "/usr/local/bin", "/usr/bin", "/bin"])
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("PATH", env_path)
            result = asyncio.run(run_cli(["some-cli"], cwd=work, timeout=30, backend="test", launcher=launcher))
        assert result.stdout.strip() == "the cli ran", result.stderr
    finally:
        egress.close()
