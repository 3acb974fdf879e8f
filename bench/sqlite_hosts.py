"""Benchmark of the harvest on a large Cursor IDE ``state.vscdb`` (issue 22 §2).

Builds, in a temp dir, a global ``state.vscdb`` of about ``--size-mb`` (default 300) in the
shape tests/sleep/test_harvest_cursor_ide.py builds (``cursorDiskKV`` with
``composerData:<id>`` and ``bubbleId:<id>:<bubble>`` rows, most bytes in tool results and
checkpoints, as the genuine key census in Li-Mingshuang/cyber-overseer docs/recon/cursor.md
shows), WAL mode, then times whole processes
``python -m sleep.cli harvest --source cursor --all-projects --json``:

1. the first harvest (every chat read);
2. a harvest with nothing changed (must read no chat: one listing query);
3. a harvest after one chat gained a turn (must read that chat only).

Prints wall time, bytes the harvest read, chats read and the process's peak RSS.
Usage: ``python bench/sqlite_hosts.py [--size-mb 300] [--dir DIR] [--keep]``. Nothing
touches the real home: SKILLOPT_HOME and SKILLOPT_CURSOR_IDE_HOME point into the temp dir.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

T0 = 1767225600000
WORDS = ("parser date module test fix rename cache api route build deploy lint type config schema "
         "migration index query handler token retry timeout worker queue").split()


def _text(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def build(user: Path, size_mb: int, seed: int = 7) -> tuple[Path, int]:
    rng = random.Random(seed)
    db = user / "globalStorage" / "state.vscdb"
    db.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    for t in ("ItemTable", "cursorDiskKV"):
        conn.execute(f"CREATE TABLE {t} (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")
    conn.execute("BEGIN")
    target, written, chats = size_mb << 20, 0, 0
    while written < target:
        cid = f"{chats:08x}-0000-4000-8000-{rng.getrandbits(48):012x}"
        headers, rows = [], []
        for i in range(rng.randint(20, 80)):
            bid = f"{cid[:8]}-{i:04x}-4000-8000-{rng.getrandbits(48):012x}"
            if i % 4 == 0:
                b = {"_v": 3, "type": 1, "bubbleId": bid, "text": _text(rng, rng.randint(8, 40)),
                     "createdAt": "2026-01-01T00:00:00.000Z", "context": {"fileSelections": []}}
            elif i % 4 == 1:
                b = {"_v": 3, "type": 2, "bubbleId": bid, "text": "", "capabilityType": 15,
                     "toolFormerData": {"name": "run_terminal_command_v2", "status": "completed",
                                        "params": json.dumps({"command": f"pytest tests/test_{rng.choice(WORDS)}.py -q"}),
                                        "result": json.dumps({"output": _text(rng, rng.randint(200, 2500)),
                                                              "exitCode": 0})}}
            elif i % 4 == 2:
                b = {"_v": 3, "type": 2, "bubbleId": bid, "text": "", "toolFormerData": {
                    "name": "edit_file_v2", "status": "completed",
                    "params": json.dumps({"relativeWorkspacePath": f"/work/app/src/{rng.choice(WORDS)}.py"}),
                    "result": json.dumps({"diff": _text(rng, rng.randint(100, 1500))})}}
            else:
                b = {"_v": 3, "type": 2, "bubbleId": bid, "text": _text(rng, rng.randint(20, 200)),
                     "modelInfo": {"modelName": "claude-4.5-sonnet"}}
            headers.append({"bubbleId": bid, "type": b["type"]})
            rows.append((f"bubbleId:{cid}:{bid}", json.dumps(b)))
        composer = {"_v": 10, "composerId": cid, "createdAt": T0 + chats * 1000, "lastUpdatedAt": T0 + chats * 1000 + 500,
                    "status": "completed", "modelConfig": {"modelName": "claude-4.5-sonnet"},
                    "fullConversationHeadersOnly": headers,
                    "originalFileStates": {f"file:///work/app/src/{w}.py": {"content": _text(rng, 300)}
                                           for w in rng.sample(WORDS, 3)}}
        rows.append((f"composerData:{cid}", json.dumps(composer)))
        rows.append((f"checkpointId:{cid}:{rng.getrandbits(32):08x}", json.dumps({"files": _text(rng, 3000)})))
        conn.executemany("INSERT INTO cursorDiskKV VALUES (?, ?)", rows)
        written += sum(len(k) + len(v) for k, v in rows)
        chats += 1
    conn.execute("COMMIT")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return db, chats


def add_turn(db: Path, chats: int) -> None:
    conn = sqlite3.connect(db, isolation_level=None)
    key = conn.execute("SELECT key FROM cursorDiskKV WHERE key >= 'composerData:' AND key < 'composerData;' "
                       "LIMIT 1 OFFSET ?", (chats // 2,)).fetchone()[0]
    doc = json.loads(conn.execute("SELECT value FROM cursorDiskKV WHERE key = ?", (key,)).fetchone()[0])
    cid = doc["composerId"]
    doc["fullConversationHeadersOnly"].append({"bubbleId": "bench-new", "type": 1})
    doc["lastUpdatedAt"] += 60000
    conn.execute("INSERT INTO cursorDiskKV VALUES (?, ?)", (f"bubbleId:{cid}:bench-new", json.dumps(
        {"_v": 3, "type": 1, "bubbleId": "bench-new", "text": "and update the changelog"})))
    conn.execute("INSERT INTO cursorDiskKV VALUES (?, ?)", (key, json.dumps(doc)))
    conn.close()


def harvest(env: dict[str, str]) -> dict:
    cmd = [sys.executable, "-c",
           "import resource, sys, json\n"
           "from sleep.cli import main\n"
           "rc = main(['harvest', '--source', 'cursor', '--all-projects', '--json'])\n"
           "print(json.dumps({'rss_kb': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}), file=sys.stderr)\n"
           "sys.exit(rc)\n"]
    started = time.perf_counter()
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - started
    report = json.loads(out.stdout)
    rss = json.loads(out.stderr.strip().splitlines()[-1])["rss_kb"]
    rep = report["sources"]["cursor-ide"]
    return {"wall_s": round(wall, 2), "bytes_read": rep["bytes_read"], "chats_read": rep["files_read"],
            "chats_seen": rep["files_seen"], "new": rep["sessions_new"], "updated": rep["sessions_updated"],
            "peak_rss_mb": round(rss / 1024, 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size-mb", type=int, default=300)
    ap.add_argument("--dir")
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    root = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="skillopt-bench-sqlite-"))
    try:
        user = root / "Cursor" / "User"
        t = time.perf_counter()
        db, chats = build(user, args.size_mb)
        print(f"built {db} ({os.path.getsize(db) / 1e6:.0f} MB, {chats} chats) in {time.perf_counter() - t:.0f} s")
        env = dict(os.environ, SKILLOPT_HOME=str(root / "skillopt-home"), SKILLOPT_CURSOR_IDE_HOME=str(user),
                   HOME=str(root / "home"), SKILLOPT_HARVEST_WORKERS=os.environ.get("SKILLOPT_HARVEST_WORKERS", "1"))
        (root / "home").mkdir(exist_ok=True)
        for label in ("first harvest", "nothing changed", "one chat changed"):
            if label == "one chat changed":
                add_turn(db, chats)
            print(f"{label:18s} {json.dumps(harvest(env))}")
    finally:
        if not args.keep and not args.dir:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
