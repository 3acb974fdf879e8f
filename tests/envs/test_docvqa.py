"""DocVQA: the CSV layout of SkillOpt's DocVQA materialisation (answers as
Python-literal lists, one page image per question), the official JSON
(``{"data": [{questionId, question, image, answers, ...}]}``), ANLS with
threshold 0.5 (Biten et al., the DocVQA metric) as soft and ANLS >= 0.999 as
hard, and the page sent as an image or, to backends that cannot see, as OCR."""

from __future__ import annotations

import json
import shutil

import pytest

from skillopt_core.backends.images import text_only
from skillopt_core.envs import create_env
from skillopt_core.envs.docvqa import SAMPLE_PATH, anls, parse_answers, read_tasks

from bench_run import train_offline


@pytest.mark.parametrize("prediction, answers, expected", [
    ("4471", ["4471"], 1.0), ("  Harbor   LABS ", ["Harbor Labs"], 1.0), ("4470", ["4471"], 0.75),
    ("Dr Elena Ruiz", ["Dr. Elena Ruiz"], 1 - 1 / 14), ("x", ["4471"], 0.0), ("", ["4471"], 0.0),
    ("June 22", ["Friday, June 22", "June 22"], 1.0),
])
def test_anls(prediction, answers, expected) -> None:
    assert anls(prediction, answers) == pytest.approx(expected)


def test_anls_below_the_threshold_is_zero() -> None:
    assert anls("abcd", ["abxy"]) == 0.0  # distance 2/4 = 0.5 is not below the threshold


@pytest.mark.parametrize("raw, expected", [
    ("['4471', '#4471']", ["4471", "#4471"]), ("4471", ["4471"]), ("[]", []), ("['a'", ["['a'"]), ("", []),
])
def test_answers_are_python_literal_lists(raw, expected) -> None:
    assert parse_answers(raw) == expected


def test_bundled_sample_loads_with_images_and_ocr() -> None:
    env = create_env("docvqa", {})
    tasks = env.load_tasks()
    assert len(tasks) == 14 and env.load_problems == []
    assert tasks[1].reference == ("$175.00", "175.00") and tasks[1].metadata["media_type"] == "image/png"


def test_official_json_layout_and_document_path_suffix(tmp_path) -> None:
    (tmp_path / "documents").mkdir()
    shutil.copy(SAMPLE_PATH.parent / "images" / "d1001_p1.png", tmp_path / "documents" / "abc_1.png")
    (tmp_path / "val_v1.0.json").write_text(json.dumps({"dataset_name": "docvqa", "data": [
        {"questionId": 7, "question": "What is the invoice number?", "question_types": ["form"],
         "image": "documents/abc_1.png", "docId": 1, "answers": ["4471"]},
        {"questionId": 8, "question": "Missing page?", "image": "documents/none.png", "answers": ["x"]},
        {"questionId": 9, "question": "Total? document_path: documents/abc_1.png", "answers": ["175.00"]},
    ]}), encoding="utf-8")
    tasks, problems = read_tasks(tmp_path / "val_v1.0.json")
    assert [t.id for t in tasks] == ["7", "9"] and tasks[1].prompt == "Total?"
    assert problems == ["val_v1.0.json: record 2: image not found: documents/none.png"]


def test_request_carries_the_page_image_with_its_ocr_stand_in() -> None:
    env = create_env("docvqa", {})
    request = env.build_request("skill", env.load_tasks()[0], 32)
    (image,) = request.messages[0].images
    assert image.data.startswith(b"\x89PNG") and "INVOICE No. 4471" in image.text
    assert "INVOICE No. 4471" in text_only(request, "local").messages[0].content


def test_image_input_alone_makes_a_blind_backend_refuse() -> None:
    from skillopt_core.backends.base import RequestRejected

    env = create_env("docvqa", {"options": {"input": "image"}})
    request = env.build_request("skill", env.load_tasks()[0], 32)
    with pytest.raises(RequestRejected, match="cannot see images"):
        text_only(request, "local")


def test_ocr_input_sends_text_only() -> None:
    env = create_env("docvqa", {"options": {"input": "ocr"}})
    request = env.build_request("skill", env.load_tasks()[0], 32)
    assert request.messages[0].images == () and "OCR text" in request.messages[0].content


async def test_score_hard_is_exact_soft_is_anls() -> None:
    env = create_env("docvqa", {})
    task = env.load_tasks()[0]
    assert (await env.score(task, "Answer: 4471")).hard == 1.0
    close = await env.score(task, "Answer: 4470")
    assert (close.hard, close.soft) == (0.0, 0.75) and "4471" not in close.feedback


def test_local_config_trains_offline(tmp_path, capsys) -> None:
    summary, _ = train_offline("docvqa/local", tmp_path, capsys,
                               [{"stage": "rollout", "regex": "INVOICE", "response": "Answer: 4471"},
                                {"stage": "rollout", "response": "Answer: unknown"}],
                               "evaluation.eval_test=false")
    assert summary["status"] == "completed" and summary["steps_done"] == 2
