"""`history` and `review` list the current directory's project by default, as `sessions` does:
the project a night started there would be for (a subfolder means its repository's root),
with `--project PATH` for another and `--all-projects` for every one; an empty scope says how
many records other projects have. `--json` prints the same scope."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from proposal_testutil import CANDIDATE, NIGHT, SKILL, SKILL_TEXT, make_repo, report, write
from sleep_testutil import Homes

from sleep.cli import main
from sleep import nightstore
from sleep.nightstore import NightRecord
from sleep.index import Index
from sleep.proposals import stage


@pytest.fixture
def projects(tmp_path: Path) -> dict[str, Path]:
    """Three repositories under one folder; nights and proposals for ``a`` and ``b`` only."""
    found = {name: make_repo(tmp_path / "code" / name).resolve() for name in ("a", "b", "c")}
    (found["a"] / "src" / "deep").mkdir(parents=True)
    with Index.open() as index:
        for n, name in enumerate(("a", "b", "b")):
            nightstore.save(index, NightRecord(f"night-{name}-{n}", str(found[name]), f"2026-12-0{n + 1}T03:17:00Z",
                                          outcome="no_improvement"))
    for name in ("a", "b"):
        stage(found[name] / SKILL, CANDIDATE + f"- for {name}\n", report(cycle_id=f"night-{name}-0"), night=NIGHT)
    return found


def listed(capsys, *args: str) -> list[dict]:
    assert main([*args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_history_from_a_subfolder_lists_its_repositorys_nights(projects, capsys, monkeypatch) -> None:
    monkeypatch.chdir(projects["a"] / "src" / "deep")
    assert [n["id"] for n in listed(capsys, "history")] == ["night-a-0"]


def test_review_from_a_subfolder_lists_its_repositorys_proposals(projects, capsys, monkeypatch) -> None:
    monkeypatch.chdir(projects["a"] / "src" / "deep")
    assert [p["project"] for p in listed(capsys, "review")] == [str(projects["a"])]


def test_project_and_all_projects_widen_the_scope(projects, capsys, monkeypatch) -> None:
    monkeypatch.chdir(projects["a"])
    (projects["b"] / "docs").mkdir()
    assert [n["id"] for n in listed(capsys, "history", "--project", str(projects["b"] / "docs"))] == \
        ["night-b-2", "night-b-1"]
    assert len(listed(capsys, "history", "--all-projects")) == 3
    assert [p["project"] for p in listed(capsys, "review", "--project", str(projects["b"]))] == [str(projects["b"])]
    assert len(listed(capsys, "review", "--all-projects")) == 2


def test_an_empty_scope_says_how_many_other_projects_have(projects, capsys, monkeypatch) -> None:
    monkeypatch.chdir(projects["c"])
    assert main(["history"]) == 0
    assert capsys.readouterr().out == (f"No nights yet for {projects['c']}; `--all-projects` lists 3 of other "
                                       "projects.\n")
    assert main(["review"]) == 0
    assert capsys.readouterr().out == (f"No proposals waiting for review for {projects['c']}; `--all-projects` "
                                       "lists 2 of other projects.\n")
    assert listed(capsys, "history") == [] and listed(capsys, "review") == []


def test_a_folder_holding_several_projects_lists_those_below_it(projects, capsys, monkeypatch) -> None:
    monkeypatch.chdir(projects["a"].parent)
    assert len(listed(capsys, "history")) == 3
    assert {p["project"] for p in listed(capsys, "review")} == {str(projects["a"]), str(projects["b"])}


def test_a_users_skill_proposal_belongs_to_the_project_whose_night_staged_it(projects, homes: Homes, capsys,
                                                                           monkeypatch) -> None:
    user_skill = write(homes.claude / "skills" / "tests" / "SKILL.md", SKILL_TEXT)
    p = stage(user_skill, CANDIDATE, report(cycle_id="night-b-1"), night=NIGHT)
    assert p.project is None  # versioned in SkillOpt's own skills repository
    monkeypatch.chdir(projects["b"])
    assert p.id in [q["id"] for q in listed(capsys, "review")]
    monkeypatch.chdir(projects["a"])
    assert p.id not in [q["id"] for q in listed(capsys, "review")]


def test_the_mcp_and_library_listing_keep_their_explicit_scope(projects) -> None:
    """`list_proposals(project=...)` (the MCP tools, status, the dashboard) is the exact work tree, as before."""
    from sleep.proposals import list_proposals

    assert [p.project for p in list_proposals(project=projects["a"])] == [str(projects["a"])]
    assert list_proposals(project=projects["a"].parent) == []
    with Index.open() as index:
        assert [n.id for n in nightstore.nights(index, str(projects["a"]))] == ["night-a-0"]
        assert nightstore.nights(index, str(projects["a"].parent)) == []
