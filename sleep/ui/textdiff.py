"""Diffs for the pages: side by side for two skills, and a parsed unified diff (git's).

Pure functions of text. Changed line pairs carry intraline segments, so the
page can mark the words that changed, not only the lines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from difflib import SequenceMatcher

Segment = tuple[str, bool]  # (text, changed)


@dataclass(frozen=True)
class Side:
    number: int | None  # 1-based line number; None for a gap
    segments: tuple[Segment, ...]


@dataclass(frozen=True)
class Row:
    kind: str  # equal | replace | delete | insert | skip
    left: Side
    right: Side
    skipped: int = 0  # for "skip": unchanged lines not shown


@dataclass(frozen=True)
class SideBySide:
    rows: list[Row]
    added: int
    removed: int

    @property
    def identical(self) -> bool:
        return self.added == 0 and self.removed == 0


_GAP = Side(None, ())


def _whole(number: int, text: str, changed: bool = False) -> Side:
    return Side(number, ((text, changed),))


def _intraline(a: str, b: str) -> tuple[tuple[Segment, ...], tuple[Segment, ...]]:
    sm = SequenceMatcher(None, a, b, autojunk=False)
    if sm.ratio() < 0.4:  # mostly different: mark the whole lines, not confetti
        return ((a, True),), ((b, True),)
    left: list[Segment] = []
    right: list[Segment] = []
    for op, i1, i2, j1, j2 in sm.get_opcodes():
        if i2 > i1:
            left.append((a[i1:i2], op != "equal"))
        if j2 > j1:
            right.append((b[j1:j2], op != "equal"))
    return tuple(left), tuple(right)


def side_by_side(before: str, after: str, context: int | None = 3) -> SideBySide:
    """Rows of a two-column diff; ``context`` unchanged lines around changes (None: all)."""
    a, b = before.splitlines(), after.splitlines()
    sm = SequenceMatcher(None, a, b, autojunk=False)
    rows: list[Row] = []
    added = removed = 0
    opcodes = sm.get_opcodes()
    for index, (op, i1, i2, j1, j2) in enumerate(opcodes):
        if op == "equal":
            n = i2 - i1
            if context is None:
                keep_head, keep_tail = n, 0
            else:
                keep_head = 0 if index == 0 else min(context, n)
                keep_tail = 0 if index == len(opcodes) - 1 else min(context, n)
                if keep_head + keep_tail >= n - 1:  # never hide a single line
                    keep_head, keep_tail = n, 0
            for k in range(keep_head):
                rows.append(Row("equal", _whole(i1 + k + 1, a[i1 + k]), _whole(j1 + k + 1, b[j1 + k])))
            hidden = n - keep_head - keep_tail
            if hidden > 0:
                rows.append(Row("skip", _GAP, _GAP, hidden))
            for k in range(n - keep_tail, n):
                rows.append(Row("equal", _whole(i1 + k + 1, a[i1 + k]), _whole(j1 + k + 1, b[j1 + k])))
            continue
        removed += i2 - i1
        added += j2 - j1
        for k in range(max(i2 - i1, j2 - j1)):
            li, rj = i1 + k, j1 + k
            if li < i2 and rj < j2:
                ls, rs = _intraline(a[li], b[rj])
                rows.append(Row("replace", Side(li + 1, ls), Side(rj + 1, rs)))
            elif li < i2:
                rows.append(Row("delete", _whole(li + 1, a[li], True), _GAP))
            else:
                rows.append(Row("insert", _GAP, _whole(rj + 1, b[rj], True)))
    return SideBySide(rows, added, removed)


@dataclass(frozen=True)
class DiffLine:
    kind: str  # meta | hunk | add | del | ctx
    text: str


def parse_unified(diff: str) -> list[DiffLine]:
    """Lines of a unified diff (e.g. ``git diff``), each with its kind for colouring."""
    out: list[DiffLine] = []
    in_hunk = False
    for line in diff.splitlines():
        if line.startswith("@@"):
            in_hunk = True
            out.append(DiffLine("hunk", line))
        elif not in_hunk or line.startswith(("diff --git", "index ")):
            in_hunk = False if line.startswith("diff --git") else in_hunk
            out.append(DiffLine("meta", line))
        elif line.startswith("+"):
            out.append(DiffLine("add", line))
        elif line.startswith("-"):
            out.append(DiffLine("del", line))
        else:
            out.append(DiffLine("ctx", line))
    return out


_HUNK = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")


def _shift(side: Side, by: int) -> Side:
    return side if side.number is None else Side(side.number + by, side.segments)


def sbs_from_unified(diff: str) -> SideBySide:
    """A side-by-side view of a unified diff: each hunk's old and new lines in two columns (numbered
    as in the files), the lines between hunks as a "skip" row. File headers are left out."""
    rows: list[Row] = []
    added = removed = 0
    old: list[str] = []
    new: list[str] = []
    starts: tuple[int, int] | None = None
    last_end = 0

    def flush() -> None:
        nonlocal added, removed, last_end
        if starts is None:
            return
        part = side_by_side("\n".join(old), "\n".join(new), None)
        gap = starts[0] - 1 - last_end
        if gap > 0:
            rows.append(Row("skip", _GAP, _GAP, gap))
        rows.extend(Row(r.kind, _shift(r.left, starts[0] - 1), _shift(r.right, starts[1] - 1), r.skipped)
                    for r in part.rows)
        added += part.added
        removed += part.removed
        last_end = starts[0] - 1 + len(old)

    for line in diff.splitlines():
        m = _HUNK.match(line)
        if m:
            flush()
            starts, old, new = (int(m.group(1)), int(m.group(2))), [], []
        elif line.startswith("diff --git"):
            flush()
            starts, last_end = None, 0
        elif starts is None or line.startswith("\\"):
            continue  # headers; "\ No newline at end of file"
        elif line.startswith("+"):
            new.append(line[1:])
        elif line.startswith("-"):
            old.append(line[1:])
        else:
            old.append(line[1:])
            new.append(line[1:])
    flush()
    return SideBySide(rows, added, removed)
