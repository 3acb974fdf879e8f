"""``skillopt-sleep hook session-end``: Claude Code's SessionEnd hook notes the transcript.

It reads the hook's JSON on stdin (``session_id``, ``transcript_path``, ``cwd``,
``hook_event_name``, ``reason``), notes ``transcript_path`` in ``noted_files`` and
returns at once. It never fails the agent: it always exits 0; input it cannot use
is logged (bounded, no transcript text) to ``logs/hook.log`` in the data directory.
If the index is busy (a harvest is writing), missing or older than noted files,
the note goes to ``noted-spool.jsonl``, which the next harvest reads first. Notes
from the hook are hints for the night; the watcher, not the hook, is what lets a
harvest skip its full scan.

It must be quick: Claude Code gives all SessionEnd hooks together 1.5 s unless the
person's own settings allow more (docs/sleep-plugins.md). So it loads only the
standard library, ``sqlite3`` and :mod:`sleep.paths` (``skillopt-sleep`` runs it
before building its parser, :func:`sleep.cli.main`), never creates or migrates the
index, and waits at most :data:`BUSY_MS` for it.
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
from pathlib import Path
from typing import IO

from skillopt_core.timestamps import utc_now
from sleep import paths

MAX_INPUT = 1 << 20
MAX_LOG = 256 << 10
BUSY_MS = 50  # then the spool: a harvest holding the index must not hold the session's exit
SPOOL = "noted-spool.jsonl"
HOST = "claude-code"


def _log(message: str) -> None:
    try:
        path = paths.data_dir() / "logs" / "hook.log"
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists() and path.stat().st_size > MAX_LOG:
            os.replace(path, path.with_name("hook.log.1"))
        with open(path, "a", encoding="utf-8") as f:
            f.write(f"{utc_now()} {message}\n")
    except OSError:
        pass  # nowhere to log: still exit 0


def transcript_of(text: str) -> tuple[str | None, str]:
    """The transcript path in a hook's JSON, or None and why it is unusable."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        return None, f"not JSON ({exc})"
    if not isinstance(data, dict):
        return None, f"not a JSON object ({type(data).__name__})"
    path = data.get("transcript_path")
    if not isinstance(path, str) or not path:
        return None, "no transcript_path"
    if "\x00" in path or len(path) > 4096 or not os.path.isabs(path):
        return None, "transcript_path is not an absolute path"
    return path, ""


def note_path(path: str) -> str:
    """Note ``path`` in the index, or in the spool when the index is busy, missing or older; says which."""
    index_path = paths.index_path()
    row = (path, HOST, utc_now(), "hook")
    if index_path.exists():
        try:
            # mode=rw: the hook never creates the index (nor migrates it); a harvest does.
            uri = Path(os.path.abspath(index_path)).as_uri() + "?mode=rw"
            conn = sqlite3.connect(uri, uri=True, timeout=BUSY_MS / 1000, isolation_level=None)
            try:
                conn.execute("PRAGMA synchronous=NORMAL")  # no fsync for a hint (the index is WAL)
                if int(conn.execute("PRAGMA user_version").fetchone()[0]) < 6:
                    raise sqlite3.OperationalError("the index predates noted files")
                conn.execute("INSERT INTO noted_files (path, host, noted_at, version, source) VALUES (?,?,?,1,?)"
                             " ON CONFLICT(path) DO UPDATE SET noted_at=excluded.noted_at,"
                             " version=noted_files.version+1, source=excluded.source", row)
            finally:
                conn.close()
            return "noted"
        except sqlite3.Error:
            pass
    paths.data_dir().mkdir(mode=0o700, parents=True, exist_ok=True)
    line = json.dumps({"path": path, "host": HOST, "noted_at": row[2]}) + "\n"
    fd = os.open(paths.data_dir() / SPOOL, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, line.encode("utf-8"))
    finally:
        os.close(fd)
    return "spooled"


def session_end(stdin: IO[str] | None = None) -> int:
    """Run the hook; always 0."""
    stream = stdin or sys.stdin
    try:
        if stream.isatty():
            print("skillopt-sleep hook session-end reads a Claude Code SessionEnd hook's JSON on stdin; "
                  "nothing to do.", file=sys.stderr)
            return 0
        text = stream.read(MAX_INPUT + 1)
        if len(text) > MAX_INPUT:
            _log(f"ignored input over {MAX_INPUT} bytes")
            return 0
        path, why = transcript_of(text)
        if path is None:
            _log(f"ignored: {why}; input began {text[:200]!r}")
            return 0
        _ = note_path(path)
    except Exception as exc:  # the agent must never see this hook fail
        _log(f"error: {type(exc).__name__}: {exc}")
    return 0


def drain_spool(index) -> int:
    """Move the spooled notes into ``noted_files`` (inside the caller's transaction)."""
    spool = paths.data_dir() / SPOOL
    if not spool.exists():
        return 0
    taken = spool.with_name(f"{SPOOL}.{os.getpid()}")
    try:
        os.replace(spool, taken)
    except OSError:
        return 0
    rows = []
    for line in Path(taken).read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            item = json.loads(line)
            rows.append((str(item["path"]), str(item.get("host") or HOST), str(item.get("noted_at") or "")))
        except (ValueError, KeyError, TypeError):
            continue
    index.conn.executemany("INSERT INTO noted_files (path, host, noted_at, version, source) VALUES (?,?,?,1,'hook')"
                           " ON CONFLICT(path) DO UPDATE SET noted_at=excluded.noted_at,"
                           " version=noted_files.version+1", rows)
    taken.unlink(missing_ok=True)
    return len(rows)
