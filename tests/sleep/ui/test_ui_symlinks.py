"""Files of a run directory that are symbolic links leading out of it are never served.

A run directory can come from anywhere (an unpacked archive, a shared folder, a
colleague's outputs): a link such as ``best_skill.md -> /etc/passwd`` inside it must
not turn the dashboard into a reader of the person's other files. Every file a page
reads is resolved and refused when it lies outside the run directory; a page whose
whole content is that file answers with a clear 403 page, a page that only uses it
says which file it left out. A link that stays inside the run directory is followed.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from ui_testutil import client, run_links

OUTSIDE = "root:x:0:0:OUTSIDE-THE-RUN-DIRECTORY:/root:/bin/bash\n"


@pytest.fixture
def outside_file(tmp_path: Path) -> Path:
    path = tmp_path / "elsewhere" / "passwd"
    path.parent.mkdir()
    path.write_text(OUTSIDE)
    return path


def _link(run: Path, rel: str, target: Path) -> None:
    path = run / rel
    path.unlink()
    os.symlink(target, path)


def _url(run: Path):
    c = client([run.parents[1]], stream_seconds=1.0)  # a stream of a run without run_end stops after a second
    return c, run_links(c.get("/runs").text)[0]


@pytest.mark.parametrize("rel,route", [
    ("best_skill.md", "/best?raw=1"),
    ("best_skill.md", "/best"),
    ("skills/step_0001.md", "/skills/1?raw=1"),
    ("skills/step_0001.md", "/skills/1"),
    ("skills/step_0001.md", "/diff?a=0&b=1"),
])
def test_a_served_file_linked_outside_the_run_is_refused_with_a_clear_page(
        fresh_run: Path, outside_file: Path, rel: str, route: str) -> None:
    _link(fresh_run, rel, outside_file)
    c, url = _url(fresh_run)
    r = c.get(url + route)
    assert r.status_code == 403, r.text
    assert "OUTSIDE-THE-RUN-DIRECTORY" not in r.text
    assert f"{Path(rel).name} leads outside the run directory" in r.text


def test_a_linked_candidate_is_left_out_of_the_step_page(fresh_run: Path, outside_file: Path) -> None:
    _link(fresh_run, "steps/step_0001/candidate.md", outside_file)
    c, url = _url(fresh_run)
    r = c.get(f"{url}/steps/1")
    assert r.status_code == 200
    assert "OUTSIDE-THE-RUN-DIRECTORY" not in r.text
    assert "candidate.md leads outside the run directory" in r.text


def test_a_linked_events_log_is_not_streamed(fresh_run: Path, tmp_path: Path) -> None:
    planted = tmp_path / "elsewhere.jsonl"
    planted.write_text(json.dumps({"event": "notice", "level": "warning", "text": "OUTSIDE-THE-RUN-DIRECTORY"}) + "\n")
    _link(fresh_run, "events.jsonl", planted)
    c, url = _url(fresh_run)
    r = c.get(f"{url}/events")
    assert r.status_code == 403 and "OUTSIDE-THE-RUN-DIRECTORY" not in r.text
    assert "events.jsonl leads outside the run directory" in r.text
    page = c.get(url)
    assert page.status_code == 200 and "OUTSIDE-THE-RUN-DIRECTORY" not in page.text
    assert "OUTSIDE-THE-RUN-DIRECTORY" not in c.get("/runs").text


@pytest.mark.parametrize("rel", ["history.json", "summary.json", "steps/step_0001/gate.json",
                                 "steps/step_0001/rollouts.json", "slow_update/epoch_01/comparison.json",
                                 "meta_skill/epoch_01/notes.md"])
def test_a_linked_data_file_is_not_read_and_the_page_says_so(fresh_run: Path, tmp_path: Path, rel: str) -> None:
    planted = tmp_path / "planted.json"
    planted.write_text(json.dumps([{"step": 1, "gate_reason": "OUTSIDE-THE-RUN-DIRECTORY", "action": "accept"}]
                                  if rel == "history.json" else
                                  {"status": "OUTSIDE-THE-RUN-DIRECTORY", "summary": "OUTSIDE-THE-RUN-DIRECTORY",
                                   "reason": "OUTSIDE-THE-RUN-DIRECTORY", "error": "OUTSIDE-THE-RUN-DIRECTORY"}))
    _link(fresh_run, rel, planted)
    c, url = _url(fresh_run)
    for page in ("/runs", url, f"{url}/steps/1", f"{url}/epochs/1", f"{url}/fragments"):
        r = c.get(page)
        assert r.status_code == 200, (page, r.text)
        assert "OUTSIDE-THE-RUN-DIRECTORY" not in r.text, page
    named = c.get(f"{url}/steps/1" if rel.startswith("steps/") else f"{url}/epochs/1" if "epoch_01" in rel else url)
    if rel != "summary.json":  # the run page never reads the summary: the list row does, and shows nothing from it
        assert f"{Path(rel).name} leads outside the run directory" in named.text


def test_a_linked_skills_folder_is_not_listed(fresh_run: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "other-skills"
    elsewhere.mkdir()
    (elsewhere / "step_0042.md").write_text("OUTSIDE-THE-RUN-DIRECTORY\n")
    for f in (fresh_run / "skills").iterdir():
        f.unlink()
    (fresh_run / "skills").rmdir()
    os.symlink(elsewhere, fresh_run / "skills")
    c, url = _url(fresh_run)
    assert "skills/42" not in c.get(url).text
    assert c.get(f"{url}/skills/42?raw=1").status_code == 403


def test_a_link_that_stays_inside_the_run_is_followed(fresh_run: Path) -> None:
    _link(fresh_run, "best_skill.md", Path("skills") / "step_0001.md")
    c, url = _url(fresh_run)
    r = c.get(f"{url}/best?raw=1")
    assert r.status_code == 200 and r.text == (fresh_run / "skills" / "step_0001.md").read_text()


def test_a_device_or_pipe_in_place_of_a_file_is_refused_without_blocking(fresh_run: Path, tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    (fresh_run / "best_skill.md").unlink()
    os.mkfifo(fresh_run / "best_skill.md")
    _link(fresh_run, "skills/step_0001.md", Path("/dev/zero"))
    c, url = _url(fresh_run)
    best = c.get(f"{url}/best?raw=1")
    assert best.status_code == 403 and "best_skill.md is not a regular file" in best.text
    assert c.get(f"{url}/skills/1?raw=1").status_code == 403
