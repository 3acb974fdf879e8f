"""Epoch-boundary pieces: item comparison and the optimizer's text replies."""

import json

from skillopt_core.backends.scripted import ScriptedBackend
from skillopt_core.optim.epoch import compare_items, summarize_comparison, write_meta_notes


def test_compare_items_puts_each_item_in_one_category():
    groups = compare_items({"a": 0, "b": 1, "c": 1, "d": 0, "e": 1}, {"a": 1, "b": 0, "c": 1, "d": 0})
    assert groups == {"improved": ["a"], "regressed": ["b"], "persistent_failure": ["d"], "stable_success": ["c"]}
    assert summarize_comparison(groups) == "1 improved, 1 regressed, 1 persistent failure, 1 stable success"


async def test_meta_notes_show_the_epoch_steps_to_the_optimizer():
    backend = ScriptedBackend(queue=[json.dumps({"notes": "- adds help"})])
    reply = await write_meta_notes(backend, [{"step": 3, "action": "reject", "gate_reason": "tie",
                                              "selected_edits": [{"op": "add", "content": "Be polite."}]}])
    assert reply.text == "- adds help" and reply.calls == 1
    assert "step 3: reject (tie)" in backend.history[0].prompt_text and "Be polite." in backend.history[0].prompt_text


async def test_empty_notes_are_no_notes_with_a_reason():
    reply = await write_meta_notes(ScriptedBackend(queue=[json.dumps({"notes": "  "})]), [])
    assert reply.text is None and reply.error == "empty notes"
