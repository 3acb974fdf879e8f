"""The runs table: its columns, and sorting, filtering, grouping and paging on the server.

Every choice lives in the address (``/runs?sort=best_val&dir=desc&gate=mean&page=2``), so
a view can be bookmarked and shared, and the exports (``/runs.csv``, ``/runs.json``)
take the same parameters and give every matching row. A page renders :data:`PER_PAGE`
rows by default (at most :data:`MAX_PER_PAGE`), so 1,000 runs cost one page of DOM.

Parameters: ``sort`` (a column key of :data:`COLUMNS`), ``dir`` (``asc`` / ``desc``),
``q`` (words that must all appear in the run id, env (or its folder), status or config columns),
one exact-match filter per filterable column (``env=``, ``status=``, ``lr=``,
``schedule=``, ``gate=``, ``models=``, ``budget=``), ``tag=`` (runs with that tag),
``archived=1`` (archived runs too; they are hidden otherwise), ``group`` (a filterable column),
``page`` (from 1) and ``per``. A value that is not one of these is ignored and said
(:attr:`TableView.notes`), never an error: a shared link from an older version still opens.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from sleep.ui.runconfig import COLUMNS as CONFIG_COLUMNS
from sleep.ui.runrow import RunRow

PER_PAGE = 50
MAX_PER_PAGE = 500
PER_CHOICES = (25, 50, 100, 200, 500)


@dataclass(frozen=True)
class Column:
    key: str
    label: str
    value: Callable[[RunRow], Any]  # what sorts and exports (None sorts last)
    numeric: bool = False
    filterable: bool = False

    def text(self, row: RunRow) -> str:
        v = self.value(row)
        if v is None:
            return ""
        if isinstance(v, float):
            return f"{v:g}"
        return str(v)


def _cfg(attr: str) -> Callable[[RunRow], Any]:
    def get(row: RunRow) -> Any:
        v = getattr(row.config, attr)
        return v if v not in ("",) else None
    return get


COLUMNS: tuple[Column, ...] = (
    Column("run", "Run", lambda r: r.ref.run_id),
    Column("name", "Name", lambda r: r.labels.name or None),
    Column("tags", "Tags", lambda r: " ".join(r.labels.tags) or None),
    Column("env", "Env", lambda r: r.env, filterable=True),
    Column("status", "Status", lambda r: r.status, filterable=True),
    Column("started", "Started (UTC)", lambda r: r.started_at),
    Column("steps", "Steps", lambda r: r.steps_done, numeric=True),
    Column("best_val", "Best val", lambda r: r.best_val, numeric=True),
    Column("initial_test", "Test before", lambda r: r.initial_test, numeric=True),
    Column("best_test", "Test after", lambda r: r.best_test, numeric=True),
    Column("accepted", "Accepted", lambda r: r.accepted, numeric=True),
    Column("rejected", "Rejected", lambda r: r.rejected, numeric=True),
    Column("calls", "Calls", lambda r: r.calls, numeric=True),
    Column("tokens", "Tokens", lambda r: r.tokens, numeric=True),
    *(Column(key, label, _cfg(attr), numeric=(key == "lr"), filterable=True) for key, label, attr in CONFIG_COLUMNS),
)
BY_KEY = {c.key: c for c in COLUMNS}
FILTERS = tuple(c.key for c in COLUMNS if c.filterable)


@dataclass
class TableView:
    """One page of the table, and how to link to its neighbours."""

    rows: list[RunRow]
    total: int  # runs matching the filters
    all_runs: int
    page: int
    pages: int
    per: int
    sort: str
    dir: str
    q: str
    filters: dict[str, str]
    group: str
    tag: str = ""
    archived_hidden: int = 0  # archived runs left out (``archived=1`` shows them)
    show_archived: bool = False
    params: dict[str, str] = field(default_factory=dict)  # the effective parameters (for links)
    notes: list[str] = field(default_factory=list)
    choices: dict[str, list[tuple[str, int]]] = field(default_factory=dict)  # filter -> (value, runs)

    @property
    def first(self) -> int:
        return (self.page - 1) * self.per + 1 if self.total else 0

    @property
    def last(self) -> int:
        return min(self.total, self.page * self.per)

    def url(self, base: str = "/runs", **changes: Any) -> str:
        """This view's address with ``changes`` (a value of None drops the parameter)."""
        params = dict(self.params)
        for k, v in changes.items():
            if v is None or v == "":
                params.pop(k, None)
            else:
                params[k] = str(v)
        if "page" in params and params["page"] == "1":
            del params["page"]
        return base + ("?" + urlencode(params) if params else "")

    def sort_url(self, key: str) -> str:
        """Sorting by ``key``: descending first for numbers, ascending for text; again flips it."""
        col = BY_KEY[key]
        if self.sort == key:
            new = "asc" if self.dir == "desc" else "desc"
        else:
            new = "desc" if col.numeric or key == "started" else "asc"
        return self.url(sort=key, dir=new, page=None)

    def group_of(self, row: RunRow) -> str:
        return BY_KEY[self.group].text(row) or "(none)" if self.group else ""


def _int(raw: str | None, default: int, name: str, notes: list[str]) -> int:
    if raw in (None, ""):
        return default
    try:
        return int(raw)
    except ValueError:
        notes.append(f"{name}={raw!r} is not a number; {default} is used")
        return default


def _sorted(rows: list[RunRow], col: Column, descending: bool) -> list[RunRow]:
    """Rows by ``col`` (stable); rows without a value last in either direction."""
    have = [r for r in rows if col.value(r) is not None]
    none = [r for r in rows if col.value(r) is None]

    def key(row: RunRow) -> Any:
        v = col.value(row)
        if col.numeric:
            try:
                return (0, float(v), "")
            except (TypeError, ValueError):
                return (1, 0.0, str(v).lower())
        return (0, 0.0, str(v).lower())

    return sorted(have, key=key, reverse=descending) + none


def view(rows: list[RunRow], params: Mapping[str, str]) -> TableView:
    """The page of ``rows`` (the catalog's order: running first, then newest) that ``params`` ask for."""
    notes: list[str] = []
    eff: dict[str, str] = {}
    q = (params.get("q") or "").strip()
    if q:
        eff["q"] = q
    filters = {}
    for key in FILTERS:
        value = params.get(key)
        if value not in (None, ""):
            filters[key] = value
            eff[key] = value
    sort = params.get("sort") or ""
    if sort and sort not in BY_KEY:
        notes.append(f"sort={sort!r} is not a column; the default order (running first, newest first) is used")
        sort = ""
    direction = params.get("dir") or ("desc" if sort and (BY_KEY[sort].numeric or sort == "started") else "asc")
    if direction not in ("asc", "desc"):
        notes.append(f"dir={direction!r} is neither asc nor desc; asc is used")
        direction = "asc"
    if sort:
        eff["sort"], eff["dir"] = sort, direction
    group = params.get("group") or ""
    if group and group not in FILTERS:
        notes.append(f"group={group!r} cannot group the table; choose one of {', '.join(FILTERS)}")
        group = ""
    if group:
        eff["group"] = group
    per = _int(params.get("per"), PER_PAGE, "per", notes)
    if not 1 <= per <= MAX_PER_PAGE:
        notes.append(f"per={per} is outside 1–{MAX_PER_PAGE}; {PER_PAGE} is used")
        per = PER_PAGE
    if per != PER_PAGE:
        eff["per"] = str(per)

    tag = (params.get("tag") or "").strip()
    if tag:
        eff["tag"] = tag
    show_archived = params.get("archived") == "1"
    if show_archived:
        eff["archived"] = "1"
    words = q.lower().split()
    searched = [BY_KEY[k] for k in ("run", "env", "status", *(k for k, _, _ in CONFIG_COLUMNS))]
    choices: dict[str, dict[str, int]] = {k: {} for k in FILTERS}
    matching = []
    hidden = 0
    for row in rows:
        if row.labels.archived and not show_archived:
            hidden += 1
            continue
        if tag and tag not in row.labels.tags:
            continue
        texts = {k: BY_KEY[k].text(row) for k in FILTERS}
        for k, t in texts.items():
            choices[k][t] = choices[k].get(t, 0) + 1
        if any(texts[k] != v for k, v in filters.items()):
            continue
        if words:
            hay = " ".join([row.ref.env, row.labels.name, *row.labels.tags, row.labels.note,
                            *(c.text(row) for c in searched)]).lower()
            if not all(w in hay for w in words):
                continue
        matching.append(row)
    if sort:
        matching = _sorted(matching, BY_KEY[sort], direction == "desc")
    if group:
        g = BY_KEY[group]
        matching.sort(key=lambda r: (g.text(r) == "", g.text(r).lower()))  # stable: the sort holds inside groups
    pages = max(1, math.ceil(len(matching) / per))
    page = _int(params.get("page"), 1, "page", notes)
    if not 1 <= page <= pages:
        notes.append(f"page {page} does not exist ({pages} page{'s' if pages != 1 else ''}); page "
                     f"{min(max(page, 1), pages)} is shown")
        page = min(max(page, 1), pages)
    if page != 1:
        eff["page"] = str(page)
    return TableView(matching[(page - 1) * per: page * per], len(matching), len(rows), page, pages, per,
                     sort, direction, q, filters, group, tag, hidden, show_archived, eff, notes,
                     {k: sorted(v.items(), key=lambda kv: (kv[0] == "", kv[0])) for k, v in choices.items()})


def export_rows(rows: list[RunRow], params: Mapping[str, str]) -> list[RunRow]:
    """Every row the table with ``params`` would show, across all its pages, in its order."""
    first = view(rows, {**params, "page": "1", "per": str(MAX_PER_PAGE)})
    out = list(first.rows)
    for page in range(2, first.pages + 1):
        out += view(rows, {**params, "page": str(page), "per": str(MAX_PER_PAGE)}).rows
    return out


def _record(row: RunRow) -> dict[str, Any]:
    rec: dict[str, Any] = {c.key: c.value(row) for c in COLUMNS}
    rec["url"] = row.ref.url
    rec["total_steps"] = row.total_steps
    return rec


def to_json(rows: list[RunRow]) -> str:
    return json.dumps([_record(r) for r in rows], ensure_ascii=False, indent=1)


def to_csv(rows: list[RunRow]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow([c.key for c in COLUMNS] + ["url"])
    for r in rows:
        w.writerow([csv_cell(c.text(r)) for c in COLUMNS] + [csv_cell(r.ref.url)])
    return buf.getvalue()


# What makes a spreadsheet read a cell as a formula: = + - @ (and their full-width forms) as
# the first character that is not blank, or a tab or CR at the very start. Blank here is any
# whitespace Python knows (space, tab, CR, LF, NBSP, the other Unicode spaces) and the
# zero-width characters a spreadsheet also skips.
_FORMULA_START = frozenset("=+-@\uff1d\uff0b\uff0d\uff20")
_CONTROL_START = ("\t", "\r")
_ZERO_WIDTH = "\u200b\u200c\u200d\u2060\ufeff"


def csv_cell(text: str) -> str:
    """``text`` as a CSV cell no spreadsheet evaluates: one whose first non-blank character is a
    formula trigger, or that starts with a tab or CR, gets a leading apostrophe (shown as text);
    a plain number with nothing around it (``-0.5``, ``+3``) is left as it is."""
    if not text:
        return text
    if text.startswith(_CONTROL_START):
        return "'" + text
    first = text.lstrip().lstrip(_ZERO_WIDTH).lstrip()[:1]
    if first in _FORMULA_START and not (text == text.strip() and _is_number(text)):
        return "'" + text
    return text


def _is_number(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return False
