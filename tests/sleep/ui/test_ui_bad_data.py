"""Bad run data shows as bad data, never as a server error.

A run directory may be old, half-written, edited by hand or hostile: a string where
the trainer writes a score (``"val_candidate": "abc"``), an object where it writes a
list, NaN, a line of ``events.jsonl`` that is not JSON. Every page still renders and
names what it left out. The property tests write arbitrary JSON values under the keys
the trainer writes (and arbitrary files) and fetch every page of the run; the client
re-raises any exception of the app, so a crash fails the test.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ui_testutil import client, run_links

HISTORY_KEYS = ["step", "epoch", "train_score", "val_current", "val_candidate", "val_after", "best_val", "action",
                "gate_reason", "gate_items", "gate_evaluated", "gate_early_stopped", "n_proposed", "n_caller_edits",
                "n_patches", "n_selected", "n_applied", "failed_items", "budget_text", "usage", "timings"]
EVENT_KEYS = ["event", "at", "env", "total_steps", "resumed_at_step", "label", "score", "val", "step", "status",
              "level", "text", "backends", "splits", "action", "reason", "message"]
EVENT_KINDS = ["run_started", "rollout_done", "best_changed", "gate_decided", "notice", "run_end", "step_started"]
SUMMARY_KEYS = ["status", "steps_done", "total_steps", "initial_val", "best_val", "initial_test", "best_test",
                "usage", "accepted", "rejected", "error"]
GATE_KEYS = ["policy", "current_mean", "candidate_mean", "n_items", "deltas", "reason", "accept"]
SELECTED_KEYS = ["budget_text", "ranked_by", "note", "edits"]
EDIT_KEYS = ["op", "target", "anchor", "content", "rationale", "status", "detail", "support", "origin"]
PATCHES_KEYS = ["proposed", "merged", "invalid_replies", "merge_fallback", "problems"]
ROLLOUT_KEYS = ["task_id", "sample", "hard", "soft", "feedback", "response", "failed"]
COMPARISON_KEYS = ["groups", "summary", "guidance", "error", "gate", "action"]

scalars = (st.none() | st.booleans() | st.integers(-10**20, 10**20) | st.floats(allow_nan=True, allow_infinity=True)
           | st.text(max_size=12) | st.sampled_from(["accept", "reject", "no_change", "run_end", "warning", "abc",
                                                     "2026-12-01T02:14:00.000Z", "[/INST]", "<b>x</b>"]))
anything = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                        | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=12)


def shaped(keys: list[str], **fixed) -> st.SearchStrategy:
    """An object with some of the trainer's keys holding anything (and the ``fixed`` strategies)."""
    return st.fixed_dictionaries({}, optional={**{k: anything for k in keys}, **fixed})


edits = st.lists(st.one_of(shaped(EDIT_KEYS), anything), max_size=3)
run_files = st.fixed_dictionaries({
    "history.json": st.one_of(st.lists(st.one_of(shaped(HISTORY_KEYS, step=st.sampled_from([1, 2, "1", None])),
                                                 anything), max_size=4), anything),
    "events.jsonl": st.lists(st.one_of(shaped(EVENT_KEYS, event=st.sampled_from(EVENT_KINDS)), anything,
                                       st.just("not json {")), max_size=6),
    "summary.json": st.one_of(shaped(SUMMARY_KEYS), anything),
    "state.json": anything,
    "steps/step_0001/gate.json": st.one_of(shaped(GATE_KEYS), anything),
    "steps/step_0001/selected.json": st.one_of(shaped(SELECTED_KEYS, edits=edits), anything),
    "steps/step_0001/patches.json": st.one_of(shaped(PATCHES_KEYS), anything),
    "steps/step_0001/rollouts.json": st.one_of(st.lists(st.one_of(shaped(ROLLOUT_KEYS), anything), max_size=3),
                                               anything),
    "slow_update/epoch_01/comparison.json": st.one_of(shaped(COMPARISON_KEYS), anything),
})


def _write(path: Path, text: str) -> None:
    """Replace the file (a new inode, as the trainer's atomic writes do)."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8", errors="surrogatepass")
    os.replace(tmp, path)


def _dump(value) -> str:
    return json.dumps(value)  # Python's json writes NaN and Infinity, as the trainer's files may hold


def _pages(url: str) -> list[str]:
    return ["/", "/runs", url, f"{url}?steps=all", f"{url}/fragments", f"{url}/steps/1", f"{url}/epochs/1",
            f"{url}/events", f"{url}/best", f"{url}/skills/1", f"{url}/diff?a=0&b=1"]


def _assert_every_page_renders(c, url: str) -> None:
    for page in _pages(url):
        r = c.get(page)
        assert r.status_code in (200, 404), (page, r.status_code, r.text[:500])


def test_a_string_score_in_history_is_shown_as_bad_data(fresh_run: Path) -> None:
    history = json.loads((fresh_run / "history.json").read_text())
    history[0]["val_candidate"] = "abc"
    _write(fresh_run / "history.json", json.dumps(history))
    c = client([fresh_run.parents[1]])
    url = run_links(c.get("/runs").text)[0]
    page = c.get(url)
    assert page.status_code == 200
    assert "history.json, step 1: val_candidate is &#34;abc&#34;, not a number" in page.text
    assert c.get(f"{url}/steps/1").status_code == 200
    assert c.get(f"{url}/fragments").status_code == 200


def test_a_damaged_gate_and_selected_file_name_each_bad_field_and_show_the_rest(fresh_run: Path) -> None:
    step = fresh_run / "steps" / "step_0001"
    gate = json.loads((step / "gate.json").read_text())
    gate.update(candidate_mean="high", deltas={"item-a": 0.5, "item-b": "x"})
    _write(step / "gate.json", json.dumps(gate))
    _write(step / "selected.json", json.dumps({"budget_text": "2 of 3", "edits": [
        {"target": "no op here"}, {"op": "add", "content": "Check the units first.", "support": "many"}]}))
    c = client([fresh_run.parents[1]])
    page = c.get(run_links(c.get("/runs").text)[0] + "/steps/1")
    assert page.status_code == 200, page.text[:500]
    for said in ("gate.json: candidate_mean is &#34;high&#34;, not a number",
                 "gate.json: deltas.item-b is &#34;x&#34;, not a number",
                 "selected.json, edit 1: edit is missing &#39;op&#39;",
                 "selected.json, edit 2: support is &#34;many&#34;, not a whole number"):
        assert said in page.text, said
    assert "<code>item-a</code>" in page.text and "Check the units first." in page.text


def test_history_that_is_not_a_list_of_steps_is_named(fresh_run: Path) -> None:
    _write(fresh_run / "history.json", json.dumps({"steps": []}))
    c = client([fresh_run.parents[1]])
    url = run_links(c.get("/runs").text)[0]
    page = c.get(url)
    assert page.status_code == 200
    assert "history.json: the file is {&#34;steps&#34;: []}, not a list of steps" in page.text


@pytest.mark.parametrize("text", ["[" * 100_000 + "]" * 100_000, "{not json", "\udcff" * 3])
def test_unparsable_or_absurdly_nested_json_is_named_and_left_out(fresh_run: Path, text: str) -> None:
    for rel in ("history.json", "summary.json", "steps/step_0001/gate.json"):
        _write(fresh_run / rel, text)
    (fresh_run / "events.jsonl").write_text(text + "\n", errors="surrogatepass")
    c = client([fresh_run.parents[1]], stream_seconds=0.5)
    url = run_links(c.get("/runs").text)[0]
    _assert_every_page_renders(c, url)
    assert "history.json is not valid JSON" in c.get(url).text


def test_extreme_scores_draw_a_curve_without_hanging(fresh_run: Path) -> None:
    history = json.loads((fresh_run / "history.json").read_text())
    history[0].update(val_current=-1e300, val_candidate=1e300, val_after=1e308, best_val=1e300,
                      step=10**15)
    _write(fresh_run / "history.json", json.dumps(history))
    c = client([fresh_run.parents[1]])
    url = run_links(c.get("/runs").text)[0]
    page = c.get(url)
    assert page.status_code == 200 and '<svg class="curve" id="curve"' in page.text


_clients: dict[Path, object] = {}  # one dashboard per test run directory, shared by the examples


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow, HealthCheck.data_too_large])
@given(files=run_files)
def test_arbitrary_values_in_the_run_files_never_break_a_page(fresh_run: Path, files: dict) -> None:
    c = _clients.get(fresh_run)
    if c is None:
        c = _clients[fresh_run] = client([fresh_run.parents[1]], stream_seconds=0.05, poll=0.01, rescan_seconds=0)
    for rel, value in files.items():
        if rel == "events.jsonl":
            text = "".join((v if isinstance(v, str) and v.startswith("not json") else _dump(v)) + "\n" for v in value)
        else:
            text = _dump(value)
        _write(fresh_run / rel, text)
    links = run_links(c.get("/runs").text)
    assert links, "the run is still listed"
    _assert_every_page_renders(c, links[0])


def test_an_unexpected_failure_is_a_page_that_says_what_failed(fresh_run: Path, monkeypatch) -> None:
    from starlette.testclient import TestClient

    from sleep.ui import run_pages
    from sleep.ui.app import create_app
    from sleep.ui.guard import Policy

    def broken(*args):
        raise RuntimeError("the disk went away")

    monkeypatch.setattr(run_pages.rundata, "load_run", broken)
    c = TestClient(create_app([fresh_run.parents[1]], data_dir=None, policy=Policy(extra_hosts=("testserver",))),
                   raise_server_exceptions=False)
    c.get(f"/?token={c.app.state.ui.policy.token}")
    listing = c.get("/runs")
    assert listing.status_code == 200, listing.text
    r = c.get(run_links(listing.text)[0])
    assert r.status_code == 500 and "This page failed" in r.text and "RuntimeError: the disk went away" in r.text
    assert "Nothing was changed" in r.text
