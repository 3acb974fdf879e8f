"""The morning review through the real server over stdio, on a scratch git
repository: list, show, adopt and reject proposals, the proposal resource and
the morning-review prompt. Whole results are compared."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

from mcp_testutil import call, call_error, connect
from proposal_testutil import CANDIDATE, SKILL, SKILL_TEXT, git, make_repo, report, snapshot

from sleep.proposals import stage

NIGHT = date(2026, 12, 1)
LINT = ".claude/skills/lint/SKILL.md"
LINT_TEXT = "---\nname: lint\ndescription: How to lint.\n---\n\n# Lint\n\n- Run `ruff check .`.\n"


def _two_proposals(tmp_path: Path):
    repo = make_repo(tmp_path / "app", {SKILL: SKILL_TEXT, LINT: LINT_TEXT, "README.md": "# app\n"})
    tests = stage(repo / SKILL, CANDIDATE, report(), night=NIGHT)
    lint = stage(repo / LINT, LINT_TEXT + "- Fix with `ruff check --fix .`.\n", report(), night=NIGHT)
    return repo, tests, lint


def _summary(p, **changes) -> dict:
    base = {"id": p.id, "state": "pending", "stale_reason": None, "skill_name": p.skill_name,
            "skill_path": p.skill_path, "project": p.project, "branch": p.branch, "night": "2026-12-01",
            "created_at": p.created_at, "baseline_val": 0.5, "candidate_val": 0.75, "n_edits": 1,
            "decided_at": None, "reason": None}
    return {**base, **changes}


async def test_list_proposals_with_no_arguments_lists_pending_ones(tmp_path: Path) -> None:
    repo, tests, lint = _two_proposals(tmp_path)
    async with connect(cwd=tmp_path) as client:
        listed = await call(client, "list_proposals")
    assert listed == {"proposals": [_summary(tests), _summary(lint)], "message": "2 proposals, 2 pending review."}


async def test_list_proposals_of_a_configured_project_only(tmp_path: Path) -> None:
    repo, tests, lint = _two_proposals(tmp_path)
    other = make_repo(tmp_path / "other")
    async with connect("--project", str(other), cwd=tmp_path) as client:
        mine = await call(client, "list_proposals")
        named = await call_error(client, "list_proposals", {"project": str(repo)})
    async with connect(cwd=tmp_path) as client:
        unscoped = await call(client, "list_proposals", {"project": str(repo)})
    assert mine == {"proposals": [], "message": "0 proposals, 0 pending review."}
    assert named == (f"Error executing tool list_proposals: project {str(repo)!r} is outside this server's "
                     f"projects ({other}); start a server with --project for it.")
    assert [p["id"] for p in unscoped["proposals"]] == [tests.id, lint.id]


async def test_show_proposal_gives_the_report_and_the_staged_diff(tmp_path: Path) -> None:
    repo, tests, _ = _two_proposals(tmp_path)
    async with connect(cwd=tmp_path) as client:
        shown = await call(client, "show_proposal", {"proposal": tests.id})
    blob_before = git(repo, "rev-parse", f"{tests.parent}:{SKILL}")[:7]
    blob_after = git(repo, "rev-parse", f"{tests.commit}:{SKILL}")[:7]
    assert shown["diff"] == (
        f"diff --git a/{SKILL} b/{SKILL}\nindex {blob_before}..{blob_after} 100644\n--- a/{SKILL}\n+++ b/{SKILL}\n"
        "@@ -6,3 +6,4 @@ description: How to run this project's tests.\n # Tests\n \n"
        " - Run `pytest -q` from the repository root.\n+- Run `ruff check .` before the tests.")
    assert shown["proposal"] == _summary(tests)
    assert shown["branch_tip"] == tests.commit
    assert shown["report"]["task_deltas"] == {"task-ws-reconnect": 1.0, "task-lint": 0.0}
    assert shown["report_text"].startswith(f"Proposal {tests.id} · pending\n")


async def test_adopt_proposal_deletes_the_branch_by_default(tmp_path: Path) -> None:
    repo, tests, _ = _two_proposals(tmp_path)
    async with connect(cwd=tmp_path) as client:
        decided = await call(client, "adopt_proposal", {"proposal": tests.id})
    assert decided["branch_deleted"] == tests.branch
    assert git(repo, "branch", "--list", tests.branch) == ""


async def test_adopt_proposal_writes_the_live_file_and_says_what_changed(tmp_path: Path) -> None:
    repo, tests, _ = _two_proposals(tmp_path)
    before = snapshot(repo)
    async with connect(cwd=tmp_path) as client:
        decided = await call(client, "adopt_proposal", {"proposal": tests.id, "delete_branch": False})
    after = snapshot(repo)
    assert (repo / SKILL).read_text() == CANDIDATE
    assert (after.head, after.index, after.other_refs) == (before.head, before.index, before.other_refs)
    assert decided == {
        "proposal": _summary(tests, state="adopted", decided_at=decided["proposal"]["decided_at"]),
        "action": "adopted", "wrote_file": str(repo / SKILL), "commit": None, "branch_deleted": None,
        "messages": [],
        "changed": [f"wrote the candidate's text to {repo / SKILL}",
                    f"recorded proposal {tests.id} as adopted in the index"],
    }


async def test_adopt_proposal_with_commit_and_branch_deletion(tmp_path: Path) -> None:
    repo, tests, _ = _two_proposals(tmp_path)
    env = {"GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.invalid",
           "GIT_COMMITTER_NAME": "T", "GIT_COMMITTER_EMAIL": "t@example.invalid"}
    async with connect(cwd=tmp_path, env=env) as client:
        decided = await call(client, "adopt_proposal", {"proposal": tests.id, "commit": True, "delete_branch": True})
    head = git(repo, "rev-parse", "HEAD")
    assert decided["commit"] == head and decided["branch_deleted"] == tests.branch
    assert decided["changed"] == [f"wrote the candidate's text to {repo / SKILL}",
                                  f"committed {SKILL} as {head[:12]} on the current branch of {repo}",
                                  f"deleted the branch {tests.branch} in {repo}",
                                  f"recorded proposal {tests.id} as adopted in the index"]
    assert git(repo, "branch", "--list", tests.branch) == ""


async def test_reject_proposal_deletes_the_branch_and_keeps_the_record(tmp_path: Path) -> None:
    repo, tests, lint = _two_proposals(tmp_path)
    async with connect(cwd=tmp_path) as client:
        decided = await call(client, "reject_proposal", {"proposal": lint.id, "reason": "not needed"})
        listed = await call(client, "list_proposals", {"include_decided": True})
    assert decided == {
        "proposal": _summary(lint, state="rejected", decided_at=decided["proposal"]["decided_at"],
                             reason="not needed"),
        "action": "rejected", "wrote_file": None, "commit": None, "branch_deleted": lint.branch,
        "messages": [f"deleted the branch {lint.branch}."],
        "changed": [f"deleted the branch {lint.branch} in {repo}",
                    f"recorded proposal {lint.id} as rejected in the index (reason: not needed)"],
    }
    assert (repo / LINT).read_text() == LINT_TEXT
    assert git(repo, "branch", "--list", lint.branch) == ""
    assert [(p["id"], p["state"]) for p in listed["proposals"]] == [(tests.id, "pending"), (lint.id, "rejected")]


async def test_adopting_twice_is_a_tool_error_that_changes_nothing(tmp_path: Path) -> None:
    repo, tests, _ = _two_proposals(tmp_path)
    async with connect(cwd=tmp_path) as client:
        await call(client, "adopt_proposal", {"proposal": tests.id})
        message = await call_error(client, "adopt_proposal", {"proposal": tests.id})
    assert message.startswith(f"Error executing tool adopt_proposal: proposal {tests.id} was already adopted on ")
    assert message.endswith("; nothing to do.")


async def test_adopt_of_a_stale_proposal_is_refused_with_the_reason(tmp_path: Path) -> None:
    repo, tests, _ = _two_proposals(tmp_path)
    (repo / SKILL).write_text(SKILL_TEXT + "- my own edit\n")
    async with connect(cwd=tmp_path) as client:
        listed = await call(client, "list_proposals")
        message = await call_error(client, "adopt_proposal", {"proposal": tests.id})
    assert listed["proposals"][0]["state"] == "stale"
    assert "changed since the night" in listed["proposals"][0]["stale_reason"]
    assert "Error executing tool adopt_proposal: " in message and "changed" in message
    assert (repo / SKILL).read_text() == SKILL_TEXT + "- my own edit\n"


async def test_proposal_resource_and_morning_review_prompt(tmp_path: Path) -> None:
    _, tests, _ = _two_proposals(tmp_path)
    async with connect(cwd=tmp_path) as client:
        resource = await client.read_resource(f"skillopt://proposals/{tests.id}")
        prompt = await client.get_prompt("morning-review", {"project": "/work/app"})
    data = json.loads(resource.contents[0].text)
    assert (data["id"], data["branch"], data["state"]) == (tests.id, tests.branch, "pending")
    assert "+- Run `ruff check .` before the tests." in data["diff"]
    text = prompt.messages[0].content.text
    assert "list_proposals with project='/work/app'" in text
    assert "Do not adopt or reject anything until I have answered for that proposal." in text


async def test_list_proposals_with_decided_ones_includes_an_undone_proposal(tmp_path: Path) -> None:
    from sleep.proposals import adopt
    from sleep.proposals.undo import undo

    repo, tests, lint = _two_proposals(tmp_path)
    adopt(tests.id)
    undo(tests.id)
    async with connect(cwd=tmp_path) as client:
        listed = await call(client, "list_proposals", {"include_decided": True})
    states = {p["id"]: p["state"] for p in listed["proposals"]}
    assert states == {tests.id: "undone", lint.id: "pending"}
    assert listed["message"] == "2 proposals, 1 pending review."
    async with connect(cwd=tmp_path) as client:
        pending = await call(client, "list_proposals")
    assert pending["message"] == "1 proposal, 1 pending review."  # not "1 proposals"
