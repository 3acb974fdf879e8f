"""A run's name, tags, note and archived flag: ``labels.json`` in the run directory.

The one file the dashboard writes into a run (through ``POST …/labels``, which the
guard lets through only with the access token, the CSRF token and this origin). It
lives with the run, so it moves and is shared with it. Written atomically (a new
file created exclusively in the run's real directory, then renamed over
``labels.json``: a symlink planted there is replaced, never followed), and every
text passes the redactor first: a note is stored like everything else SkillOpt keeps.
Read through :mod:`sleep.ui.runfiles` like the run's other files.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillopt_core.timestamps import utc_now
from sleep.ui import coerce as c
from sleep.ui.coerce import Ignore
from sleep.ui.outbound import outbound
from sleep.ui.runfiles import RunFileError, json_object, read_bytes

LABELS = "labels.json"
MAX_NAME, MAX_TAG, MAX_TAGS, MAX_NOTE = 120, 40, 20, 5000
_TAG = re.compile(r"^[\w.:+-]+$")


class BadLabels(ValueError):
    """What was typed cannot be kept; ``str()`` says what to change."""


@dataclass(frozen=True)
class Labels:
    name: str = ""
    tags: tuple[str, ...] = ()
    note: str = ""
    archived: bool = False

    @property
    def empty(self) -> bool:
        return not (self.name or self.tags or self.note or self.archived)


def read_labels(run: Path) -> Labels:
    try:
        data = read_bytes(run, LABELS, 1 << 20)
    except RunFileError:
        return Labels()
    d = json_object(data) if data else None
    if not d:
        return Labels()
    p = Ignore()
    return Labels(c.text(d.get("name"), p, LABELS, "name")[:MAX_NAME],
                  tuple(t[:MAX_TAG] for t in c.texts(d.get("tags"), p, LABELS, "tags")[:MAX_TAGS]),
                  c.text(d.get("note"), p, LABELS, "note")[:MAX_NOTE], c.flag(d.get("archived"), p, LABELS, "archived"))


def parse_form(name: Any, tags: Any, note: Any, archived: Any) -> Labels:
    """The labels a form gives; :class:`BadLabels` when one cannot be kept."""
    name = str(name or "").strip()
    note = str(note or "").strip()
    words = [t for t in re.split(r"[,\s]+", str(tags or "")) if t]
    if len(name) > MAX_NAME:
        raise BadLabels(f"The name is {len(name)} characters; keep it within {MAX_NAME}.")
    if len(note) > MAX_NOTE:
        raise BadLabels(f"The note is {len(note)} characters; keep it within {MAX_NOTE}.")
    if len(words) > MAX_TAGS:
        raise BadLabels(f"{len(words)} tags; keep at most {MAX_TAGS}.")
    for t in words:
        if len(t) > MAX_TAG or not _TAG.match(t):
            raise BadLabels(f"The tag {t[:60]!r} is not one word of letters, digits and . : + - _ "
                            f"(at most {MAX_TAG} characters); separate tags with commas or spaces.")
    return Labels(outbound(name), tuple(dict.fromkeys(outbound(t) for t in words)), outbound(note),
                  bool(archived))


def write_labels(run: Path, labels: Labels) -> None:
    """Replace the run's ``labels.json`` (``run``: its real path, from the catalog)."""
    record = {"name": labels.name, "tags": list(labels.tags), "note": labels.note, "archived": labels.archived,
              "updated_at": utc_now()}
    fd, tmp = tempfile.mkstemp(dir=run, prefix=f".{LABELS}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(json.dumps(record, ensure_ascii=False, indent=1) + "\n")
        os.replace(tmp, run / LABELS)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
