"""Each sample (input → output → expected → score → feedback, and a trajectory when the rollout
record has one) and the items × skill versions matrix, on a real scripted training run."""

from __future__ import annotations

import json
import re
from pathlib import Path

from ui_testutil import client, run_links


def _rollouts(run: Path, step: int) -> list[dict]:
    return json.loads((run / "steps" / f"step_{step:04d}" / "rollouts.json").read_text())


def _items(run: Path) -> dict[str, dict]:
    return {t["id"]: t for t in map(json.loads, (run / "items.jsonl").read_text().splitlines())}


def test_the_run_records_its_items_for_the_sample_view(toy_run: Path) -> None:
    items = _items(toy_run)
    splits = json.loads((toy_run / "dataset.json").read_text())["splits"]
    assert sorted(items) == sorted(i for ids in splits.values() for i in ids)
    assert all(t["prompt"] and t["judge"] for t in items.values())


def test_step_page_links_each_rollout_to_its_sample_with_the_prompt(toy_run: Path) -> None:
    c = client([toy_run.parents[1]])
    url = run_links(c.get("/runs").text)[0]
    html = c.get(f"{url}/steps/2").text
    first = _rollouts(toy_run, 2)[0]
    assert f'href="{url}/steps/2/samples/0" class="sample-link"><code>{first["task_id"]}</code>' in html
    assert _items(toy_run)[first["task_id"]]["prompt"] in html


def test_sample_page_shows_input_output_expected_score_and_feedback(toy_run: Path) -> None:
    c = client([toy_run.parents[1]])
    url = run_links(c.get("/runs").text)[0]
    rollouts = _rollouts(toy_run, 1)
    r = c.get(f"{url}/steps/1/samples/1")
    assert r.status_code == 200
    html, want = r.text, rollouts[1]
    item = _items(toy_run)[want["task_id"]]
    section = lambda name: re.search(rf'id="sample-{name}">(.*?)</', html, re.S).group(1)  # noqa: E731
    assert section("input") == item["prompt"]
    assert section("output") == want["response"]
    assert json.loads(section("judge").replace("&#34;", '"')) == item["judge"]
    assert section("feedback") == want["feedback"]
    assert ("pass" if want["hard"] >= 1 else "fail") + f" · hard {want['hard']:.2f}" in section("score")
    assert 'id="prev-sample"' in html and "No trajectory recorded" in html
    assert c.get(f"{url}/steps/1/samples/{len(rollouts)}").status_code == 404


def test_sample_page_shows_an_agent_trajectory_commands_files_and_check(fresh_run: Path) -> None:
    path = fresh_run / "steps" / "step_0001" / "rollouts.json"
    rollouts = json.loads(path.read_text())
    # The shape skillopt_core.backends.trajectory.Trajectory.to_dict writes (the replay work).
    rollouts[0]["trajectory"] = {"steps": [
        {"kind": "text", "text": "I will run the tests first."},
        {"kind": "tool_call", "name": "Bash", "input": "{\"command\": \"pytest -q\"}", "id": "t1"},
        {"kind": "command", "command": "pytest -q", "exit_code": 1, "output": "1 failed", "denied": False},
        {"kind": "file_change", "path": "src/app.py", "change": "modified"},
        {"kind": "command", "command": "rm -rf /", "exit_code": None, "output": "", "denied": True},
        {"kind": "check", "command": "pytest -q", "exit_code": 0, "output": "3 passed"},
        {"kind": "something_new", "event_type": "x"},
    ], "unknown_events": 1, "dropped": 0}
    path.write_text(json.dumps(rollouts))
    c = client([fresh_run.parents[1]])
    url = run_links(c.get("/runs").text)[0]
    html = c.get(f"{url}/steps/1/samples/0").text
    summary = re.search(r'id="trajectory-summary">(.*?)</p>', html, re.S).group(1)
    assert "2 commands run" in summary and "1 file changed" in summary and "passed" in summary
    steps = html.split('id="trajectory"', 1)[1].split("</ol>", 1)[0]
    assert "<code>$ pytest -q</code> <span class=\"note\">error (exit 1)</span>" in steps
    assert "<code>$ rm -rf /</code> <span class=\"note\">denied</span>" in steps
    assert "modified src/app.py" in steps and "1 failed" in steps and "event x" in steps


def test_matrix_shows_val_fixes_and_breaks_and_train_pass_fail_by_skill_version(toy_run: Path) -> None:
    c = client([toy_run.parents[1]])
    url = run_links(c.get("/runs").text)[0]
    html = c.get(f"{url}/matrix").text
    history = json.loads((toy_run / "history.json").read_text())
    # Val: step 1's gate deltas, each in its item's row, "fixed" when positive and accepted.
    gate = json.loads((toy_run / "steps" / "step_0001" / "gate.json").read_text())
    val = html.split('id="matrix-val"', 1)[1].split("</table>", 1)[0]
    for item, d in gate["deltas"].items():
        row = val.split(f">{item}</code></a></th>", 1)[1].split("</tr>", 1)[0]
        first = re.findall(r'<td class="cell m-(\w+)">', row)[0]
        kept = history[0]["action"].startswith("accept")
        assert first == ({True: "fixed", False: "up"}[kept] if d > 0 else "same" if d == 0 else
                         {True: "broke", False: "down"}[kept])
    # Train: every rollout of step 1 is a cell in column "skill 0", linking to its sample.
    train = html.split('id="matrix-train"', 1)[1].split("</table>", 1)[0]
    for i, r in enumerate(_rollouts(toy_run, 1)):
        row = train.split(f">{r['task_id']}</code></a></th>", 1)[1].split("</tr>", 1)[0]
        cell = re.findall(r'<td class="cell m-(\w+)">(?:<a href="([^"]+)")?', row)[0]
        assert cell == ("pass" if r["hard"] >= 1 else "fail", f"{url}/steps/1/samples/{i}")
    # An item that failed, then passed under a later skill, is marked fixed there (and only there).
    runs: dict[str, list[tuple[int, bool]]] = {}
    for step in range(1, len(history) + 1):
        for r in _rollouts(toy_run, step):
            runs.setdefault(r["task_id"], []).append((step, r["hard"] >= 1))
    flips = [(item, b[0]) for item, seq in runs.items() for a, b in zip(seq, seq[1:]) if not a[1] and b[1]]
    assert flips, "the toy run has an item fixed by training"
    item, step = flips[0]
    row = train.split(f">{item}</code></a></th>", 1)[1].split("</tr>", 1)[0]
    assert f'<td class="cell m-fixed"><a href="{url}/steps/{step}/samples/' in row


def test_step_page_labels_each_gate_number(toy_run: Path) -> None:
    c = client([toy_run.parents[1]])
    url = run_links(c.get("/runs").text)[0]
    gate = json.loads((toy_run / "steps" / "step_0001" / "gate.json").read_text())
    h = json.loads((toy_run / "history.json").read_text())[0]
    assert gate["early_stopped"] and h["action"] == "accept"  # the toy run's first step: accepted early
    html = c.get(f"{url}/steps/1").text
    explain = html.split('id="gate-explain"', 1)[1].split("</section>", 1)[0]
    n, k = gate["n_items"], gate["n_evaluated"]
    assert f"Candidate on the {k} val items evaluated</th><td id=\"gate-evaluated\">{gate['candidate_mean']:.3f}" in explain
    worst = gate["candidate_mean"] * k / n
    assert f"Worst case over all {n} val items</th><td id=\"gate-bound\">{worst:.3f}" in explain
    assert f"if the {n - k} items not evaluated all scored 0" in explain
    assert f"Candidate on the full val set ({n} items, after accepting)</th><td id=\"gate-full\">{h['val_after']:.3f}" in explain


def test_a_running_runs_page_says_how_far_the_rollout_is(fresh_run: Path) -> None:
    events = (fresh_run / "events.jsonl").read_text().splitlines()
    upto = next(i for i, line in enumerate(events) if '"step_started"' in line and '"step": 2' in line)
    head = [json.loads(line) for line in events[: upto + 1]]
    now = "2099-01-01T00:00:00.000Z"  # far in the future: the run is not stale
    tick = {"event": "rollout_progress", "run_id": "run", "at": now, "step": 2, "phase": "train", "done": 3,
            "total": 8, "label": ""}
    (fresh_run / "events.jsonl").write_text("".join(json.dumps({**e, "at": now}) + "\n" for e in head)
                                            + json.dumps(tick) + "\n")
    (fresh_run / "summary.json").unlink()
    c = client([fresh_run.parents[1]])
    url = run_links(c.get("/runs").text)[0]
    html = c.get(url).text
    assert 'data-live="1"' in html
    assert re.search(r'id="activity"[^>]*>\[Step 2\] rollout \(train\): 3 of 8 items done</p>', html)
    assert '<progress id="rollout-progress"' in html
