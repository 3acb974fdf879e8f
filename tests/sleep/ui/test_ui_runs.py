"""The runs pages through Starlette's test client, on a real scripted training run."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest

from skillopt_core.run import events as ev
from ui_testutil import client, event_kinds, run_links, sse_messages


def _history(run: Path) -> list[dict]:
    return json.loads((run / "history.json").read_text())


def test_runs_list_shows_env_status_steps_best_val_and_test_scores(toy_run: Path) -> None:
    c = client([toy_run.parents[1]])
    html = c.get("/runs").text
    summary = json.loads((toy_run / "summary.json").read_text())
    row = html.split('class="run-row"', 1)[1].split("</tr>", 1)[0]
    assert "jsonl_tasks" in row and ">completed<" in row
    assert f"{summary['steps_done']} / {summary['total_steps']}" in row
    assert f"{summary['best_val']:.3f}" in row
    assert f"{summary['initial_test']:.3f} → {summary['best_test']:.3f}" in row
    assert run_links(html) == [run_links(html)[0]] and run_links(html)[0].endswith("/jsonl_tasks/run")


def test_runs_list_names_budget_stops_and_failures(fresh_run: Path) -> None:
    for name, status in (("b", "budget_exhausted"), ("f", "failed")):
        other = fresh_run.parent / name
        shutil.copytree(fresh_run, other)
        summary = json.loads((other / "summary.json").read_text())
        (other / "summary.json").write_text(json.dumps({**summary, "status": status}))
        (other / "events.jsonl").unlink()
    html = client([fresh_run.parents[1]]).get("/runs").text
    assert ">budget stop<" in html and ">failed<" in html and ">completed<" in html


def test_runs_list_finds_runs_in_the_data_directory(toy_run: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(toy_run, data / "runs" / "proj-abc" / "jsonl_tasks" / "night-1")
    c = client([tmp_path / "no-outputs-here"], data_dir=data)
    links = run_links(c.get("/runs").text)
    assert len(links) == 1 and links[0].endswith("/jsonl_tasks/night-1")
    assert c.get(links[0]).status_code == 200


def test_run_page_has_curve_with_accept_and_reject_marks_and_one_row_per_step(toy_run: Path) -> None:
    c = client([toy_run.parents[1]])
    url = run_links(c.get("/runs").text)[0]
    r = c.get(url)
    assert r.status_code == 200
    history = _history(toy_run)
    html = r.text
    assert '<svg class="curve" id="curve"' in html
    marks = re.findall(r'class="mark (\w+)[^"]*" data-step="(\d+)"', html)
    assert marks == [({"no_change": "same"}.get(h["action"], h["action"]), str(h["step"])) for h in history]
    assert html.count('class="step-row') == len(history)
    first = html.split('id="step-1"', 1)[1].split("</tr>", 1)[0]
    h = history[0]
    assert f"{h['gate_evaluated']}/{h['gate_items']}" in first
    assert f"{h['val_current']:.3f} → {h['val_candidate']:.3f}" in first
    assert 'data-live="1"' not in html  # a finished run opens no event stream


def test_run_page_lists_epochs_with_slow_update_and_meta_notes(toy_run: Path) -> None:
    c = client([toy_run.parents[1]])
    url = run_links(c.get("/runs").text)[0]
    html = c.get(url).text
    assert f"{url}/epochs/1" in html and "Replacing the banana rule hurt." in html
    epoch = c.get(f"{url}/epochs/1").text
    comparison = json.loads((toy_run / "slow_update" / "epoch_01" / "comparison.json").read_text())
    assert comparison["summary"] in epoch and "Keep saying banana." in epoch


def test_step_page_shows_gate_deltas_edits_and_the_candidate_diff(toy_run: Path) -> None:
    c = client([toy_run.parents[1]])
    url = run_links(c.get("/runs").text)[0]
    html = c.get(f"{url}/steps/1").text
    gate = json.loads((toy_run / "steps" / "step_0001" / "gate.json").read_text())
    for item, delta in gate["deltas"].items():
        assert f"<code>{item}</code>" in html
    assert "banana tasks fail" in html  # the selected edit's rationale
    assert '<tr class="insert">' in html and "<mark>Always say banana.</mark>" in html


def test_skill_at_a_step_and_side_by_side_diff_between_two_steps(toy_run: Path) -> None:
    c = client([toy_run.parents[1]])
    url = run_links(c.get("/runs").text)[0]
    raw = c.get(f"{url}/skills/1?raw=1")
    assert raw.text == (toy_run / "skills" / "step_0001.md").read_text()
    diff = c.get(f"{url}/diff?a=0&b=6").text
    assert "+1</span>" in diff and "Always say banana." in diff
    same = c.get(f"{url}/diff?a=4&b=5").text
    assert "The two texts are identical." in same


def test_diff_with_a_missing_step_is_404_and_a_bad_number_is_400(toy_run: Path) -> None:
    c = client([toy_run.parents[1]])
    url = run_links(c.get("/runs").text)[0]
    assert c.get(f"{url}/diff?a=0&b=99").status_code == 404
    assert c.get(f"{url}/diff?a=zero&b=1").status_code == 400
    assert c.get(f"{url}/steps/99").status_code == 404


@pytest.mark.parametrize("suffix", [
    "/%2e%2e/%2e%2e", "/..%2f..%2fetc/passwd", "/jsonl_tasks/%2e%2e", "/.hidden/run", "/jsonl_tasks/run%2f..%2f..%2f..", "/jsonl_tasks/~",
])
def test_traversal_out_of_the_run_folders_is_404(toy_run: Path, suffix: str) -> None:
    c = client([toy_run.parents[1]])
    root = run_links(c.get("/runs").text)[0].split("/")[2]
    assert c.get(f"/runs/{root}{suffix}").status_code == 404


def test_unknown_root_id_is_404_and_names_the_searched_folders(toy_run: Path) -> None:
    r = client([toy_run.parents[1]]).get("/runs/0123456789/jsonl_tasks/run")
    assert r.status_code == 404 and str(toy_run.parents[1]) in r.text


def test_a_symlink_leading_out_of_the_outputs_folder_is_not_served(toy_run: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere" / "secret-run"
    shutil.copytree(toy_run, outside)
    outputs = tmp_path / "outputs" / "jsonl_tasks"
    outputs.mkdir(parents=True)
    shutil.copytree(toy_run, outputs / "real")
    os.symlink(outside, outputs / "linked")
    c = client([tmp_path / "outputs"])
    links = run_links(c.get("/runs").text)
    assert [link.rsplit("/", 1)[1] for link in links] == ["real"]
    root = links[0].split("/")[2]
    assert c.get(f"/runs/{root}/jsonl_tasks/linked").status_code == 404


def test_static_files_do_not_reach_the_package(toy_run: Path) -> None:
    c = client([toy_run.parents[1]])
    assert c.get("/static/app.js").status_code == 200
    assert c.get("/static/%2e%2e/app.py").status_code == 404


def test_events_stream_sends_every_line_then_end_and_resumes_from_an_offset(toy_run: Path) -> None:
    c = client([toy_run.parents[1]])
    url = run_links(c.get("/runs").text)[0]
    lines = (toy_run / "events.jsonl").read_text().splitlines()
    messages = sse_messages(c.get(f"{url}/events").text)
    assert event_kinds(messages) == [json.loads(line)["event"] for line in lines]
    assert messages[-1]["event"] == "end"
    cut = int(messages[9]["id"])
    later = sse_messages(c.get(f"{url}/events?from={cut}").text)
    assert event_kinds(later) == [json.loads(line)["event"] for line in lines[10:]]
    resumed = sse_messages(c.get(f"{url}/events", headers={"Last-Event-ID": str(cut)}).text)
    assert event_kinds(resumed) == event_kinds(later)


def test_each_streamed_event_carries_the_engines_line_the_page_shows(toy_run: Path) -> None:
    c = client([toy_run.parents[1]])
    url = run_links(c.get("/runs").text)[0]
    lines = (toy_run / "events.jsonl").read_text().splitlines()
    sent = [json.loads(m["data"]) for m in sse_messages(c.get(f"{url}/events").text)
            if m["event"] == "message"]
    assert [e.pop("line") for e in sent] == [ev.event_line(ev.Event.from_dict(json.loads(x))) for x in lines]
    assert sent == [json.loads(x) for x in lines]  # the event itself as written


def test_fragments_render_the_parts_a_live_page_replaces(toy_run: Path) -> None:
    c = client([toy_run.parents[1]])
    url = run_links(c.get("/runs").text)[0]
    parts = c.get(f"{url}/fragments").json()
    assert parts["steps"].count('class="step-row') == len(_history(toy_run))
    assert parts["curve"].startswith('<svg class="curve"') and parts["live"] is False


def test_a_run_without_run_end_is_running_and_its_page_follows_events(fresh_run: Path) -> None:
    events = fresh_run / "events.jsonl"
    lines = events.read_text().splitlines()
    cut = next(i for i, line in enumerate(lines) if json.loads(line)["event"] == "step_started"
               and json.loads(line)["step"] == 3)
    events.write_text("\n".join(lines[:cut + 1]) + "\n")
    (fresh_run / "summary.json").unlink()
    c = client([fresh_run.parents[1]])
    listing = c.get("/runs").text
    assert ">running<" in listing
    url = run_links(listing)[0]
    html = c.get(url).text
    assert 'data-live="1"' in html and f'data-events="{url}/events?from={events.stat().st_size}"' in html


def test_a_long_run_shows_its_latest_steps_in_the_table_and_all_of_them_on_request(fresh_run: Path) -> None:
    record = _history(fresh_run)[1]
    (fresh_run / "history.json").write_text(json.dumps([{**record, "step": n} for n in range(1, 151)]))
    c = client([fresh_run.parents[1]])
    url = run_links(c.get("/runs").text)[0]
    html = c.get(url).text
    rows = re.findall(r'<tr id="step-(\d+)"', html)
    assert rows == [str(n) for n in range(51, 151)]
    assert "50 earlier steps not shown" in html and f'href="{url}?steps=all"' in html
    assert len(re.findall(r'class="mark [^"]*" data-step=', html)) == 150  # the curve has every step
    assert len(re.findall(r'<tr id="step-', c.get(f"{url}?steps=all").text)) == 150
