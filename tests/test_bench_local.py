"""bench/local.py: the instruction-pool optimizer, and (marked local_model) a
very small real run with SmolLM2 as the target."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import local  # noqa: E402
from skillopt_core.backends import CompletionRequest  # noqa: E402


def reflect(skill: str, rejected: list[str] = ()) -> CompletionRequest:
    parts = ["## Current skill", "```markdown", skill, "```", "", "## Examples", "### Example 1 (FAIL, score 0.00)"]
    if rejected:
        parts += ["## Edits already tried and rejected by validation (do not propose them again)"]
        parts += [f"- {json.dumps({'op': 'add', 'content': r})}" for r in rejected]
    return CompletionRequest.single("\n".join(parts), stage="reflect", role="optimizer")


def proposed(skill: str, rejected: list[str] = (), n: int = 200) -> list[str]:
    pool = local.PoolOptimizer()
    out = []
    for k in range(n):
        request = reflect(skill + f"\n<!-- {k} -->", rejected)
        out += [e["content"] for e in json.loads(pool.reply(request))["edits"]]
    return out


def test_the_pool_optimizer_proposes_every_kind_from_the_pool_only():
    contents = proposed(local.SEED_SKILL)
    kinds = {local.KIND[c[2:]] for c in contents}
    assert kinds == {"helpful", "neutral", "harmful"}
    assert all(c.startswith("- ") and c[2:] in local.KIND for c in contents)


def test_the_pool_optimizer_skips_what_the_skill_has_and_what_was_rejected():
    have, gone = "Be polite.", "Reply with one word only."
    contents = {c[2:] for c in proposed(local.SEED_SKILL + f"- {have}\n", [f"- {gone}"])}
    assert have not in contents and gone not in contents and contents


def test_the_fixed_split_has_no_overlap():
    data = local.dataset(quick=True)
    ids = [t.id for part in (data.train, data.val, data.test) for t in part]
    assert len(ids) == len(set(ids)) == 32


@pytest.mark.local_model
def test_a_very_small_real_run(tmp_path):
    pytest.importorskip("llama_cpp")
    extra = ["train.num_epochs=1", "train.batch_size=2", "evaluation.val_limit=2", "evaluation.test_limit=2",
             "model.target_max_tokens=8"]
    result = asyncio.run(local.one_seed(0, True, tmp_path, extra))
    assert result["status"] == "completed"
    assert 0.0 <= result["initial_test"] <= 1.0 and 0.0 <= result["trained_test"] <= 1.0
    assert result["test"] == 16 and result["calls"] >= 2 + 2 + 2  # train, val baseline, test (initial)
    summary = local.summarise([result])
    assert summary["delta_mean"] == result["trained_test"] - result["initial_test"]
