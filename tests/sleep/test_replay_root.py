"""Per-night scratch (issue 35, item 5): a private replay root per night, refused when pre-created by
someone else or open to others, swept at the next command after a kill, and two nights at once never
touch each other's files."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from skillopt_core import replay
from skillopt_core.replay import ReplayRootRefused, is_replay_path, replay_root

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def temp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The system temp dir is ``tmp_path/sys-tmp`` (the default replay root lives there), no override."""
    system = tmp_path / "sys-tmp"
    system.mkdir()
    monkeypatch.delenv("SKILLOPT_REPLAY_ROOT", raising=False)
    monkeypatch.setenv("TMPDIR", str(system))
    monkeypatch.setattr(tempfile, "tempdir", str(system))
    monkeypatch.setattr(replay, "_ROOTS", {})
    return system


def child(code: str, env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", code], env={**os.environ, **env, "PYTHONPATH": str(ROOT)},
                            stdout=subprocess.PIPE, text=True)


def test_the_root_is_private_to_this_night_and_recognised_as_a_replay(temp: Path) -> None:
    root = replay_root()
    st = os.stat(root)
    assert stat.S_IMODE(st.st_mode) == 0o700 and st.st_uid == os.getuid()
    assert stat.S_IMODE(os.stat(root.parent).st_mode) == 0o700
    assert root.parent.parent == temp and str(os.getpid()) in root.name
    assert is_replay_path(root / "checkout-1") and is_replay_path(str(root / "x" / "y"))
    assert replay_root() == root


def test_a_root_pre_created_by_someone_else_is_refused(temp: Path) -> None:
    parent = replay.replay_parent()
    parent.mkdir(mode=0o700)
    os.chown(parent, 12345, 12345)
    with pytest.raises(ReplayRootRefused, match="another user"):
        replay_root()


def test_a_root_open_to_others_or_a_link_is_refused(temp: Path, tmp_path: Path) -> None:
    parent = replay.replay_parent()
    parent.mkdir(mode=0o755)
    os.chmod(parent, 0o755)
    with pytest.raises(ReplayRootRefused, match="open to other users"):
        replay_root()
    parent.rmdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    parent.symlink_to(elsewhere)
    with pytest.raises(ReplayRootRefused, match="link"):
        replay_root()


def test_a_killed_nights_leftovers_are_swept_by_the_next_command(temp: Path) -> None:
    code = ("import time\nfrom skillopt_core.replay import replay_root\nroot = replay_root()\n"
            "(root / 'checkout-x').mkdir()\n(root / 'checkout-x' / 'secret.txt').write_text('project')\n"
            "print(root, flush=True)\ntime.sleep(60)")
    killed = child(code, {"TMPDIR": str(temp)})
    alive = child(code, {"TMPDIR": str(temp)})
    try:
        dead_root = Path(killed.stdout.readline().strip())
        live_root = Path(alive.stdout.readline().strip())
        assert (dead_root / "checkout-x" / "secret.txt").exists()
        os.kill(killed.pid, signal.SIGKILL)
        killed.wait()
        mine = replay_root()  # the next command
        assert not dead_root.exists()
        assert (live_root / "checkout-x" / "secret.txt").exists()  # a running night is left alone
        assert mine.exists() and mine not in (dead_root, live_root)
    finally:
        alive.kill()
        alive.wait()


@pytest.mark.parametrize("shared_override", [False, True])
def test_two_nights_at_once_never_remove_each_others_homes(temp: Path, tmp_path: Path, shared_override: bool,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    env = {"TMPDIR": str(temp)}
    if shared_override:  # both nights under one SKILLOPT_REPLAY_ROOT
        env["SKILLOPT_REPLAY_ROOT"] = str(tmp_path / "shared" / "skillopt-replay")
        monkeypatch.setenv("SKILLOPT_REPLAY_ROOT", env["SKILLOPT_REPLAY_ROOT"])
    code = ("import time\nfrom pathlib import Path\nfrom sleep.replay.sandbox import BwrapLauncher\n"
            "_, env = BwrapLauncher('claude-code').wrap(['true'], Path('.'), {'PATH': '/usr/bin'})\n"
            "print(env['HOME'], flush=True)\ntime.sleep(60)")
    other = child(code, env)
    try:
        other_home = Path(other.stdout.readline().strip())
        assert other_home.is_dir()
        from sleep.replay.sandbox import BwrapLauncher, cleanup_homes
        _, mine = BwrapLauncher("claude-code").wrap(["true"], Path("."), {"PATH": "/usr/bin"})
        assert Path(mine["HOME"]).is_dir()
        cleanup_homes()
        assert not Path(mine["HOME"]).exists()
        assert other_home.is_dir()
    finally:
        other.kill()
        other.wait()


def test_a_night_that_ends_leaves_no_root(temp: Path) -> None:
    done = subprocess.run([sys.executable, "-c", "from skillopt_core.replay import replay_root\nr = replay_root()\n"
                           "(r / 'checkout-x').mkdir()\nprint(r)"], capture_output=True, text=True,
                          env={**os.environ, "TMPDIR": str(temp), "PYTHONPATH": str(ROOT)}, check=True)
    root = Path(done.stdout.strip())
    assert root.parent.is_dir() and not root.exists()


def test_any_command_sweeps_a_killed_nights_root(temp: Path, tmp_path: Path) -> None:
    code = ("import time\nfrom skillopt_core.replay import replay_root\nroot = replay_root()\n"
            "(root / 'home-x').mkdir()\nprint(root, flush=True)\ntime.sleep(60)")
    killed = child(code, {"TMPDIR": str(temp)})
    dead_root = Path(killed.stdout.readline().strip())
    os.kill(killed.pid, signal.SIGKILL)
    killed.wait()
    assert dead_root.exists()
    env = {**os.environ, "TMPDIR": str(temp), "PYTHONPATH": str(ROOT), "SKILLOPT_HOME": str(tmp_path / "home")}
    done = subprocess.run([sys.executable, "-m", "sleep", "history", "--all-projects"], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert not dead_root.exists()
