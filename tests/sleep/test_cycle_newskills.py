"""A new skill per cluster of recurring tasks that no skill serves (issue 33 §4): a project with no
skills whose sessions repeat two kinds of work (running the tests or the linter; changelog entries)
gets two new skills, one per kind, each trained on its own tasks, gated with the paired with/without
evidence and staged as its own proposal branch that adds one SKILL.md; adopt writes it, undo removes it.
The scripted backend tests control flow only: its rule answers well exactly when the prompt holds the
kind's correction ("Use pnpm" / "Use yarn"), with or without a skill around it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sleep_testutil import Homes
from test_cycle_multiskill import TESTS, git, make_repo, options, sessions_of

from sleep.cycle.newskills import clusters, split
from sleep.cycle.night import run_night
from sleep.cycle.skills import MANAGED_NAME, SkillChoice
from sleep.cycle.triggers import front_matter
from sleep.proposals import adopt, get
from sleep.proposals.undo import undo

DOCS = ("changelog", "no, use yarn not npm for the release scripts",
        [["add a changelog entry for the csv export", "add a changelog entry for the new csv export",
          "please add a changelog entry for csv export"],
         ["add a changelog entry for the pdf import", "add a changelog entry about the pdf import",
          "can you add a changelog entry for pdf import"]])


def project_of_two_kinds(homes: Homes, tmp_path: Path) -> Path:
    project = make_repo(tmp_path / "tiny", {"README.md": "# tiny\n"})
    n = sessions_of(homes, str(project), TESTS, 1, skill=False)
    sessions_of(homes, str(project), DOCS, n, skill=False)
    return project


def test_each_kind_of_unserved_work_gets_its_own_gated_new_skill(homes: Homes, tmp_path: Path) -> None:
    project = project_of_two_kinds(homes, tmp_path)
    night = run_night(options(project, tmp_path, "sleep.paired.min_instances=4", "sleep.min_tasks=2"),
                      say=lambda _: None)
    parts = {p["name"]: p for p in night.skills}
    assert len(parts) == 2 and MANAGED_NAME not in parts, list(parts)
    by_kind = {("pnpm" if "test" in name or "linter" in name or "run" in name else "yarn"): p
               for name, p in parts.items()}
    assert set(by_kind) == {"pnpm", "yarn"}, list(parts)
    for correction, part in by_kind.items():
        assert part["managed"] and part["outcome"] == "staged", part["reason"]
        assert part["tasks"]["recurring"] == 2 and part["tasks"]["total"] == 6
        paired = part["paired"]
        assert paired["kind"] == "create" and paired["verdict"] and paired["n_items"] == 6 and paired["losses"] == 6
        rel = str(Path(part["path"]).relative_to(project))
        assert rel.startswith(".claude/skills/skillopt-") and rel.endswith("/SKILL.md")
        branch = part["proposal"]["branch"]
        assert git(project, "diff", "--name-status", "HEAD", branch).split() == ["A", rel]
        text = git(project, "show", f"{branch}:{rel}")
        assert f"Use {correction}" in text and front_matter(text)["name"] == part["name"]
        assert front_matter(text)["description"].startswith("What SkillOpt-Sleep learned from your recurring")
        report = get(part["proposal"]["id"]).report
        assert report.kind == "create" and report.paired["n_items"] == 6 and report.paired["mean_b"] == 0.0
    assert not any((project / ".claude").glob("skills/*/SKILL.md"))  # nothing written before review
    # each proposal adopts and undoes exactly: one file added, then gone
    for part in by_kind.values():
        path = Path(part["path"])
        adopt(part["proposal"]["id"])
        assert path.is_file() and "description:" in path.read_text()
        undo(part["proposal"]["id"])
        assert not path.exists()
    assert git(project, "status", "--porcelain") == ""


def test_one_kind_of_unserved_work_stays_with_the_managed_skill(homes: Homes, tmp_path: Path) -> None:
    project = make_repo(tmp_path / "tiny", {"README.md": "# tiny\n"})
    sessions_of(homes, str(project), TESTS, 1, skill=False)
    night = run_night(options(project, tmp_path, "sleep.paired.min_instances=4", "sleep.min_tasks=2"),
                      say=lambda _: None)
    assert [p["name"] for p in night.skills] == [MANAGED_NAME]


@dataclass
class Rec:
    id: str
    intent: str
    prompt: str = ""


def test_clusters_follow_shared_words_and_small_clusters_stay_with_the_managed_skill(tmp_path: Path) -> None:
    records = [Rec("a", "run the unit tests and list the failing ones"), Rec("b", "run the linter and list problems"),
               Rec("c", "add a changelog entry for the csv export"), Rec("d", "add a changelog entry for pdf import"),
               Rec("e", "add a changelog entry for the json export"), Rec("f", "explain the regex in slug.ts")]
    found = clusters(records)
    assert [sorted(r.id for r in c) for c in found] == [["c", "d", "e"], ["a", "b"], ["f"]]
    managed = SkillChoice(tmp_path / ".claude/skills" / MANAGED_NAME / "SKILL.md", MANAGED_NAME, "claude-code", True,
                          0, "none fits")
    new, left = split(tmp_path, records, managed, 2)
    assert [sorted(r.id for r in c) for _, c in new] == [["c", "d", "e"], ["a", "b"]] and [r.id for r in left] == ["f"]
    names = [c.name for c, _ in new]
    assert names[0].startswith("skillopt-") and "changelog" in names[0] and len(set(names)) == 2
    assert all(c.managed and c.description and "<" not in c.description for c, _ in new)
    assert new[0][0].seed_text().startswith(f"---\nname: {names[0]}\ndescription: What SkillOpt-Sleep learned")
    # an existing skill (not the managed one to create) is never split; one big cluster is not split either
    existing = SkillChoice(tmp_path / "x/SKILL.md", "x", "claude-code", False, 3, "invoked")
    assert split(tmp_path, records, existing, 2) == ([], records)
    assert split(tmp_path, records, managed, 3)[0] == []
