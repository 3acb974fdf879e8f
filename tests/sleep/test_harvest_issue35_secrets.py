"""Issue 35 §6 end to end: the kinds that passed the redactor (in prose, and in NAME=value lines of
a file an agent printed) reach neither the index nor ``sessions --json``, from a Claude Code
transcript's prompt and answer or from OpenCode's database."""

from __future__ import annotations


import sleep_builders as b
from redaction_labelled import SECRETS
from sleep_testutil import Homes, run
from test_harvest_opencode_db import SHOP, add_session, make_db, records
from test_redaction_name_value import _whole

from sleep.cli import main

CWD = "/work/app"
_KINDS = ("age-secret-key", "atlassian-token", "doppler-token", "mailgun-key", "newrelic-key", "pulumi-token",
          "jwt", "linear-key", "square-token")
_LINES = [line for kind, line, _ in SECRETS if kind in _KINDS]
_VALUES = [_whole(line, secret) for kind, line, secret in SECRETS if kind in _KINDS]
# What an agent prints when asked to show a .env file: NAME=value lines, one per kind.
_ENV_FILE = "\n".join(f"VALUE_{i}={v}" for i, v in enumerate(_VALUES))


def _leaks(blob: bytes) -> list[str]:
    return [v for v in _VALUES if any(v[i:i + 12].encode() in blob for i in range(0, max(1, len(v) - 11), 4))]


def _index_bytes(homes: Homes) -> bytes:
    return b"".join(p.read_bytes() for p in homes.skillopt.rglob("*") if p.is_file())


def test_claude_code_prompts_and_answers(homes: Homes, capsys) -> None:
    records_ = []
    for i, line in enumerate(_LINES):
        records_.append(b.claude_user(line, sid="s1", cwd=CWD, t=2 * i))
        records_.append(b.claude_assistant([b.text(f"Here is .env:\n{_ENV_FILE}")], sid="s1", cwd=CWD,
                                           msg_id=f"m{i}", t=2 * i + 1))
    b.write_jsonl(b.claude_session_path(homes.claude, CWD, "s1"), records_)
    report = run(source="claude-code")
    assert report.sessions_new == 1 and report.secrets_redacted >= len(_VALUES)
    assert _leaks(_index_bytes(homes)) == []
    capsys.readouterr()
    assert main(["sessions", "--all-projects", "--json"]) == 0
    out = capsys.readouterr().out
    assert _leaks(out.encode()) == [] and "[REDACTED:" in out


def test_opencode_database_prompts_and_answers(homes: Homes) -> None:
    data = homes.home / ".local" / "share" / "opencode"
    data.mkdir(parents=True)
    conn = make_db(data)
    msgs = records("ses_a", prompt="\n".join(_LINES))
    msgs[-1] = (msgs[-1][0], "assistant", 6, [{"type": "text", "text": f"Your .env holds:\n{_ENV_FILE}"}])
    add_session(conn, "ses_a", msgs=msgs)
    conn.close()
    assert run(source="opencode", project=SHOP).sessions_new == 1
    assert _leaks(_index_bytes(homes)) == []
