"""``@path`` imports in a CLAUDE.md, followed read-only.

Claude Code reads ``@docs/style.md`` in a memory file as "the text of that file
here too" (relative to the file holding it, ``~/`` for the home folder, at most
:data:`MAX_DEPTH` hops, never inside a code span or block). A night follows the
imports inside the project so their text is part of what the agent reads in the
replay (the real CLI reads them from the checkout itself; a chat backend gets
them framed after the memory file, :mod:`.placement`) and never edits them: the
candidate is the memory file alone, and the proposal says which files it imports.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

MAX_DEPTH = 5
MAX_BYTES = 256_000
_FENCE = re.compile(r"^\s*(```|~~~)")
_SPAN = re.compile(r"`[^`]*`")
_IMPORT = re.compile(r"(?:^|(?<=\s))@((?:~/|\.{0,2}/)?[\w.\-/]+[\w\-/])")


@dataclass(frozen=True)
class Imported:
    rel: str  # relative to the project
    path: Path
    text: str


def import_paths(text: str) -> list[str]:
    """The ``@path`` references of ``text`` (outside code), in order."""
    out: list[str] = []
    fenced = False
    for line in text.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if fenced:
            continue
        for found in _IMPORT.finditer(_SPAN.sub("", line)):
            ref = found.group(1)
            if "/" in ref or "." in ref:  # @mentions of people (@alice) are no files
                out.append(ref)
    return out


def follow(memory: Path, project: Path, text: str | None = None) -> list[Imported]:
    """The files ``memory`` imports, recursively (depth first, each once), inside ``project`` only;
    read, never written. ``text``: the memory file's text to read the imports of (a candidate)."""
    root = project.resolve()
    seen: set[Path] = {memory.resolve()}
    out: list[Imported] = []

    def walk(source: Path, body: str, depth: int) -> None:
        if depth > MAX_DEPTH:
            return
        for ref in import_paths(body):
            target = (Path(ref).expanduser() if ref.startswith("~/") else source.parent / ref).resolve()
            if target in seen or not target.is_relative_to(root) or not target.is_file():
                continue
            seen.add(target)
            try:
                data = target.read_bytes()[:MAX_BYTES].decode("utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            out.append(Imported(target.relative_to(root).as_posix(), target, data))
            walk(target, data, depth + 1)

    walk(memory, memory.read_text(encoding="utf-8") if text is None else text, 1)
    return out


def note(memory_rel: str, imported: list[Imported]) -> str:
    """The proposal's line about the imports ('' when there are none)."""
    if not imported:
        return ""
    names = ", ".join(i.rel for i in imported)
    return (f"{memory_rel} imports {names} (@path): followed read-only, their text was part of what the agent "
            "read in every replay; the night never edits an imported file, only " + memory_rel + ".")


def dropped(seed: str, candidate: str) -> list[str]:
    """Imports of ``seed`` that ``candidate`` no longer has (a candidate may not silently drop one)."""
    kept = set(import_paths(candidate))
    return [ref for ref in import_paths(seed) if ref not in kept]
