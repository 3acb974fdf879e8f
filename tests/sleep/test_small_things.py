"""Small things people notice (issue 23 §5): --version, doctor, config, help texts,
plurals, a skill that is not UTF-8 or has bad front matter, the advice after a stopped
night, and `integrate` defaults."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sleep_testutil import Homes

from skillopt_core import prepare_training
from skillopt_core.cli.console import ConsoleRenderer, plain_console
from skillopt_core.cli.main import main as skillopt_main
from skillopt_core.run import events as ev
from skillopt_core.skill.document import SkillParseError
from sleep.cli import main
from sleep.cycle.advice import night_message
from sleep.cycle.skills import SkillChoice, SkillPathError


def test_both_commands_print_their_version(capsys) -> None:
    for entry, prog in ((main, "skillopt-sleep"), (skillopt_main, "skillopt")):
        with pytest.raises(SystemExit) as done:
            entry(["--version"])
        assert done.value.code == 0
        out = capsys.readouterr().out
        assert out.startswith(f"{prog} ") and out.strip() != prog


def test_doctor_reports_each_check_and_fails_on_a_broken_backend(homes: Homes, tmp_path: Path, capsys) -> None:
    assert main(["doctor", "--json"]) == 0
    names = {c["name"]: c for c in json.loads(capsys.readouterr().out)}
    for name in ("data directory", "index", "night backends", "local model", "host claude-code", "sandbox",
                 "scheduler"):
        assert name in names
    assert names["data directory"]["status"] == "ok" and str(homes.skillopt) in names["data directory"]["detail"]
    homes.skillopt.mkdir(parents=True, exist_ok=True)
    (homes.skillopt / "sleep.yaml").write_text("model:\n  backend: nosuch\n")
    assert main(["doctor"]) == 1
    out = capsys.readouterr().out
    assert "FAIL  night backends" in out and "nosuch" in out


def test_config_prints_each_setting_and_where_it_came_from(homes: Homes, capsys) -> None:
    homes.skillopt.mkdir(parents=True, exist_ok=True)
    (homes.skillopt / "sleep.yaml").write_text("sleep:\n  min_support: 3\n")
    assert main(["config", "--set", "budget.max_calls=50", "--json"]) == 0
    rows = {r["key"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["sleep.min_support"]["value"] == 3 and rows["sleep.min_support"]["from"].endswith("sleep.yaml")
    assert rows["budget.max_calls"] == {"key": "budget.max_calls", "value": 50, "from": "--set budget.max_calls=50"}
    assert rows["sleep.min_tasks"]["from"].startswith("night default")
    assert rows["model.temperature"]["from"] == "core default"
    assert main(["config", "--changed"]) == 0
    out = capsys.readouterr().out
    assert "sleep.min_support" in out and "sleep.min_tasks" not in out


@pytest.mark.parametrize("argv, text", [
    (["history", "--help"], "at most the N latest nights"),
    (["sessions", "--help"], "only sessions of this host"),
    (["integrate", "codex", "--help"], "Register the skillopt-sleep MCP server with Codex"),
    (["integrate", "copilot", "--help"], "Register the skillopt-sleep MCP server with VS Code"),
])
def test_commands_and_flags_say_what_they_do(argv: list[str], text: str, capsys) -> None:
    with pytest.raises(SystemExit):
        main(argv)
    assert text in " ".join(capsys.readouterr().out.split())


def test_train_and_eval_have_descriptions(capsys) -> None:
    for sub, text in (("train", "Train a skill"), ("eval", "Evaluate one skill file")):
        with pytest.raises(SystemExit):
            skillopt_main([sub, "--help"])
        assert text in capsys.readouterr().out


def test_one_step_is_singular(capsys) -> None:
    ConsoleRenderer(plain_console())(ev.RunEnd(run_dir="", status="completed", best_val=0.5, initial_test=None,
                                               best_test=None, steps_done=1))
    assert "after 1 step." in capsys.readouterr().out


def test_one_changed_hunk_is_singular() -> None:
    from proposal_testutil import report

    from sleep.proposals.message import commit_message

    text = commit_message("tests", report(source="candidate", edits=[]), "abcd1234", 1)
    assert "1 changed hunk" in text and "1 changed hunks" not in text


def test_a_chosen_skill_that_is_not_utf8_names_its_path(tmp_path: Path) -> None:
    path = tmp_path / ".claude/skills/dev/SKILL.md"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"---\nname: dev\ndescription: d\n---\ncaf\xe9\n")
    with pytest.raises(SkillPathError, match=f"{path}.*not UTF-8"):
        SkillChoice(path, "dev", "claude-code", False, 1, "").seed_text()


def test_bad_front_matter_is_reported_with_the_skill_path_and_line(tmp_path: Path) -> None:
    path = tmp_path / ".claude/skills/dev/SKILL.md"
    path.parent.mkdir(parents=True)
    path.write_text("---\nname: dev\ndescription: [unclosed\n---\nbody\n")
    with pytest.raises(SkillPathError, match=rf"{path}:\d+: front matter"):
        SkillChoice(path, "dev", "claude-code", False, 1, "").seed_text()


def test_a_bad_seed_skill_leaves_no_half_made_run_directory(tmp_path: Path) -> None:
    from skillopt_core import Task, load_settings

    seed = tmp_path / "SKILL.md"
    seed.write_bytes(b"caf\xe9\n")
    settings = load_settings(None, [f"output.root={tmp_path / 'out'}", "model.backend=scripted"])
    tasks = [Task(id=f"t{i}", prompt="p") for i in range(3)]
    with pytest.raises(SkillParseError, match="not UTF-8"):
        prepare_training(settings, tasks=tasks, seed_skill=seed)
    assert not (tmp_path / "out").exists() or list((tmp_path / "out").rglob("*")) == []


def test_a_stopped_night_says_to_run_the_night_again_not_to_resume_training() -> None:
    core = ("no rule matched. The run stopped cleanly before its first step finished; fix the cause, then "
            "resume: `skillopt train --resume /data/nights/jsonl_tasks/n1`.")
    text = night_message("failed", core)
    assert "skillopt train --resume" not in text and "`skillopt-sleep run` again" in text
    assert "nothing was staged" in text and text.startswith("no rule matched.")


def test_integrate_codex_defaults_to_the_clones_skill(homes: Homes, tmp_path: Path, capsys) -> None:
    from sleep.integrations.cli import default_codex_skill

    assert default_codex_skill() is not None  # this test runs from the clone
    code = main(["integrate", "codex", "--codex-home", str(homes.codex), "--no-codex-cli",
                 "--command", "/usr/bin/true"])
    assert code == 0, capsys.readouterr().err
    assert (homes.home / ".agents" / "skills" / "skillopt-sleep" / "SKILL.md").is_file()


def test_the_copilot_hand_edit_hint_names_the_real_command(tmp_path: Path) -> None:
    from sleep.integrations import copilot

    user = tmp_path / "Code" / "User"
    user.mkdir(parents=True)
    (user / "mcp.json").write_text('{"servers": {}, // a comment\n}')
    with pytest.raises(copilot.CopilotConfigError) as err:
        copilot.check(copilot.vscode_target(user), "/opt/bin/skillopt-sleep")
    assert "/opt/bin/skillopt-sleep" in str(err.value) and "/path/to/" not in str(err.value)


def test_history_shows_each_nights_cost(tmp_path: Path, capsys) -> None:
    from sleep import nightstore
    from sleep.nightstore import NightRecord
    from sleep.index import Index

    with Index.open() as index:
        nightstore.save(index, NightRecord("n1", str(tmp_path), "2026-12-01T03:17:00Z", outcome="no_improvement",
                                      finished_at="2026-12-01T03:20:00Z",
                                      usage={"model_calls": 40, "tokens": 9000, "cost_usd": 0.4213}))
    assert main(["history", "--project", str(tmp_path)]) == 0
    header, row = capsys.readouterr().out.splitlines()[1:3]
    assert header.split()[-1] == "COST" and row.split()[-1] == "$0.42"


def test_a_night_outside_a_terminal_prints_progress_with_estimates() -> None:
    from sleep.cycle.progress import PlainProgress

    said: list[str] = []
    now = [0.0]
    progress = PlainProgress(said.append, clock=lambda: now[0])
    progress(ev.RunStarted("jsonl_tasks", "/r", 2, {"train": 4, "val": 4, "test": 0}, {}))
    progress(ev.StepStarted(1, 2, 1))
    progress(ev.RolloutStarted(1, 2, "train", 8, 2, "train"))
    for done in range(1, 9):
        now[0] += 5.0
        progress(ev.RolloutProgress(1, "train", done, 8, "train"))
    assert said == ["[Progress] train: 2/8 in 10 s, about 30 s left", "[Progress] train: 4/8 in 20 s, about 20 s left",
                    "[Progress] train: 6/8 in 30 s, about 10 s left", "[Progress] train: 8/8 in 40 s"]
    now[0] += 20.0
    progress(ev.StepStarted(2, 2, 1))
    assert said[-1] == "[Progress] step 2/2 starts; 1 step took 60 s each, about 60 s of training left"


def test_review_columns_line_up_with_cjk_skill_names(tmp_path: Path) -> None:
    from dataclasses import replace

    from proposal_testutil import staged
    from rich.cells import cell_len

    from sleep.proposals.render import review_lines

    _, p = staged(tmp_path)
    rows = review_lines([replace(p, skill_name="テスト"), replace(p, skill_name="tests")])
    starts = [cell_len(line[:line.index(p.branch)]) for line in rows[1:]]
    assert starts[0] == starts[1]


def test_the_bash_completion_completes_commands_and_their_flags(tmp_path: Path, capsys) -> None:
    import shutil
    import subprocess

    assert main(["completion", "bash"]) == 0
    script = tmp_path / "completion.sh"
    script.write_text(capsys.readouterr().out)
    if shutil.which("bash") is None:
        pytest.skip("no bash")

    def complete(*words: str) -> list[str]:
        probe = (f"source {script}; COMP_WORDS=(skillopt-sleep {' '.join(words)}); COMP_CWORD={len(words)}; "
                 "_skillopt_sleep; echo \"${COMPREPLY[@]}\"")
        return subprocess.run(["bash", "-c", probe], capture_output=True, text=True, check=True).stdout.split()

    assert complete("doc") == ["doctor"]
    assert complete("adopt", "--k") == ["--keep-branch"]
    assert complete("run", "--new") == ["--new-skill"]


def test_an_unknown_sleep_key_names_its_flag_and_the_valid_keys_of_its_own_section(homes: Homes) -> None:
    from skillopt_core import ConfigError
    from sleep.cycle.config import load_night_config

    with pytest.raises(ConfigError) as top:
        load_night_config(overrides=["sleep.min_suport=3"])
    assert "--set sleep.min_suport=3: unknown key 'sleep.min_suport'. Did you mean 'sleep.min_support'?" in str(top.value)
    with pytest.raises(ConfigError) as nested:
        load_night_config(overrides=["sleep.paired.retyre=false"])
    message = str(nested.value)
    assert "Did you mean 'sleep.paired.retire'?" in message
    assert "Valid keys in sleep.paired: retire, gate_new_skills" in message
