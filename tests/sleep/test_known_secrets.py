"""Defence in depth (issue 19 §1): every secret value a harvest redacts is remembered as a
keyed hash, and whatever leaves the data dir is filtered against those hashes too, so a
secret once seen never reaches a repository in a form the rules miss."""

from __future__ import annotations

import json
import sqlite3
import stat
from pathlib import Path

import pytest
import sleep_builders as b
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from proposal_testutil import CANDIDATE, SKILL, all_objects, commit_messages, git, make_repo, report
from sleep_testutil import Homes, run

from sleep import paths
from sleep.redact import known as known_secrets
from sleep.index import MIGRATIONS, Index
from sleep.proposals import stage
from sleep.proposals.errors import CandidateSecretError
from sleep.redact import OutboundScrubber, scrub_outbound, scrub_value

CWD = "/work/app"
PASSWORD = "Qx7vR2mLk9Zt4Wn"
TOKEN = "ghp_R4nd0mT0k3nV4lu3F0rT3st1ngPurp0s3sXy"


def _harvest_secrets(homes: Homes, *prompts: str) -> None:
    b.write_jsonl(b.claude_session_path(homes.claude, CWD, "k"), [
        b.claude_user(p, sid="k", cwd=CWD, t=i) for i, p in enumerate(prompts)])
    report_ = run()
    assert report_.secrets_remembered >= 1


def _stored(homes: Homes) -> bytes:
    return b"".join(p.read_bytes() for p in homes.skillopt.rglob("*") if p.is_file())


def test_the_harvest_remembers_a_keyed_hash_of_each_redacted_value_never_the_value(homes: Homes) -> None:
    _harvest_secrets(homes, f"load the fixtures with mysql -u deploy -p{PASSWORD} ledger", f"push with {TOKEN}")
    with Index.open() as index:
        rows = index.conn.execute("SELECT digest, anchor, length FROM secret_hashes").fetchall()
    assert {length for _, _, length in rows} == {len(PASSWORD), len(TOKEN)}
    stored = _stored(homes)
    assert PASSWORD.encode() not in stored and TOKEN.encode() not in stored
    key = homes.skillopt / paths.SECRET_KEY_FILE
    assert stat.S_IMODE(key.stat().st_mode) == 0o600 and len(key.read_bytes()) == known_secrets.KEY_BYTES


def test_a_remembered_value_is_filtered_in_a_form_the_rules_miss(homes: Homes) -> None:
    _harvest_secrets(homes, f"mysql -u deploy -p{PASSWORD} ledger")
    said = f"log in as deploy / {PASSWORD} (or deploy:{PASSWORD}@db and x{PASSWORD}y)"
    from sleep.redact import Redactor
    assert Redactor().redact(said) == said  # the rules alone see nothing here
    out = scrub_outbound(said)
    assert PASSWORD not in out and out.count("[REDACTED:known-secret]") == 3


def test_without_an_index_only_the_redactor_runs_and_nothing_is_created(homes: Homes) -> None:
    assert scrub_outbound(f"deploy / {PASSWORD}") == f"deploy / {PASSWORD}"
    assert scrub_outbound(f"push with {TOKEN}") == "push with [REDACTED:github-token]"
    assert not homes.skillopt.exists()


def test_an_index_without_a_key_file_filters_nothing_but_the_rules(homes: Homes) -> None:
    _harvest_secrets(homes, f"mysql -u deploy -p{PASSWORD} ledger")
    (homes.skillopt / paths.SECRET_KEY_FILE).unlink()
    assert scrub_outbound(f"deploy / {PASSWORD}") == f"deploy / {PASSWORD}"


def test_the_filter_reloads_when_a_later_harvest_remembers_more(homes: Homes) -> None:
    _harvest_secrets(homes, f"mysql -u deploy -p{PASSWORD} ledger")
    assert "Hj3kL9qWe2rT5yUi" in scrub_outbound("admin Hj3kL9qWe2rT5yUi")
    b.write_jsonl(b.claude_session_path(homes.claude, CWD, "k2"), [
        b.claude_user("curl -u admin:Hj3kL9qWe2rT5yUi http://127.0.0.1/health", sid="k2", cwd=CWD, t=0)])
    run()
    assert scrub_outbound("admin Hj3kL9qWe2rT5yUi") == "admin [REDACTED:known-secret]"


def test_values_too_short_to_filter_safely_are_not_remembered(homes: Homes) -> None:
    with Index.open() as index:
        assert known_secrets.remember(index, ["abc12", "-----BEGIN", "two words", "hunter22"]) == 1
        assert index.conn.execute("SELECT length FROM secret_hashes").fetchall() == [(8,)]


def test_scrub_value_scrubs_every_string_and_keeps_json_valid(homes: Homes) -> None:
    _harvest_secrets(homes, f"mysql -u deploy -p{PASSWORD} ledger")
    value = {"notes": [f'the "db" login is {PASSWORD}', 3], f"k{PASSWORD}": {"x": "-----BEGIN RSA PRIVATE KEY-----"}}
    out = scrub_value(value)
    text = json.dumps(out)
    assert PASSWORD not in text and json.loads(text) == out
    assert out["notes"][1] == 3


def test_migration_7_can_be_applied_twice_and_upgrades_an_index_of_version_6(tmp_path: Path) -> None:
    path = tmp_path / "old" / "sleep.sqlite3"
    with Index.open(path) as index:
        for table in ("secret_hashes", "index_meta", "operations"):  # what migrations 7 and 8 created
            index.conn.execute(f"DROP TABLE {table}")
        index.conn.execute("PRAGMA user_version = 6")
    with Index.open(path) as index:
        assert index.schema_version >= 7
        seven = next(m for m in MIGRATIONS if m.version == 7)
        for statement in seven.sql.split(";"):
            if statement.strip():
                index.conn.execute(statement)
        assert index.conn.execute("SELECT COUNT(*) FROM secret_hashes").fetchone() == (0,)


def test_an_unreadable_index_stops_the_filter_instead_of_letting_text_out(homes: Homes) -> None:
    _harvest_secrets(homes, f"mysql -u deploy -p{PASSWORD} ledger")
    homes.index.write_bytes(b"this is not a database" * 100)
    for suffix in ("-wal", "-shm"):
        Path(f"{homes.index}{suffix}").unlink(missing_ok=True)
    with pytest.raises(sqlite3.DatabaseError):
        scrub_outbound("anything")


# ----- staging ------------------------------------------------------------------------------

def test_staging_refuses_a_candidate_holding_a_remembered_value_the_rules_miss(homes: Homes,
                                                                                tmp_path: Path) -> None:
    _harvest_secrets(homes, f"mysql -u deploy -p{PASSWORD} ledger")
    repo = make_repo(tmp_path / "app")
    with pytest.raises(CandidateSecretError, match="known-secret"):
        stage(repo / SKILL, CANDIDATE + f"- The db login is deploy / {PASSWORD}.\n", report())
    assert git(repo, "branch", "--list", "skillopt/*") == ""
    assert PASSWORD.encode() not in all_objects(repo)


def test_the_note_and_commit_message_never_hold_a_remembered_value(homes: Homes, tmp_path: Path) -> None:
    _harvest_secrets(homes, f"mysql -u deploy -p{PASSWORD} ledger")
    repo = make_repo(tmp_path / "app")
    leaky = report(notes=[f"the replay logged in as deploy / {PASSWORD}"], gate_reason=f"ok {PASSWORD}",
                   models={"target": f"m-{PASSWORD}"}, task_deltas={f"task-{PASSWORD}": 1.0})
    p = stage(repo / SKILL, CANDIDATE, leaky)
    assert PASSWORD.encode() not in all_objects(repo)
    assert PASSWORD not in commit_messages(repo)
    note = json.loads(git(repo, "notes", "--ref=refs/notes/skillopt", "show", p.commit))
    assert "[REDACTED:known-secret]" in json.dumps(note)


def test_the_scrubber_counts_what_it_removed(homes: Homes) -> None:
    _harvest_secrets(homes, f"mysql -u deploy -p{PASSWORD} ledger")
    scrubber = OutboundScrubber()
    scrubber(f"{PASSWORD} and {TOKEN}")
    assert scrubber.known == 1 and scrubber.redactor.counts["github-token"] == 1
    assert scrubber.findings(f"x {PASSWORD}") == ["known-secret"]


_NON_SPACE = st.text(st.characters(blacklist_categories=("Zs", "Zl", "Zp", "Cc", "Cs")), min_size=6, max_size=40)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=_NON_SPACE, before=st.text(max_size=30), after=st.text(max_size=30))
def test_a_remembered_value_is_found_wherever_it_stands(homes: Homes, value: str, before: str, after: str) -> None:
    assume(known_secrets.pieces(value) == {value} and value not in "[REDACTED:known-secret]")
    with Index.open() as index, index.transaction():
        known_secrets.remember(index, [value])
    known = known_secrets.KnownSecrets.load(homes.index)
    assert known is not None
    out, n = known.scrub(before + value + after)
    assert value not in out and n >= 1
