"""Secrets never reach the index or the command's output; each kind is replaced by a typed marker."""

from __future__ import annotations

import json

import sleep_builders as b
import pytest
from sleep_testutil import Homes

from sleep.cli import main
from sleep.redact import Redactor
from sleep.redact.public_ids import looks_high_entropy

# The sensitive part of each planted secret (what must never be stored), by kind.
SECRETS = {
    "openai-key": "sk-proj-Q7mZ2xK9pL4vN8rT1wY6bH3cJ5dF0gAa",
    "anthropic-key": "sk-ant-api03-Zp9Lq2Wm8Xn4Rk7Tv1Bc6Hd3Jf5Gs0Aa",
    "github-token": "ghp_R4nd0mT0k3nV4lu3F0rT3st1ngPurp0s3sXy",
    "github-pat": "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEF",
    "gitlab-token": "glpat-Xy7Zq2Lm9Pk4Rt8Vn1Bw",
    "slack-token": "xoxb-2384729384-2983749823-Rk7Tv1Bc6Hd3Jf5Gs0Aa",
    "aws-access-key": "AKIAQ7MZ2XK9PL4VN8RT",
    "aws-secret-key": "wJalrXUtnFEMIq7K7MDENGzbPxRfiCYz9KEYq2m4",
    "jwt": "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    "private-key": "MIIEowIBAAKCAQEAq7mZ2xK9pL4vN8rT1wY6bH3cJ5dF0gAaZp9Lq2Wm8Xn4Rk7T",
    "url-credentials": "Hunt3r2-S3cr3tPa55",
    "password": "CorrectHorse9Battery",
    "secret": "s3cr3t-Value-77",
    "token": "tk_live_q9w8e7r6t5y4",
    "high-entropy": "Zx8Kq2LmP9vR4tY7wB3nC6dF1gH5jA0s",
    "stripe": "sk_live_4eC39HqLyjWDarjtT1zdp7dcQ9",
    "sendgrid": "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",
}


def _secret_text() -> str:
    s = SECRETS
    return (
        f"use {s['openai-key']} and {s['anthropic-key']}; gh {s['github-token']} {s['github-pat']}\n"
        f"gitlab {s['gitlab-token']} slack {s['slack-token']}\n"
        f"aws {s['aws-access-key']} aws_secret_access_key={s['aws-secret-key']}\n"
        f"Authorization: {s['jwt']}\n"
        f"-----BEGIN RSA PRIVATE KEY-----\n{s['private-key']}\n{s['private-key'][::-1]}\n-----END RSA PRIVATE KEY-----\n"
        f"db postgres://admin:{s['url-credentials']}@db.internal:5432/app\n"
        f"password={s['password']} secret: '{s['secret']}' token={s['token']}\n"
        f"random {s['high-entropy']} stripe {s['stripe']} mail {s['sendgrid']}\n"
    )


def _plant_everywhere(homes: Homes) -> None:
    secret = _secret_text()
    cwd = "/work/app"
    b.write_jsonl(b.claude_session_path(homes.claude, cwd, "s"), [
        b.claude_user("Deploy with " + secret, sid="s", cwd=cwd, t=0),
        b.claude_assistant([b.tool_use("t1", "Bash", {"command": "env"})], sid="s", cwd=cwd, msg_id="m1", t=1),
        b.claude_tool_result("t1", "ENV " + secret, sid="s", cwd=cwd, t=2),
        b.claude_assistant([b.text("Your config holds " + secret)], sid="s", cwd=cwd, msg_id="m2", t=3),
        b.claude_user("no, " + secret, sid="s", cwd=cwd, t=4),
        b.claude_assistant([b.tool_use("t2", "Bash", {"command": "x"})], sid="s", cwd=cwd, msg_id="m3", t=5),
        b.claude_tool_result("t2", "The user doesn't want to proceed with this tool use. To tell you how to "
                             "proceed, the user said:\n" + secret, sid="s", cwd=cwd, t=6, is_error=True),
    ])
    b.write_jsonl(homes.claude / "history.jsonl", [{"display": secret, "timestamp": b.ms(0), "project": cwd}])
    sid = b.uid("sec")
    b.write_jsonl(b.codex_rollout_path(homes.codex, sid), [
        b.codex_meta(sid, cwd), *b.codex_user_turn("set up " + secret, 1), *b.codex_assistant(secret, 2)])
    b.write_jsonl(homes.codex / "history.jsonl", [{"session_id": sid, "ts": 1740819600, "text": secret}])
    chat = b.vscode_workspace(homes.vscode_user, "w", cwd)
    (chat / "v.json").write_text(json.dumps(b.copilot_session("v", [
        b.copilot_request("check " + secret, [b.md("Found " + secret)], 1, "r1")])))
    b.write_jsonl(homes.copilot_cli / "session-state" / "c" / "events.jsonl", [
        b.cli_event("session.start", {"sessionId": "c", "context": {"cwd": cwd}}, 0, 1),
        b.cli_event("user.message", {"content": "fix " + secret}, 1, 2),
        b.cli_event("assistant.message", {"content": "done " + secret}, 2, 3)])


def _stored_bytes(homes: Homes) -> bytes:
    return b"".join(p.read_bytes() for p in homes.skillopt.iterdir() if p.is_file())


def test_planted_secrets_of_every_kind_never_reach_the_index_or_output(homes: Homes, capsys) -> None:
    _plant_everywhere(homes)
    assert main(["harvest", "--all-projects", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["sessions_new"] == 4 and report["history_prompts"] == 2
    assert main(["sessions", "--all-projects", "--json"]) == 0
    assert main(["sessions", "--all-projects"]) == 0
    assert main(["harvest", "--all-projects"]) == 0
    output = capsys.readouterr().out
    stored = _stored_bytes(homes)
    assert b"[REDACTED:github-token]" in stored
    for kind, value in SECRETS.items():
        assert value.encode() not in stored, f"{kind} stored in the index"
        assert value not in output, f"{kind} printed"
    assert report["secrets_redacted"] >= 16 * 8
    for kind in ("openai-key", "anthropic-key", "github-token", "gitlab-token", "slack-token",
                 "aws-access-key", "aws-secret-key", "jwt", "private-key", "url-credentials",
                 "password", "secret", "token", "high-entropy", "stripe-key"):
        assert report["secrets_by_type"].get(kind, 0) > 0, kind
    assert any("sendgrid" in k for k in report["secrets_by_type"])


@pytest.mark.parametrize("kind", sorted(SECRETS))
def test_each_secret_kind_is_replaced_by_a_typed_marker(kind: str) -> None:
    r = Redactor()
    out = r.redact(_secret_text())
    assert SECRETS[kind] not in out
    assert "[REDACTED:" in out


def test_redaction_counts_by_type() -> None:
    r = Redactor()
    assert r.redact("a ghp_R4nd0mT0k3nV4lu3F0rT3st1ngPurp0s3sXy b") == "a [REDACTED:github-token] b"
    assert r.redact("postgres://u:pw-1234@h/db") == "postgres://u:[REDACTED:url-credentials]@h/db"
    assert dict(r.counts) == {"github-token": 1, "url-credentials": 1}


@pytest.mark.parametrize("text", [
    "no, use pnpm instead of npm in src/components/ButtonGroup.tsx",
    "commit 3f786850e387550fdab836ed7e6dc881de23001b fixed it",
    "request id 123e4567-e89b-12d3-a456-426614174000",
    "set max_tokens=100 and sort(key=len); the token: is passed along",
    "export TOKEN=$GITHUB_TOKEN and password=<your password>",
    "rename test_gate_rejects_tie_when_scores_equal_2",
])
def test_ordinary_coding_text_is_left_alone(text: str) -> None:
    r = Redactor()
    assert r.redact(text) == text and r.total == 0


def test_high_entropy_check_separates_random_tokens_from_identifiers() -> None:
    assert looks_high_entropy("Zx8Kq2LmP9vR4tY7wB3nC6dF1gH5jA0s")
    assert not looks_high_entropy("getUserAccountSettingsFromCache")
    assert not looks_high_entropy("src/components/Button/Group/Index2")
