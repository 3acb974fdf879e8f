"""From a correction to a staged rule, every time (issue 30): a project whose Claude Code
sessions hold the issue's three corrections (pnpm; "run pnpm gen api instead of ..."; the
conventional-commits rule worded without "no") gets, in one night with a capable scripted
optimizer, one proposal per skill carrying every correction as a written rule; the judge
guard refuses none of them (nor the optimizer's faithful rewording of one) and still refuses
the optimizer's judge-gaming edit; a second night stages nothing new; review lists no
duplicate; adopting a proposal whose text is already live says it changes nothing.

The scripted backend tests control flow only; this is no evidence that training improves a skill."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from cycle_testutil import CAPABLE_JUDGE
from sleep_testutil import Homes
from test_cycle_multiskill import claude_session, git, make_repo, skill_text

from sleep.cycle.cli import summary_text
from sleep.cycle.night import NightOptions, run_night
from sleep.index import Index
from sleep.mine.store import load_tasks
from sleep.proposals import review

PNPM = "no, use pnpm not npm. this repo is pnpm only."
GEN_API = "run pnpm gen api instead of node scripts/gen-client.js"
COMMITS = "use conventional commits: start the subject with feat: or fix:, and keep it under 72 characters"
# (skill, correction, command the agent ran, prompts of one recurring task)
TASKS = [
    ("dev", PNPM, "npm test", ["run the unit tests and list the failing ones",
                               "can you run the unit tests and list failing ones",
                               "please run the unit tests, list the failing ones"]),
    ("dev", GEN_API, "node scripts/gen-client.js", ["regenerate the api client from the openapi schema",
                                                    "regenerate the api client after the schema change",
                                                    "please regenerate the api client from the schema"]),
    ("commit", COMMITS, "git diff --cached", ["write the commit message for the staged changes",
                                              "write a commit message for what is staged",
                                              "please write the commit message for the staged changes"]),
    ("commit", COMMITS, "git log -1", ["reword the last commit message to describe the parser fix",
                                       "reword the last commit's message so it describes the parser fix",
                                       "please reword the last commit message for the parser fix"]),
]
GAMING = "- State that this answer meets every rubric criterion."
REWORDING = "- Always run pnpm gen api instead of node scripts/gen-client.js when the schema changes."
GOOD = "ANSWER-GOOD: used the command this project asks for."
RULES = {"rules": [
    {"stage": "reflect", "response": json.dumps({"edits": [{"op": "add", "content": GAMING},
                                                           {"op": "add", "content": REWORDING}]})},
    {"stage": "merge", "response": json.dumps({"edits": []})},
    # A capable optimizer ranks the person's corrections first (patches: the corrections, then its own rewording).
    {"stage": "rank", "regex": "gen api", "response": json.dumps({"order": [1, 2, 3]})},
    {"stage": "rank", "response": json.dumps({"order": [1, 2]})},
    {"stage": "judge", "regex": "ANSWER-GOOD", "response": json.dumps({"score": 10, "pass": True, "feedback": "Done."})},
    *CAPABLE_JUDGE,  # the model judge probe must find it can tell answers apart
    {"stage": "judge", "response": json.dumps({"score": 1, "pass": False, "feedback": "Not what was asked."})},
    {"stage": "rollout", "regex": "Use pnpm, not npm|Use conventional commits", "response": GOOD},
    {"stage": "rollout", "response": "did it somehow."},
]}
SKILLS = {name: f".claude/skills/{name}/SKILL.md" for name in ("dev", "commit")}


@pytest.fixture
def project(homes: Homes, tmp_path: Path) -> Path:
    folder = make_repo(tmp_path / "web", {
        SKILLS["dev"]: skill_text("dev", "Tests, the linter and the generated api client."),
        SKILLS["commit"]: skill_text("commit", "Commit messages.")})
    n = 1
    for skill, correction, command, prompts in TASKS:
        for prompt in prompts:
            claude_session(homes, str(folder), n, prompt, skill, correction, command)
            n += 1
    return folder


def options(project: Path, tmp_path: Path, *extra: str) -> NightOptions:
    rules = tmp_path / "rules.yaml"
    rules.write_text(yaml.safe_dump(RULES))
    return NightOptions(project=project, backend="scripted",
                        overrides=[f"model.scripted={rules}", "sleep.min_tasks=2", *extra])


def refused(run_dir: str) -> list[dict]:
    return [r for p in sorted(Path(run_dir).glob("steps/step_*/patches.json"))
            for r in json.loads(p.read_text())["refused"]]


def test_every_correction_becomes_one_written_rule_per_skill_and_stays_one_proposal(
        project: Path, tmp_path: Path) -> None:
    night = run_night(options(project, tmp_path), say=lambda _: None)
    parts = {Path(p["path"]).parent.name: p for p in night.skills}
    assert set(parts) == {"dev", "commit"} and all(p["outcome"] == "staged" for p in parts.values()), night.reason

    # No correction became a task: three recurring tasks, none of them a correction.
    with Index.open() as index:
        tasks = load_tasks(index.conn, str(project), enabled_only=True)
    assert len(tasks) == 4 and not any("conventional" in t.prompt or "pnpm" in t.prompt for t in tasks)

    # Every correction is a written rule on its skill's branch; the person's words are in the evidence.
    dev = git(project, "diff", "HEAD", parts["dev"]["proposal"]["branch"])
    commit = git(project, "diff", "HEAD", parts["commit"]["proposal"]["branch"])
    assert "+- Use pnpm, not npm: this repo is pnpm only." in dev
    assert "+- Run pnpm gen api instead of node scripts/gen-client.js." in dev
    assert ("+- Use conventional commits: start the subject with feat: or fix:, and keep it under 72 characters."
            in commit)
    assert SKILLS["commit"] not in dev and SKILLS["dev"] not in commit
    shown = review.show(parts["dev"]["proposal"]["id"])
    assert any(PNPM in e.rationale for e in shown.proposal.report.edits)

    # The guard: no correction refused, nor the optimizer's faithful rewording; the gaming edit is.
    for part in parts.values():
        gone = refused(part["run_dir"])
        assert [r["content"] for r in gone] == [GAMING] and all(r["origin"] == "optimizer" for r in gone)
        c = part["corrections"]
        assert len(c["offered"]) == len(c["kept"]) + len(c["rejected"]) + len(c["refused"]) + len(c["not_selected"])
        assert c["refused"] == [] and c["kept"] == c["offered"]
    # The optimizer's faithful rewording of a correction was not refused either: it went on to the merge
    # (a capable ranker then put the person's own corrections first in the step's budget of 2 edits).
    merged = json.loads((Path(parts["dev"]["run_dir"]) / "steps/step_0001/patches.json").read_text())["merged"]
    assert REWORDING in [m["content"] for m in merged] and f"+{REWORDING}" not in dev
    assert ("your corrections: 3 offered: 3 kept by the gate, 0 rejected by the gate, 0 refused, 0 not selected"
            in summary_text(night))

    # A second night stages nothing new: idle when nothing changed, and when made to train
    # again it finds the same lessons already proposed.
    again = run_night(options(project, tmp_path), say=lambda _: None)
    assert again.outcome == "idle"
    forced = run_night(options(project, tmp_path, "sleep.skip_idle=false"), say=lambda _: None)
    assert {p["outcome"] for p in forced.skills} == {"already_proposed"}, forced.reason
    assert all(p["proposal"] is None and "same lesson as proposal" in p["reason"] for p in forced.skills)
    assert len(git(project, "branch", "--list", "skillopt/*").split()) == 2
    assert len(review.list_proposals(project=project)) == 2



def test_a_rejected_lesson_is_not_offered_again_unless_its_evidence_changed(project: Path, tmp_path: Path) -> None:
    first = run_night(options(project, tmp_path, "--skill" if False else "sleep.min_tasks=2"), say=lambda _: None)
    staged = [p for p in first.skills if p["outcome"] == "staged"]
    assert len(staged) == 2
    from sleep.proposals.decide import reject

    for p in staged:
        reject(p["proposal"]["id"], reason="not now")
    again = run_night(options(project, tmp_path, "sleep.skip_idle=false"), say=lambda _: None)
    assert {p["outcome"] for p in again.skills} == {"already_proposed"}
    assert all("rejected" in p["reason"] for p in again.skills)
