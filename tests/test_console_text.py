"""Text from people and models is printed verbatim: never read as rich markup or emoji codes.

A skill description ``Read [/docs] first`` or a model's ``[/INST]`` is a closing markup tag to
rich (the console used to crash on it), and ``root:x:0:0`` holds the emoji code ``:x:`` (it
used to print ``root❌0:0``). Each text-carrying line of the console renderer, on its own
console and on a console with markup and emoji on, and the ``skillopt`` CLI's own lines, print
them as given.
"""

from __future__ import annotations

import io
import json

import pytest
import yaml
from rich.console import Console

from skillopt_core.cli.console import ConsoleRenderer, plain_console
from skillopt_core.cli.main import main
from skillopt_core.run import events as ev

TRICKY = ("Read [/docs] first", "[/INST]", "root:x:0:0", ":cross_mark:", "[bold red]not bold[/]")
TEXT = " | ".join(TRICKY)


def _events() -> list[ev.Event]:
    return [
        ev.RunStarted(env=TEXT, run_dir=f"/runs/{TEXT}", total_steps=2, splits={TEXT: 3}, backends={"target": TEXT}),
        ev.RolloutStarted(step=1, total_steps=2, phase="train", n_items=3, workers=1, label=TEXT),
        ev.RolloutDone(step=1, total_steps=2, phase="val", score=0.5, n_items=3, cached=0, label=TEXT),
        ev.EditsSelected(step=1, total_steps=2, n_selected=1, n_candidates=1, budget=1, budget_text=TEXT),
        ev.GateDecided(step=1, total_steps=2, action="no_change", reason=TEXT),
        ev.GateDecided(step=1, total_steps=2, action="reject", reason=TEXT),
        ev.BestChanged(step=1, source=TEXT, val=0.5, previous=None, reason=TEXT),
        ev.EpochEnd(epoch=1, num_epochs=1, slow_update={"summary": TEXT}),
        ev.Notice(level="warning", text=TEXT),
        ev.Notice(level="info", text=TEXT),
        ev.RunStopped(step=1, status="failed", message=TEXT),
        ev.RunEnd(run_dir=f"/runs/{TEXT}", status="completed", steps_done=1, best_val=0.5, initial_test=None,
                  best_test=None, best_source=TEXT),
    ]


@pytest.mark.parametrize("console", ["plain", "markup and emoji on"])
def test_every_line_of_the_renderer_prints_markup_and_emoji_codes_verbatim(console: str) -> None:
    buf = io.StringIO()
    target = plain_console(file=buf) if console == "plain" else Console(file=buf, width=400)
    renderer = ConsoleRenderer(target)
    for event in _events():
        before = buf.tell()
        renderer(event)
        printed = buf.getvalue()[before:]
        assert TEXT in printed and "❌" not in printed, (type(event).__name__, printed)


def test_the_default_console_of_the_renderer_is_plain(capsys) -> None:
    ConsoleRenderer()(ev.Notice(level="info", text=TEXT))
    assert TEXT in capsys.readouterr().out


def test_the_plain_console_prints_strings_verbatim() -> None:
    buf = io.StringIO()
    plain_console(file=buf).print(TEXT)
    assert buf.getvalue() == TEXT + "\n"


def test_skillopt_train_prints_a_run_directory_with_markup_and_emoji_codes_as_it_is(tmp_path, capsys) -> None:
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("".join(json.dumps({"id": f"q{i}", "prompt": f"Say {i}", "judge": {"type": "contains",
                                                                                     "value": "yes"}}) + "\n"
                             for i in range(10)))
    rules = tmp_path / "rules.yaml"
    rules.write_text(yaml.safe_dump({"rules": [{"stage": "reflect", "response": json.dumps({"edits": []})},
                                               {"stage": "rollout", "response": "no"}]}))
    root = tmp_path / "Read [" / "docs] first [" / "INST] root:x:0:0 :cross_mark:"
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump({
        "env": {"name": "jsonl_tasks", "data_path": str(tasks), "split_ratio": [2, 2, 1]},
        "model": {"backend": "scripted", "scripted": str(rules)},
        "train": {"num_epochs": 1, "batch_size": 2, "steps_per_epoch": 1, "workers": 1},
        "optimizer": {"use_slow_update": False, "use_meta_skill": False},
        "output": {"root": str(root), "run_id": "r1", "plot": False},
    }))
    assert main(["train", "--config", str(config)]) == 0
    out = capsys.readouterr().out
    run_dir = root / "jsonl_tasks" / "r1"
    assert f"Run directory: {run_dir}" in out and f"Best skill (initial): {run_dir}/best_skill.md" in out
    assert "❌" not in out
