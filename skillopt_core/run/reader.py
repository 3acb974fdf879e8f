"""The one reader of a run directory, beside its writer (:mod:`skillopt_core.run.rundir`).

:class:`RunReader` names every file a run writes and reads each into the type
the writer wrote (:mod:`skillopt_core.run.record`, :mod:`skillopt_core.run.events`):
the summary, the history, the events (from a byte offset, for a follower), the
step files, the initial and best skill, the split, the config, the backends the
run used and the val rollouts of one skill. The night, proposals, the MCP tools
and the dashboard read run directories through it; a caller that ran the
training in-process holds a :class:`skillopt_core.run.api.TrainingResult` and
reads no file at all.

A run directory can come from anywhere (an unpacked archive, a shared folder),
so any of its files may be a symbolic link (``best_skill.md -> /etc/passwd``), a
FIFO or a device. Every read goes through :func:`open_in_run`, which

- opens the file by its name inside the run directory, following links, but
  non-blocking (a FIFO cannot hang the reader);
- refuses anything that is not a regular file;
- refuses the file when the *opened* file lies outside the run directory. On
  Linux the opened descriptor's path (``/proc/self/fd``) is checked, so the file
  read is the file checked, with no window between the two; elsewhere the path
  is resolved after opening.

A link that stays inside the run directory is followed. Refusals raise
:class:`RunFileError` with a sentence a page can show. A missing file is
``None`` (or empty), never an error: a run still being written, or written by
an older engine, reads as far as it goes.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

import orjson

from skillopt_core.run.events import Event, RunStarted, show

if TYPE_CHECKING:  # loaded by the methods that type records: the MCP server starts without the skill parser
    from skillopt_core.run.record import GateRecord, SelectedEdit, StepRecord
    from skillopt_core.skill.edits import Edit

__all__ = ["RunFileError", "RunReader", "is_run_dir", "json_object", "list_in_run", "open_in_run", "parse_json",
           "read_bytes", "splits_of", "val_rollouts"]

_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
TAIL_BYTES = 64 * 1024  # the last events are looked for in the file's last 64 KiB
_RUN_MARKERS = ("events.jsonl", "state.json", "summary.json")  # with config.yaml: a run directory


class RunFileError(Exception):
    """A file of the run that is not served: it leads outside the run directory, is not a regular
    file, or cannot be read. ``str()`` is the sentence to show."""

    def __init__(self, rel: str, why: str) -> None:
        super().__init__(f"{Path(rel).name} {why}")
        self.rel = rel


def parse_json(data: bytes) -> Any:
    """JSON as the trainer writes it (Python's ``json``, which may write NaN): orjson, else the
    standard library for what orjson refuses. :class:`ValueError` when it is not JSON."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        try:
            return json.loads(data.decode("utf-8", "replace"))
        except RecursionError:
            raise ValueError("nested too deeply") from None


def json_object(line: bytes) -> dict[Any, Any] | None:
    """One JSON line as an object, or None (not JSON, or not an object)."""
    try:
        item = parse_json(line)
    except ValueError:
        return None
    return item if isinstance(item, dict) else None


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _opened_path(fd: int, fallback: str) -> str:
    """Where the open file ``fd`` really is."""
    if sys.platform.startswith("linux"):
        try:
            return os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            pass
    elif sys.platform == "darwin":
        import fcntl

        try:
            raw = fcntl.fcntl(fd, fcntl.F_GETPATH, bytes(1024))  # type: ignore[attr-defined]
            return os.fsdecode(raw.split(b"\0", 1)[0])
        except (OSError, AttributeError):
            pass
    return os.path.realpath(fallback)


def open_in_run(run_dir: Path | str, rel: str) -> tuple[BinaryIO, os.stat_result]:
    """The file ``rel`` (a relative path built by the caller, never from a URL) of the run whose real
    path is ``run_dir``, open for reading, and its status. :class:`FileNotFoundError` when absent;
    :class:`RunFileError` when refused."""
    base = os.path.abspath(run_dir)
    path = os.path.join(base, rel)
    try:
        fd = os.open(path, _FLAGS)
    except FileNotFoundError:
        raise
    except NotADirectoryError:
        raise FileNotFoundError(path) from None
    except OSError as exc:
        if os.path.islink(path) and not _inside(os.path.realpath(path), base):
            raise RunFileError(rel, "leads outside the run directory; it is not shown") from None
        raise RunFileError(rel, f"cannot be read: {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)
        if not _inside(_opened_path(fd, path), base):
            raise RunFileError(rel, "leads outside the run directory; it is not shown "
                                    "(`ls -l` in the run directory shows where it points)")
        if not stat.S_ISREG(st.st_mode):
            raise RunFileError(rel, "is not a regular file; it is not shown")
        return os.fdopen(fd, "rb"), st
    except BaseException:
        os.close(fd)
        raise


def read_bytes(run_dir: Path | str, rel: str, limit: int | None = None) -> bytes | None:
    """The bytes of ``rel`` (at most ``limit``), None when absent; :class:`RunFileError` when refused."""
    try:
        fh, _ = open_in_run(run_dir, rel)
    except FileNotFoundError:
        return None
    with fh:
        try:
            return fh.read() if limit is None else fh.read(limit)
        except OSError as exc:
            raise RunFileError(rel, f"cannot be read: {exc.strerror or exc}") from None


def list_in_run(run_dir: Path | str, rel: str) -> list[str]:
    """The names in the folder ``rel`` of the run; [] when absent or when it leads outside the run."""
    base = os.path.abspath(run_dir)
    folder = os.path.realpath(os.path.join(base, rel))
    if not _inside(folder, base):
        return []
    try:
        return os.listdir(folder)
    except OSError:
        return []


def is_run_dir(path: Path | str) -> bool:
    """A run directory: ``config.yaml`` and at least one of events, state or summary (string paths:
    a scan of many folders stays fast)."""
    path = str(path)
    isfile = os.path.isfile
    return isfile(path + "/config.yaml") and any(isfile(f"{path}/{name}") for name in _RUN_MARKERS)


def val_rollouts(rows: Iterable[Mapping[str, Any]], skill_texts: Iterable[str],
                 task_ids: Iterable[str]) -> dict[str, dict[str, Any]]:
    """Per task id, the first completion row and the first score row of the rollout cache ``rows``
    that ran under one of ``skill_texts`` (matched by the digest each row names)."""
    from skillopt_core.evaluation.cache import skill_digest  # the cache module loads the backends

    digests = {skill_digest(t) for t in skill_texts}
    wanted = set(task_ids)
    out: dict[str, dict[str, Any]] = {t: {"completion": None, "score": None} for t in task_ids}
    for row in rows:
        task = row.get("task")
        if task not in wanted or row.get("skill") not in digests:
            continue
        slot = out[task]
        if slot["completion"] is None and "response" in row:
            slot["completion"] = dict(row)
        if slot["score"] is None and "hard" in row:
            slot["score"] = dict(row)
    return out


class RunReader:
    """Every file of one run directory (``<root>/<env>/<run_id>/``), read safely and typed."""

    SUMMARY = "summary.json"
    HISTORY = "history.json"
    EVENTS = "events.jsonl"
    STATE = "state.json"
    CONFIG = "config.yaml"
    BEST_SKILL = "best_skill.md"
    DATASET = "dataset.json"
    PREFLIGHT = "preflight.json"
    CACHE = "rollout_cache.jsonl"

    def __init__(self, path: str | Path) -> None:
        self.path = Path(os.path.abspath(path))

    def __repr__(self) -> str:
        return f"RunReader({str(self.path)!r})"

    @property
    def run_id(self) -> str:
        return self.path.name

    # ----- names ------------------------------------------------------------------------------

    @staticmethod
    def step_dir(step: int) -> str:
        return f"steps/step_{step:04d}"

    @staticmethod
    def skill_file(step: int) -> str:
        return f"skills/step_{step:04d}.md"

    def file(self, rel: str) -> Path:
        """The path of ``rel`` in the run (for a message or a signature; read through the methods)."""
        return self.path / rel

    def exists(self, rel: str) -> bool:
        return os.path.isfile(self.path / rel)

    def is_run(self) -> bool:
        """A run directory (:func:`is_run_dir`)."""
        return is_run_dir(self.path)

    # ----- raw reads --------------------------------------------------------------------------

    def read_bytes(self, rel: str, limit: int | None = None) -> bytes | None:
        """None when absent; :class:`RunFileError` when refused."""
        return read_bytes(self.path, rel, limit)

    def read_text(self, rel: str) -> str | None:
        data = self.read_bytes(rel)
        return None if data is None else data.decode("utf-8", "replace")

    def read_json(self, rel: str) -> Any:
        """The parsed file, None when absent; :class:`ValueError` when it is not JSON."""
        data = self.read_bytes(rel)
        return None if data is None else parse_json(data)

    def _json_or_none(self, rel: str) -> Any:
        try:
            return self.read_json(rel)
        except (ValueError, RunFileError):
            return None

    # ----- the run ----------------------------------------------------------------------------

    def summary(self) -> dict[str, Any] | None:
        """``summary.json`` (a training run's :class:`RunSummary` dict, or an evaluation's), or None."""
        data = self._json_or_none(self.SUMMARY)
        return data if isinstance(data, dict) else None

    def history_records(self) -> list[dict[str, Any]]:
        """``history.json`` as written (one object per step); [] when absent or unreadable."""
        data = self._json_or_none(self.HISTORY)
        return [h for h in data if isinstance(h, dict)] if isinstance(data, list) else []

    def history(self) -> list[StepRecord]:
        """``history.json`` typed; :class:`RecordError` names a record that is not a step."""
        from skillopt_core.run.record import StepRecord

        return [StepRecord.from_dict(h) for h in self.history_records()]

    def best_skill(self) -> str | None:
        return self.read_text(self.BEST_SKILL)

    def initial_skill(self) -> str | None:
        return self.skill(0)

    def skill(self, step: int) -> str | None:
        """The skill after ``step`` (0: the initial skill)."""
        return self.read_text(self.skill_file(step))

    def splits(self) -> dict[str, list[str]] | None:
        """``dataset.json``'s split: train / val / test → item ids (None before the run wrote it)."""
        return splits_of(self._json_or_none(self.DATASET))

    def config(self) -> dict[str, Any]:
        """``config.yaml`` as a dict ({} when absent or not YAML)."""
        import yaml  # not on the MCP server's start-up path

        try:
            text = self.read_text(self.CONFIG)
            data = yaml.safe_load(text) if text else None
        except (RunFileError, yaml.YAMLError):
            return {}
        return data if isinstance(data, dict) else {}

    def backends_used(self) -> dict[str, str]:
        """role → backend the run described in its first ``run_started`` event ({} when absent)."""
        first = self.first_event()
        return dict(first.backends) if isinstance(first, RunStarted) else {}

    # ----- steps ------------------------------------------------------------------------------

    def step_gate(self, step: int) -> GateRecord | None:
        from skillopt_core.run.record import GateRecord, RecordError

        data = self._json_or_none(f"{self.step_dir(step)}/gate.json")
        try:
            return GateRecord.from_dict(data) if isinstance(data, dict) else None
        except RecordError:
            return None

    def step_selected(self, step: int) -> list[SelectedEdit]:
        """The edits of the step's ``selected.json`` (malformed entries left out)."""
        from skillopt_core.run.record import RecordError, SelectedEdit

        data = self._json_or_none(f"{self.step_dir(step)}/selected.json")
        out = []
        for e in (data.get("edits") or []) if isinstance(data, dict) else []:
            try:
                out.append(SelectedEdit.from_dict(e))
            except RecordError:
                continue
        return out

    def step_refused(self, step: int) -> list[tuple[Edit, str]]:
        """The edits refused before merging (``patches.json`` ``refused``) and why."""
        from skillopt_core.skill.edits import Edit

        data = self._json_or_none(f"{self.step_dir(step)}/patches.json")
        out = []
        for r in (data.get("refused") or []) if isinstance(data, dict) else []:
            try:
                out.append((Edit.from_dict(r), str(r.get("refused") or "refused")))
            except (ValueError, AttributeError):
                continue
        return out

    def step_numbers(self) -> list[int]:
        """The steps with a ``steps/step_NNNN`` folder, ascending."""
        return self.numbered("steps", "step_")

    def numbered(self, folder: str, prefix: str, suffix: str = "") -> list[int]:
        """The numbers N of the entries ``<folder>/<prefix>N<suffix>`` of the run, ascending."""
        middles = (n[len(prefix): len(n) - len(suffix)] for n in list_in_run(self.path, folder)
                   if n.startswith(prefix) and n.endswith(suffix))
        return sorted(int(m) for m in middles if m.isdigit())

    # ----- events -----------------------------------------------------------------------------

    def events_size(self) -> int:
        """The size of ``events.jsonl`` (0 when absent); :class:`RunFileError` when refused."""
        try:
            fh, st = open_in_run(self.path, self.EVENTS)
        except FileNotFoundError:
            return 0
        fh.close()
        return st.st_size

    def event_lines(self, offset: int = 0, limit: int | None = None) -> tuple[list[tuple[int, bytes]], int]:
        """The whole lines of ``events.jsonl`` after byte ``offset`` (at most ``limit`` bytes read), each
        with the offset after it, and the offset after the last one: a line still being written is
        left for the next read. A file shorter than ``offset`` (a new run in the same folder) is read
        from the start. :class:`RunFileError` when the file is refused."""
        try:
            fh, st = open_in_run(self.path, self.EVENTS)
        except FileNotFoundError:
            return [], offset
        with fh:
            try:
                if st.st_size < offset:
                    offset = 0
                fh.seek(offset)
                data = fh.read() if limit is None else fh.read(limit)
            except OSError:
                return [], offset
        out = []
        pos = 0
        while (nl := data.find(b"\n", pos)) >= 0:
            line = data[pos:nl].strip()
            pos = nl + 1
            if line:
                out.append((offset + pos, line))
        return out, offset + pos

    def events(self, offset: int = 0, problems: list[str] | None = None) -> tuple[list[Event], int]:
        """:meth:`event_lines` typed (:meth:`Event.from_dict`, lenient: wrong values go to ``problems``);
        a line that is not a JSON event is skipped; a refused file reads as no events."""
        try:
            lines, end = self.event_lines(offset)
        except RunFileError:
            return [], offset
        return _events((line for _, line in lines), problems), end

    def first_event(self, problems: list[str] | None = None) -> Event | None:
        return self.head_and_tail(problems)[1]

    def head_and_tail(self, problems: list[str] | None = None) -> tuple[int, Event | None, Event | None]:
        """The size of ``events.jsonl``, its first event and its last complete one (one open; reads
        the first line and the last 4 KiB, or up to 1 MiB for a long last line), typed."""
        try:
            fh, st = open_in_run(self.path, self.EVENTS)
        except (FileNotFoundError, RunFileError):
            return 0, None, None
        with fh:
            try:
                size = st.st_size
                head = json_object(fh.readline(1 << 20)) if size else None
                tail = _last(fh, size)
            except OSError:
                return 0, None, None
        return (size, None if head is None else Event.from_dict(head, problems),
                None if tail is None else Event.from_dict(tail, problems))

    def last_events(self, limit: int | None = 200, span: int = TAIL_BYTES, containing: bytes | None = None,
                    problems: list[str] | None = None) -> list[Event]:
        """The last ``limit`` events (all: None) of the file's last ``span`` bytes; ``containing``:
        only lines holding these bytes are parsed (``b'"notice"'``: a long run's warnings, fast)."""
        try:
            fh, st = open_in_run(self.path, self.EVENTS)
        except (FileNotFoundError, RunFileError):
            return []
        with fh:
            try:
                fh.seek(max(0, st.st_size - span))
                data = fh.read(span)
            except OSError:
                return []
        lines = data.split(b"\n")
        if st.st_size > span:
            lines = lines[1:]  # the first line was cut
        if containing is not None:
            lines = [line for line in lines if containing in line]
        events = _events(lines, problems)
        return events if limit is None else events[-limit:]

    # ----- rollouts ---------------------------------------------------------------------------

    def cache_rows(self) -> list[dict[str, Any]]:
        """The rollout cache's rows (torn or non-JSON lines left out)."""
        data = self.read_bytes(self.CACHE)
        return [r for r in map(json_object, data.splitlines()) if r is not None] if data else []

    def val_rollouts(self, skill_texts: Iterable[str], task_ids: Iterable[str]) -> dict[str, dict[str, Any]]:
        """Per val item, its completion and score under one of ``skill_texts`` (:func:`val_rollouts`)."""
        return val_rollouts(self.cache_rows(), skill_texts, task_ids)


def splits_of(data: Any, problems: list[str] | None = None) -> dict[str, list[str]] | None:
    """The split of a parsed ``dataset.json``: train / val / test → item ids (numbers read as text);
    None when it holds none. With ``problems``, each part that is not a list of ids is noted."""
    noted = problems if problems is not None else []
    if not isinstance(data, dict):
        if data is not None:
            noted.append(f"dataset.json is {show(data)}, not an object")
        return None
    splits = data.get("splits")
    if not isinstance(splits, dict):
        if splits is not None:
            noted.append(f"dataset.json: splits is {show(splits)}, not an object")
        return None
    out: dict[str, list[str]] = {}
    for name, ids in splits.items():
        if not isinstance(ids, list):
            noted.append(f"dataset.json: splits.{name} is {show(ids)}, not a list")
            continue
        out[str(name)] = []
        for i, item in enumerate(ids):
            if isinstance(item, str) or (isinstance(item, (int, float)) and not isinstance(item, bool)):
                out[str(name)].append(str(item))
            else:
                noted.append(f"dataset.json: splits.{name}[{i}] is {show(item)}, not an item id")
    return out


def _events(lines: Iterable[bytes], problems: list[str] | None) -> list[Event]:
    """The JSON-object lines naming an event, typed (other lines skipped)."""
    out = []
    for line in lines:
        line = line.strip()
        if line:
            item = json_object(line)
            if item is not None and "event" in item:
                out.append(Event.from_dict(item, problems))
    return out


def _last(fh: BinaryIO, size: int) -> dict[str, Any] | None:
    for span in (4096, 1 << 20):
        fh.seek(max(0, size - span))
        lines = fh.read(span).rstrip(b"\n").split(b"\n")
        if len(lines) < 2 and size > span:
            continue  # the last line is longer than the span: read more
        for line in reversed(lines):
            item = json_object(line)
            if item is not None:
                return item
        return None
    return None
