"""The runs table on the server: sort, filter, group, page, export, config columns, shareable URLs.

The runs are copies of one real scripted training run whose ``config.yaml`` and
``summary.json`` differ the way real sweeps do (learning rate, gate policy, best val).
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

from ui_testutil import client, make_runs

def ids(html: str) -> list[str]:
    return re.findall(r'<tr class="run-row"[^>]*>\s*<td class="tick"><input[^>]*></td>\s*<td><a href="[^"]+">(r\d+)</a>', html)


def test_runs_list_is_paged_on_the_server_with_links_that_keep_the_view(toy_run: Path, tmp_path: Path) -> None:
    make_runs(toy_run, tmp_path / "outputs", 120)
    c = client([tmp_path / "outputs"])
    first = c.get("/runs?sort=run&dir=asc").text
    assert ids(first) == [f"r{i:03d}" for i in range(50)]
    assert "1–50 of 120" in first and "page 1 of 3" in first
    nxt = re.search(r'href="([^"]+)" rel="next"', first).group(1).replace("&amp;", "&")
    assert "sort=run" in nxt and "dir=asc" in nxt and "page=2" in nxt
    last = c.get("/runs?sort=run&dir=asc&page=3").text
    assert ids(last) == [f"r{i:03d}" for i in range(100, 120)] and 'rel="next"' not in last
    assert len(ids(c.get("/runs?per=200").text)) == 120


def test_sorting_by_best_val_puts_runs_without_one_last_in_both_directions(toy_run: Path, tmp_path: Path) -> None:
    made = make_runs(toy_run, tmp_path / "outputs", 12)
    c = client([tmp_path / "outputs"])
    scored = sorted((m for m in made if m["best"] is not None), key=lambda m: m["best"])
    down = ids(c.get("/runs?sort=best_val&dir=desc").text)
    up = ids(c.get("/runs?sort=best_val&dir=asc").text)
    assert down == [m["run"] for m in reversed(scored)] + ["r007"]
    assert up == [m["run"] for m in scored] + ["r007"]
    html = c.get("/runs?sort=best_val&dir=desc").text
    assert 'aria-sort="descending"' in html and "sort=best_val&amp;dir=asc" in html  # clicking again flips


def test_config_columns_show_and_filter_learning_rate_and_gate_policy(toy_run: Path, tmp_path: Path) -> None:
    made = make_runs(toy_run, tmp_path / "outputs", 30)
    c = client([tmp_path / "outputs"])
    html = c.get("/runs?gate=paired+%C2%B7+hard&lr=4&per=100").text
    want = sorted(m["run"] for m in made if m["gate"] == "paired" and m["lr"] == 4)
    assert sorted(ids(html)) == want and want
    row = html.split('class="run-row"', 1)[1].split("</tr>", 1)[0]
    assert ">4<" in row and "paired · hard" in row and "cosine (min 1.0)" in row and "scripted" in row
    assert f"{len(want)} of 30" in html
    # The filter menus offer each value with its count.
    assert re.search(r'<option value="paired · hard"[^>]*>paired · hard \(6\)</option>', html)


def test_search_and_group_by(toy_run: Path, tmp_path: Path) -> None:
    make_runs(toy_run, tmp_path / "outputs", 20)
    c = client([tmp_path / "outputs"])
    found = ids(c.get("/runs?q=r01+env_a&sort=run&dir=asc").text)
    assert found == [f"r{i:03d}" for i in range(10, 20) if i % 2]
    grouped = c.get("/runs?group=lr&sort=run&dir=asc&per=100").text
    heads = re.findall(r'<tr class="group"><th colspan="\d+">lr: ([^<]+)</th>', grouped)
    assert heads == ["1", "2", "4"]
    part = grouped.split("lr: 2</th>", 1)[1].split('class="group"', 1)[0]
    assert ids('<tr class="group">' + part) == [f"r{i:03d}" for i in range(20) if i % 3 == 1]


def test_exports_hold_every_matching_run_across_pages(toy_run: Path, tmp_path: Path) -> None:
    made = make_runs(toy_run, tmp_path / "outputs", 60)
    c = client([tmp_path / "outputs"])
    r = c.get("/runs.csv?lr=2&sort=run&dir=asc&page=2&per=5")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(r.text)))
    assert [x["run"] for x in rows] == [m["run"] for m in made if m["lr"] == 2]
    assert rows[0]["lr"] == "2" and rows[0]["gate"] in ("mean · hard", "paired · hard")
    data = c.get("/runs.json?gate=mean+%C2%B7+hard").json()
    assert sorted(d["run"] for d in data) == sorted(m["run"] for m in made if m["gate"] == "mean")
    assert all(d["url"].startswith("/runs/") for d in data)
    html = c.get("/runs?lr=2").text
    assert 'href="/runs.csv?lr=2"' in html and 'href="/runs.json?lr=2"' in html


def test_bad_table_parameters_are_said_and_the_table_still_shows(toy_run: Path, tmp_path: Path) -> None:
    make_runs(toy_run, tmp_path / "outputs", 3)
    c = client([tmp_path / "outputs"])
    r = c.get("/runs?sort=nope&page=9&per=x&group=run")
    assert r.status_code == 200 and len(ids(r.text)) == 3
    for said in ("sort=&#39;nope&#39; is not a column", "page 9 does not exist", "per=&#39;x&#39; is not a number",
                 "group=&#39;run&#39; cannot group"):
        assert said in r.text
