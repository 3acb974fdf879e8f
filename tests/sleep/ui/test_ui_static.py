"""Favicon, cacheable static files, the side-by-side diff's column widths, the per-item page."""

from __future__ import annotations

import re
from pathlib import Path

from ui_testutil import client, run_links


def test_favicon_is_served_and_linked_from_every_page(tmp_path: Path) -> None:
    c = client([tmp_path])
    r = c.get("/favicon.ico")
    assert r.status_code == 200 and r.headers["content-type"].startswith("image/svg+xml") and b"<svg" in r.content
    html = c.get("/runs").text
    assert re.search(r'<link rel="icon" href="/static/favicon\.svg\?v=[0-9a-f]{10}" type="image/svg\+xml">', html)
    assert c.get("/favicon.ico", headers={}).headers["cache-control"].startswith("private, max-age=")


def test_static_files_are_cacheable_by_this_browser_and_versioned(tmp_path: Path) -> None:
    c = client([tmp_path])
    html = c.get("/runs").text
    css = re.search(r'href="(/static/style\.css\?v=[0-9a-f]{10})"', html).group(1)
    r = c.get(css)
    assert r.status_code == 200 and r.headers["cache-control"] == "private, max-age=604800"
    assert c.get("/runs").headers["cache-control"] == "no-store"  # pages are never cached
    assert client([tmp_path], signed_in=False).get(css).status_code == 401  # still behind the token


def test_side_by_side_diff_fixes_its_line_number_columns(toy_run: Path) -> None:
    c = client([toy_run.parents[1]])
    url = run_links(c.get("/runs").text)[0]
    html = c.get(f"{url}/diff?a=0&b=6").text
    # table-layout: fixed takes column widths from <col>, not from a first row spanning 4 columns.
    assert '<colgroup><col class="ln"><col class="text"><col class="ln"><col class="text"></colgroup>' in html
    css = c.get("/static/style.css").text
    assert "table.sbs col.ln { width: 3.4em; }" in css and "@media (max-width: 760px)" in css


def test_item_page_lists_every_rollout_and_gate_delta_of_one_item(toy_run: Path) -> None:
    import json

    c = client([toy_run.parents[1]])
    url = run_links(c.get("/runs").text)[0]
    gate = json.loads((toy_run / "steps" / "step_0001" / "gate.json").read_text())
    val_item = next(iter(gate["deltas"]))
    html = c.get(f"{url}/items?id={val_item}").text
    assert f'<a href="{url}/steps/1">1</a>' in html.split('id="item-val"', 1)[1]
    train_item = json.loads((toy_run / "steps" / "step_0001" / "rollouts.json").read_text())[0]["task_id"]
    train = c.get(f"{url}/items?id={train_item}").text.split('id="item-train"', 1)[1].split("</table>", 1)[0]
    assert f'href="{url}/steps/1/samples/0"' in train
    assert c.get(f"{url}/items?id=../../etc/passwd").status_code == 404
    epoch = c.get(f"{url}/epochs/1").text
    assert f"{url}/items?id=" in epoch  # the slow update's item ids are links
