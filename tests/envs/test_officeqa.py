"""OfficeQA: the published CSV (databricks/officeqa README: uid, question,
answer, source_docs, source_files, difficulty), normalised exact match (hard)
and token F1 (soft), and the offline tools mode (glob / read / grep over the
parsed pages, confined to the corpus)."""

from __future__ import annotations

import csv


from skillopt_core.backends import BackendSpec, create_backend
from skillopt_core.envs import create_env
from skillopt_core.envs.officeqa import SAMPLE_PATH, Corpus, read_questions, tool_calls

from bench_run import train_offline


def test_bundled_sample_loads() -> None:
    env = create_env("officeqa", {})
    tasks = env.load_tasks()
    assert len(tasks) == 12 and env.load_problems == []
    assert tasks[0].metadata["source_files"] == ["treasury_bulletin_1941_01.txt"] and "easy" in tasks[0].tags


def test_published_csv_columns_with_a_list_of_source_files_and_bad_rows(tmp_path) -> None:
    path = tmp_path / "officeqa_full.csv"
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["uid", "question", "answer", "source_docs", "source_files", "difficulty"])
        writer.writerow(["UID0001", "Q?", "1,234", "https://example.org/a\nhttps://example.org/b",
                         "treasury_bulletin_1941_01.txt\ntreasury_bulletin_1941_02.txt", "hard"])
        writer.writerow(["UID0002", "Q2?", "", "", "", "easy"])
    tasks, problems = read_questions(path)
    assert tasks[0].metadata["source_files"] == ["treasury_bulletin_1941_01.txt", "treasury_bulletin_1941_02.txt"]
    assert problems == ["officeqa_full.csv: row 2: needs uid, question and answer"]


async def test_exact_match_is_normalised_and_f1_gives_partial_credit() -> None:
    env = create_env("officeqa", {})
    task = next(t for t in env.load_tasks() if t.id == "UID9003")  # 45202
    assert (await env.score(task, "Answer: 45,202")).hard == 1.0
    partial = await env.score(task, "Answer: 45202 million dollars")
    assert partial.hard == 0.0 and 0 < partial.soft < 1


def test_tools_stay_inside_the_corpus() -> None:
    corpus = Corpus(SAMPLE_PATH.parent / "corpus")
    assert corpus.run("glob", "*1950*") == "treasury_bulletin_1950_02.txt"
    assert "45,202" in corpus.run("grep", "'December 1940'")
    assert corpus.run("read", "treasury_bulletin_1941_01.txt 3 3").startswith("3: TREASURY BULLETIN")
    assert corpus.run("read", "../officeqa_sample.csv").startswith("error: no file")
    assert corpus.run("grep", "(").startswith("error: bad regular expression")
    assert corpus.run("rm", "x").startswith("error: unknown tool")


def test_tool_calls_are_read_one_per_line() -> None:
    assert tool_calls("Let me look.\nTool: grep 'Series E'\nTool: read a.txt 1 2") == [
        ("grep", "'Series E'"), ("read", "a.txt 1 2")]


async def test_an_episode_runs_tools_then_scores_the_final_answer() -> None:
    env = create_env("officeqa", {})
    task = next(t for t in env.load_tasks() if t.id == "UID9006")  # 412
    target = create_backend(BackendSpec("scripted", None, "target", {}))
    target.enqueue("Tool: grep 'January 1950'", "Answer: 412")
    completion = await env.run_episode(target, env.build_request("skill", task, 48), task)
    assert completion.text == "[tool call] grep 'January 1950'\nAnswer: 412"
    assert "| January 1950 | 412 |" in target.history[1].messages[-1].content  # the tool's output came back
    assert (await env.score(task, completion.text)).hard == 1.0


async def test_tool_turns_are_capped() -> None:
    env = create_env("officeqa", {"options": {"max_tool_calls": 2}})
    task = env.load_tasks()[0]
    target = create_backend(BackendSpec("scripted", None, "target", {"scripted": {"rules": [{"response": "Tool: glob *"}]}}))
    await env.run_episode(target, env.build_request("skill", task, 48), task)
    assert len(target.history) == 3


def test_pages_mode_puts_the_source_text_in_the_prompt() -> None:
    env = create_env("officeqa", {"options": {"mode": "pages"}})
    request = env.build_request("skill", env.load_tasks()[0], 48)
    assert "| 1940 | 5,265 |" in request.messages[0].content


def test_local_config_trains_offline(tmp_path, capsys) -> None:
    summary, _ = train_offline("officeqa/local", tmp_path, capsys, [{"stage": "rollout", "response": "Answer: 412"}],
                               "evaluation.eval_test=false")
    assert summary["status"] == "completed" and summary["steps_done"] == 2
