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

:meth:`RunCatalog.rows` builds the list with :mod:`sleep.ui.runrow`
(summaries and event heads and tails only), caching finished runs' rows by
file size and mtime.
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path

from skillopt_core.run.reader import is_run_dir
from sleep.ui import outbound
from sleep.ui.runrow import EventFold, RunRow, build_row, row_sig

OUTPUTS_DEPTH = 3
DATA_DEPTH = 5
MAX_SCANNED_DIRS = 20_000
_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._@+=-]{0,199}$")


class RunNotFound(LookupError):
    """No run directory answers to this URL (unknown root, bad name, or outside the known folders)."""


def plain_name(name: str) -> bool:
    """A single path component that cannot climb, hide or separate (``..``, ``.x``, ``a/b``)."""
    return bool(_NAME.match(name or ""))


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
    def make(path: Path, base: Path, origin: str) -> Root:
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


class RunCatalog:
    """The run directories below the configured folders, and safe lookups by URL parts."""

    def __init__(self, outputs: list[Path], data_dir: Path | None, *, rescan_seconds: float = 2.0) -> None:
        self.outputs = [Path(os.path.abspath(p)) for p in outputs]
        self.data_dir = Path(os.path.abspath(data_dir)) if data_dir else None
        self.rescan_seconds = rescan_seconds
        self._lock = threading.Lock()
        self._rows_lock = threading.Lock()
        self._scanned_at = -1e18
        self._refs: list[RunRef] = []
        self._roots: dict[str, Root] = {}
        self._rows: dict[Path, tuple[tuple, RunRow, EventFold | None]] = {}
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
            # A run created since the last scan; unknown addresses rescan at most once a second.
            self.scan(force=time.monotonic() - self._scanned_at > 1.0)
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
        refs = self.scan()
        out = []
        with self._rows_lock:
            for ref in refs:
                path = ref.path
                key = (row_sig(path), outbound.generation())
                cached = self._rows.get(path)
                if cached and cached[0] == key and cached[2] is None:
                    out.append(cached[1] if cached[1].ref == ref else replace(cached[1], ref=ref))
                    continue
                row, fold = build_row(ref, cached[2] if cached else None, now)
                self._rows[path] = (key, row, fold)
                out.append(row)
        out.sort(key=lambda r: (r.live, r.started_at or "", r.ref.url), reverse=True)
        return out

    def row(self, ref: RunRef) -> RunRow:
        """One run's list row, read now (a run page wants the latest status)."""
        return build_row(ref)[0]


def _walk(base: str, depth: int, budget: list[int], skipped: list[str]):
    """(run directory, reached through a symlink) at most ``depth`` levels below ``base``
    (hidden folders and ``*.git`` skipped; never descending into a run)."""
    stack = [(base, 0, False)]
    while stack and budget[0] > 0:
        folder, level, via_link = stack.pop()
        budget[0] -= 1
        if is_run_dir(folder):
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
