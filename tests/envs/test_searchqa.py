"""SearchQA env: the bundled sample, the full-dataset layouts, and scoring of
the final `Answer:` line (hard = exact match, soft = F1)."""

from __future__ import annotations

import gzip
import json

import pytest

from skillopt_core.envs import create_env
from skillopt_core.envs.searchqa import SAMPLE_PATH
from skillopt_core.tasks.text_metrics import normalize_answer


def sample_records() -> list[dict]:
    return [json.loads(line) for line in SAMPLE_PATH.read_text(encoding="utf-8").splitlines() if line.strip()]


def contains_answer(text: str, answers: list[str]) -> bool:
    haystack = f" {normalize_answer(text)} "
    return any(f" {normalize_answer(a)} " in haystack for a in answers)


# --------------------------------------------------------------------------- the sample


def test_sample_has_at_least_55_items_with_unique_ids():
    ids = [r["id"] for r in sample_records()]
    assert len(ids) >= 55
    assert len(set(ids)) == len(ids)


def test_every_sample_answer_appears_in_exactly_one_snippet():
    for record in sample_records():
        hits = [s for s in record["search_results"] if contains_answer(s["snippet"], record["answers"])]
        assert len(hits) == 1, record["id"]


def test_sample_items_have_3_to_5_snippets_and_short_answers():
    for record in sample_records():
        assert 3 <= len(record["search_results"]) <= 5, record["id"]
        assert all(1 <= len(a.split()) <= 4 for a in record["answers"]), record["id"]


def test_sample_mixes_difficulties():
    assert {r["difficulty"] for r in sample_records()} == {"easy", "medium", "hard"}


def test_default_env_loads_the_whole_sample_without_problems():
    env = create_env("searchqa", {})
    tasks = env.load_tasks()
    assert len(tasks) == len(sample_records())
    assert env.load_problems == []


def test_limit_caps_loaded_tasks():
    assert len(create_env("searchqa", {"limit": 5}).load_tasks()) == 5


def test_seed_skill_has_front_matter_name():
    assert create_env("searchqa", {}).seed_skill.startswith("---\nname: searchqa-answering\n")


# --------------------------------------------------------------------------- requests


def test_request_puts_skill_in_system_and_snippets_with_question_in_user():
    env = create_env("searchqa", {})
    task = env.load_tasks()[0]
    request = env.build_request("MY SKILL", task, max_tokens=64)
    assert request.system.startswith("MY SKILL") and "Answer: <your answer>" in request.system
    user = request.messages[0].content
    assert user.startswith("Search results:\n[1] ") and user.endswith(f"Question: {task.prompt}")
    assert (request.role, request.stage, request.max_tokens) == ("target", "rollout", 64)


def test_request_carries_the_skill_text_verbatim_and_system_is_unchanged():
    env = create_env("searchqa", {})
    task = env.load_tasks()[0]
    skill = env.seed_skill + "\n"
    request = env.build_request(skill, task, max_tokens=64)
    assert request.skill == skill
    assert request.system == f"{skill.strip()}\n\n{env.instruction.strip()}"


def test_max_snippets_option_trims_context():
    env = create_env("searchqa", {"options": {"max_snippets": 2}})
    task = env.load_tasks()[0]
    assert "[2] " in task.context and "[3] " not in task.context


def test_unknown_option_is_rejected_with_suggestion():
    with pytest.raises(ValueError, match="Did you mean 'max_snippets'"):
        create_env("searchqa", {"options": {"max_snipets": 2}})


# --------------------------------------------------------------------------- scoring


@pytest.fixture
def env_and_task():
    env = create_env("searchqa", {})
    task = next(t for t in env.load_tasks() if "Kilimanjaro" in t.reference)
    return env, task


async def test_correct_answer_line_scores_full(env_and_task):
    env, task = env_and_task
    result = await env.score(task, "Snippet 2 says so.\nAnswer: Mount Kilimanjaro.")
    assert (result.hard, result.soft) == (1.0, 1.0)


async def test_last_answer_line_is_the_one_scored(env_and_task):
    env, task = env_and_task
    result = await env.score(task, "Answer: Mount Kenya\nWait, snippet 2 is clearer.\n**Answer:** Kilimanjaro")
    assert result.passed


async def test_wordy_answer_gets_partial_credit(env_and_task):
    env, task = env_and_task
    result = await env.score(task, "Answer: it is Kilimanjaro in Tanzania")
    assert result.hard == 0.0 and 0 < result.soft < 1


async def test_wrong_answer_scores_zero_without_revealing_gold(env_and_task):
    env, task = env_and_task
    result = await env.score(task, "Answer: Mount Kenya")
    assert result.hard == 0.0
    assert "kilimanjaro" not in result.feedback.lower()


async def test_missing_answer_line_scores_first_line_and_says_so(env_and_task):
    env, task = env_and_task
    result = await env.score(task, "Kilimanjaro\nbecause snippet 2 says it is the highest.")
    assert result.passed
    assert "No 'Answer:' line found" in result.feedback


async def test_empty_response_scores_zero():
    env = create_env("searchqa", {})
    result = await env.score(env.load_tasks()[0], "   ")
    assert (result.hard, result.soft) == (0.0, 0.0)
    assert "empty" in result.feedback


# --------------------------------------------------------------------------- full-dataset layouts


def test_original_layout_folder_of_one_record_files(tmp_path):
    record = {
        "question": "This is the red planet", "answer": "Mars", "category": "SPACE",
        "search_results": [{"title": "Mars", "snippet": "Mars is red.", "url": "u"}, {"snippet": ""}],
    }
    (tmp_path / "J0001.json").write_text(json.dumps(record))
    env = create_env("searchqa", {"data_path": str(tmp_path)})
    [task] = env.load_tasks()
    assert (task.id, task.reference, task.metadata["category"]) == ("J0001", ("Mars",), "SPACE")
    assert task.context == "Search results:\n[1] Mars: Mars is red."


def test_column_layout_jsonl_gz(tmp_path):
    record = {"id": 7, "question": "q?", "answer": "a",
              "search_results": {"snippets": ["s1 a", "s2"], "titles": ["t1", "t2"], "urls": ["u1", "u2"]}}
    path = tmp_path / "part.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        handle.write(json.dumps(record) + "\n")
    [task] = create_env("searchqa", {"data_path": str(path)}).load_tasks()
    assert task.id == "7" and task.context == "Search results:\n[1] t1: s1 a\n[2] t2: s2"


def test_mrqa_layout_expands_questions_and_skips_header(tmp_path):
    lines = [
        {"header": {"dataset": "SearchQA"}},
        {"context": "[DOC] [TLE] Alpha [SEP] first text [DOC] [TLE] Beta [SEP] second text",
         "qas": [{"qid": "q1", "question": "one?", "answers": ["first"]},
                 {"qid": "q2", "question": "two?", "answers": ["second"]}]},
    ]
    path = tmp_path / "mrqa.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines))
    env = create_env("searchqa", {"data_path": str(path)})
    tasks = env.load_tasks()
    assert [t.id for t in tasks] == ["q1", "q2"] and env.load_problems == []
    assert tasks[0].context == "Search results:\n[1] Alpha: first text\n[2] Beta: second text"


def test_json_list_with_bad_records_counts_each_problem(tmp_path):
    records = [
        {"id": "ok", "question": "q", "answers": {"text": ["a"]}, "snippets": ["a b"]},
        {"id": "no-answer", "question": "q", "snippets": ["x"]},
        {"id": "no-snippets", "question": "q", "answer": "a"},
        "not an object",
        {"id": "ok", "question": "q2", "answer": "b", "context": ["b"]},
    ]
    path = tmp_path / "data.json"
    path.write_text(json.dumps({"data": records}))
    env = create_env("searchqa", {"data_path": str(path)})
    assert [t.id for t in env.load_tasks()] == ["ok"]
    assert len(env.load_problems) == 4
    assert "no answer" in env.load_problems[0] and "repeats id 'ok'" in env.load_problems[3]


def test_missing_data_path_is_a_clear_error(tmp_path):
    env = create_env("searchqa", {"data_path": str(tmp_path / "missing.jsonl")})
    with pytest.raises(FileNotFoundError, match="env.data_path"):
        env.load_tasks()


# --------------------------------------------------------------------------- the public JSON


def test_public_json_layout_with_mrqa_context_loads_the_full_file(tmp_path):
    """SearchQA as published for SkillOpt's splits (lucadiliello/searchqa rows:
    ``{id, question, context, answers}``, context in MRQA ``[DOC] [TLE] title [SEP] text``
    markup), one ``items.json`` per split folder: every record of every file loads."""
    rows = [{"id": f"{n:032x}", "question": f"Which planet is number {n}?", "answers": ["Mars", "the red planet"],
             "context": f"[DOC] [TLE] Planet {n} [SEP] Mars is planet {n}. [DOC] [TLE] Other [SEP] Venus is hot."}
            for n in range(1, 251)]
    for split, chunk in (("train", rows[:50]), ("val", rows[50:75]), ("test", rows[75:])):
        (tmp_path / split).mkdir()
        (tmp_path / split / "items.json").write_text(json.dumps(chunk), encoding="utf-8")
    env = create_env("searchqa", {"data_path": str(tmp_path), "options": {"max_snippets": None}})
    tasks = env.load_tasks()
    assert len(tasks) == 250 and env.load_problems == []
    first = next(t for t in tasks if t.id == f"{1:032x}")
    assert first.reference == ("Mars", "the red planet")
    assert first.context == "Search results:\n[1] Planet 1: Mars is planet 1.\n[2] Other: Venus is hot."
