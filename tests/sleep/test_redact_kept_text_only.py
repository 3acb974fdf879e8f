"""Redaction runs on what the index stores, once; text that is dropped is never scanned."""

from __future__ import annotations

import sleep_builders as b
from sleep_testutil import Homes, run

from sleep.index import Index
from sleep.redact import Redactor

CWD = "/work/app"
TOKEN = "ghp_R4nd0mT0k3nV4lu3F0rT3st1ngPurp0s3sXy"
OTHER = "glpat-Xy7Zq2Lm9Pk4Rt8Vn1Bw"


def _stored(homes: Homes) -> bytes:
    return b"".join(p.read_bytes() for p in homes.skillopt.iterdir() if p.is_file())


def test_a_secret_in_dropped_text_is_neither_stored_nor_scanned_one_in_a_prompt_is_redacted(homes: Homes) -> None:
    b.write_jsonl(b.claude_session_path(homes.claude, CWD, "k"), [
        b.claude_user(f"deploy with {TOKEN}", sid="k", cwd=CWD, t=0),
        b.claude_assistant([{"type": "thinking", "thinking": f"the user pasted {OTHER}", "signature": "s"}],
                           sid="k", cwd=CWD, msg_id="m1", t=1),
        b.claude_assistant([b.tool_use("t1", "Bash", {"command": "env"})], sid="k", cwd=CWD, msg_id="m1", t=1.1),
        b.claude_tool_result("t1", f"GITLAB={OTHER}\n" * 50, sid="k", cwd=CWD, t=2),
        b.claude_assistant([b.text("Deployed.")], sid="k", cwd=CWD, msg_id="m2", t=3),
    ])
    report = run()
    with Index.open() as idx:
        s = idx.get_session("claude-code", "k")
    assert s.prompts[0].text == "deploy with [REDACTED:github-token]"
    stored = _stored(homes)
    assert TOKEN.encode() not in stored and OTHER.encode() not in stored
    # Only the prompt's token was ever seen by the redactor: the thinking block and the
    # tool output (50 copies of another token) were dropped before redaction.
    assert report.secrets_by_type == {"github-token": 1}


def test_each_stored_string_is_redacted_once(homes: Homes, monkeypatch) -> None:
    seen: list[str] = []
    original = Redactor.redact

    def counting(self, text):
        seen.append(text)
        return original(self, text)

    monkeypatch.setattr(Redactor, "redact", counting)
    b.write_jsonl(b.claude_session_path(homes.claude, CWD, "once"), b.claude_basic_session("once", CWD))
    run()
    texts = [t for t in seen if t and len(t) > 20]  # prompts and finals, not the short signatures
    assert len(texts) == len(set(texts)) == 4  # two prompts, two finals
