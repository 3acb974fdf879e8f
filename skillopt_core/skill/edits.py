"""Bounded edits to a skill body, and the pure function that applies them.

An :class:`Edit` is ``add`` (insert ``content`` on its own line(s) after the
line holding ``anchor``, or at the end of the body), ``delete`` (remove
``target``) or ``replace`` (swap ``target`` for ``content``). Edits act on the
body only; the front matter is never edited.

:func:`apply_edits` applies a list of edits in order, each to the result of the
previous ones, and returns exactly one :class:`EditOutcome` per edit: applied,
or why not (target not found, ambiguous target, protected region, no-op), with a
sentence the optimizer can act on. It never raises for an edit's text.

Matching: an exact substring first; failing that, a whitespace-insensitive
match (runs of whitespace in the target match any run of whitespace in the
body) mapped back to the original span. A target or anchor must occur once.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, cast, get_args

from skillopt_core.skill.document import ProtectedRegion, Skill, SkillParseError, protected_regions

__all__ = ["Edit", "EditOp", "EditOutcome", "EditResult", "OutcomeStatus", "apply_edits"]

EditOp = Literal["add", "delete", "replace"]
OutcomeStatus = Literal["applied", "target_not_found", "ambiguous_target", "protected_region", "no_op"]

_OPS: tuple[str, ...] = get_args(EditOp)
_REQUIRED: dict[str, tuple[tuple[str, str], ...]] = {
    "add": (("content", "the text to add"),),
    "delete": (("target", "the exact text to delete"),),
    "replace": (("target", "the exact text to replace"), ("content", "the new text")),
}
# Counting every occurrence of a tiny target in a huge body is pointless.
_MAX_MATCHES = 100
_MARKER_RE = re.compile(r"<!--\s*/?skillopt:protected\b[^>]*-->")
_LEADING_BLANK_LINES_RE = re.compile(r"\A(?:[ \t]*\r?\n)+")
_MARKER_IN_CONTENT = "content contains a skillopt:protected marker; edits may not create protected regions"


def _collapse(text: str | None) -> str:
    return " ".join((text or "").split())


@dataclass(frozen=True)
class Edit:
    """One proposed change. ``target`` is unused by ``add``; ``content`` and
    ``anchor`` are unused by ``delete``; ``anchor`` is unused by ``replace``.
    ``origin`` says who proposed it: ``optimizer`` (reflection), or a label
    the caller of the training API chose (e.g. ``correction``)."""

    op: EditOp
    target: str = ""
    content: str = ""
    rationale: str = ""
    anchor: str | None = None
    origin: str = "optimizer"

    def __post_init__(self) -> None:
        if self.op not in _OPS:
            raise ValueError(f"unknown edit op {self.op!r}; use one of: {', '.join(_OPS)}")
        for name in ("target", "content", "rationale", "origin"):
            if not isinstance(getattr(self, name), str):
                raise TypeError(f"Edit.{name} must be a str, got {type(getattr(self, name)).__name__}")
        if self.anchor is not None and not isinstance(self.anchor, str):
            raise TypeError(f"Edit.anchor must be a str or None, got {type(self.anchor).__name__}")

    def key(self) -> tuple[str, str, str, str]:
        """Identity for merging: op plus whitespace-collapsed target, content and
        anchor, counting only the fields the op uses (rationale is ignored)."""
        target = _collapse(self.target) if self.op != "add" else ""
        content = _collapse(self.content) if self.op != "delete" else ""
        anchor = _collapse(self.anchor) if self.op == "add" else ""
        return (self.op, target, content, anchor)

    def to_dict(self) -> dict[str, Any]:
        return {
            "op": self.op,
            "target": self.target,
            "content": self.content,
            "rationale": self.rationale,
            "anchor": self.anchor,
            "origin": self.origin,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Edit:
        """Build an edit from JSON-like data (e.g. optimizer output).

        ``op`` is matched case-insensitively. Required: ``content`` for add,
        ``target`` for delete, both for replace. ``origin`` defaults to
        ``optimizer``. Unknown keys are ignored. Raises ValueError saying what
        is wrong and what to send instead.
        """
        if not isinstance(d, Mapping):
            raise ValueError(f"an edit must be an object with an 'op' key, got {type(d).__name__}")
        raw_op = d.get("op")
        if raw_op is None:
            raise ValueError(f"edit is missing 'op'; use one of: {', '.join(_OPS)} (got keys: {_keys(d)})")
        op = raw_op.strip().lower() if isinstance(raw_op, str) else raw_op
        if op not in _OPS:
            raise ValueError(f"unknown edit op {raw_op!r}; use one of: {', '.join(_OPS)}")
        for name, meaning in _REQUIRED[op]:
            if d.get(name) is None:
                raise ValueError(f"{op} edit is missing '{name}' ({meaning}); got keys: {_keys(d)}")
        values: dict[str, Any] = {}
        for name in ("target", "content", "rationale", "origin"):
            value = d.get(name)
            if value is None:
                continue
            if not isinstance(value, str):
                raise ValueError(f"{op} edit field '{name}' must be a string, got {type(value).__name__}")
            values[name] = value
        anchor = d.get("anchor")
        if anchor is not None and not isinstance(anchor, str):
            raise ValueError(f"{op} edit field 'anchor' must be a string or null, got {type(anchor).__name__}")
        return cls(op=cast(EditOp, op), anchor=anchor, **values)


def _keys(d: Mapping[str, Any]) -> str:
    return ", ".join(map(str, d.keys())) or "none"


@dataclass(frozen=True)
class EditOutcome:
    edit: Edit
    status: OutcomeStatus
    detail: str

    @property
    def applied(self) -> bool:
        return self.status == "applied"


@dataclass(frozen=True)
class EditResult:
    """The edited skill and one outcome per edit, in input order. ``original``
    is the skill the edits were applied to."""

    skill: Skill
    outcomes: tuple[EditOutcome, ...]
    original: Skill | None = field(default=None, repr=False)

    @property
    def applied_count(self) -> int:
        return sum(1 for o in self.outcomes if o.applied)

    @property
    def changed(self) -> bool:
        """True if the rendered skill differs from the input's (edits that
        cancel out leave it unchanged)."""
        if self.original is None:
            return self.applied_count > 0
        return self.skill.render() != self.original.render()


def apply_edits(skill: Skill, edits: Sequence[Edit]) -> EditResult:
    """Apply ``edits`` to ``skill``'s body in order. Pure: returns a new skill
    and exactly one outcome per edit; never raises for an edit's text."""
    offset = skill.header_line_count
    body = skill.body
    outcomes: list[EditOutcome] = []
    for edit in edits:
        if not isinstance(edit, Edit):
            raise TypeError(f"apply_edits expects Edit objects, got {type(edit).__name__}; use Edit.from_dict")
        status, detail, new_body = _apply_one(body, edit, offset)
        if status == "applied":
            status, detail, new_body = _check_result(body, new_body, detail)
        outcomes.append(EditOutcome(edit=edit, status=status, detail=detail))
        body = new_body
    new_skill = skill if body == skill.body else skill.with_body(body)
    return EditResult(skill=new_skill, outcomes=tuple(outcomes), original=skill)


# --- one edit ----------------------------------------------------------------

_Step = tuple[OutcomeStatus, str, str]


def _apply_one(body: str, edit: Edit, offset: int) -> _Step:
    regions = protected_regions(body)
    if edit.op == "add":
        return _add(body, edit, regions, offset)
    return _delete_or_replace(body, edit, regions, offset)


def _check_result(old: str, new: str, detail: str) -> _Step:
    """Backstop: an applied edit must change the body and leave every
    protected region (markers and text) exactly as it was."""
    if new == old:
        return "no_op", "the edit leaves the skill unchanged", old
    try:
        after = protected_regions(new)
    except SkillParseError:
        return "protected_region", "the edit would break a skillopt:protected marker; leave markers alone", old
    before = protected_regions(old)
    if [(r.name, old[r.start : r.end]) for r in before] != [(r.name, new[r.start : r.end]) for r in after]:
        return "protected_region", "the edit would change a protected region; edit text outside it", old
    return "applied", detail, new


def _add(body: str, edit: Edit, regions: list[ProtectedRegion], offset: int) -> _Step:
    nl = _newline_of(body)
    text = _normalise_added(edit.content, nl)
    if not text.strip():
        return "no_op", "add has no content; put the text to add in 'content'", body
    if _MARKER_RE.search(text):
        return "protected_region", _MARKER_IN_CONTENT, body
    present = _whole_line_occurrence(body, text)
    if present is not None:
        return "no_op", f"content is already present verbatim at line {_line(body, present, offset)}", body
    if not edit.anchor:
        prefix = body if not body or body.endswith("\n") else body + nl
        where = _line(prefix, len(prefix), offset)
        message = f"appended {_plural(text.count(nl) + 1, 'line')} at the end (line {where})"
        return "applied", message, prefix + text + nl
    spans, fuzzy = _find(body, edit.anchor)
    problem = _match_problem(body, spans, "anchor", edit.anchor, regions, offset)
    if problem:
        return problem[0], problem[1], body
    start, end = spans[0]
    inside = _overlapping(regions, start, end)
    if inside is not None and end != inside.end:
        return "protected_region", (
            f"anchor lies inside the protected region {_describe(inside, offset)}; anchor on text "
            "outside it (or end the anchor with the block's closing marker to insert after the block)"
        ), body
    pos = _line_end(body, end)
    around = _strictly_inside(regions, pos)
    if around is not None:
        return "protected_region", (
            f"inserting after the anchor's line would put text inside the protected region "
            f"{_describe(around, offset)}; anchor on text after the block"
        ), body
    prefix = body[:pos]
    if prefix and not prefix.endswith("\n"):
        prefix += nl
    how = " (whitespace-insensitive anchor match)" if fuzzy else ""
    added = _plural(text.count(nl) + 1, "line")
    detail = f"added {added} after line {_line(body, max(pos - 1, 0), offset)}{how}"
    return "applied", detail, prefix + text + nl + body[pos:]


def _delete_or_replace(body: str, edit: Edit, regions: list[ProtectedRegion], offset: int) -> _Step:
    if not edit.target.strip():
        return "no_op", f"{edit.op} has no target; put the exact text to {edit.op} in 'target'", body
    is_replace = edit.op == "replace" and edit.content.strip() != ""
    if is_replace and _MARKER_RE.search(edit.content):
        return "protected_region", _MARKER_IN_CONTENT, body
    spans, fuzzy = _find(body, edit.target)
    problem = _match_problem(body, spans, "target", edit.target, regions, offset)
    if problem:
        return problem[0], problem[1], body
    start, end = spans[0]
    region = _overlapping(regions, start, end)
    if region is not None:
        return "protected_region", (
            f"target overlaps the protected region {_describe(region, offset)}; protected text cannot be edited"
        ), body
    line = _line(body, start, offset)
    how = " (whitespace-insensitive match)" if fuzzy else ""
    if not is_replace:
        return "applied", f"deleted text at line {line}{how}", _delete_span(body, start, end)
    old = body[start:end]
    new = _match_trailing_breaks(_to_newline(edit.content, _newline_of(body)), old)
    if new == old:
        return "no_op", "replacement is identical to the target", body
    return "applied", f"replaced text at line {line}{how}", body[:start] + new + body[end:]


# --- matching ----------------------------------------------------------------


def _find(body: str, needle: str) -> tuple[list[tuple[int, int]], bool]:
    """All (overlapping) spans of ``needle`` in ``body``, up to a cap, and
    whether they came from the whitespace-insensitive fallback."""
    spans: list[tuple[int, int]] = []
    pos = body.find(needle)
    while pos != -1 and len(spans) < _MAX_MATCHES:
        spans.append((pos, pos + len(needle)))
        pos = body.find(needle, pos + 1)
    if spans:
        return spans, False
    tokens = needle.split()
    if not tokens:
        return [], False
    pattern = re.compile(r"\s+".join(re.escape(t) for t in tokens))
    match = pattern.search(body)
    while match is not None and len(spans) < _MAX_MATCHES:
        spans.append(match.span())
        match = pattern.search(body, match.start() + 1)
    return spans, True


def _match_problem(
    body: str, spans: list[tuple[int, int]], what: str, needle: str, regions: list[ProtectedRegion], offset: int
) -> tuple[OutcomeStatus, str] | None:
    if not spans:
        hint = _closest_hint(body, needle, offset)
        return "target_not_found", (
            f"{what} not found, even ignoring whitespace{hint}; quote text exactly as it appears in the current skill"
        )
    if len(spans) == 1:
        return None
    count = f"at least {len(spans)}" if len(spans) >= _MAX_MATCHES else str(len(spans))
    lines = sorted({_line(body, s, offset) for s, _ in spans})
    shown = ", ".join(map(str, lines[:5])) + (", ..." if len(lines) > 5 else "")
    protected = sum(1 for s, e in spans if _overlapping(regions, s, e) is not None)
    note = f", {protected} inside protected regions" if protected else ""
    return "ambiguous_target", (
        f"{what} occurs {count} times (lines {shown}{note}); quote more surrounding context so it matches once"
    )


def _closest_hint(body: str, needle: str, offset: int) -> str:
    first = next((ln.strip() for ln in needle.split("\n") if ln.strip()), "")
    lines = body.split("\n")
    stripped = [ln.strip() for ln in lines]
    best = difflib.get_close_matches(first, [s for s in stripped if s], n=1, cutoff=0.6)
    if not best:
        return ""
    index = stripped.index(best[0])
    shown = best[0] if len(best[0]) <= 80 else best[0][:77] + "..."
    return f" (closest line {index + 1 + offset}: {shown!r})"


def _overlapping(regions: list[ProtectedRegion], start: int, end: int) -> ProtectedRegion | None:
    return next((r for r in regions if start < r.end and r.start < end), None)


def _strictly_inside(regions: list[ProtectedRegion], pos: int) -> ProtectedRegion | None:
    return next((r for r in regions if r.start < pos < r.end), None)


def _describe(region: ProtectedRegion, offset: int) -> str:
    named = f'"{region.name}" ' if region.name else ""
    return f"{named}opened at line {region.line + offset}"


# --- text surgery --------------------------------------------------------------


def _newline_of(body: str) -> str:
    return "\r\n" if "\r\n" in body else "\n"


def _to_newline(text: str, nl: str) -> str:
    return text.replace("\r\n", "\n").replace("\n", nl) if nl != "\n" else text.replace("\r\n", "\n")


def _normalise_added(content: str, nl: str) -> str:
    """Added text without leading blank lines or trailing whitespace, in the
    body's newline style; the caller adds the line break that ends it."""
    text = _LEADING_BLANK_LINES_RE.sub("", content).rstrip()
    return _to_newline(text, nl)


def _whole_line_occurrence(body: str, text: str) -> int | None:
    """Offset of ``text`` in ``body`` where it fills whole lines, else None."""
    pos = body.find(text)
    while pos != -1:
        end = pos + len(text)
        starts_line = body[body.rfind("\n", 0, pos) + 1 : pos].strip() == ""
        next_break = body.find("\n", end)
        ends_line = body[end : len(body) if next_break == -1 else next_break].strip() == ""
        if starts_line and ends_line:
            return pos
        pos = body.find(text, pos + 1)
    return None


def _line_end(body: str, pos: int) -> int:
    """Start of the line after the one holding ``pos - 1`` (or len(body))."""
    if pos > 0 and body[pos - 1] == "\n":
        return pos
    brk = body.find("\n", pos)
    return len(body) if brk == -1 else brk + 1


def _match_trailing_breaks(new: str, old: str) -> str:
    """The replacement keeps the target's trailing line breaks, so replacing a
    whole line neither glues it to the next line nor adds a blank one."""
    kept = old[len(old.rstrip("\r\n")) :]
    return new.rstrip("\r\n") + kept


def _delete_span(body: str, start: int, end: int) -> str:
    """Remove body[start:end]; drop a line the deletion emptied, and leave at
    most one blank line where the deletion was."""
    before, after = body[:start], body[end:]
    line_start = before.rfind("\n") + 1
    brk = after.find("\n")
    rest_of_line = after if brk == -1 else after[:brk]
    if before[line_start:].strip() == "" and rest_of_line.strip() == "":
        before = before[:line_start]
        after = "" if brk == -1 else after[brk + 1 :]
        if not after and before.endswith("\n") and not body.endswith("\n"):
            # The deleted line was last and had no line break; do not leave one behind.
            before = before[:-1].removesuffix("\r")
    return _tidy_blank_lines(before, after)


def _tidy_blank_lines(before: str, after: str) -> str:
    """Join ``before`` and ``after``, collapsing the whitespace run around the
    join to at most one blank line (none at the very end of the body)."""
    head = before.rstrip(" \t\r\n")
    tail = after.lstrip(" \t\r\n")
    if not head and not tail:
        return ""
    gap = before[len(head) :] + after[: len(after) - len(tail)]
    breaks = gap.count("\n")
    # In the middle the first break ends the previous line; at the start every
    # break ends a blank line; at the end only the final line break is kept.
    limit = 2 if head and tail else 1
    if breaks <= limit:
        return before + after
    nl = _newline_of(gap)
    end_of_line = gap[: gap.find("\n")].rstrip("\r") if head else ""
    indent = gap[gap.rfind("\n") + 1 :] if tail else ""
    return head + end_of_line + nl * limit + indent + tail


def _line(body: str, pos: int, offset: int) -> int:
    return body.count("\n", 0, pos) + 1 + offset


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"
