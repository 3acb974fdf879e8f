"""A run's name, tags, note and archived flag (labels.json in the run directory), set from its page."""

from __future__ import annotations

import json
import re
from pathlib import Path

from proposal_testutil import SECRET
from ui_testutil import client, post, run_links


def _save(c, url: str, **form) -> str:
    r = post(c, f"{url}/labels", {"name": "", "tags": "", "note": "", **form})
    assert r.status_code == 303 and r.headers["location"].startswith(f"{url}?flash=")
    return c.get(r.headers["location"]).text


def test_name_tags_and_note_are_kept_with_the_run_and_shown_in_the_table(fresh_run: Path) -> None:
    c = client([fresh_run.parents[1]])
    url = run_links(c.get("/runs").text)[0]
    page = _save(c, url, name="baseline, cosine", tags="baseline, lr-sweep sweep:2", note="First try.\nKeep it.")
    assert "Saved." in page and 'id="run-name">baseline, cosine<' in page and "First try.\nKeep it." in page
    stored = json.loads((fresh_run / "labels.json").read_text())
    assert (stored["name"], stored["tags"], stored["archived"]) == ("baseline, cosine", ["baseline", "lr-sweep", "sweep:2"], False)
    table = c.get("/runs").text
    assert '<div class="runname">baseline, cosine</div>' in table and 'href="/runs?tag=lr-sweep">lr-sweep</a>' in table
    assert len(re.findall(r'class="run-row"', c.get("/runs?tag=lr-sweep").text)) == 1
    assert len(re.findall(r'class="run-row"', c.get("/runs?tag=other").text)) == 0
    assert len(re.findall(r'class="run-row"', c.get("/runs?q=keep+it").text)) == 1  # the note is searched


def test_archived_runs_leave_the_table_until_asked_for(fresh_run: Path) -> None:
    c = client([fresh_run.parents[1]])
    url = run_links(c.get("/runs").text)[0]
    page = _save(c, url, archived="1")
    assert "The run is archived" in page
    table = c.get("/runs").text
    assert 'class="run-row"' not in table and "1 archived run hidden" in table
    shown = c.get("/runs?archived=1").text
    assert shown.count('class="run-row"') == 1 and ">archived</span>" in shown
    _save(c, url)  # un-archive
    assert c.get("/runs").text.count('class="run-row"') == 1


def test_a_secret_typed_into_a_note_is_stored_redacted(fresh_run: Path) -> None:
    c = client([fresh_run.parents[1]])
    url = run_links(c.get("/runs").text)[0]
    page = _save(c, url, note=f"token was {SECRET}")
    raw = (fresh_run / "labels.json").read_text()
    assert SECRET not in raw and "[REDACTED:" in raw and SECRET not in page


def test_a_bad_tag_or_a_missing_csrf_token_changes_nothing(fresh_run: Path) -> None:
    c = client([fresh_run.parents[1]])
    url = run_links(c.get("/runs").text)[0]
    page = _save(c, url, tags="ok, not/this")
    assert "Not saved" in page and "The tag &#39;not/this&#39; is not one word" in page
    assert not (fresh_run / "labels.json").exists()
    r = post(c, f"{url}/labels", {"name": "x"}, csrf="wrong")
    assert "Not saved" in c.get(r.headers["location"]).text and not (fresh_run / "labels.json").exists()
    refused = post(c, f"{url}/labels", {"name": "x"}, origin="http://evil.example")
    assert refused.status_code == 403 and not (fresh_run / "labels.json").exists()


def test_a_labels_link_planted_in_the_run_is_replaced_never_followed(fresh_run: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.json"
    outside.write_text('{"name": "outside"}')
    (fresh_run / "labels.json").symlink_to(outside)
    c = client([fresh_run.parents[1]])
    url = run_links(c.get("/runs").text)[0]
    assert "outside" not in c.get("/runs").text  # a link out is not read
    _save(c, url, name="mine")
    assert outside.read_text() == '{"name": "outside"}'
    assert not (fresh_run / "labels.json").is_symlink() and json.loads((fresh_run / "labels.json").read_text())["name"] == "mine"
