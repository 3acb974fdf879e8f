"""Nothing of the person's credentials in the sandbox but the CLI's own login (issue 35, item 3): tool
folders under HOME that PATH entries bind back are bound without their credential files, and the scratch
HOME's ``~/.claude.json`` holds only what Claude Code needs to run. The deny-list is this test."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest
from sleep_testutil import Homes

from skillopt_core.backends.cli_common import run_cli
from skillopt_core.replay import replay_root
from sleep.replay.sandbox import SECRET_FILE_NAMES, SECRET_NAMES, BwrapLauncher, sandbox_available

pytestmark = pytest.mark.skipif(not sandbox_available()[0], reason=f"no bubblewrap sandbox: {sandbox_available()[1]}")

# Each credential the audit reached, and the rest of the deny-list, at its place under HOME.
AUDITED = (".cargo/credentials.toml", ".local/share/opencode/auth.json", ".local/share/fish/fish_history",
           ".config/gh/hosts.yml")


def tool_folder(home: Path, rel: str) -> Path:
    """The tool folder a credential lies in (its first part under HOME) given a ``bin`` on PATH."""
    first = rel.split("/")[0]
    folder = home / first if "/" in rel else home / ".tools"
    (folder / "bin").mkdir(parents=True, exist_ok=True)
    return folder


def read_inside(paths: list[Path], path_dirs: list[Path]) -> dict[str, str]:
    work = replay_root() / "w"
    work.mkdir(parents=True, exist_ok=True)
    code = ("import json, sys\nout = {}\nfor p in sys.argv[1:]:\n"
            "    try:\n        out[p] = open(p).read()\n    except OSError as e:\n        out[p] = 'refused'\n"
            "print(json.dumps(out))")
    env_path = ":".join([*(str(d / "bin") for d in path_dirs), "/usr/local/bin", "/usr/bin", "/bin"])
    old = os.environ["PATH"]
    os.environ["PATH"] = env_path
    try:
        result = asyncio.run(run_cli(["python3", "-c", code, *map(str, paths)], cwd=work, timeout=60, backend="test",
                                     launcher=BwrapLauncher("claude-code")))
    finally:
        os.environ["PATH"] = old
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.fixture
def outside_home(monkeypatch: pytest.MonkeyPatch):
    """A HOME outside /tmp (the sandbox hides /tmp whole, so a home there would hide its tool folders too;
    a real home is its own hidden root whose tool folders are bound back)."""
    import shutil
    import tempfile

    home = Path(tempfile.mkdtemp(prefix="skillopt-home-", dir="/var/tmp"))
    monkeypatch.setenv("HOME", str(home))
    yield home
    shutil.rmtree(home, ignore_errors=True)


def test_every_credential_under_a_bound_back_tool_folder_is_unreadable(homes: Homes, outside_home: Path) -> None:
    home = outside_home
    planted, folders = [], []
    for rel in (*AUDITED, *SECRET_NAMES):
        folder = tool_folder(home, rel)
        target = home / rel if "/" in rel else folder / rel  # a top-level name: inside a tool folder too
        if target.exists():
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.suffix or "." in target.name or "/" in rel:
            target.write_text(f"secret of {rel}\n")
            planted.append(target)
        else:
            target.mkdir()
            (target / "token").write_text(f"secret of {rel}\n")
            planted.append(target / "token")
        folders.append(folder)
    for name in SECRET_FILE_NAMES:  # anywhere in a bound-back folder, a few levels down
        target = home / ".local" / "share" / "some-tool" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(f"secret of {name}\n")
        planted.append(target)
    ordinary = home / ".cargo" / "bin" / "cargo-tool"
    ordinary.write_text("a program\n")
    seen = read_inside([*planted, ordinary], sorted(set(folders)) + [home / ".local"])
    assert seen[str(ordinary)] == "a program\n"  # the tool folder itself is there
    readable = {p: v for p, v in seen.items() if v not in ("refused", "") and p != str(ordinary)}
    assert readable == {}


def test_the_scratch_homes_claude_json_holds_only_what_the_cli_needs(homes: Homes) -> None:
    (homes.home / ".claude.json").write_text(json.dumps({
        "userID": "u-1", "hasCompletedOnboarding": True, "oauthAccount": {"emailAddress": "a@b.c"},
        "mcpServers": {"db": {"command": "db-mcp", "env": {"DB_TOKEN": "global-mcp-token"}}},
        "projects": {"/home/p/app": {"mcpServers": {"gh": {"env": {"GITHUB_TOKEN": "ghp_project_token"}}},
                                     "allowedTools": ["Bash(rm:*)"]}},
        "someOtherState": "x"}))
    work = replay_root() / "w"
    work.mkdir(parents=True)
    code = "import os\nprint(open(os.path.join(os.environ['HOME'], '.claude.json')).read())"
    result = asyncio.run(run_cli(["python3", "-c", code], cwd=work, timeout=60, backend="test",
                                 launcher=BwrapLauncher("claude-code")))
    inside = json.loads(result.stdout)
    assert inside == {"userID": "u-1", "hasCompletedOnboarding": True, "oauthAccount": {"emailAddress": "a@b.c"}}
