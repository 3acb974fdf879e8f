"""The repository as the attacker: what an install or test script run by a rollout plants in the checkout's
``.git`` (or ``.gitattributes``) runs nothing and reads nothing outside the sandbox when the night looks at
the rollout's changes afterwards (issue 35, item 1).

Each attack is planted by a command run *inside* the sandbox (as a package's install script would be),
then the host-side steps of the rollout run (``observed_changes`` and ``with_diff_stat``: the status and
diff stat), then, where it matters, another sandboxed command (a check). The planted program writes a
marker file outside the checkout and connects to a server on the host's loopback: inside the sandbox
neither is reachable, so either one appearing proves it ran on the host."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path

import pytest
from sleep_testutil import Homes

from skillopt_core.backends.cli_common import run_cli
from sleep.replay.checkout import replay_checkout
from sleep.replay.backend import observed_changes, with_diff_stat
from sleep.replay.sandbox import BwrapLauncher, sandbox_available

pytestmark = pytest.mark.skipif(not sandbox_available()[0], reason=f"no bubblewrap sandbox: {sandbox_available()[1]}")


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """The person's repository (each rollout works in a clone of a clone of it, as a night does)."""
    repo = tmp_path / "project"
    (repo / "src").mkdir(parents=True)
    (repo / "package.json").write_text('{"name": "p"}\n')
    (repo / "src" / "app.txt").write_text("one\ntwo\n")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", ".")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init")
    return repo


def sandboxed(code: str, work: Path):
    return asyncio.run(run_cli(["python3", "-c", code], cwd=work, timeout=60, backend="test",
                               launcher=BwrapLauncher("claude-code")))


def evil_program(marker: Path, port: int) -> str:
    """A program that leaves a marker outside the checkout and calls the host's loopback; as a clean
    filter it passes its input through."""
    return (f"#!/usr/bin/env python3\nimport socket, sys\n"
            f"open({str(marker)!r}, 'a').write('ran\\n')\n"
            f"try:\n    socket.create_connection(('127.0.0.1', {port}), timeout=2).close()\n"
            f"except OSError:\n    pass\n"
            f"if len(sys.argv) == 1:\n    sys.stdout.write(sys.stdin.read())\n")


def plant(work: Path, files: dict[str, str], config: str = "", modify: bool = True) -> None:
    """Inside the sandbox, as an install script: write ``files`` (relative to the checkout; ``.git/...``
    included, executable), append ``config`` to ``.git/config`` and change a tracked file."""
    code = ("import os, json\n"
            f"files = json.loads({json.dumps(json.dumps(files))})\n"
            "for rel, text in files.items():\n"
            "    os.makedirs(os.path.dirname(rel) or '.', exist_ok=True)\n"
            "    open(rel, 'w').write(text)\n"
            "    os.chmod(rel, 0o755)\n"
            f"open('.git/config', 'a').write({config!r})\n"
            + ("open('src/app.txt', 'a').write('three\\n')\n" if modify else "")
            + "print('planted')\n")
    result = sandboxed(code, work)
    assert result.stdout.strip() == "planted", result.stderr


def host_steps(work: Path) -> dict[str, tuple]:
    changes = with_diff_stat(work, observed_changes(work, None))
    return {c.path: (c.change, c.lines_added, c.lines_removed) for c in changes}


def attack(repo: Path, tmp_path: Path, server, files: dict[str, str], config: str,
           modify: bool = True) -> dict[str, tuple]:
    port, hits = server
    marker = tmp_path / "ran-on-host"
    with replay_checkout(repo) as template, replay_checkout(template) as work:
        files = {k: v.replace("EVIL", evil_program(marker, port)).replace("WORK", str(work))
                 for k, v in files.items()}
        plant(work, files, config.replace("WORK", str(work)), modify)
        seen = host_steps(work)
    assert not marker.exists(), f"a planted program ran on the host: {marker.read_text()!r}"
    assert not hits, "a planted program reached the host's loopback"
    return seen


def test_a_planted_fsmonitor_runs_nothing_on_the_host(repo: Path, tmp_path: Path, server) -> None:
    seen = attack(repo, tmp_path, server, {".git/evil": "EVIL"}, "[core]\n\tfsmonitor = WORK/.git/evil\n")
    assert seen["src/app.txt"] == ("modified", 1, 0)


@pytest.mark.parametrize("where", [".gitattributes", ".git/info/attributes"])
def test_a_planted_clean_filter_runs_nothing_on_the_host(repo: Path, tmp_path: Path, server, where: str) -> None:
    seen = attack(repo, tmp_path, server, {".git/evil": "EVIL", where: "* filter=x diff=x\n"},
                  "[filter \"x\"]\n\tclean = WORK/.git/evil\n\tsmudge = WORK/.git/evil\n\trequired = false\n")
    assert seen["src/app.txt"] == ("modified", 1, 0)


@pytest.mark.parametrize("included", ["[core]\n\tfsmonitor = WORK/.git/evil\n",
                                      "[filter \"x\"]\n\tclean = WORK/.git/evil\n"])
def test_an_include_path_holding_either_runs_nothing_on_the_host(repo: Path, tmp_path: Path, server,
                                                                included: str) -> None:
    seen = attack(repo, tmp_path, server, {".git/evil": "EVIL", ".git/more.cfg": included,
                                           ".gitattributes": "* filter=x\n"}, "[include]\n\tpath = more.cfg\n")
    assert seen["src/app.txt"] == ("modified", 1, 0)


HOOKS = ("pre-commit", "post-checkout", "post-index-change", "pre-auto-gc", "reference-transaction",
         "post-rewrite", "fsmonitor-watchman", "post-merge", "pre-push", "commit-msg", "prepare-commit-msg")


def test_planted_hooks_and_programs_run_nothing_on_the_host(repo: Path, tmp_path: Path, server) -> None:
    hooks = {f".git/hooks/{name}": "EVIL" for name in HOOKS}
    hooks |= {f".git/myhooks/{name}": "EVIL" for name in HOOKS}
    hooks |= {".git/evil": "EVIL", ".gitattributes": "* diff=x\n"}
    config = ("[core]\n\thooksPath = WORK/.git/myhooks\n\tpager = WORK/.git/evil\n\tuntrackedCache = true\n"
              "[diff]\n\texternal = WORK/.git/evil\n[diff \"x\"]\n\ttextconv = WORK/.git/evil\n"
              "[gc]\n\tauto = 1\n[status]\n\tsubmoduleSummary = true\n")
    seen = attack(repo, tmp_path, server, hooks, config)
    assert seen["src/app.txt"] == ("modified", 1, 0)


def test_planted_alternates_widen_nothing(repo: Path, tmp_path: Path, homes: Homes) -> None:
    """The checkout's ``objects/info/alternates`` naming a secret folder under HOME: the next sandboxed
    command (a check) still cannot read it; the sandbox's read-only binds come from the clone as it
    was before the rollout."""
    secret = homes.home / ".config" / "secret-tool"
    secret.mkdir(parents=True)
    (secret / "token").write_text("gh-token-value\n")
    read = (f"try:\n print(open({str(secret / 'token')!r}).read().strip())\n"
            "except OSError:\n print('refused')")
    with replay_checkout(repo) as template, replay_checkout(template) as work:
        assert sandboxed(read, work).stdout.strip() == "refused"
        plant(work, {}, "", modify=False)
        sandboxed(f"open('.git/objects/info/alternates', 'a').write({str(secret)!r} + '\\n')", work)
        host_steps(work)
        assert sandboxed(read, work).stdout.strip() == "refused"


def test_a_replaced_git_folder_still_reports_the_real_changes(repo: Path, tmp_path: Path) -> None:
    """A rollout that deletes or rewrites ``.git`` (a checkout of another commit, a fresh ``git init``)
    cannot hide or invent changes: the status compares the work tree with the trusted copy."""
    with replay_checkout(repo) as template, replay_checkout(template) as work:
        sandboxed("import shutil, subprocess\nshutil.rmtree('.git')\nsubprocess.run(['git', 'init', '-q'])\n"
                  "open('src/app.txt', 'a').write('three\\n')\nopen('new.txt', 'w').write('a\\nb\\n')", work)
        seen = host_steps(work)
    assert seen == {"src/app.txt": ("modified", 1, 0), "new.txt": ("added", 2, 0)}


def test_a_projects_install_script_run_by_the_agent_runs_nothing_on_the_host(tmp_path: Path, server,
                                                                             monkeypatch) -> None:
    """End to end: the project commits a postinstall script; the (fake) agent runs it in its rollout; it
    plants a monitor, a filter and an include; the night's host-side steps run nothing of it."""
    import replay_fakes

    from skillopt_core import BackendSpec, CompletionRequest, create_backend
    from sleep.replay.backend import ActionReplayBackend

    port, hits = server
    marker = tmp_path / "ran-on-host"
    repo = tmp_path / "project"
    (repo / "scripts").mkdir(parents=True)
    (repo / "package.json").write_text('{"name": "p"}\n')
    (repo / "scripts" / "postinstall.py").write_text(
        "import os\n"
        f"evil = {evil_program(marker, port)!r}\n"
        "open('.git/evil', 'w').write(evil)\nos.chmod('.git/evil', 0o755)\n"
        "here = os.getcwd()\n"
        "open('.git/more.cfg', 'w').write(f'[filter \"x\"]\\n\\tclean = {here}/.git/evil\\n')\n"
        "open('.git/config', 'a').write(f'[core]\\n\\tfsmonitor = {here}/.git/evil\\n'\n"
        "                               '[include]\\n\\tpath = more.cfg\\n')\n"
        "open('.gitattributes', 'w').write('* filter=x\\n')\n"
        "open('package.json', 'a').write('\\n')\n")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", ".")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init")
    replay_fakes.on_path(monkeypatch, replay_fakes.install(tmp_path / "bin"))
    inner = create_backend(BackendSpec(name="claude-code", model=None, role="target", options={"timeout": 60}))
    inner.act(BwrapLauncher("claude-code"), output_cap=100_000)
    with replay_checkout(repo) as template:
        request = CompletionRequest.single("Install.\nATTACK: python3 scripts/postinstall.py", role="target",
                                           stage="rollout", skill="---\nname: s\ndescription: d\n---\n\nS.\n",
                                           cwd=str(template), allowed_commands=("python3",))
        completion = asyncio.run(ActionReplayBackend(inner).complete(request))
    (ran,) = completion.trajectory.commands()
    assert ran.exit_code == 0, ran.output
    changed = {c.path: c.change for c in completion.trajectory.file_changes()}
    assert changed == {"package.json": "modified", ".gitattributes": "added"}
    assert not marker.exists() and not hits
