"""Comparing runs (overlaid curves, settings side by side), the run page's config panel and its
per-step charts, on real scripted training runs."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
import yaml
from ui_testutil import client, run_links

from sleep.ui.charts import METRICS
from sleep.ui.rundata import StepRow
from sleep.ui.svgplot import curve_svg, step_ticks


def _two_runs(toy_run: Path, tmp_path: Path) -> tuple[Path, Path]:
    a = tmp_path / "outputs" / "jsonl_tasks" / "lr2"
    b = tmp_path / "outputs" / "jsonl_tasks" / "lr4"
    shutil.copytree(toy_run, a)
    shutil.copytree(toy_run, b)
    cfg = yaml.safe_load((b / "config.yaml").read_text())
    cfg["optimizer"]["learning_rate"] = 4
    cfg["evaluation"]["gate_policy"] = "paired"
    (b / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    return a, b


def _key(url: str) -> str:
    return "/".join(url.split("/")[2:])


def test_compare_overlays_each_runs_curves_and_highlights_differing_settings(toy_run: Path, tmp_path: Path) -> None:
    a, b = _two_runs(toy_run, tmp_path)
    c = client([tmp_path / "outputs"])
    urls = run_links(c.get("/runs").text)
    r = c.get("/compare?" + "&".join(f"run={_key(u)}" for u in urls))
    assert r.status_code == 200
    html = r.text
    # One line per run on each chart, same colour class per run.
    val = html.split('id="compare-val"', 1)[1].split("</figure>", 1)[0]
    assert len(re.findall(r'<path class="series c(\d)"', val)) == 2
    assert 'data-label="lr2"' in val and 'data-label="lr4"' in val
    history = json.loads((a / "history.json").read_text())
    values = re.search(r'data-label="lr2" data-values="([^"]*)"', val).group(1).split("|")
    assert values == [f"{h['val_after']:.2f}" for h in history]
    # Settings: only the differing ones by default, highlighted; everything on request.
    rows = re.findall(r'<tr class="(differs|same)"><th scope="row"><code>([^<]+)</code>', html)
    assert sorted(k for cls, k in rows) == ["evaluation.gate_policy", "optimizer.learning_rate"]
    assert all(cls == "differs" for cls, _ in rows)
    lr = html.split("<code>optimizer.learning_rate</code>", 1)[1].split("</tr>", 1)[0]
    assert re.findall(r"<td>([^<]*)</td>", lr) == ["2.0", "4"]
    every = c.get("/compare?" + "&".join(f"run={_key(u)}" for u in urls) + "&all=1").text
    assert '<tr class="same"><th scope="row"><code>train.num_epochs</code>' in every


def test_compare_says_which_ticked_runs_it_could_not_find(toy_run: Path, tmp_path: Path) -> None:
    _two_runs(toy_run, tmp_path)
    c = client([tmp_path / "outputs"])
    urls = run_links(c.get("/runs").text)
    html = c.get(f"/compare?run={_key(urls[0])}&run=0123456789/jsonl_tasks/gone&run=..%2Fetc").text
    assert "Not compared: no folder with id 0123456789 holds runs" in html
    assert "is not &lt;root&gt;/&lt;env&gt;/&lt;run&gt;" in html
    assert "Tick two or more runs" in html


def test_runs_table_ticks_runs_into_the_compare_form(toy_run: Path, tmp_path: Path) -> None:
    _two_runs(toy_run, tmp_path)
    html = client([tmp_path / "outputs"]).get("/runs").text
    form = html.split('<form method="get" action="/compare" id="compare-form">', 1)[1].split("</form>", 1)[0]
    assert len(re.findall(r'<input type="checkbox" name="run" value="[0-9a-f]{10}/jsonl_tasks/lr[24]"', form)) == 2


def test_run_page_has_a_config_panel_and_five_per_step_charts(toy_run: Path) -> None:
    c = client([toy_run.parents[1]])
    url = run_links(c.get("/runs").text)[0]
    html = c.get(url).text
    panel = html.split('id="config-panel"', 1)[1].split("</section>", 1)[0]
    assert "<h3>optimizer</h3>" in panel and "<dt>learning_rate</dt><dd>2.0</dd>" in panel
    assert "<dt>gate_policy</dt><dd>mean</dd>" in panel
    for m in METRICS:
        assert f'id="chart-{m.key}"' in html
    history = json.loads((toy_run / "history.json").read_text())
    tokens = html.split('id="chart-tokens"', 1)[1].split("</figure>", 1)[0]
    steps = re.search(r'data-steps="([^"]*)"', tokens).group(1)
    assert steps == ",".join(str(h["step"]) for h in history)


def test_zoomed_run_page_draws_only_the_chosen_steps(toy_run: Path) -> None:
    c = client([toy_run.parents[1]])
    url = run_links(c.get("/runs").text)[0]
    html = c.get(f"{url}?from=2&to=4").text
    curve = html.split('<svg class="curve"', 1)[1].split("</svg>", 1)[0]
    assert re.findall(r'data-step="(\d+)"', curve) == ["2", "3", "4"]
    assert 'id="zoom-reset"' in html
    assert re.search(r'id="chart-train".*?data-steps="2,3,4"', html, re.S)


@pytest.mark.parametrize("last, want", [(6, [0, 1, 2, 3, 4, 5, 6]), (500, list(range(0, 501, 50))),
                                        (42, [0, 5, 10, 15, 20, 25, 30, 35, 42]), (1, [0, 1])])
def test_step_axis_has_round_ticks_and_always_labels_the_last_step(last: int, want: list[int]) -> None:
    assert step_ticks(last) == want


def test_a_500_step_curve_labels_step_500_and_uses_small_markers() -> None:
    steps = [StepRow.from_record({"step": s, "action": "accept" if s % 3 == 0 else "reject", "val_current": 0.3,
                                  "val_candidate": 0.31, "val_after": 0.3, "best_val": 0.3, "gate_items": 10,
                                  "gate_evaluated": 10}) for s in range(1, 501)]
    svg = curve_svg(0.3, steps, 500, step_url="/runs/x/e/r/steps")
    ticks = re.findall(r'<text class="tick" x="[^"]+" y="\d+" text-anchor="middle">(\d+)</text>', svg)
    assert ticks[-1] == "500" and len(ticks) == 11
    assert svg.count('r="4.5"') <= 1  # the legend's; marks are small
    assert len(re.findall(r'class="mark (?:accept|reject)[^"]*" data-step', svg)) == 500
    # The page's script shows each mark's tip under the pointer and opens its step on a click.
    assert 'data-step-url="/runs/x/e/r/steps"' in svg and 'data-step="3" data-tip="step 3: accept, candidate 0.310' in svg
    assert "<title>step " not in svg


@pytest.mark.parametrize("values", [(0.0, 0.0), (0.39, 0.41), (0.0, 0.62), (0.9, 1.0)])
def test_score_charts_label_their_axis_without_repeats(values: tuple[float, float]) -> None:
    from sleep.ui.charts import Series, _score, chart

    svg = chart([Series("x", ((1, values[0]), (2, values[1])))], "t", _score, "c")
    labels = re.findall(r'text-anchor="end">([^<]+)<', svg)
    assert len(labels) == len(set(labels)) >= 3
    assert float(labels[0]) <= min(values) and float(labels[-1]) >= max(values)
