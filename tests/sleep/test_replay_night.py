"""A night that replays real work: the fake `claude` / `codex` / `copilot` (tests/sleep/replay_fakes.py,
documented streaming formats) act in sandboxed checkouts according to the skill, the
outcome judges read what they ran, and the proposal that adds the person's "pnpm not
npm" correction is staged. The scripted backend (optimizer, judge) tests control flow
only; this is no evidence that training improves a skill."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import replay_fakes
import yaml
from cycle_testutil import CAPABLE_JUDGE
from sleep_testutil import Homes

from sleep.cli import main
from sleep.cycle.demo import install_transcripts, make_project
from sleep.nightstore import nights
from sleep.index import Index
from sleep.replay.sandbox import sandbox_available

pytestmark = pytest.mark.skipif(not sandbox_available()[0], reason=f"no bubblewrap sandbox: {sandbox_available()[1]}")

# The optimizer proposes nothing (the correction is the candidate edit); the rubric judge passes every
# answer, so the outcome judges (ran pnpm, not_ran npm) decide.
RULES = {"rules": [
    {"stage": "reflect", "response": json.dumps({"edits": []})},
    {"stage": "merge", "response": json.dumps({"edits": []})},
    {"stage": "rank", "response": json.dumps({"order": [1, 2, 3]})},
    *CAPABLE_JUDGE,  # the model judge probe must find it can tell answers apart
    {"stage": "judge", "response": json.dumps({"score": 8, "pass": True, "feedback": "Fine."})},
]}


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout


def state(repo: Path) -> tuple:
    files = sorted((p.relative_to(repo).as_posix(), p.read_bytes()) for p in repo.rglob("*")
                   if p.is_file() and ".git" not in p.relative_to(repo).parts)
    return (git(repo, "rev-parse", "HEAD"), git(repo, "symbolic-ref", "HEAD"), (repo / ".git/index").read_bytes(),
            git(repo, "status", "--porcelain=v2"), git(repo, "stash", "list"), files)


@pytest.fixture
def project(homes: Homes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = make_project(tmp_path / "tiny-ledger")
    install_transcripts(homes.home, folder)
    (folder / "notes.txt").write_text("the person's own uncommitted work\n")
    (folder / "CHANGELOG.md").write_text("# Changelog\n\n## Unreleased\n- typing this right now\n")
    git(folder, "stash", "push", "-q", "-m", "person's stash", "--", "CHANGELOG.md")
    replay_fakes.on_path(monkeypatch, replay_fakes.install(tmp_path / "bin"))
    return folder


def run(project: Path, tmp_path: Path, capsys, target: str, *extra: str) -> dict:
    rules = tmp_path / "rules.yaml"
    rules.write_text(yaml.safe_dump(RULES))
    code = main(["run", "--project", str(project), "--skill", str(project / ".claude/skills/ledger-dev/SKILL.md"),
                 "--backend", "scripted", "--set", f"model.scripted={rules}",
                 "--set", f"sleep.target_backend={target}", "--json", *extra])
    out = capsys.readouterr().out
    assert code == 0, out
    return json.loads(out)


def rollouts(run_dir: Path) -> list[dict]:
    found = []
    for path in sorted(run_dir.rglob("rollouts*.json")):
        data = json.loads(path.read_text())
        found += data if isinstance(data, list) else data.get("results", data.get("rollouts", []))
    return found


@pytest.mark.parametrize("target", ["claude-code", "codex", "copilot"])
def test_an_acting_night_stages_the_correction_judged_by_commands(project: Path, tmp_path: Path, capsys,
                                                                  target: str) -> None:
    before = state(project)
    night = run(project, tmp_path, capsys, target)
    assert night["replay"]["mode"] == "actions" and night["replay"]["sandbox"] == "bubblewrap"
    assert night["outcome"] == "staged", night["reason"]
    assert state(project) == before
    diff = git(project, "diff", "HEAD", night["proposal"]["branch"])
    assert "+- Use pnpm, not npm in this repo." in diff
    commands = [c["command"] for r in rollouts(Path(night["run_dir"])) for c in
                [s for s in (r.get("trajectory") or {}).get("steps", []) if s["kind"] == "command"]]
    assert any("npm install" in c and "pnpm" not in c for c in commands)  # before: the seed skill
    assert any("pnpm install" in c for c in commands)  # after: the skill with the correction
    with Index.open() as index:
        assert nights(index, str(project))[0].replay["mode"] == "actions"
    evidence = json.loads(Path(night["replay"]["evidence"]).read_text())
    assert {e["task"] for e in evidence} == set(night["tasks"]["val"])
    moved = [e for e in evidence if e["before"] and e["after"] and not e["before"]["passed"] and e["after"]["passed"]]
    assert moved, evidence
    assert [c["command"] for c in moved[0]["before"]["commands"]] == [c for c in commands if "npm install" in c][:1]
    assert any("pnpm install" in c["command"] for c in moved[0]["after"]["commands"])
    assert main(["show", night["proposal"]["id"]]) == 0
    shown = capsys.readouterr().out.splitlines()
    head = next(n for n, line in enumerate(shown) if line.startswith("Evidence per val instance"))
    assert shown[head + 1].split() == ["TASK", "SIDE", "VERDICT", "COMMANDS", "RUN", "FILES", "CHANGED", "CHECK"]
    row = next(n for n, line in enumerate(shown) if line.split()[:2] == [moved[0]["task"], "before"])
    assert shown[row].split()[2] == "fail" and "npm install" in shown[row] and "pnpm" not in shown[row]
    assert "package-lock.json (added)" in shown[row]
    assert shown[row + 1].split()[:2] == ["after", "pass"] and "pnpm install" in shown[row + 1]
    assert "pnpm-lock.yaml (added)" in shown[row + 1] and "package-lock" not in shown[row + 1]


def test_a_read_only_night_says_so_and_judges_text(project: Path, tmp_path: Path, capsys) -> None:
    night = run(project, tmp_path, capsys, "claude-code", "--set", "sleep.replay=read_only", "--dry-run")
    assert night["replay"]["mode"] == "read_only" and "read_only" in night["replay"]["why"]


def test_evidence_notes_say_what_each_side_did() -> None:
    from sleep.replay.evidence import notes

    acted = {"commands": [{"command": "npm install", "exit_code": 0, "denied": False},
                          {"command": "curl x", "exit_code": None, "denied": True}],
             "files": [{"path": "package-lock.json", "change": "added"}], "checks": [], "passed": False}
    after = {"commands": [{"command": "pnpm install", "exit_code": 0, "denied": False}], "files": [],
             "checks": [{"command": "pnpm test", "passed": True, "exit_code": 0}], "passed": True}
    lines = notes([{"task": "t1-ab", "before": acted, "after": after},
                   {"task": "t2-cd", "before": {"answer": "x", "passed": False}, "after": None}])
    assert lines[0] == ("val t1-ab: before ran `npm install`; 1 denied; 1 file(s) changed (fail) → "
                        "after ran `pnpm install`; checks passed (pass)")
    assert lines[1] == "val t2-cd: before answered (fail) → after not replayed"


def _side_html(page: str, n: int, name: str) -> str:
    block = page.split(f'id="ev-{n}"', 1)[1].split('<div class="evidence', 1)[0]
    return block.split(f'<div class="ev-side {name}">', 1)[1].split('<div class="ev-side', 1)[0]


async def _show_proposal(pid: str, cwd: Path) -> dict:
    from mcp_testutil import call, connect

    async with connect(cwd=cwd) as mcp:
        return await call(mcp, "show_proposal", {"proposal": pid})


def test_the_dashboard_and_show_proposal_show_the_nights_evidence(project: Path, tmp_path: Path, capsys) -> None:
    """A real acting night; its proposal's page shows, per val instance, before and after side by side
    (commands, files, check, verdict), and the MCP tool returns the same records structured."""
    import asyncio

    from starlette.testclient import TestClient

    from sleep.ui.app import create_app
    from sleep.ui.guard import Policy

    night = run(project, tmp_path, capsys, "claude-code")
    assert night["outcome"] == "staged", night["reason"]
    records = json.loads(Path(night["replay"]["evidence"]).read_text())
    pid = night["proposal"]["id"]
    dashboard = TestClient(create_app([tmp_path / "outputs"], data_dir=None,
                                      policy=Policy(extra_hosts=("testserver",))), follow_redirects=False)
    assert dashboard.get(f"/?token={dashboard.app.state.ui.policy.token}").status_code == 303  # signed in
    page = dashboard.get(f"/proposals/{pid}").text
    assert '<section id="evidence">' in page and f"{len(records)} val instance" in page
    assert page.index("<h2>Decide</h2>") < page.index('id="evidence"')  # decide first, the evidence below
    for n, record in enumerate(records, 1):
        assert f"<code>{record['task']}</code>" in page.split(f'id="ev-{n}"', 1)[1][:400]
        for name in ("before", "after"):
            side, html = record[name], _side_html(page, n, name)
            assert f"judge: <strong>{'pass' if side['passed'] else 'fail'}</strong>" in html
            for c in side["commands"]:
                assert f"<code>{c['command']}</code>" in html
            for f in side["files"]:
                assert f"<code>{f['path']}</code> <span class=\"sub\">{f['change']}</span>" in html
            assert ("none run" in html) == (not side["checks"])
    moved = next(n for n, r in enumerate(records, 1) if not r["before"]["passed"] and r["after"]["passed"])
    assert 'class="evidence better"' in page and "fail → pass" in page
    assert "<code>npm install</code>" in _side_html(page, moved, "before")
    assert "<code>pnpm install</code>" in _side_html(page, moved, "after")
    assert "package-lock.json" not in _side_html(page, moved, "after")

    with capsys.disabled():  # the stdio client hands the server a real stderr
        shown = asyncio.run(_show_proposal(pid, tmp_path))
    assert [e["task"] for e in shown["evidence"]] == [r["task"] for r in records]
    got = shown["evidence"][moved - 1]
    want = records[moved - 1]
    for name in ("before", "after"):
        assert got[name]["commands"] == want[name]["commands"] and got[name]["files"] == want[name]["files"]
        assert got[name]["passed"] is want[name]["passed"] and got[name]["replayed"] and got[name]["acted"]
    assert "Evidence per val instance" in shown["report_text"]
