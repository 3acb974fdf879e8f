"""The toy world the trainer tests share (scripted backend, no model).

Half the tasks pass when the skill says "Always say banana.", the other half
("cherry") never pass, so reflection always has failures to read. The
scripted optimizer's reply is a pure function of its prompt: first it proposes
the good edit, then a harmful one, then a neutral one, then nothing; the
rejected-edits section of the prompt tells it how far it got.
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from skillopt_core.backends.scripted import Rule, ScriptedBackend
from skillopt_core.run.config import load_settings

GOOD = {"op": "add", "content": "Always say banana.", "rationale": "banana tasks fail"}
HARMFUL = {"op": "replace", "target": "Always say banana.", "content": "Never answer.", "rationale": "shorter"}
NEUTRAL = {"op": "add", "content": "Be polite.", "rationale": "tone"}


def write_yes_world(folder: Path, n_tasks: int = 20) -> tuple[Path, Path]:
    """The "yes" world of the CLI and MCP tests: ``tasks.jsonl`` (every task passes on "yes") and the
    scripted ``rules.yaml`` (the optimizer adds "Always reply yes.", the target says yes only then)."""
    tasks = folder / "tasks.jsonl"
    tasks.write_text("".join(
        json.dumps({"id": f"q{i}", "prompt": f"Say the word {i}", "judge": {"type": "contains", "value": "yes"}})
        + "\n" for i in range(n_tasks)))
    rules = folder / "rules.yaml"
    rules.write_text(yaml.safe_dump({"rules": [
        {"stage": "reflect", "response": json.dumps({"edits": [{"op": "add", "content": "Always reply yes."}]})},
        {"stage": "slow_update", "response": json.dumps({"guidance": "- Reply yes."})},
        {"stage": "meta_skill", "response": json.dumps({"notes": "- Adding yes helped."})},
        {"stage": "rollout", "regex": "Always reply yes", "response": "yes"},
        {"stage": "rollout", "response": "no"},
    ]}))
    return tasks, rules


def write_tasks(path: Path, n: int = 40) -> Path:
    with path.open("w") as fh:
        for i in range(n):
            word = "banana" if i % 2 == 0 else "cherry"
            fh.write(json.dumps({"id": f"t{i:02d}", "prompt": f"Question {i}: what is the magic word?",
                                 "judge": {"type": "contains", "value": word}}) + "\n")
    return path


RUBRIC = {"type": "rubric", "rubric": "The answer names a fruit."}


def write_rubric_tasks(path: Path, n: int = 20) -> Path:
    """Tasks judged by a model reading :data:`RUBRIC` (the substance and stock-sentence tests)."""
    with path.open("w") as fh:
        for i in range(n):
            fh.write(json.dumps({"id": f"r{i:02d}", "prompt": f"Question {i}: name a fruit.", "judge": RUBRIC}) + "\n")
    return path


def target_answer(request) -> str:
    skill = request.system or ""
    if "Never answer." in skill:
        return "I will not answer."
    return "banana" if "Always say banana." in skill else "apple"


def reflect_answer(request) -> str:
    prompt = request.prompt_text
    skill_part = prompt.split("## Examples")[0]
    rejected_part = prompt.split("rejected by validation")[-1] if "rejected by validation" in prompt else ""
    if "Always say banana." not in skill_part:
        edits = [GOOD]
    elif "Never answer." not in rejected_part:
        edits = [HARMFUL]
    elif "Be polite." not in rejected_part and "Be polite." not in skill_part:
        edits = [NEUTRAL]
    else:
        edits = []
    return json.dumps({"edits": edits})


def make_backend() -> ScriptedBackend:
    return ScriptedBackend(rules=[
        Rule(stage="reflect", response=reflect_answer),
        Rule(stage="slow_update", response=json.dumps({"guidance": "- Keep saying banana."})),
        Rule(stage="meta_skill", response=json.dumps({"notes": "- Replacing the banana rule hurt."})),
        Rule(stage="rollout", response=target_answer),
    ])


def settings_for(tmp_path: Path, *overrides: str):
    tmp_path.mkdir(parents=True, exist_ok=True)
    tasks = write_tasks(tmp_path / "tasks.jsonl")
    base = [
        "env.name=jsonl_tasks", f"env.data_path={tasks}", "env.split_ratio=[4,4,2]",
        "model.backend=scripted", "train.num_epochs=1", "train.batch_size=8", "train.steps_per_epoch=4",
        "train.workers=3", "optimizer.learning_rate=2", f"output.root={tmp_path / 'outputs'}",
        "output.run_id=run", "output.plot=true",
        # The toy-world tests check each stage of the classic loop; the
        # screen, the re-measurement and the default-off epoch stages have
        # their own tests (tests/test_screen_gate.py).
        "evaluation.screen_items=0", "evaluation.remeasure=false",
        "optimizer.use_slow_update=true", "optimizer.use_meta_skill=true",
    ]
    return load_settings(None, base + list(overrides))


def backends(b):
    return {"target": b, "optimizer": b, "judge": b}


def comparable(history):
    """History without what legitimately differs between runs (wall time, and
    usage: a resumed run reuses cached rollouts instead of calling again)."""
    return [{k: v for k, v in h.items() if k not in ("timings", "usage")} for h in history]


def question_number(request) -> int:
    """The i of "Question i:" in a rollout request."""
    text = request.messages[-1].content
    return int(text.split("Question ", 1)[1].split(":", 1)[0])


def events_of(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (Path(run_dir) / "events.jsonl").read_text().splitlines()]
