"""The harvest's fast paths store exactly what the plain paths store (issue 22 §4).

The speed work (bench/harvest.py) added short cuts whose only licence is that
they change nothing in the index:

- the redactor remembers the long tokens it found plain (``Redactor._candidate``)
  and finds every literal its rules are gated on in one pass
  (:class:`sleep.redact.literal_scan.LiteralScan`, a google-re2 set where installed);
- `skillopt-sleep harvest` parses its arguments without importing every sub-CLI.

Tested on a corpus of bench/corpus_realistic.py at a small size (record shapes
from FORMATS.md) plus the hand-written genuine-shape fixtures of
tests/sleep/test_harvest_genuine_shapes.py (Codex 0.144 code mode, a flat
Copilot CLI session, Claude Code cwd moves, spaced JSON, BOM and lone
surrogates, slash-command skills). Two comparisons: the whole index against
a harvest with every short cut turned off, and the counts against what the
code before the speed work stored (``_BEFORE``, recorded with commit 75c95c2).
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
import sleep_builders as b
import test_harvest_genuine_shapes as shapes
from sleep_testutil import Homes, run

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))

import corpus_realistic  # noqa: E402
from redaction_labelled import NOT_SECRETS, SECRETS  # noqa: E402

CORPUS_BYTES = 4_000_000
# The same long token where its context keeps it (a git id, an on-chain address, a digest,
# text after a Telegram bot id) and where its context makes it a secret.
CONTEXT_PAIRS = [
    "revert 9fceb02d0ae598e95dc970b74767f19372d61af8 and rerun",
    "GITHUB_TOKEN 9fceb02d0ae598e95dc970b74767f19372d61af8",
    "transfer to wallet address 7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU please",
    "7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU",
    "see commit 3f2a9c1b7d4e8f60a5b2c9d1e7f3a4b5c6d7e8f9a0b1 on main",
    "my session key 3f2a9c1b7d4e8f60a5b2c9d1e7f3a4b5c6d7e8f9a0b1",
    "upload sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "signing key e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0 works",
    "bot 123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0 works",
]


# The labelled set as it was when _BEFORE was recorded (later entries are appended, issue 35 §6): the
# corpus stays the one the counts were taken on.
PINNED_SECRETS, PINNED_NOT_SECRETS = 81, 64


def write_corpus(homes: Homes) -> None:
    """The realistic corpus and the genuine-shape fixtures, under ``homes``."""
    corpus_realistic.generate(homes.home, CORPUS_BYTES, seed=16)
    b.write_jsonl(b.codex_rollout_path(homes.codex, b.uid("cx144")), shapes._codex_0144(b.uid("cx144"), "/work/api"))
    system = ("You are the GitHub Copilot CLI.\n<environment>\nOperating system: Windows\n"
              "Current working directory: c:\\Users\\dev\\HAWZX-AI\n</environment>")
    b.write_jsonl(homes.copilot_cli / "session-state" / "flat1.jsonl",
                  shapes._flat_events("flat1", system, "scaffold the app\n\n<current_datetime>"
                                      "2026-03-01T10:00:00.000Z</current_datetime>"))
    root, sub = "/work/mono", "/work/mono/web"
    sid = b.uid("cc-move")
    recs = [b.claude_user("what is in this repo? my token is ghp_R4nd0mT0k3nV4lu3F0rT3st1ngPurp0s3sXy", sid=sid,
                          cwd=root, t=0),
            b.claude_assistant([b.text("Two apps.")], sid=sid, cwd=root, msg_id="m1", t=1)]
    for i in range(3):
        recs += [b.claude_user(f"fix web bug {i}", sid=sid, cwd=sub, t=10 + i * 10),
                 b.claude_assistant([b.text("Fixed."), b.tool_use(f"e{i}", "Edit", {"file_path": f"{sub}/app.ts"})],
                                    sid=sid, cwd=sub, msg_id=f"m{i + 2}", t=11 + i * 10)]
    b.write_jsonl(b.claude_session_path(homes.claude, root, sid), recs)
    spaced = b.uid("spaced")
    path = b.claude_session_path(homes.claude, "/work/spaced", spaced)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        for rec in b.claude_basic_session(spaced, "/work/spaced"):
            f.write(json.dumps(rec, separators=(", ", ": ")) + "\n")
    bom = b.uid("bom")
    first = b.dumps(b.claude_user("first prompt after a BOM", sid=bom, cwd="/work/emoji", t=0))
    split = b.dumps(b.claude_user("ship it SPLIT", sid=bom, cwd="/work/emoji", t=5)).replace("SPLIT", "\\ud83d")
    path = b.claude_session_path(homes.claude, "/work/emoji", bom)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\xef\xbb\xbf" + first.encode() + b"\n" + split.encode() + b"\n")
    # The labelled redaction set as prompts and shell commands, the non-secrets first in one
    # session and last in the other (a token met plain first, then as a secret, and back).
    texts = CONTEXT_PAIRS + [t for _, t in NOT_SECRETS[:PINNED_NOT_SECRETS]] + \
        [t for _, t, _ in SECRETS[:PINNED_SECRETS]]
    for name, order in (("labelled-a", texts), ("labelled-b", texts[::-1])):
        sid = b.uid(name)
        recs = []
        for i, text in enumerate(order):
            recs += [b.claude_user(text, sid=sid, cwd="/work/labelled", t=2 * i),
                     b.claude_assistant([b.text(f"Noted: {text}"), b.tool_use(f"t{i}", "Bash", {"command": text})],
                                        sid=sid, cwd="/work/labelled", msg_id=f"m{i}", t=2 * i + 1)]
        b.write_jsonl(b.claude_session_path(homes.claude, "/work/labelled", sid), recs)
    recs = [b.codex_meta(b.uid("labelled-c"), "/work/labelled", 0)]
    for i, text in enumerate(texts):
        recs += [*b.codex_user_turn(text, 2 * i + 1), *b.codex_assistant(f"Noted: {text}", 2 * i + 2)]
    b.write_jsonl(b.codex_rollout_path(homes.codex, b.uid("labelled-c")), recs)


def dump(index: Path) -> dict[str, list]:
    """Every row the harvest stored (file stat fields and times of writing left out)."""
    conn = sqlite3.connect(str(index))
    try:
        out = {}
        for table, skip in (("sessions", {"harvested_at"}), ("history_prompts", set()),
                            ("file_cursors", {"device", "inode", "mtime_ns", "updated_at"})):
            cols = [r[1] for r in conn.execute(f'PRAGMA table_info("{table}")') if r[1] not in skip]
            out[table] = sorted(json.dumps(row, default=bytes.hex) for row in conn.execute(
                f"SELECT {', '.join(chr(34) + c + chr(34) for c in cols)} FROM \"{table}\""))
        out["secret_hashes"] = sorted(r[0] for r in conn.execute("SELECT COUNT(*) FROM secret_hashes"))
        return out
    finally:
        conn.close()


def counts(index: Path, report: dict) -> dict[str, dict[str, int]]:
    """Per host: sessions, prompts, answers, shell signatures, files, commands, skills,
    tool calls and feedback stored; and the secrets redacted by kind."""
    conn = sqlite3.connect(str(index))
    try:
        rows = conn.execute("SELECT host, data FROM sessions").fetchall()
    finally:
        conn.close()
    out: dict[str, Counter] = {}
    for host, data in rows:
        s = json.loads(data)
        c = out.setdefault(host, Counter())
        c["sessions"] += 1
        c["prompts"] += len(s["prompts"])
        c["answers"] += sum(1 for f in s.get("finals") or [] if f)
        c["shell"] += sum(len(p.get("shell") or []) for p in s["prompts"])
        c["files"] += sum(len(p.get("files") or []) for p in s["prompts"])
        c["commands"] += sum((s.get("commands") or {}).values())
        c["skills"] += sum((s.get("skills") or {}).values())
        c["tools"] += sum((s.get("tools") or {}).values())
        c["feedback"] += len(s.get("feedback") or [])
    result = {host: dict(sorted(c.items())) for host, c in sorted(out.items())}
    result["secrets"] = dict(sorted(report["secrets_by_type"].items()))
    return result


# What the harvest stored before the speed work (commit 75c95c2, the same corpus and fixtures); the
# feedback counts since issue 30's reader (corrections worded without "no": claude-code 10 -> 13,
# codex 6 -> 8; labelled redaction prompts such as "... must be at least 12 characters" and "..., don't
# share it" typed after an answer); the kinds since issue 35's rules (a Square secret is named by its own
# rule, square-token, not detect-secrets' square-oauth-secret; the secret counted as `token` before is now
# found by the high-entropy rule, which reads a value after NAME= like one in prose: high-entropy 69 -> 75).
_BEFORE = {
    "claude-code": {"answers": 330, "commands": 0, "feedback": 13, "files": 43, "prompts": 332, "sessions": 7,
        "shell": 273, "skills": 1, "tools": 387},
    "codex": {"answers": 160, "commands": 0, "feedback": 8, "files": 7, "prompts": 160, "sessions": 3,
        "shell": 19, "skills": 0, "tools": 26},
    "copilot-cli": {"answers": 10, "commands": 0, "feedback": 2, "files": 1, "prompts": 10, "sessions": 3,
        "shell": 49, "skills": 0, "tools": 69},
    "copilot-vscode": {"answers": 5, "commands": 0, "feedback": 0, "files": 17, "prompts": 5, "sessions": 2, "shell": 9,
        "skills": 0, "tools": 25},
    "secrets": {"anthropic-key": 12, "api-key": 6, "auth-header": 24, "aws-access-key": 24, "aws-secret-key": 6,
        "azure-storage-account-access-key": 6, "basic-auth": 6, "databricks-token": 6,
        "digitalocean-token": 6, "discord-bot-token": 6, "github-token": 30, "gitlab-token": 6,
        "google-api-key": 6, "groq-key": 6, "high-entropy": 75, "huggingface-token": 12, "jwt": 6,
        "mailchimp-access-key": 6, "npm-token": 6, "npm-tokens": 6, "openai-key": 18, "password": 120,
        "private-key": 18, "secret": 19, "sendgrid-api-key": 6, "shopify-token": 6, "slack-token": 6,
        "slack-webhook": 6, "square-token": 6, "stripe-key": 12, "telegram-bot-token": 12,
        "twilio-api-key": 6, "url-credentials": 30},
}


def _plain_paths(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every short cut of the redactor off: no remembered tokens, one ``in`` per literal."""
    from sleep.redact import redactor as redact
    from sleep.redact.literal_scan import LiteralScan

    monkeypatch.setattr(redact.Redactor, "_candidate", redact.Redactor._check_candidate)
    monkeypatch.setattr(redact, "_LOW_SCAN", LiteralScan(redact._LOW_SCAN.literals, use_re2=False))


def test_fast_paths_store_what_the_plain_paths_store(homes: Homes, monkeypatch: pytest.MonkeyPatch) -> None:
    write_corpus(homes)
    fast_report = run().to_dict()
    fast = dump(homes.index)
    homes.index.unlink()
    with monkeypatch.context() as m:
        _plain_paths(m)
        plain_report = run().to_dict()
    assert dump(homes.index) == fast
    for key in ("secrets_by_type", "actions", "skipped", "lines_total", "lines_kept", "sessions_new"):
        assert plain_report[key] == fast_report[key], key
    # The comparison means something: the corpus holds every kind of stored text.
    c = counts(homes.index, fast_report)
    for host in ("claude-code", "codex", "copilot-cli", "copilot-vscode"):
        assert c[host]["sessions"] and c[host]["prompts"], host
    assert c["claude-code"]["files"] and c["codex"]["shell"] and sum(c["secrets"].values()) >= 5


def test_a_redactor_that_remembers_plain_tokens_redacts_each_text_as_a_new_one_would() -> None:
    from sleep.redact import Redactor

    texts = CONTEXT_PAIRS + [t for _, t in NOT_SECRETS] + [t for _, t, _ in SECRETS]
    for order in (texts, texts[::-1], CONTEXT_PAIRS * 2):
        shared = Redactor(collect=True)
        counts: Counter = Counter()
        values: set[str] = set()
        for text in order:
            fresh = Redactor(collect=True)
            assert shared.redact(text) == fresh.redact(text), text
            counts += fresh.counts
            values |= fresh.values
        assert shared.counts == counts and shared.values == values
        if order is texts:
            assert shared._plain[False] or shared._plain[True]  # it did remember tokens


def test_counts_are_those_stored_before_the_speed_work(homes: Homes) -> None:
    write_corpus(homes)
    report = run().to_dict()
    assert counts(homes.index, report) == _BEFORE


def test_harvest_command_line_is_parsed_without_the_sub_clis(homes: Homes) -> None:
    code = ("import sys\nfrom sleep.cli import main\nrc = main(['harvest', '--source', 'codex', '--all-projects',"
            " '--json'])\nprint(sorted(m for m in sys.modules if m.endswith('.cli')))\nsys.exit(rc)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=str(homes.home))
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "['sleep.cli', 'sleep.harvest.cli']"


def test_harvest_help_is_the_same_with_and_without_the_sub_clis() -> None:
    from sleep.cli import build_parser

    def help_of(parser) -> str:
        sub = next(a for a in parser._actions if a.dest == "command")
        return sub.choices["harvest"].format_help()

    assert help_of(build_parser("harvest")) == help_of(build_parser())
