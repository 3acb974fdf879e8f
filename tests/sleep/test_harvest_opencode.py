"""OpenCode's JSON storage (issue 22 §2, harvest only).

Fixtures are hand-written in the shape OpenCode's file storage uses
(``storage/project/<id>.json`` ``{id, worktree, vcs}``,
``session/<projectID>/<sessionID>.json``, ``message/<sessionID>/<messageID>.json``
with ``role`` and ``time``, ``part/<messageID>/<partID>.json`` with ``type`` ``text``
/ ``tool`` and a tool's ``state.input``), as documented by projects that read it.
"""

from __future__ import annotations

import json
from pathlib import Path

import sleep_builders as b
from sleep_testutil import Homes, run

from sleep.index import Index

CWD = "/work/shop"


def _write(path: Path, doc: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=2))


def _storage(homes: Homes) -> Path:
    return homes.home / ".local" / "share" / "opencode" / "storage"


def _session(st: Path, sid: str = "ses_01", directory: str | None = CWD) -> None:
    _write(st / "project" / "prj_1.json", {"id": "prj_1", "worktree": CWD, "vcs": "git"})
    doc = {"id": sid, "projectID": "prj_1", "title": "cart", "version": "0.15.0",
           "time": {"created": b.ms(0), "updated": b.ms(9)}}
    if directory:
        doc["directory"] = directory
    _write(st / "session" / "prj_1" / f"{sid}.json", doc)
    msgs = [
        ("msg_01", "user", 1, [{"type": "text", "text": "add a discount code field to the cart"},
                               {"type": "text", "text": "<file>cart.tsx</file>", "synthetic": True}]),
        ("msg_02", "assistant", 2, [
            {"type": "step-start"},
            {"type": "tool", "tool": "bash", "callID": "c1",
             "state": {"status": "completed", "input": {"command": "pnpm test -- cart"}, "output": "ok"}},
            {"type": "tool", "tool": "edit", "callID": "c2",
             "state": {"status": "completed", "input": {"filePath": f"{CWD}/src/cart.tsx"}}},
            {"type": "text", "text": "Added the field."}]),
        ("msg_03", "user", 5, [{"type": "text", "text": "perfect, thanks"}]),
        ("msg_04", "assistant", 6, [{"type": "text", "text": "Glad it works."}]),
    ]
    for mid, role, t, parts in msgs:
        msg = {"id": mid, "sessionID": sid, "role": role, "time": {"created": b.ms(t)}}
        if role == "assistant":
            msg.update(modelID="claude-sonnet-4", providerID="anthropic", time={"created": b.ms(t),
                                                                               "completed": b.ms(t + 1)})
        _write(st / "message" / sid / f"{mid}.json", msg)
        for i, part in enumerate(parts):
            _write(st / "part" / mid / f"prt_{mid}_{i:02d}.json", {"id": f"prt_{i}", "messageID": mid,
                                                                   "sessionID": sid, **part})


def test_opencode_session_from_its_storage(homes: Homes) -> None:
    _session(_storage(homes))
    report = run(source="opencode")
    with Index.open() as idx:
        [s] = idx.sessions(host="opencode")
    assert report.sources["opencode"].sessions_new == 1
    assert s.project_dir == CWD
    assert [p.text for p in s.prompts] == ["add a discount code field to the cart", "perfect, thanks"]
    assert s.finals == ["Added the field.", "Glad it works."]
    assert s.prompts[0].shell == ["pnpm test"] and s.prompts[0].files == ["src/cart.tsx"]
    assert s.tools == {"bash": 1, "edit": 1}
    assert s.models == ["claude-sonnet-4"]
    assert [f.kind for f in s.feedback] == ["approval"]
    assert (s.started_at, s.ended_at) == (b.ts(0), b.ts(9))


def test_opencode_project_from_the_project_file_and_scope(homes: Homes) -> None:
    _session(_storage(homes), directory=None)
    assert run(source="opencode", project="/work/elsewhere").sessions_new == 0
    assert run(source="opencode", project=CWD).sessions_new == 1
    assert run(source="opencode").files_read == 0  # unchanged: not read again
