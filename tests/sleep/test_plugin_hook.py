"""The Claude Code plugin's SessionEnd hook, run exactly as hooks/hooks.json says (a shell
command with CLAUDE_PLUGIN_ROOT set, the hook JSON on stdin): with realistic input
it exits 0 in well under a second and the session is noted for the next harvest;
with garbage it still exits 0 and logs it; without SkillOpt installed it never
fails the session. `skillopt-sleep hook session-end` comes with the scheduler
(issue 10): the tests that need it skip until this install has it."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from plugin_testutil import CLAUDE_PLUGIN, SHIM, SYSTEM_PATH, cli_has, plain_env
from sleep_testutil import Homes


VENV_BIN = str(Path(sys.executable).parent)


def hook_command() -> str:
    [group] = json.loads((CLAUDE_PLUGIN / "hooks" / "hooks.json").read_text())["hooks"]["SessionEnd"]
    return group["hooks"][0]["command"]


def run_hook(command: str, stdin: bytes, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    # Not timed here: bench/hook.py measures it against Claude Code's budget.
    return subprocess.run(["/bin/sh", "-c", command], input=stdin, cwd=cwd, capture_output=True, timeout=30,
                          env={**env, "CLAUDE_PLUGIN_ROOT": str(CLAUDE_PLUGIN)})


def needs_the_hook() -> None:
    if not cli_has("hook"):
        pytest.skip("`skillopt-sleep hook session-end` is not in this install yet (the scheduler, issue 10)")


def a_finished_session(homes: Homes, project: Path) -> dict:
    """A transcript on disk and the SessionEnd JSON Claude Code sends for it."""
    session = str(uuid.uuid4())
    slug = "".join(c if c.isalnum() else "-" for c in str(project))
    transcript = homes.claude / "projects" / slug / f"{session}.jsonl"
    transcript.parent.mkdir(parents=True)
    transcript.write_text(json.dumps({
        "type": "user", "uuid": str(uuid.uuid4()), "parentUuid": None, "sessionId": session, "cwd": str(project),
        "timestamp": "2026-11-30T09:00:00.000Z", "isSidechain": False, "userType": "external", "entrypoint": "cli",
        "message": {"role": "user", "content": "run the tests and list the failures"}}) + "\n")
    return {"session_id": session, "transcript_path": str(transcript), "cwd": str(project),
            "permission_mode": "default", "hook_event_name": "SessionEnd", "reason": "prompt_input_exit"}


def noted(homes: Homes, path: str) -> bool:
    """Whether the transcript is noted for the next harvest (in the index, or the spool a busy index uses)."""
    spool = homes.skillopt / "noted-spool.jsonl"
    if spool.exists() and any(json.loads(line).get("path") == path for line in spool.read_text().splitlines()):
        return True
    with sqlite3.connect(homes.skillopt / "sleep.sqlite3") as conn:
        return conn.execute("SELECT COUNT(*) FROM noted_files WHERE path = ?", (path,)).fetchone()[0] == 1


def test_with_a_real_session_end_it_exits_zero_and_notes_the_session(tmp_path: Path, homes: Homes) -> None:
    needs_the_hook()
    project = tmp_path / "app"
    project.mkdir()
    event = a_finished_session(homes, project)
    env = plain_env(homes.home, PATH=f"{VENV_BIN}:{SYSTEM_PATH}")
    from sleep.index import Index

    Index.open().close()  # the index exists, as after any harvest: the usual case

    done = run_hook(hook_command(), json.dumps(event).encode(), env, project)

    assert done.returncode == 0, done.stderr
    assert noted(homes, event["transcript_path"])


@pytest.mark.parametrize("stdin", [b"", b"not json at all", b"[1, 2, 3]", b'{"transcript_path": 3}',
                                   b'{"transcript_path": "relative/x.jsonl"}', b"\xff\xfe\x00garbage",
                                   b"{" * (2 << 20)],
                         ids=["empty", "text", "array", "number-path", "relative-path", "binary", "2MB"])
def test_with_garbage_on_stdin_it_still_exits_zero_and_logs_it(tmp_path: Path, homes: Homes, stdin: bytes) -> None:
    needs_the_hook()
    env = plain_env(homes.home, PATH=f"{VENV_BIN}:{SYSTEM_PATH}")
    # The launcher itself, without the hook line's `|| true`: the engine must exit 0 on its own.
    done = run_hook(f'"{SHIM}" hook session-end', stdin, env, tmp_path)
    assert done.returncode == 0, done.stderr
    log = homes.skillopt / "logs" / "hook.log"
    assert log.exists() and "ignored" in log.read_text()


def test_without_skillopt_installed_the_hook_never_fails_the_session(tmp_path: Path, homes: Homes) -> None:
    event = a_finished_session(homes, tmp_path)
    done = run_hook(hook_command(), json.dumps(event).encode(), plain_env(homes.home), tmp_path)
    assert done.returncode == 0
    assert b"SkillOpt is not installed" in done.stderr


# What the hook loads decides how fast it is (Claude Code gives every SessionEnd hook together
# 1.5 s; bench/hook.py measures the time). Counted here, not timed.
LOADED = ("import sys\nfrom sleep.cli import main\nmain(['hook', 'session-end'])\n"
          "print(' '.join(sorted(m for m in sys.modules if m == 'sleep' or m.startswith(('sleep.', "
          "'skillopt_core', 'git', 'yaml', 'pydantic', 'platformdirs.android')))))\n")


def test_the_hook_loads_only_the_standard_library_sqlite_and_the_data_dir(tmp_path: Path, homes: Homes) -> None:
    needs_the_hook()
    from sleep.index import Index

    Index.open().close()
    event = a_finished_session(homes, tmp_path)
    done = subprocess.run([sys.executable, "-c", LOADED], input=json.dumps(event), capture_output=True, text=True,
                          timeout=60, env=plain_env(homes.home, PATH=f"{VENV_BIN}:{SYSTEM_PATH}"))
    assert done.returncode == 0, done.stderr
    # sleep.storage: the one-line storage errors (standard library only: errno, os, shutil, sqlite3)
    # skillopt_core.timestamps: the one UTC timestamp (standard library only; the package's __init__ loads nothing)
    assert done.stdout.split() == ["skillopt_core", "skillopt_core.timestamps", "sleep", "sleep.cli", "sleep.lock",
                                   "sleep.paths", "sleep.scheduler", "sleep.scheduler.hook", "sleep.storage"]
    assert noted(homes, event["transcript_path"])


def test_without_an_index_the_hook_spools_the_note_and_creates_nothing_else(tmp_path: Path, homes: Homes) -> None:
    needs_the_hook()
    event = a_finished_session(homes, tmp_path)
    done = run_hook(hook_command(), json.dumps(event).encode(),
                    plain_env(homes.home, PATH=f"{VENV_BIN}:{SYSTEM_PATH}"), tmp_path)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in homes.skillopt.iterdir()) == ["noted-spool.jsonl"]
    [line] = (homes.skillopt / "noted-spool.jsonl").read_text().splitlines()
    assert json.loads(line)["path"] == event["transcript_path"]
    assert (homes.skillopt / "noted-spool.jsonl").stat().st_mode & 0o077 == 0  # private, like the index
