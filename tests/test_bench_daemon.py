"""bench/daemon.py: a tiny run measures what the full one does, and stops the daemon cleanly."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import daemon  # noqa: E402


def test_a_tiny_run_reports_every_figure(capsys):
    assert daemon.main(["--files", "20", "--idle", "1", "--samples", "2", "--settle", "0.5", "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["files"] >= 20 and r["projects"] == 3
    assert r["idle_cpu_pct"] >= 0 and r["vmrss_mb"] > 5 and r["threads"] >= 2
    assert 0 < r["latency_s"]["median"] <= r["latency_s"]["max"] < 30
    assert r["harvest"]["noted_files_read"] == 5
    # the hosts the bench writes transcripts for read only what the watcher noted; a host whose
    # folders do not exist is not watched (nothing there to scan)
    modes = r["harvest"]["modes"]
    assert all(modes[h].startswith("noted files only (") for h in ("claude-code", "codex", "copilot-vscode")), modes
    assert r["harvest"]["full_scan_mode"].startswith("full scan: the watcher stopped at ")
    assert r["stop_exit"] == 0
