"""Finding run directories and listing them cheaply.

A run directory is what ``skillopt_core`` writes: ``<root>/<env>/<run_id>/``
holding ``config.yaml`` and at least one of ``events.jsonl``, ``summary.json``
or ``state.json``. The dashboard looks below the ``--outputs`` folders (at
most :data:`OUTPUTS_DEPTH` levels down) and the data directory (at most
:data:`DATA_DEPTH`), so ``--outputs outputs/my_env`` and the nightly cycle's
runs in the data directory are found too.

A run's URL is ``/runs/<root id>/<env>/<run_id>``, where ``root id`` names the
folder holding the env folders (a hash of its path, stable across restarts).
:meth:`RunCatalog.resolve` is the only way from a URL to a path: names must be
plain (no ``/``, no leading dot), the root must be one found by the scan, and
the real path (symlinks resolved) must stay inside the folder it was found
under, or the run is "not found".

The list reads ``summary.json`` and the first and last lines of
``events.jsonl`` only (never ``history.json``); a run without a final
``run_end`` event is running, and its events are folded incrementally (only
new bytes are read on the next visit). Rows are cached by file size and mtime.
"""

from __future__ import annotations

import calendar
import hashlib
import json
import os
import re
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import orjson

OUTPUTS_DEPTH = 3
DATA_DEPTH = 5
MAX_SCANNED_DIRS = 20_000
STALL_SECONDS = 3600  # a run silent this long without a run_end is shown as interrupted
_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._@+=-]{0,199}$")
_RUN_MARKERS = ("events.jsonl", "summary.json", "state.json")
STATUS_LABELS = {"budget_exhausted": "budget stop"}


class RunNotFound(LookupError):
    """No run directory answers to this URL (unknown root, bad name, or outside the known folders)."""


def plain_name(name: str) -> bool:
    """A single path component that cannot climb, hide or separate (``..``, ``.x``, ``a/b``)."""
    return bool(_NAME.match(name or ""))


def is_run_dir(path: Path) -> bool:
    return _is_run_dir(str(path))


def _inside(path: Path, base: Path) -> bool:
    try:
        path.relative_to(base)
        return True
    except ValueError:
        return False


@dataclass(frozen=True)
class Root:
    """A folder holding ``<env>/<run_id>`` run directories, found below ``base``."""

    id: str
    path: Path
    base: Path  # the --outputs folder or data directory it was found under (resolved)
    origin: str  # "outputs" or "data"

    @staticmethod
    def make(path: Path, base: Path, origin: str) -> "Root":
        rid = hashlib.sha1(str(path).encode("utf-8", "surrogateescape")).hexdigest()[:10]
        return Root(rid, path, base, origin)


@dataclass(frozen=True)
class RunRef:
    root: Root
    env: str
    run_id: str

    @property
    def path(self) -> Path:
        return self.root.path / self.env / self.run_id

    @property
    def url(self) -> str:
        return f"/runs/{self.root.id}/{self.env}/{self.run_id}"


@dataclass(frozen=True)
class RunRow:
    """One line of the runs list (from the summary and the events' first and last lines)."""

    ref: RunRef
    env: str
    status: str  # running | interrupted | completed | budget_exhausted | cancelled | failed | unknown
    started_at: str | None = None
    last_event_at: str | None = None
    steps_done: int | None = None
    total_steps: int | None = None
    initial_val: float | None = None
    best_val: float | None = None
    initial_test: float | None = None
    best_test: float | None = None
    accepted: int | None = None
    rejected: int | None = None
    calls: int | None = None
    tokens: int | None = None
    error: str = ""

    @property
    def status_label(self) -> str:
        return STATUS_LABELS.get(self.status, self.status)

    @property
    def live(self) -> bool:
        return self.status == "running"


@dataclass
class _Fold:
    """What the events of a running run say so far (read incrementally)."""

    offset: int = 0
    started_at: str | None = None
    env: str | None = None
    total_steps: int | None = None
    step: int = 0
    initial_val: float | None = None
    best_val: float | None = None
    last: dict[str, Any] = field(default_factory=dict)

    def add(self, e: dict[str, Any]) -> None:
        kind = e.get("event")
        if kind == "run_started":
            self.started_at = self.started_at or e.get("at")
            self.env = e.get("env") or self.env
            self.total_steps = e.get("total_steps", self.total_steps)
            self.step = max(self.step, int(e.get("resumed_at_step") or 0))
        elif kind == "rollout_done" and e.get("label") == "val baseline":
            self.initial_val = self.best_val = e.get("score")
        elif kind == "best_changed":
            self.best_val = e.get("val")
        elif kind == "gate_decided":
            self.step = max(self.step, int(e.get("step") or 0))
        self.last = e


def read_events(path: Path, offset: int = 0) -> tuple[list[dict[str, Any]], int]:
    """The whole JSON lines of ``events.jsonl`` from ``offset``, and the offset after the last one.

    A line still being written (no newline yet) is left for the next read; a
    line that is not JSON is skipped (the run's own log has no such lines).
    """
    try:
        with open(path, "rb") as fh:
            fh.seek(offset)
            data = fh.read()
    except OSError:
        return [], offset
    end = data.rfind(b"\n")
    if end < 0:
        return [], offset
    out = []
    for line in data[: end + 1].splitlines():
        try:
            item = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if isinstance(item, dict):
            out.append(item)
    return out, offset + end + 1


def first_event(path: Path) -> dict[str, Any] | None:
    try:
        with open(path, "rb") as fh:
            line = fh.readline(1 << 20)
        item = json.loads(line)
        return item if isinstance(item, dict) else None
    except (OSError, ValueError):
        return None


def last_event(path: Path, size: int) -> dict[str, Any] | None:
    """The last complete line of ``events.jsonl`` (reads the last 4 KiB, or up to 1 MiB for a long line)."""
    for span in (4096, 1 << 20):
        try:
            with open(path, "rb") as fh:
                fh.seek(max(0, size - span))
                tail = fh.read(span)
        except OSError:
            return None
        lines = tail.rstrip(b"\n").split(b"\n")
        if len(lines) < 2 and size > span:
            continue  # the last line is longer than the span: read more
        for line in reversed(lines):
            try:
                item = json.loads(line)
            except ValueError:
                continue
            return item if isinstance(item, dict) else None
        return None
    return None


def _json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _sig(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size)


def _epoch_of(at: str | None) -> float | None:
    if not at:
        return None
    try:
        return float(calendar.timegm(time.strptime(at[:19], "%Y-%m-%dT%H:%M:%S")))
    except ValueError:
        return None


def build_row(ref: RunRef, fold: _Fold | None = None, now: float | None = None) -> tuple[RunRow, _Fold | None]:
    """The list row of one run; ``fold`` carries a running run's events between visits."""
    path = ref.path
    summary = _json(path / "summary.json")
    events = path / "events.jsonl"
    sig = _sig(events)
    head = first_event(events) if sig else None
    tail = last_event(events, sig[1]) if sig else None
    row = RunRow(ref, env=(head or {}).get("env") or ref.env, status="unknown",
                 started_at=(head or {}).get("at"), last_event_at=(tail or {}).get("at"),
                 total_steps=(head or {}).get("total_steps"))
    if summary:
        usage = summary.get("usage") or {}
        row = replace(row, status=summary.get("status") or "unknown", steps_done=summary.get("steps_done"),
                      total_steps=summary.get("total_steps", row.total_steps),
                      initial_val=summary.get("initial_val"), best_val=summary.get("best_val"),
                      initial_test=summary.get("initial_test"), best_test=summary.get("best_test"),
                      accepted=summary.get("accepted"), rejected=summary.get("rejected"),
                      calls=usage.get("calls"),
                      tokens=(usage.get("input_tokens") or 0) + (usage.get("output_tokens") or 0) if usage else None,
                      error=summary.get("error") or "")
    if tail is None or tail.get("event") == "run_end":
        if tail is not None:
            row = replace(row, status=tail.get("status") or row.status)
        return row, None
    # No run_end after the last start: the run is going (or its process died).
    fold = fold if fold is not None and fold.offset <= (sig[1] if sig else 0) else _Fold()
    new, fold.offset = read_events(events, fold.offset)
    for e in new:
        fold.add(e)
    silent = (now or time.time()) - (_epoch_of(fold.last.get("at")) or 0)
    status = "running" if silent < STALL_SECONDS else "interrupted"
    row = replace(row, status=status, steps_done=fold.step, total_steps=fold.total_steps or row.total_steps,
                  initial_val=fold.initial_val if fold.initial_val is not None else row.initial_val,
                  best_val=fold.best_val if fold.best_val is not None else row.best_val,
                  last_event_at=fold.last.get("at") or row.last_event_at)
    return row, fold


class RunCatalog:
    """The run directories below the configured folders, and safe lookups by URL parts."""

    def __init__(self, outputs: list[Path], data_dir: Path | None, *, rescan_seconds: float = 2.0) -> None:
        self.outputs = [Path(os.path.abspath(p)) for p in outputs]
        self.data_dir = Path(os.path.abspath(data_dir)) if data_dir else None
        self.rescan_seconds = rescan_seconds
        self._lock = threading.Lock()
        self._scanned_at = -1e18
        self._refs: list[RunRef] = []
        self._roots: dict[str, Root] = {}
        self._rows: dict[Path, tuple[tuple, RunRow, _Fold | None]] = {}
        self.skipped: list[str] = []  # folders the scan could not read, said on the runs page

    def bases(self) -> list[tuple[Path, str, int]]:
        out = [(p, "outputs", OUTPUTS_DEPTH) for p in self.outputs]
        if self.data_dir is not None:
            out.append((self.data_dir, "data", DATA_DEPTH))
        return out

    # ----- discovery ---------------------------------------------------------------------

    def scan(self, force: bool = False) -> list[RunRef]:
        with self._lock:
            if not force and time.monotonic() - self._scanned_at < self.rescan_seconds:
                return list(self._refs)
            refs: dict[Path, RunRef] = {}
            roots: dict[str, Root] = {}
            skipped: list[str] = []
            budget = [MAX_SCANNED_DIRS]
            for base, origin, depth in self.bases():
                if not base.is_dir():
                    continue
                real_base = base.resolve()
                for found, via_link in _walk(str(real_base), depth, budget, skipped):
                    # Walking from the resolved base, only a symlink on the way can lead outside it.
                    run = Path(os.path.realpath(found) if via_link else found)
                    if not _inside(run, real_base) or run.parent.parent == run or run in refs:
                        continue
                    if not (plain_name(run.parent.name) and plain_name(run.name)):
                        skipped.append(f"{found} (its folder names are not plain names)")
                        continue
                    root = Root.make(run.parent.parent, real_base, origin)
                    root = roots.setdefault(root.id, root)
                    refs[run] = RunRef(root, run.parent.name, run.name)
            if budget[0] <= 0:
                skipped.append(f"stopped looking after {MAX_SCANNED_DIRS} folders; pass narrower --outputs")
            self._refs, self._roots, self.skipped = list(refs.values()), roots, skipped
            self._scanned_at = time.monotonic()
            return list(self._refs)

    def resolve(self, root_id: str, env: str, run_id: str) -> RunRef:
        """The run at ``/runs/<root_id>/<env>/<run_id>``, or :class:`RunNotFound`."""
        if not (re.fullmatch(r"[0-9a-f]{10}", root_id or "") and plain_name(env) and plain_name(run_id)):
            raise RunNotFound(f"{root_id}/{env}/{run_id} is not a run address")
        root = self._roots.get(root_id)
        if root is None or not is_run_dir(root.path / env / run_id):
            self.scan(force=True)
            root = self._roots.get(root_id)
        if root is None:
            raise RunNotFound(f"no folder with id {root_id} holds runs")
        ref = RunRef(root, env, run_id)
        real = ref.path.resolve()
        if not _inside(real, root.base) or not is_run_dir(real):
            raise RunNotFound(f"{env}/{run_id} is not a run directory under {root.path}")
        return ref

    def ref_for_path(self, path: str | Path | None) -> RunRef | None:
        """The catalogued run at ``path`` (e.g. a night's run directory), if the scan found it."""
        if not path:
            return None
        try:
            real = Path(path).resolve()
        except OSError:
            return None
        for ref in self.scan():
            if ref.path.resolve() == real:
                return ref
        return None

    # ----- the list ------------------------------------------------------------------------

    def rows(self, now: float | None = None) -> list[RunRow]:
        """Every run, newest first (running ones first of all)."""
        out = []
        for ref in self.scan():
            path = ref.path
            key = (_sig(path / "summary.json"), _sig(path / "events.jsonl"))
            cached = self._rows.get(path)
            if cached and cached[0] == key and (cached[2] is None):
                out.append(cached[1] if cached[1].ref == ref else replace(cached[1], ref=ref))
                continue
            row, fold = build_row(ref, cached[2] if cached else None, now)
            self._rows[path] = (key, row, fold)
            out.append(row)
        out.sort(key=lambda r: (r.live, r.started_at or "", r.ref.url), reverse=True)
        return out

    def row(self, ref: RunRef) -> RunRow:
        cached = self._rows.get(ref.path)
        row, fold = build_row(ref, cached[2] if cached else None)
        return row


def _is_run_dir(path: str) -> bool:
    isfile = os.path.isfile
    return isfile(path + "/config.yaml") and any(isfile(f"{path}/{m}") for m in _RUN_MARKERS)


def _walk(base: str, depth: int, budget: list[int], skipped: list[str]):
    """(run directory, reached through a symlink) at most ``depth`` levels below ``base``
    (hidden folders and ``*.git`` skipped; never descending into a run)."""
    stack = [(base, 0, False)]
    while stack and budget[0] > 0:
        folder, level, via_link = stack.pop()
        budget[0] -= 1
        if _is_run_dir(folder):
            yield folder, via_link
            continue
        if level >= depth:
            continue
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as exc:
            skipped.append(f"{folder}: {exc.strerror or exc}")
            continue
        for entry in entries:
            if entry.name.startswith(".") or entry.name.endswith(".git"):
                continue
            try:
                if entry.is_dir():
                    stack.append((entry.path, level + 1, via_link or entry.is_symlink()))
            except OSError:
                continue
