"""Bounded host work (issue 35, item 4): what a rollout leaves (a huge output, a huge untracked file, a
link to /dev/zero, a link to a FIFO, a full disk) keeps the night's host-side steps within memory and
time limits; the sandbox's /tmp has a size. Caps are lowered where that keeps the test small."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest
from proposal_testutil import make_repo
import replay_fakes

from skillopt_core import BackendSpec, CompletionRequest, create_backend
from skillopt_core.backends.cli_common import run_cli
from skillopt_core.replay import replay_root
from sleep.replay.checkout import replay_checkout
from sleep.replay import backend as replay_backend
from sleep.replay.backend import ActionReplayBackend, HostStepFailed, host_step, observed_changes, with_diff_stat
from sleep.replay.sandbox import BwrapLauncher, sandbox_available

ROOT = Path(__file__).resolve().parents[2]
needs_bwrap = pytest.mark.skipif(not sandbox_available()[0], reason=f"no bubblewrap sandbox: {sandbox_available()[1]}")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "project", {"a.txt": "one\n"})


def peak_rss_mb(code: str) -> tuple[float, str]:
    """Run ``code`` in a fresh interpreter; (its peak resident memory in MB, its last output line)."""
    wrapper = code + "\nimport resource\nprint(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)\n"
    done = subprocess.run([sys.executable, "-c", wrapper], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    return float(lines[-1]), lines[-2] if len(lines) > 1 else ""


def test_output_is_capped_while_it_streams(tmp_path: Path) -> None:
    """200 MB of output with a 1 MB cap: the night keeps 1 MB and never holds the rest."""
    code = (f"import asyncio, json\nfrom pathlib import Path\nfrom skillopt_core.backends.cli_common import run_cli\n"
            f"r = asyncio.run(run_cli(['sh', '-c', 'yes 0123456789 | head -c 200000000'], cwd=Path({str(tmp_path)!r}),"
            f" timeout=120, backend='t', output_cap=1_000_000))\n"
            f"print(json.dumps([len(r.stdout), r.cut, r.returncode]))")
    baseline, _ = peak_rss_mb("import skillopt_core.backends.cli_common")
    peak, result = peak_rss_mb(code)
    kept, cut, code_ = json.loads(result)
    assert (kept, cut, code_) == (1_000_000, 199_000_000, 0)
    assert peak - baseline < 64, f"the night held {peak - baseline:.0f} MB for a 1 MB cap"


def test_a_call_without_its_own_cap_is_capped_at_the_ceiling(tmp_path: Path, monkeypatch) -> None:
    from skillopt_core.backends import cli_common

    monkeypatch.setattr(cli_common, "OUTPUT_CEILING", 4096)
    result = asyncio.run(run_cli(["sh", "-c", "yes | head -c 100000; yes | head -c 50000 >&2"], cwd=tmp_path,
                                 timeout=30, backend="t"))
    assert (len(result.stdout), len(result.stderr), result.cut) == (4096, 4096, 100000 + 50000 - 8192)


def test_stdin_and_capped_output_together(tmp_path: Path) -> None:
    result = asyncio.run(run_cli(["cat"], cwd=tmp_path, timeout=30, backend="t", stdin_text="x" * 300_000,
                                 output_cap=1000))
    assert (len(result.stdout), result.cut, result.returncode) == (1000, 299_000, 0)


def finishes(func, *args, within: float = 30.0):
    """``func(*args)`` in a thread that must finish within ``within`` s (a hang fails the test, not the run)."""
    box: list = []
    thread = threading.Thread(target=lambda: box.append(func(*args)), daemon=True)
    thread.start()
    thread.join(within)
    assert box, f"{func.__name__} did not finish within {within} s"
    return box[0]


def test_untracked_huge_files_links_and_fifos_are_counted_boundedly(repo: Path, tmp_path: Path) -> None:
    with replay_checkout(repo) as work:
        with open(work / "huge.bin", "wb") as fh:  # 2 GB, sparse: costs no disk, would cost 2 GB to read
            fh.truncate(2 * 1024**3)
        (work / "huge.txt").write_text("line\n" * 3_000_000)  # 15 MB of text: over the line-count bound
        os.symlink("/dev/zero", work / "zero.txt")
        os.mkfifo(tmp_path / "fifo")
        os.symlink(tmp_path / "fifo", work / "fifo-link.txt")
        os.mkfifo(work / "fifo.txt")
        (work / "small.txt").write_text("a\nb\n")
        start = time.monotonic()
        changes = finishes(lambda: with_diff_stat(work, observed_changes(work, None)))
        took = time.monotonic() - start
    seen = {c.path: c.lines_added for c in changes}
    assert seen["small.txt"] == 2
    assert seen["huge.bin"] is None and seen["huge.txt"] is None
    assert seen["zero.txt"] is None and seen["fifo-link.txt"] is None
    assert took < 20


def test_a_copied_checkout_snapshot_never_opens_links_or_fifos(tmp_path: Path) -> None:
    work = replay_root() / "copy"
    work.mkdir(parents=True)
    (work / "a.txt").write_text("a\n")
    before = replay_backend._snapshot(work)
    os.symlink("/dev/zero", work / "zero")
    os.mkfifo(work / "fifo")
    (work / "b.txt").write_text("b\n")
    changes = finishes(observed_changes, work, before)
    assert [(c.path, c.change) for c in changes] == [("b.txt", "added")]


def test_a_host_step_over_its_wall_limit_fails_the_rollout_cleanly() -> None:
    with pytest.raises(HostStepFailed, match="took over 0.2 s"):
        asyncio.run(host_step("git status", time.sleep, 3, limit=0.2))


@needs_bwrap
def test_the_sandboxes_tmp_has_a_size(tmp_path: Path) -> None:
    work = replay_root() / "w"
    work.mkdir(parents=True)
    code = ("import errno\ntry:\n    open('/tmp/fill', 'wb').write(b'x' * 8_000_000)\n    print('wrote')\n"
            "except OSError as e:\n    print(errno.errorcode[e.errno])")
    result = asyncio.run(run_cli(["python3", "-c", code], cwd=work, timeout=30, backend="t",
                                 launcher=BwrapLauncher("claude-code", tmp_size=4 * 1024 * 1024)))
    assert result.stdout.strip() == "ENOSPC"


@needs_bwrap
def test_a_rollout_over_its_disk_budget_fails_cleanly(repo: Path, tmp_path: Path, monkeypatch) -> None:
    bin_dir = replay_fakes.install(tmp_path / "bin")
    replay_fakes.on_path(monkeypatch, bin_dir)
    inner = create_backend(BackendSpec(name="claude-code", model=None, role="target", options={"timeout": 60}))
    inner.act(BwrapLauncher("claude-code"), output_cap=100_000)
    backend = ActionReplayBackend(inner, disk_budget=2 * 1024 * 1024)
    request = CompletionRequest.single(
        "Do it.\nATTACK: python3 -c \"open('fill.bin', 'wb').write(b'x' * 5000000)\"", role="target",
        stage="rollout", skill="---\nname: s\ndescription: d\n---\n\nS.\n", cwd=None,
        allowed_commands=("python3",))
    with replay_checkout(repo) as template:
        with pytest.raises(HostStepFailed, match="disk"):
            asyncio.run(backend.complete(replace(request, cwd=str(template))))
        left = {p.name for p in template.parent.iterdir() if p.name.startswith("checkout-")}
    assert left == {template.name, template.name + ".trusted-git"}  # the rollout's checkout is gone
