"""The dashboard's proposal page for the kinds a night may stage besides line edits (issue 33 §5):
a package proposal shows each changed file's diff under its path; a retire proposal says it deletes
the skill and shows the paired with/without evidence; a description proposal shows the trigger
figures before and after."""

from __future__ import annotations

from pathlib import Path

from proposal_testutil import NIGHT, SKILL, SKILL_TEXT, make_repo, report
from ui_testutil import client

from sleep.proposals import stage

FOLDER = SKILL.rsplit("/", 1)[0]
PAIRED = {"n_items": 10, "diff": 0.0, "ci_low": 0.0, "ci_high": 0.0, "wins": 0, "losses": 0, "ties": 10,
          "summary": "without it - with the skill: +0.000 (95% CI +0.000 .. +0.000) over 10 items"}
TRIGGERS = {"before": {"train": {}, "test": {"recall": 0.0, "precision": None}},
            "after": {"train": {}, "test": {"recall": 1.0, "precision": 1.0}}, "n_queries": {"train": 6, "test": 6}}


def page(tmp_path: Path, p) -> str:
    return client([tmp_path / "outputs"]).get(f"/proposals/{p.id}").text


def test_a_package_proposal_shows_each_file(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "app")
    p = stage(repo / SKILL, SKILL_TEXT + "- Run `scripts/check.sh`.\n", report(edits=[]), night=NIGHT,
              files={"scripts/check.sh": b"#!/bin/sh\npnpm test\n", "references/api.md": b"# API\n"},
              modes={"scripts/check.sh": "100755"})
    html = page(tmp_path, p)
    assert "the skill package" in html
    for path in (SKILL, f"{FOLDER}/scripts/check.sh", f"{FOLDER}/references/api.md"):
        assert f'<h3 class="diff-file"><code>{path}</code></h3>' in html
    assert "pnpm test" in html and 'id="diff-3"' in html


def test_a_retire_proposal_shows_its_paired_evidence(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "app")
    p = stage(repo / SKILL, None, report(kind="retire", paired=PAIRED, edits=[]), night=NIGHT)
    html = page(tmp_path, p)
    assert "retire the skill" in html and "over 10 items" in html.split('id="paired">', 1)[1]


def test_a_description_proposal_shows_the_trigger_figures(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "app")
    p = stage(repo / SKILL, SKILL_TEXT.replace("How to run this project's tests.", "Run the tests."),
              report(kind="description", triggers=TRIGGERS, edits=[]), night=NIGHT)
    html = page(tmp_path, p)
    figures = html.split('id="triggers">', 1)[1].split("</td>", 1)[0]
    assert "6 prompts" in figures and "recall 0.000 → 1.000, precision – → 1.000" in figures, figures
