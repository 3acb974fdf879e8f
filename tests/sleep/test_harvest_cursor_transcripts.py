"""Cursor's agent transcripts under ``~/.cursor/projects/<slug>/agent-transcripts/`` (issue 31 §1).

The fixtures are written here, with invented text, in the shapes public readers and copies of
genuine transcripts show: nick-fullpath/cursor-history lib/transcript.py at fdf4390 (``.txt`` with
``user:`` / ``assistant:`` lines and ``<user_query>``; ``.jsonl`` records ``{role, message:
{content: [text | tool_use]}}``) and lib/paths.py at 0849239 (slugs: the path with ``/`` and ``.`` as
``-``, e.g. ``Users-jane-doe-projects-my-api``); kylemath/Luo2024Extend 238ca3b promptHistory/README.md
(a copy of ``~/.cursor/projects/Users-kylemathewson-mathTest/agent-transcripts/``, one file per
session UUID); the readers the search tool finds for ``[Thinking]`` / ``[Tool call]`` /
``[Tool result]`` in ``.txt`` and ``{"type": "turn_ended"}`` markers in ``.jsonl``
(``<session>/<session>.jsonl`` in newer builds). ``<attached_files>`` before ``<user_query>``,
``<think>`` in the text, ``.txt`` + ``.json`` twins of one session and bare-number slugs are the
shapes issue 31 lists from genuine files.
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest
from sleep_testutil import Homes, run

from sleep.index import Index
from sleep.harvest.reader import ParseContext
from sleep.harvest.sources import cursor_transcripts

SID = "3f2b9c1e-0000-4000-8000-00000000aa01"
MTIME = 1767225600  # 2026-01-01T00:00:00Z

# The shape of a genuine transcript (kylemath/Luo2024Extend 172a15a promptHistory/14f9ea16-....md,
# a .txt copied with a header added): thinking spans paragraphs and the answer follows its last
# line with no marker; a tool call's multi-line value runs on unindented; results follow the calls.
TXT = """user:
<attached_files>
<file path="src/dates.py" lines="1-40">
def parse(text): ...
</file>
</attached_files>
<user_query>
make the date parser accept ISO weeks
</user_query>

assistant:
[Thinking] The person wants ISO weeks; let me read the parser first.

It has no week branch. I should:
1. add the branch
2. run the tests
I will add the week branch and run the tests.
[Tool call] Write
  path: src/weeks.py
  contents: # Weeks

def week(text): ...
[Tool call] Shell
  command: pytest tests/test_dates.py -q
  description: run the date tests

[Tool result] Write

[Tool result] Shell

assistant:
The parser accepts ISO weeks now.

user:
<user_query>
keep the old format too
</user_query>

assistant:
Kept it.
"""


def _jsonl_records() -> list[dict]:
    return [
        {"role": "user", "message": {"content": [{"type": "text", "text":
            "<attached_files>\n<file path=\"src/dates.py\"/>\n</attached_files>\n"
            "<user_query>\nmake the date parser accept ISO weeks\n</user_query>"}]}},
        {"role": "assistant", "message": {"content": [
            {"type": "text", "text": "<think>the parser has no week branch</think>I will add the week branch."},
            {"type": "tool_use", "name": "Shell", "input": {"command": "pytest tests/test_dates.py -q"}}]}},
        {"role": "assistant", "message": {"content": [{"type": "text", "text": "The parser accepts ISO weeks now."}]}},
        {"type": "turn_ended", "status": "success"},
        {"role": "user", "message": {"content": [{"type": "text", "text":
            "<user_query>\nkeep the old format too\n</user_query>"}]}},
        {"role": "assistant", "message": {"content": [{"type": "text", "text": "Kept it."}]}},
    ]


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    os.utime(path, (MTIME, MTIME))
    return path


def _project(tmp_path: Path) -> tuple[Path, str]:
    """A project folder that exists (so its slug resolves) and its slug as Cursor writes it."""
    project = tmp_path / "src" / "jane.doe" / "date-utils"
    project.mkdir(parents=True)
    return project, str(project).strip("/").replace("/", "-").replace(".", "-")


def _sessions() -> list:
    with Index.open() as idx:
        return list(idx.sessions(host="cursor-agent"))


EXPECTED = ["make the date parser accept ISO weeks", "keep the old format too"]


def test_a_text_transcript_stores_only_what_was_typed(homes: Homes, tmp_path: Path) -> None:
    """``.txt``: ``<attached_files>`` before ``<user_query>`` is not the prompt, ``[Thinking]``
    is not the answer, no timestamps (the session's time is the file's mtime)."""
    project, slug = _project(tmp_path)
    _write(homes.home / ".cursor" / "projects" / slug / "agent-transcripts" / f"{SID}.txt", TXT)
    run(source="cursor")
    [s] = _sessions()
    assert [p.text for p in s.prompts] == EXPECTED
    assert all(p.at is None for p in s.prompts)
    assert s.started_at == "2026-01-01T00:00:00.000Z"
    assert s.project_dir == str(project)
    assert s.tools == {"Write": 1, "Shell": 1}
    assert s.finals == ["The parser accepts ISO weeks now.", "Kept it."]
    said = cursor_transcripts.messages(TXT.encode(), "x.txt", ParseContext())[1]
    assert said["texts"] == []  # thinking, and an answer that cannot be told from it, are no answer
    assert said["tools"] == [("Write", {"path": "src/weeks.py", "contents": "# Weeks"}),
                             ("Shell", {"command": "pytest tests/test_dates.py -q",
                                        "description": "run the date tests"})]


def test_json_and_text_twins_are_one_session(homes: Homes, tmp_path: Path) -> None:
    """A session written as ``.txt`` and ``.json`` (and the newer ``<id>/<id>.jsonl``) is read once."""
    _, slug = _project(tmp_path)
    tdir = homes.home / ".cursor" / "projects" / slug / "agent-transcripts"
    _write(tdir / f"{SID}.txt", TXT)
    _write(tdir / f"{SID}.json", json.dumps(_jsonl_records()))
    other = "3f2b9c1e-0000-4000-8000-00000000aa02"
    _write(tdir / other / f"{other}.jsonl", "\n".join(json.dumps(r) for r in _jsonl_records()) + "\n")
    report = run(source="cursor")
    got = {s.session_id: s for s in _sessions()}
    assert set(got) == {SID, other}
    for s in got.values():
        assert [p.text for p in s.prompts] == EXPECTED
        assert s.finals == ["The parser accepts ISO weeks now.", "Kept it."]  # <think> dropped
        assert s.tools == {"Shell": 1}
    assert report.sources["cursor-agent"].files_seen == 2


def test_slugs_that_name_no_folder_leave_the_project_unknown(homes: Homes, tmp_path: Path) -> None:
    """A bare-number slug (a window with no folder) and a slug no existing folder encodes to
    keep no project; a lossy slug two folders encode to is not guessed either."""
    a = tmp_path / "work" / "my-app"
    b = tmp_path / "work" / "my" / "app"
    a.mkdir(parents=True)
    b.mkdir(parents=True)
    ambiguous = str(a).strip("/").replace("/", "-")
    projects = homes.home / ".cursor" / "projects"
    _write(projects / "1767225600123" / "agent-transcripts" / "s-number.txt", TXT)
    _write(projects / "nowhere-that-exists-here" / "agent-transcripts" / "s-gone.txt", TXT)
    _write(projects / ambiguous / "agent-transcripts" / "s-two.txt", TXT)
    run(source="cursor")
    got = {s.session_id: s for s in _sessions()}
    assert set(got) == {"s-number", "s-gone", "s-two"}
    assert all(s.project_dir is None for s in got.values())
    assert all([p.text for p in s.prompts] == EXPECTED for s in got.values())
    assert cursor_transcripts.resolve_slug(ambiguous) is None
    assert cursor_transcripts.resolve_slug(str(tmp_path / "work").strip("/").replace("/", "-")) == \
        str(tmp_path / "work")


def test_project_scope_uses_the_slug_when_the_folder_is_gone(homes: Homes, tmp_path: Path) -> None:
    """Asked for one project, a slug that project's path encodes to is its session."""
    gone = "/srv/checkouts/ledger.api"
    projects = homes.home / ".cursor" / "projects"
    _write(projects / "srv-checkouts-ledger-api" / "agent-transcripts" / "s-ledger.txt", TXT)
    _write(projects / "srv-checkouts-other" / "agent-transcripts" / "s-other.txt", TXT)
    run(source="cursor", project=gone)
    [s] = _sessions()
    assert (s.session_id, s.project_dir) == ("s-ledger", gone)


def _transcript_and_ide_db(homes: Homes, tmp_path: Path) -> sqlite3.Connection:
    """The transcript of chat SID, and the IDE's global ``state.vscdb`` (an empty ``cursorDiskKV``) open
    for the test to fill."""
    _, slug = _project(tmp_path)
    _write(homes.home / ".cursor" / "projects" / slug / "agent-transcripts" / f"{SID}.txt", TXT)
    db = homes.home / ".config" / "Cursor" / "User" / "globalStorage" / "state.vscdb"
    db.parent.mkdir(parents=True)
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE cursorDiskKV (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")
    return conn


def test_a_transcript_of_a_chat_the_ide_database_holds_is_not_read_twice(
        homes: Homes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The IDE writes a transcript for each composer chat (its id is the composerId); the chat
    is read from ``state.vscdb`` (with its times), its transcript is skipped and counted."""
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.delenv("SKILLOPT_CURSOR_IDE_HOME", raising=False)
    conn = _transcript_and_ide_db(homes, tmp_path)
    conn.execute("INSERT INTO cursorDiskKV VALUES (?, ?)", (f"composerData:{SID}", json.dumps(
        {"_v": 10, "composerId": SID, "createdAt": MTIME * 1000, "lastUpdatedAt": MTIME * 1000,
         "fullConversationHeadersOnly": [{"bubbleId": "u1", "type": 1}]})))
    conn.execute("INSERT INTO cursorDiskKV VALUES (?, ?)", (f"bubbleId:{SID}:u1", json.dumps(
        {"_v": 3, "type": 1, "bubbleId": "u1", "text": EXPECTED[0]})))
    conn.commit()
    conn.close()
    report = run(source="cursor")
    with Index.open() as idx:
        got = [(s.host, s.session_id) for s in idx.sessions()]
    assert got == [("cursor-ide", SID)]
    assert report.skipped_files.get("transcript_of_a_stored_chat") == 1


def test_a_transcript_of_a_cli_chat_is_not_read_twice(homes: Homes) -> None:
    """``cursor-agent`` keeps a chat in ``~/.cursor/chats/<md5>/<id>/store.db`` and writes its
    transcript under the same id: one session (the store's, with its creation time), whose
    project the twin's slug gives once a decoding of it has the store folder's MD5 (the folder
    /work/ledger does not exist here)."""
    from test_harvest_cursor_agent import CWD, _chat

    _chat(homes, chat_id=SID)
    slug = CWD.strip("/").replace("/", "-")
    _write(homes.home / ".cursor" / "projects" / slug / "agent-transcripts" / f"{SID}.txt", TXT)
    report = run(source="cursor")
    [s] = _sessions()
    assert s.session_id == SID and s.project_dir == CWD
    assert [p.text for p in s.prompts] == ["fix the failing date parser test", "no, keep the old format and add a "
                                           "test for it"]
    assert report.skipped_files.get("transcript_of_a_stored_chat") == 1


def test_role_lines_inside_what_was_written_open_no_message(homes: Homes, tmp_path: Path) -> None:
    """In a ``.txt``, a file the agent writes runs on unindented (kylemath/Luo2024Extend 172a15a:
    a ``Write`` call's ``contents``), so a YAML file's ``user:`` line sits at column 0: no prompt.
    A prompt may hold ``assistant:`` on a line of its own, and HTML: both are kept."""
    _, slug = _project(tmp_path)
    text = ("user:\n<user_query>\nwhy does this log\nassistant:\nappear twice\n</user_query>\n\n"
            "assistant:\n[Tool call] Write\n  path: deploy.yaml\n  contents: service: api\nuser:\n  name: deploy\n"
            "\n[Tool result] Write\n\nassistant:\nWrote deploy.yaml.\n\n"
            "user:\n<user_query>\n<b>bold</b> does not render, why\n</user_query>\n")
    _write(homes.home / ".cursor" / "projects" / slug / "agent-transcripts" / "s-yaml.txt", text)
    run(source="cursor")
    [s] = _sessions()
    assert [p.text for p in s.prompts] == ["why does this log\nassistant:\nappear twice",
                                           "<b>bold</b> does not render, why"]
    assert s.tools == {"Write": 1} and s.finals == ["Wrote deploy.yaml.", None]


def test_context_before_what_was_typed_without_a_user_query(homes: Homes, tmp_path: Path) -> None:
    """A JSON record whose text has no ``<user_query>``: leading snake_case context blocks
    (``<attached_files>``) are not what was typed; the rest is."""
    _, slug = _project(tmp_path)
    records = [{"role": "user", "message": {"content": [{"type": "text", "text":
                "<attached_files>\n<file path=\"a.py\"/>\n</attached_files>\nexplain this file"}]}}]
    _write(homes.home / ".cursor" / "projects" / slug / "agent-transcripts" / "s-ctx.jsonl",
           json.dumps(records[0]) + "\n")
    run(source="cursor")
    [s] = _sessions()
    assert [p.text for p in s.prompts] == ["explain this file"]


def test_a_json_twin_of_a_shape_not_known_falls_back_to_its_text_twin(homes: Homes, tmp_path: Path) -> None:
    """The JSON twin is preferred; when it holds no prompt this reader knows (a shape not seen
    yet), the session's ``.txt`` twin is read instead, so the prompts are not lost. A JSON
    object holding the records under ``messages`` is read as they are."""
    _, slug = _project(tmp_path)
    tdir = homes.home / ".cursor" / "projects" / slug / "agent-transcripts"
    _write(tdir / "s-unknown.json", json.dumps({"version": 9, "turns": [{"who": "me", "said": "x"}]}, indent=2))
    _write(tdir / "s-unknown.txt", TXT)
    _write(tdir / "s-object.json", json.dumps({"messages": _jsonl_records()}, indent=2))
    report = run(source="cursor")
    got = {s.session_id: s for s in _sessions()}
    assert {k: [p.text for p in s.prompts] for k, s in got.items()} == {"s-unknown": EXPECTED, "s-object": EXPECTED}
    assert report.skipped_files.get("transcript_twin") == 1


def test_a_home_laid_out_as_cursor_writes_it(homes: Homes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every store at once, as Cursor lays them out: a CLI chat and its transcript twin, an IDE
    chat (named only by its workspace database's id lists) and its transcript twin, a 2023 chat
    panel tab, a transcript of its own with ``.txt`` and ``.json`` twins, one in a folder-less
    window. Every typed prompt is stored exactly, each session once, with its project where
    Cursor records one."""
    from test_harvest_cursor_agent import CWD, _chat
    from test_harvest_cursor_ide import APP, _bubble, _db, put_chat

    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    cli_id, ide_id = "cli-0001", "ide-0001"
    _chat(homes, chat_id=cli_id)
    user = homes.home / ".config" / "Cursor" / "User"
    ws = user / "workspaceStorage" / ("c" * 32)
    ws.mkdir(parents=True)
    (ws / "workspace.json").write_text(json.dumps({"folder": "file://" + APP}))
    conn = _db(ws / "state.vscdb", "ItemTable", wal=False)
    conn.execute("INSERT INTO ItemTable VALUES ('composer.composerData', ?)", (json.dumps(
        {"selectedComposerIds": [ide_id], "lastFocusedComposerIds": [ide_id], "hasMigratedMultipleComposers": True}),))
    conn.execute("INSERT INTO ItemTable VALUES ('workbench.panel.aichat.view.aichat.chatdata', ?)", (json.dumps(
        {"tabs": [{"tabId": "tab-2023", "lastSendTime": MTIME * 1000, "bubbles": [
            {"type": "user", "text": "", "delegate": {"a": "what does this regex match"}},
            {"type": "ai", "text": "Dates."}, {"type": "user", "text": "", "delegate": {"a": ""}}]}]}),))
    conn.close()
    conn = _db(user / "globalStorage" / "state.vscdb", "ItemTable", "cursorDiskKV")
    put_chat(conn, ide_id, [_bubble("u1", 1, "add a healthcheck endpoint", 1), _bubble("a1", 2, "Added.", 2,
                                                                                       toolFormerData={})])
    conn.execute("INSERT INTO cursorDiskKV VALUES (NULL, NULL)")
    conn.close()
    project, slug = _project(tmp_path)
    projects = homes.home / ".cursor" / "projects"
    _write(projects / CWD.strip("/").replace("/", "-") / "agent-transcripts" / f"{cli_id}.txt", TXT)
    _write(projects / APP.strip("/").replace("/", "-") / "agent-transcripts" / ide_id / f"{ide_id}.jsonl",
           json.dumps({"role": "user", "message": {"content": [{"type": "text", "text":
                       "<user_query>\nadd a healthcheck endpoint\n</user_query>"}]}}) + "\n")
    _write(projects / slug / "agent-transcripts" / f"{SID}.txt", TXT)
    _write(projects / slug / "agent-transcripts" / f"{SID}.json", json.dumps(_jsonl_records()))
    _write(projects / "1767225600123" / "agent-transcripts" / "s-window.txt", TXT)
    report = run(source="cursor")
    with Index.open() as idx:
        got = {(s.host, s.session_id): (s.project_dir, [p.text for p in s.prompts]) for s in idx.sessions()}
    assert got == {
        ("cursor-agent", cli_id): (CWD, ["fix the failing date parser test",
                                         "no, keep the old format and add a test for it"]),
        ("cursor-ide", ide_id): (APP, ["add a healthcheck endpoint"]),
        ("cursor-ide", "tab-2023"): (APP, ["what does this regex match"]),
        ("cursor-agent", SID): (str(project), EXPECTED),
        ("cursor-agent", "s-window"): (None, EXPECTED),
    }
    assert report.skipped_files.get("transcript_of_a_stored_chat") == 2
    assert report.skipped_files.get("transcript_twin") == 1
    assert report.skipped_lines.get("null_key") == 1


def test_newer_transcripts_stamp_prompts_and_inject_subagent_notices(homes: Homes, tmp_path: Path) -> None:
    """Newer ``<id>/<id>.jsonl`` user messages start with ``<timestamp>Monday, May 18, 2026,
    3:24 PM (UTC+8)</timestamp>`` (the prompt's time), and when a subagent finishes Cursor writes a
    user message of its own: ``<system_notification>`` with the task's report, then a
    ``<user_query>`` "The above subagent result is already visible to the user...", which nobody
    typed. Shapes of a genuine transcript the search tool's find_string shows for
    ``</user_query>`` (stored file 57984530043) and of a reader's test fixture (stored file
    60238779438); the text here is invented."""
    _, slug = _project(tmp_path)
    notice = ("<timestamp>Monday, May 18, 2026, 3:30 PM (UTC+8)</timestamp>\n<system_notification>\n"
              "The following task has finished.\n<task>\nkind: subagent\nstatus: success\n</task>\n"
              "</system_notification>\n<user_query>The above subagent result is already visible to the user. "
              "DO NOT reiterate or summarize its contents unless asked.</user_query>")
    records = [
        {"role": "user", "message": {"content": [{"type": "text", "text":
            "<timestamp>Monday, May 18, 2026, 3:24 PM (UTC+8)</timestamp>\n<user_query>audit the launch files"
            "</user_query>"}]}},
        {"role": "assistant", "message": {"content": [{"type": "tool_use", "name": "Task",
                                                       "input": {"description": "audit"}}]}},
        {"role": "user", "message": {"content": [{"type": "text", "text": notice}]}},
        {"role": "assistant", "message": {"content": [{"type": "text", "text": "Done."}]}},
        {"role": "user", "message": {"content": [{"type": "text", "text":
            "<timestamp>Monday, May 18, 2026, 3:41 PM (UTC+8)</timestamp>\nnow fix the first finding"}]}},
    ]
    path = homes.home / ".cursor" / "projects" / slug / "agent-transcripts" / "s-new" / "s-new.jsonl"
    _write(path, "\n".join(json.dumps(r) for r in records) + "\n")
    last_write = 1779091200  # 2026-05-18T08:00:00Z
    os.utime(path, (last_write, last_write))
    run(source="cursor")
    [s] = _sessions()
    assert [(p.text, p.at) for p in s.prompts] == [("audit the launch files", "2026-05-18T07:24:00.000Z"),
                                                   ("now fix the first finding", "2026-05-18T07:41:00.000Z")]
    assert (s.started_at, s.ended_at) == ("2026-05-18T07:24:00.000Z", "2026-05-18T08:00:00.000Z")  # the file's mtime


def test_a_subagent_transcript_is_a_subagent_session_of_its_parent(homes: Homes, tmp_path: Path) -> None:
    """``<id>/subagents/<sub>.jsonl`` (the directory a transcript monitor found with the search
    tool passes over, stored file 70292426608) is a subagent session of ``<id>``: read, flagged,
    kept out of mining like every host's subagents."""
    _, slug = _project(tmp_path)
    tdir = homes.home / ".cursor" / "projects" / slug / "agent-transcripts" / "s-main"
    lines = "\n".join(json.dumps(r) for r in _jsonl_records()) + "\n"
    _write(tdir / "s-main.jsonl", lines)
    _write(tdir / "subagents" / "s-sub.jsonl", json.dumps({"role": "user", "message": {"content": [
        {"type": "text", "text": "List the launch files and what each starts."}]}}) + "\n")
    run(source="cursor")
    got = {s.session_id: s for s in _sessions()}
    assert (got["s-main"].is_subagent, got["s-sub"].is_subagent, got["s-sub"].parent_session_id) == \
        (False, True, "s-main")
    assert [p.text for p in got["s-sub"].prompts] == ["List the launch files and what each starts."]


def test_an_ide_chat_without_bubbles_is_read_from_its_transcript(
        homes: Homes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A newer IDE chat (``composerData`` ``_v`` 17 with ``conversationState`` ``"~"`` and
    ``agentBackend`` ``cursor-agent``, the shape Li-Mingshuang/cyber-overseer 202721a
    docs/recon/cursor.md quotes) may keep no ``bubbleId`` rows: the database has none of its
    prompts, so its transcript is read (once)."""
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    conn = _transcript_and_ide_db(homes, tmp_path)
    conn.execute("INSERT INTO cursorDiskKV VALUES (?, ?)", (f"composerData:{SID}", json.dumps(
        {"_v": 17, "composerId": SID, "createdAt": MTIME * 1000, "lastUpdatedAt": MTIME * 1000,
         "agentBackend": "cursor-agent", "conversationState": "~", "fullConversationHeadersOnly": []})))
    conn.commit()
    conn.close()
    report = run(source="cursor")
    with Index.open() as idx:
        got = [(s.host, s.session_id, [p.text for p in s.prompts]) for s in idx.sessions()]
    assert got == [("cursor-agent", SID, EXPECTED)]
    assert not report.skipped_files.get("transcript_of_a_stored_chat")


def test_a_transcript_in_a_subfolder_of_the_project_is_in_its_scope(homes: Homes, tmp_path: Path) -> None:
    """Scoped to a project, a transcript whose slug resolves to a folder inside it is read, one
    outside it is not."""
    project, slug = _project(tmp_path)
    (project / "pkg").mkdir()
    (tmp_path / "elsewhere").mkdir()
    projects = homes.home / ".cursor" / "projects"
    _write(projects / (slug + "-pkg") / "agent-transcripts" / "s-pkg.txt", TXT)
    _write(projects / str(tmp_path / "elsewhere").strip("/").replace("/", "-") / "agent-transcripts" / "s-out.txt", TXT)
    run(source="cursor", project=str(project))
    assert [(s.session_id, s.project_dir) for s in _sessions()] == [("s-pkg", str(project / "pkg"))]
