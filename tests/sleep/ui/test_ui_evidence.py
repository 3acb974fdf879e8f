"""The proposal page's evidence and the adopt form's branch choice, on a staged proposal
(a real acting night's page is checked in tests/sleep/test_replay_night.py)."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from proposal_testutil import SKILL, CANDIDATE, git, make_repo, report
from ui_testutil import client, post

from sleep.proposals import get, stage
from sleep.proposals.evidence import instances, table_lines

TOKEN = "ghp_" + "Zx9Qw2Er4Ty6Ui8Op0As1Df3Gh5Jk7Lz0Xc2V"  # a GitHub token's shape (fake)
EVIDENCE = [
    {"task": "t1-ab", "prompt": "install the deps and run the tests",
     "before": {"answer": "Ran npm install.", "passed": False, "score": 0.0, "feedback": "ran npm install",
                "commands": [{"command": "npm install", "exit_code": 0, "denied": False},
                             {"command": f"curl -H 'Authorization: token {TOKEN}' https://x", "exit_code": None,
                              "denied": True}],
                "files": [{"path": "package-lock.json", "change": "added"}], "checks": []},
     "after": {"answer": "Ran pnpm install.", "passed": True, "score": 1.0, "feedback": "",
               "commands": [{"command": "pnpm install", "exit_code": 0, "denied": False}],
               "files": [{"path": "pnpm-lock.yaml", "change": "added"}],
               "checks": [{"command": "pnpm test", "passed": True, "exit_code": 0}]}},
    {"task": "t2-cd", "prompt": "", "before": {"answer": "x", "passed": True}, "after": None},
]


def _staged(tmp_path: Path, evidence=EVIDENCE):
    repo = make_repo(tmp_path / "app")
    return repo, stage(repo / SKILL, CANDIDATE, report(evidence=evidence), night=date(2026, 12, 1))


def test_the_page_shows_each_instance_before_and_after_and_no_secret(tmp_path: Path) -> None:
    _, p = _staged(tmp_path)
    html = client([tmp_path / "outputs"]).get(f"/proposals/{p.id}").text
    one = html.split('id="ev-1"', 1)[1].split('id="ev-2"', 1)[0]
    before, after = one.split('<div class="ev-side before">', 1)[1].split('<div class="ev-side after">', 1)
    assert "judge: <strong>fail</strong>" in before and "<code>npm install</code>" in before
    assert '<span class="tag">denied</span>' in before and "<code>package-lock.json</code>" in before
    assert "none run" in before  # no check
    assert "judge: <strong>pass</strong>" in after and "<code>pnpm install</code>" in after
    assert "<code>pnpm test</code> passed" in after and "npm install</code>" not in after.replace("pnpm", "")
    assert "fail → pass" in one and "asks: install the deps and run the tests" in one
    two = html.split('id="ev-2"', 1)[1]
    assert "read-only replay: only the answer came back" in two and "not replayed under this skill" in two
    assert TOKEN not in html and TOKEN[4:20] not in html  # stored redacted, shown through the outbound filter
    assert TOKEN not in str(get(p.id).report.evidence)


def test_a_proposal_without_evidence_has_no_evidence_section(tmp_path: Path) -> None:
    _, p = _staged(tmp_path, evidence=[])
    assert 'id="evidence"' not in client([tmp_path / "outputs"]).get(f"/proposals/{p.id}").text


def test_adopt_deletes_the_branch_unless_keep_is_ticked(tmp_path: Path) -> None:
    repo, p = _staged(tmp_path)
    c = client([tmp_path / "outputs"])
    form = c.get(f"/proposals/{p.id}").text.split('id="adopt-form"', 1)[1].split("</form>", 1)[0]
    assert '<input type="checkbox" name="keep_branch" value="1" id="keep-branch">' in form  # unchecked
    assert "delete_branch" not in form
    assert post(c, f"/proposals/{p.id}/adopt", {}).status_code == 303
    assert git(repo, "branch", "--list", p.branch).strip() == ""
    other = tmp_path / "other"
    repo2, q = _staged(other)
    c2 = client([other / "outputs"])
    assert post(c2, f"/proposals/{q.id}/adopt", {"keep_branch": "1"}).status_code == 303
    assert get(q.id).state == "adopted" and git(repo2, "branch", "--list", q.branch).strip().endswith(q.branch)


def test_the_reader_is_lenient_about_what_a_night_wrote() -> None:
    odd = [{"task_id": "t9", "before": {"hard": 1.0, "commands": [{"command": "ls", "exit_code": "x"}, "junk"]},
            "after": "not a dict", "extra": 1}, "junk", {"prompt": "no task id"}]
    (one,) = instances(odd)
    assert one.task == "t9" and one.before.passed is True and one.before.commands[0].exit_code is None
    assert one.after.replayed is False and instances(None) == [] and instances({"a": 1}) == []
    lines = table_lines(instances(EVIDENCE))
    assert lines[0].split() == ["TASK", "SIDE", "VERDICT", "COMMANDS", "RUN", "FILES", "CHANGED", "CHECK"]
    assert lines[1].split()[:5] == ["t1-ab", "before", "fail", "npm", "install;"] and "(denied)" in lines[1]
    assert lines[2].split()[:2] == ["after", "pass"] and lines[2].rstrip().endswith("pnpm test: passed")
    assert lines[3].split()[:4] == ["t2-cd", "before", "pass", "(read-only:"]
    assert lines[4].split() == ["after", "not", "replayed", "-", "-", "-"]
    assert "    before: judge: ran npm install" in lines
