"""Issue 31 §2's done-when on one home: a home laid out as every host writes it (the hosts read
before and the ones added for issue 31) is harvested once; every typed prompt is stored exactly,
in one session per conversation, with the project where the host records one; a second harvest
reads nothing new. One prompt carries Solana public addresses, which the redactor keeps.

Each host's files come from the fixtures its own tests write in the observed shape (they cite
where each shape was seen; docs/genuine-files.md lists the genuine files)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sleep_builders as b
import test_harvest_cursor_agent as cursor_agent
import test_harvest_cursor_ide as cursor_ide
import test_harvest_dsh as dsh
import test_harvest_gemini as gemini
import test_harvest_opencode as opencode
import test_harvest_pi as pi
from goose_testutil import VISIBLE, add_session, make_db, text
from sleep_testutil import Homes, run
from test_harvest_amp_hermes import (
    _hermes_rows,
    amp_thread,
    hermes_db,
    hermes_session,
    write_amp,
)

from sleep.harvest.sources.gemini_cli import project_hash
from sleep.index import Index

CWD = "/work/atlas"
SOLANA = ("What is the USDC balance of 7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU now?\n"
          "Then move 5 from it to 9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM.")

# (host, session id) -> (project, the prompts typed there, in order)
EXPECTED: dict[tuple[str, str], tuple[str | None, list[str]]] = {
    ("claude-code", "s"): (CWD, ["Fix the failing build in the api package", "no, use pnpm instead of npm"]),
    ("codex", b.uid("c")): (CWD, ["Add a --verbose flag to the CLI", "perfect, thanks"]),
    ("copilot-vscode", "v"): (CWD, ["Write a unit test for parse_config", "don't use unittest, use pytest"]),
    ("copilot-cli", "c"): (CWD, ["Rename the config loader", "no, keep the old name as an alias"]),
    ("gemini-cli", "g1"): (gemini.CWD, ["add a watering schedule page", "no, use the existing calendar component"]),
    ("opencode", "ses_01"): (opencode.CWD, ["add a discount code field to the cart", "perfect, thanks"]),
    # cursor-agent records only the md5 of its folder: an all-projects harvest has no path to name
    # (a harvest of that project matches it: test_harvest_cursor_agent).
    ("cursor-agent", "93d7b323-695c-4b84-8b69-d48bb88ae780"): (
        None, ["fix the failing date parser test", "no, keep the old format and add a test for it"]),
    ("cursor-ide", "c-two"): (cursor_ide.APP, ["rename the ledger module"]),
    ("cursor-ide", "c-api"): (cursor_ide.API, ["add a healthcheck endpoint"]),
    ("pi", pi.SID): (pi.CWD, ["glaze the test pots", "no, use the kiln at 1200 degrees", "fire them twice instead"]),
    ("pi", "0199aaaa-0000-7000-8000-000000000002"): (CWD, [SOLANA]),
    ("dsh", dsh.SID): (dsh.CWD, ["weave the test fixtures", "no, keep them in one file"]),
    ("goose", "20260501_1"): (CWD, ["prune the apple trees module"]),
    ("amp", "T-019c3c6b-8e41-7448-8a86-60a4edd6eed2"): (CWD, ["mow the north meadow", "no, leave the wildflowers"]),
    ("hermes", "20260501_100000_ab12"): (None, ["check the disk on the media server", "no, check /srv/media only"]),
}


def lay_out(homes: Homes, user: Path) -> None:
    """Every host's files where it keeps them, under one home."""
    b.write_jsonl(b.claude_session_path(homes.claude, CWD, "s"), b.claude_basic_session("s", CWD))
    b.write_jsonl(b.codex_rollout_path(homes.codex, b.uid("c")), b.codex_basic_session(b.uid("c"), CWD))
    chat = b.vscode_workspace(homes.vscode_user, "w", CWD)
    (chat / "v.json").write_text(json.dumps(b.copilot_session("v", b.copilot_basic_requests())))
    b.write_jsonl(homes.copilot_cli / "session-state" / "c" / "events.jsonl", b.copilot_cli_session("c", CWD))
    chats = homes.home / ".gemini" / "tmp" / project_hash(gemini.CWD) / "chats"
    chats.mkdir(parents=True)
    (chats / "session-2025-03-01T09-00-abcd1234.json").write_text(json.dumps({
        "sessionId": "g1", "projectHash": project_hash(gemini.CWD), "startTime": b.ts(0), "lastUpdated": b.ts(9),
        "messages": gemini._messages()}))
    opencode._session(opencode._storage(homes))
    cursor_agent._chat(homes)
    cursor_ide.build(user)
    agent = homes.home / ".pi" / "agent"
    pi._write(agent, pi._session_lines())
    pi._write(agent, [{"type": "session", "version": 3, "id": "0199aaaa-0000-7000-8000-000000000002",
                       "timestamp": b.ts(0), "cwd": CWD},
                      pi._msg("u1", None, 1, {"role": "user", "content": [{"type": "text", "text": SOLANA}]})],
              cwd=CWD, sid="0199aaaa-0000-7000-8000-000000000002")
    dsh._frames(homes.home / ".dsh" / "sessions" / dsh.KEY / dsh.SID / "session.v3.jsonl.zstd", dsh._log())
    conn = make_db(homes.home / ".local" / "share" / "goose")
    add_session(conn, "20260501_1", CWD, [("user", [text("prune the apple trees module")], 1777629600, VISIBLE)])
    conn.close()
    write_amp(homes.home, amp_thread(cwd=CWD))
    conn = hermes_db(homes.home)
    hermes_session(conn, "20260501_100000_ab12", "cli", _hermes_rows())
    conn.close()


@pytest.fixture
def user(homes: Homes, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.setenv("GEMINI_CLI_HOME", str(homes.home))
    u = homes.home / ".config" / "Cursor" / "User"
    (u / "globalStorage").mkdir(parents=True)
    return u


def test_a_home_with_every_host_stores_every_typed_prompt_once(homes: Homes, user: Path) -> None:
    lay_out(homes, user)
    report = run()
    assert not report.skipped
    with Index.open() as idx:
        stored = idx.sessions()
    keys = [(s.host, s.session_id) for s in stored if not s.is_subagent]
    assert len(keys) == len(set(keys))  # each session once
    got = {(s.host, s.session_id): (s.project_dir, [p.text for p in s.prompts]) for s in stored
           if (s.host, s.session_id) in EXPECTED}
    assert got == EXPECTED
    # Every host in the registry has a session here (a new host must join this home).
    assert {h for h, _ in EXPECTED} == set(report.sources)
    again = run()
    assert (again.sessions_new, again.sessions_updated, again.bytes_read) == (0, 0, 0)
