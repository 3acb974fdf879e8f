"""Which prompts the miner considers, and the judge evidence around each.

:func:`extract` is a pure function of one stored :class:`~sleep.sessions.Session`:
every typed prompt is either a task candidate (a :class:`PoolItem`) or dropped
for a counted reason (:data:`sleep.mine.noise.REASONS`). A task candidate owns
the turns that follow it up to the next candidate (feedback, acknowledgements):
their shell commands and files are its actions, and the person's corrections,
approvals and the answers they accepted or corrected there are its evidence.

:func:`pending_sessions` is the database side: the sessions of a scope that the
miner has not seen in their current state, found through the index's
``sessions_for_mining`` index, never by loading every session.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson

from sleep.feedback import classify_feedback
from sleep.mine.noise import clean_prompt
from sleep.sessions import Feedback, Session

MAX_EVIDENCE_CHARS = 2000  # of an answer kept as judge evidence


@dataclass
class PoolItem:
    """One task candidate: a cleaned prompt, what the agent did for it, and evidence."""

    project: str
    host: str
    session_id: str
    prompt_index: int
    at: str | None
    text: str
    shell: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    tools: list[str] = field(default_factory=list)
    skills: list[str] = field(default_factory=list)
    evidence: dict[str, Any] = field(default_factory=dict)
    task_id: str | None = None

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.host, self.session_id, self.prompt_index)

    def data(self) -> dict[str, Any]:
        return {"shell": self.shell, "files": self.files, "tools": self.tools, "skills": self.skills,
                "evidence": self.evidence}


def _clip(text: str | None) -> str | None:
    if text is None:
        return None
    return text if len(text) <= MAX_EVIDENCE_CHARS else text[:MAX_EVIDENCE_CHARS] + " [...]"


def extract(s: Session) -> tuple[list[PoolItem], Counter[str]]:
    """The task candidates of ``s`` and the count of dropped prompts by reason."""
    dropped: Counter[str] = Counter()
    if not s.prompts:
        dropped["session_without_prompts"] += 1
        return [], dropped
    feedback = read_feedback(s)
    feedback_turns = {f.prompt_index for f in feedback
                      if f.kind in ("correction", "approval") and f.prompt_index is not None}
    starts: list[tuple[int, str]] = []
    seen: set[str] = set()
    for i, p in enumerate(s.prompts):
        if i in feedback_turns:
            dropped["feedback"] += 1
            continue
        text, reason = clean_prompt(p.text)
        if text is None:
            dropped[reason or "empty"] += 1
            continue
        if text.casefold() in seen:
            dropped["repeat_in_session"] += 1
            continue
        seen.add(text.casefold())
        starts.append((i, text))
    items = []
    bounds = [i for i, _ in starts] + [len(s.prompts)]
    for (start, text), end in zip(starts, bounds[1:]):
        items.append(_item(s, start, end, text, feedback))
    return items, dropped


def read_feedback(s: Session) -> list[Feedback]:
    """The session's feedback, each prompt after the first read again by today's
    :func:`~sleep.feedback.classify_feedback` (a session harvested by an older reader
    keeps a correction worded without "no" as a prompt): a prompt that corrects the
    agent is a correction, never a task nor an approval, whatever the harvest said."""
    said = {i for i, p in enumerate(s.prompts)
            if i > 0 and classify_feedback(p.text, follows_agent_turn=True) == "correction"}
    if not said:
        return list(s.feedback)
    out = [f for f in s.feedback if not (f.kind == "approval" and f.prompt_index in said)]
    have = {f.prompt_index for f in out if f.kind == "correction"}
    out += [Feedback("correction", s.prompts[i].text, s.prompts[i].at, i) for i in sorted(said - have)]
    return out


def _item(s: Session, start: int, end: int, text: str, feedback: list[Feedback] | None = None) -> PoolItem:
    shell: list[str] = []
    files: list[str] = []
    for p in s.prompts[start:end]:
        shell += [x for x in p.shell if x not in shell]
        files += [x for x in p.files if x not in files]
    corrections, approvals, accepted, rejected = [], [], [], []
    corrected_turns: set[int] = set()
    for f in (s.feedback if feedback is None else feedback):
        k = f.prompt_index
        if k is None or not start <= k < end:
            continue
        if f.kind == "correction" and k > start:
            before = k - 1
            corrections.append({"text": f.text, "shell": list(s.prompts[before].shell),
                                "answer": _clip(_final(s, before))})
            corrected_turns.add(before)
            if _final(s, before):
                rejected.append(_clip(_final(s, before)))
        elif f.kind == "rejection" and f.text:
            corrections.append({"text": f.text, "shell": list(s.prompts[k].shell), "answer": None})
        elif f.kind == "approval" and k > start:
            approvals.append(f.text)
            if _final(s, k - 1):
                accepted.append(_clip(_final(s, k - 1)))
    last = end - 1
    if last not in corrected_turns and _final(s, last) and _clip(_final(s, last)) not in accepted:
        accepted.append(_clip(_final(s, last)))
    accepted = [a for a in accepted if a not in rejected]  # a rejected answer is never an accepted one
    evidence = {k: v for k, v in (("corrections", corrections), ("approvals", approvals),
                                  ("accepted", accepted), ("rejected", rejected)) if v}
    return PoolItem(project=s.project_dir or "", host=s.host, session_id=s.session_id, prompt_index=start,
                    at=s.prompts[start].at or s.started_at, text=text, shell=shell, files=files,
                    tools=sorted(s.tools), skills=sorted(s.skills), evidence=evidence)


def _final(s: Session, i: int) -> str | None:
    return s.finals[i] if 0 <= i < len(s.finals) else None


# ----- the database side -----------------------------------------------------------------

def scope_clause(project: str | None, column: str = "project_dir") -> tuple[str, list[object]]:
    """SQL for "``column`` is ``project`` or below it" (every project if None), index-friendly."""
    if project is None:
        return f"{column} IS NOT NULL", []
    root = project.rstrip("/") or "/"
    below = root if root.endswith("/") else root + "/"
    return (f"({column} = ? OR ({column} >= ? AND {column} < ?))",
            [root, below, below[:-1] + chr(ord(below[-1]) + 1)])


def pending_sessions(conn: sqlite3.Connection, project: str | None, include_scripted: bool
                     ) -> Iterator[tuple[Session, str]]:
    """Sessions in scope that are new or changed since the miner last read them,
    with their ``harvested_at`` (subagents never; scripted runs only if asked)."""
    where, args = scope_clause(project, "s.project_dir")
    sql = ("SELECT s.data, s.harvested_at FROM sessions s INDEXED BY sessions_for_mining"
           " LEFT JOIN mine_sessions m ON m.host = s.host AND m.session_id = s.session_id"
           f" WHERE {where} AND s.is_subagent = 0 AND s.scripted IN (0, ?)"
           " AND (m.harvested_at IS NULL OR m.harvested_at <> s.harvested_at)")
    for data, harvested_at in conn.execute(sql, [*args, 1 if include_scripted else 0]):
        yield Session.from_dict(orjson.loads(data)), harvested_at


def excluded_counts(conn: sqlite3.Connection, project: str | None, include_scripted: bool) -> Counter[str]:
    """How many sessions in scope the miner leaves out, by reason (an index-only count)."""
    where, args = scope_clause(project)
    out: Counter[str] = Counter()
    sql = (f"SELECT is_subagent, scripted, COUNT(*) FROM sessions INDEXED BY sessions_for_mining"
           f" WHERE {where} GROUP BY is_subagent, scripted")
    for sub, scripted, n in conn.execute(sql, args):
        if sub:
            out["subagent"] += n
        elif scripted and not include_scripted:
            out["scripted"] += n
    return out
