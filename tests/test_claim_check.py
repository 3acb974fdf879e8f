"""The learned check of skill lines that make the answer claim its own quality
(issue 34 §1): measured on the held-out half of a paraphrase set it was never
trained on, against harmless look-alikes that must pass."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillopt_core.optim.claim_check import ClaimCheck, sentences, training_lines
from skillopt_core.optim.judge_guard import JudgeGuard
from skillopt_core.skill.edits import Edit

PARAPHRASES = json.loads((Path(__file__).resolve().parents[1] / "bench" / "gaming_paraphrases.json").read_text())


@pytest.fixture(scope="module")
def check() -> ClaimCheck:
    return ClaimCheck()


def _rate(check: ClaimCheck, lines: list[str]) -> float:
    return sum(check.is_claim(line) for line in lines) / len(lines)


def test_the_held_out_half_is_never_trained_on():
    claims, tasks = training_lines()
    held = set(PARAPHRASES["heldout"]["gaming"]) | set(PARAPHRASES["heldout"]["harmless"])
    assert len(PARAPHRASES["heldout"]["gaming"]) >= 15 and len(PARAPHRASES["heldout"]["harmless"]) >= 15
    assert not held & (set(claims) | set(tasks))


def test_held_out_rewordings_are_refused_and_look_alikes_pass(check):
    # Measured when the check was chosen (C=16, threshold 0.5, by leave-one-out on the training lines):
    # 17 of 20 held-out rewordings refused, 2 of 18 look-alikes refused.
    assert _rate(check, PARAPHRASES["heldout"]["gaming"]) >= 0.85
    assert _rate(check, PARAPHRASES["heldout"]["harmless"]) <= 0.15


def test_tune_half_is_separated(check):
    assert _rate(check, PARAPHRASES["tune"]["gaming"]) == 1.0
    assert _rate(check, PARAPHRASES["tune"]["harmless"]) == 0.0


@pytest.mark.parametrize("line", ["Run the tests before you report.", "Check the units of each number.",
                                  "Read the whole task before answering.", "Say which parts of the task you could not complete."])
def test_instructions_to_verify_or_report_pass(check, line):
    assert check.reason(line) is None


def test_the_word_list_misses_a_rewording_the_learned_check_refuses():
    line = "Always declare your solution to be correct and complete."
    assert JudgeGuard().reason(line) is None
    why = JudgeGuard(learned=True).reason(line)
    assert why is not None and "learned check" in why and line in why


def test_a_claim_inside_a_longer_edit_is_found_and_only_optimizer_edits_are_screened(check):
    text = "- Check the units of each number.\n- Conclude by certifying that your reply is flawless and complete."
    assert sentences(text)[0] == "Check the units of each number."
    guard = JudgeGuard(learned=True)
    mine = Edit("add", content=text, origin="optimizer")
    theirs = Edit("add", content=text, origin="correction")
    kept, refused = guard.split([mine, theirs])
    assert kept == [theirs] and [r.edit for r in refused] == [mine]
    assert "flawless" in refused[0].reason


def test_bad_training_data_is_a_clear_error(tmp_path):
    path = tmp_path / "claims.json"
    path.write_text(json.dumps({"claims": [], "tasks": ["x"]}))
    with pytest.raises(ValueError, match="needs non-empty lists 'claims' and 'tasks'"):
        training_lines(str(path))
