"""LiveMathematicianBench: the published monthly files (``data/<YYYYMM>/
qa_<YYYYMM>_final.json``, dataset LiveMathematicianBench/LiveMathematicianBench;
raw items list the distractors in ``mcq.choices`` and the answer apart in
``mcq.correct_choice``), ids ``<month>:<no>``, choices shuffled per item from a
seeded RNG, and label-match scoring."""

from __future__ import annotations

import json

import pytest

from skillopt_core.envs import create_env
from skillopt_core.envs.livemathematicianbench import parse_choice, read_tasks, shuffle_choices

from bench_run import train_offline


def raw_item(no: int, **over) -> dict:
    item = {"month": "202601", "no": no, "paper_link": "http://arxiv.org/abs/2601.00001v1",
            "theorem": {"env_name": "theorem", "content": "Every widget is a gadget."},
            "sketch": "By induction.", "theorem_type": ["Universal"],
            "mcq": {"question": f"Question {no}?", "correct_choice": {"label": "A", "text": "right"},
                    "choices": [{"label": "B", "text": "wrong 1"}, {"label": "C", "text": "wrong 2"},
                                {"label": "D", "text": "wrong 3"}]}}
    item.update(over)
    return item


def write_month(tmp_path, month: str, items: list) -> None:
    folder = tmp_path / month
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"qa_{month}_final.json").write_text(json.dumps(items), encoding="utf-8")


def test_bundled_sample_loads_two_months_without_problems() -> None:
    env = create_env("livemathematicianbench", {})
    tasks = env.load_tasks()
    assert len(tasks) == 24 and env.load_problems == []
    assert {t.metadata["month"] for t in tasks} == {"202511", "202512"}
    assert len({t.reference for t in tasks}) == 4  # the shuffle spreads the right answer over A-D


def test_raw_item_gets_id_month_no_and_its_answer_among_the_choices(tmp_path) -> None:
    write_month(tmp_path, "202601", [raw_item(7)])
    (task,), problems = read_tasks(tmp_path, seed=None)
    assert problems == [] and task.id == "202601:7"
    assert task.prompt.endswith("A. right\nB. wrong 1\nC. wrong 2\nD. wrong 3") and task.reference == "A"
    assert "Universal" in task.tags and task.metadata["paper_link"].startswith("http://arxiv.org/")


def test_month_comes_from_the_file_name_and_no_from_the_position(tmp_path) -> None:
    items = [raw_item(1), raw_item(2)]
    for item in items:
        del item["month"], item["no"]
    write_month(tmp_path, "202602", items)
    tasks, _ = read_tasks(tmp_path)
    assert [t.id for t in tasks] == ["202602:1", "202602:2"]


def test_choices_as_a_mapping_and_correct_choice_as_a_label(tmp_path) -> None:
    item = raw_item(1, mcq={"question": "Q?", "choices": {"A": "x", "B": "y", "C": "z"}, "correct_choice": "C"})
    write_month(tmp_path, "202601", [item])
    (task,), _ = read_tasks(tmp_path, seed=None)
    assert task.reference == "C" and "C. z" in task.prompt


def test_incomplete_items_are_skipped_and_counted(tmp_path) -> None:
    no_answer = raw_item(2)
    no_answer["mcq"] = {"question": "Q?", "choices": ["a", "b"]}
    no_question = raw_item(3)
    no_question["mcq"] = {"choices": ["a", "b"], "correct_choice": "A"}
    write_month(tmp_path, "202601", [raw_item(1), no_answer, no_question, raw_item(1)])
    tasks, problems = read_tasks(tmp_path)
    assert [t.id for t in tasks] == ["202601:1"]
    assert [p.split(": ", 2)[2] for p in problems] == [
        "no mcq.correct_choice", "no mcq.question", "repeats id '202601:1' (kept the first)"]


def test_shuffle_is_fixed_by_seed_and_id_and_tracks_the_answer() -> None:
    choices = [("A", "right"), ("B", "w1"), ("C", "w2"), ("D", "w3")]
    first = shuffle_choices(choices, "A", 0, "202601:1")
    assert first == shuffle_choices(choices, "A", 0, "202601:1")
    texts, label = first
    assert texts["ABCD".index(label)] == "right"
    orders = {tuple(shuffle_choices(choices, "A", seed, "202601:1")[0]) for seed in range(12)}
    assert len(orders) > 1


@pytest.mark.parametrize("answer, expected", [
    ("B", "B"), ("(B)", "B"), ("B.", "B"), ("b) wrong 1", "B"), ("Option C", "C"), ("**D**", "D"),
    ("E", None), ("because", None), ("", None),
])
def test_parse_choice(answer: str, expected) -> None:
    assert parse_choice(answer, "ABCD") == expected


async def test_score_is_label_match_and_feedback_never_names_the_answer() -> None:
    env = create_env("livemathematicianbench", {})
    task = env.load_tasks()[0]
    wrong = next(label for label in "ABCD" if label != task.reference)
    right = await env.score(task, f"Reasoning...\nAnswer: {task.reference}")
    assert (right.hard, right.soft) == (1.0, 1.0)
    assert (await env.score(task, f"<answer>{task.reference}</answer>")).hard == 1.0
    miss = await env.score(task, f"Answer: {wrong}")
    assert (miss.hard, miss.soft) == (0.0, 0.0) and task.reference not in miss.feedback.replace(wrong, "")
    none = await env.score(task, "I am not sure.")
    assert none.hard == 0.0 and "named no choice" in none.feedback


def test_options_are_checked_when_the_env_is_built() -> None:
    with pytest.raises(ValueError, match="choice_seed"):
        create_env("livemathematicianbench", {"options": {"choice_seed": "x"}})


def test_local_config_trains_offline(tmp_path, capsys) -> None:
    summary, run_dir = train_offline("livemathematicianbench/local", tmp_path, capsys,
                                     [{"stage": "rollout", "response": "Answer: B"}])
    assert summary["status"] == "completed" and summary["steps_done"] == 2
    assert (run_dir / "steps" / "step_0001" / "rollouts.json").is_file()
