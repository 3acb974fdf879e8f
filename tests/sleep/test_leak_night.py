"""Issue 19 §1: secrets never reach the person's repository or the data dir in clear.

Four recurring Claude Code sessions (built from FORMATS.md with sleep_builders)
end with the same correction, which carries a mysql ``-p<password>`` and a curl
``-u user:password``. A scripted night stages the correction; afterwards, and
again after ``reject`` and ``git gc --prune=now``, neither password is in any
object of the repository, in the notes history, or in any file of the data dir,
and the staged rule keeps the instruction without a redaction marker. A model
reply that echoes a secret (as a replay that read a secret file would) is
redacted before anything records it.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import sleep_builders as b
import yaml
from cycle_testutil import CAPABLE_JUDGE
from sleep_testutil import Homes

from sleep import paths
from sleep.cli import main
from sleep.cycle.demo import install_transcripts, make_project

MYSQL_PW = "Qx7vR2mLk9Zt4Wn"
CURL_PW = "Hj3kL9qWe2rT5yUi"
CORRECTION = (f"no, use pnpm not npm; the fixtures load with mysql -u deploy -p{MYSQL_PW} ledger_test "
              f"and the health check is curl -u admin:{CURL_PW} http://127.0.0.1:8080/health")
PLANTED = (MYSQL_PW, CURL_PW)


def _session(project: Path, n: int) -> list[dict]:
    sid, cwd = b.uid(f"leak-{n}"), str(project)
    t = 86400 * (640 + n)  # late 2026, beside the demo sessions
    return [
        b.claude_user("run the tests and tell me what fails", sid=sid, cwd=cwd, t=t, entrypoint="cli"),
        b.claude_assistant([b.tool_use(f"tu{n}a", "Bash", {"command": "npm test"})], sid=sid, cwd=cwd,
                           msg_id=f"m{n}a", t=t + 1, entrypoint="cli"),
        b.claude_tool_result(f"tu{n}a", "npm error This project uses pnpm", sid=sid, cwd=cwd, t=t + 2),
        b.claude_assistant([b.text("npm refuses to run here.")], sid=sid, cwd=cwd, msg_id=f"m{n}b", t=t + 3,
                           entrypoint="cli"),
        b.claude_user(CORRECTION, sid=sid, cwd=cwd, t=t + 4, entrypoint="cli"),
        b.claude_assistant([b.tool_use(f"tu{n}c", "Bash", {"command": "pnpm test"})], sid=sid, cwd=cwd,
                           msg_id=f"m{n}c", t=t + 5, entrypoint="cli"),
        b.claude_tool_result(f"tu{n}c", "2 failed in src/parse.test.ts", sid=sid, cwd=cwd, t=t + 6),
        b.claude_assistant([b.text("Two tests fail in src/parse.test.ts.")], sid=sid, cwd=cwd, msg_id=f"m{n}d",
                           t=t + 7, entrypoint="cli"),
    ]


def _rules(path: Path, echoed: str = "") -> Path:
    """Answers that follow a "Use pnpm" rule pass the judge: the correction is staged.
    ``echoed`` is put in the passing answers and the judge's feedback (a model repeating
    what it read)."""
    good = f"ANSWER-PNPM: ran `pnpm test`; 2 tests fail in src/parse.test.ts. {echoed}".strip()
    path.write_text(yaml.safe_dump({"rules": [
        {"stage": "reflect", "response": json.dumps({"edits": []})},
        {"stage": "merge", "response": json.dumps({"edits": []})},
        {"stage": "rank", "response": json.dumps({"order": [1, 2, 3]})},
        {"stage": "judge", "regex": "ANSWER-PNPM",
         "response": json.dumps({"score": 10, "pass": True, "feedback": f"ok {echoed}".strip()})},
        *CAPABLE_JUDGE,  # the model judge probe must find it can tell answers apart
        {"stage": "judge", "response": json.dumps({"score": 1, "pass": False, "feedback": "no"})},
        {"stage": "rollout", "regex": "Use pnpm", "response": good},
        {"stage": "rollout", "response": "ran `npm test`; something failed."}]}))
    return path


def _git(repo: Path, *args: str) -> bytes:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=True).stdout


def _leaks(repo: Path) -> dict[str, list[str]]:
    """Where each planted password is found: repository objects, notes history, data dir files."""
    objects = _git(repo, "cat-file", "--batch-all-objects", "--batch")
    notes = _git(repo, "log", "-p", "--all", "--reflog", "--format=%H%n%B")
    found: dict[str, list[str]] = {}
    for pw in PLANTED:
        where = [name for name, blob in (("objects", objects), ("notes/log history", notes)) if pw.encode() in blob]
        where += [str(p) for p in paths.data_dir().rglob("*") if p.is_file() and pw.encode() in p.read_bytes()]
        if where:
            found[pw] = where
    return found


def _night(homes: Homes, tmp_path: Path, capsys, echoed: str = "") -> tuple[Path, dict]:
    project = make_project(tmp_path / "tiny-ledger")
    install_transcripts(homes.home, project)
    for n in range(4):
        b.write_jsonl(b.claude_session_path(homes.claude, str(project), b.uid(f"leak-{n}")), _session(project, n))
    rules = _rules(tmp_path / "rules.yaml", echoed)
    code = main(["run", "--project", str(project), "--backend", "scripted", "--set", f"model.scripted={rules}",
                 "--skill", str(project / ".claude/skills/ledger-dev/SKILL.md"), "--json"])
    record = json.loads(capsys.readouterr().out)
    assert code == 0 and record["outcome"] == "staged", record
    return project, record


def test_passwords_in_a_correction_reach_no_commit_note_or_data_file(homes: Homes, tmp_path: Path, capsys) -> None:
    project, record = _night(homes, tmp_path, capsys)
    assert _leaks(project) == {}

    assert main(["reject", record["proposal"]["id"]]) == 0
    _git(project, "gc", "--prune=now", "--quiet")
    assert _leaks(project) == {}


def test_a_staged_correction_keeps_the_instruction_without_the_redacted_clauses(homes: Homes, tmp_path: Path,
                                                                               capsys) -> None:
    project, record = _night(homes, tmp_path, capsys)
    assert "- Use pnpm, not npm." in record["corrections"]["kept"]
    staged = _git(project, "show", f"{record['proposal']['branch']}:.claude/skills/ledger-dev/SKILL.md").decode()
    assert "- Use pnpm, not npm." in staged and "REDACTED" not in staged and "mysql" not in staged


ECHOED = "ghp_R8cY2mK7qT4wZ9xN3vB6jH1sD5fL0pA8eU2i"


def test_a_secret_a_model_echoes_is_in_no_run_or_data_file(homes: Homes, tmp_path: Path, capsys) -> None:
    project, record = _night(homes, tmp_path, capsys, echoed=f"(the .env I read has {ECHOED})")
    run_dir = Path(record["run_dir"])
    for name in ("evidence.jsonl", "rollout_cache.jsonl", "history.json", "best_skill.md"):
        assert (run_dir / name).is_file(), name
    assert list(run_dir.rglob("rollouts.json"))
    stored = [p for p in paths.data_dir().rglob("*") if p.is_file() and ECHOED.encode() in p.read_bytes()]
    assert stored == []
    assert "[REDACTED:github-token]" in (run_dir / "evidence.jsonl").read_text()
    assert ECHOED.encode() not in _git(project, "cat-file", "--batch-all-objects", "--batch")
