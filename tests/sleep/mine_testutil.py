"""Helpers for the miner's tests: sessions built directly, stored with Index.put_session."""

from __future__ import annotations

from typing import Iterable

from sleep.feedback import classify_feedback
from sleep.index import Index
from sleep.mine.miner import MineOptions, MineReport, mine
from sleep.sessions import Feedback, Session

PROJECT = "/home/dev/src/shop"


def turn(text: str, shell: Iterable[str] = (), files: Iterable[str] = (), final: str | None = "Done.") -> dict:
    return {"text": text, "shell": list(shell), "files": list(files), "final": final}


def session(sid: str, *turns: dict, host: str = "claude-code", project: str | None = PROJECT, day: int = 1,
            **kw) -> Session:
    """A session whose turns follow each other; feedback is classified the way the sources do."""
    s = Session(host, sid, project_dir=project, **kw)
    for k, t in enumerate(turns):
        at = f"2025-04-{day:02d}T10:{k:02d}:00.000Z"
        follows = bool(s.prompts) and s.finals[-1] is not None
        idx = s.add_prompt(t["text"], at)
        kind = classify_feedback(t["text"], follows_agent_turn=follows)
        if kind:
            s.feedback.append(Feedback(kind, t["text"], at, idx))
        for sig in t["shell"]:
            s.add_shell(sig)
        for f in t["files"]:
            s.add_file(f)
        if t["final"] is not None:
            s.set_final(t["final"])
        s.note_time(at)
    return s


def store(*sessions: Session) -> None:
    with Index.open() as index:
        with index.transaction():
            for s in sessions:
                index.put_session(s)


def run(**kw) -> MineReport:
    kw.setdefault("project", None)
    return mine(MineOptions(**kw))
