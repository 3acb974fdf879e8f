"""``skillopt-sleep run`` prints the night's lines (which quote project paths, skills, tasks and
replies) verbatim: no rich markup (``[/docs]``, ``[/INST]``), no emoji codes (``root:x:0:0``)."""

from __future__ import annotations

from pathlib import Path

from sleep_testutil import Homes
from test_cycle_night import options

from sleep.cli import main
from sleep.cycle.demo import install_transcripts, make_project

TRICKY = "Read [docs] first [/INST] root:x:0:0 :cross_mark:"


def test_a_night_prints_a_project_path_with_markup_and_emoji_codes_as_it_is(homes: Homes, tmp_path: Path,
                                                                              capsys) -> None:
    project = make_project(tmp_path / TRICKY / "[/docs]")
    install_transcripts(homes.home, project)
    opts = options(project, tmp_path)
    code = main(["run", "--project", str(project), "--backend", "scripted", "--skill", str(opts.skill),
                 *(f"--set={o}" for o in opts.overrides)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert f"{project}/.claude/skills/ledger-dev/SKILL.md" in out  # the [Tasks] line names the skill file
    assert "❌" not in out and "Night " in out
