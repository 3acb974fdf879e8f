"""The morning review through the pages: proposals listed and shown with their diff, adopted and
rejected through the forms (the same library as the CLI), and the library's refusals shown."""

from __future__ import annotations

from pathlib import Path

from proposal_testutil import staged, CANDIDATE, INTENT, SKILL, SKILL_TEXT, git, write
from ui_testutil import client, post

from sleep.proposals import get



def test_proposals_list_shows_pending_proposals_with_scores(tmp_path: Path) -> None:
    _, p = staged(tmp_path)
    html = client([tmp_path / "outputs"]).get("/proposals").text
    assert f'href="/proposals/{p.id}"' in html and p.branch in html and "0.50 → 0.75" in html
    assert "pending" in html


def test_overview_lists_what_waits_for_review(tmp_path: Path) -> None:
    _, p = staged(tmp_path)
    html = client([tmp_path / "outputs"]).get("/").text
    assert "1 proposal waiting for you." in html and f"/proposals/{p.id}" in html


def test_proposal_page_shows_report_and_the_staged_diff(tmp_path: Path) -> None:
    _, p = staged(tmp_path)
    html = client([tmp_path / "outputs"]).get(f"/proposals/{p.id}").text
    # Side by side, numbered as in the file: the Markdown list item reads as written, not as "+- ".
    diff = html.split('<table class="sbs" id="diff">', 1)[1].split("</table>", 1)[0]
    assert '<tr class="insert">\n  <td class="ln"></td>\n  <td class="l"></td>\n  <td class="ln">9</td>\n' \
           '  <td class="r"><mark>- Run `ruff check .` before the tests.</mark></td>' in diff
    assert '<td class="ln">8</td>\n  <td class="l">- Run `pytest -q` from the repository root.</td>' in diff
    assert INTENT in html  # the report's task intent, next to its delta
    assert 'id="adopt"' in html and 'id="reject"' in html
    # Decide first (the evidence follows), each action behind its confirmation box.
    assert html.index('<h2>Decide</h2>') < html.index('id="diff"')
    assert html.index('id="adopt-open"') < html.index('id="adopt"')


def test_adopt_through_the_page_writes_the_candidate_and_says_so(tmp_path: Path) -> None:
    repo, p = staged(tmp_path)
    c = client([tmp_path / "outputs"])
    r = post(c, f"/proposals/{p.id}/adopt", {})
    assert r.status_code == 303
    assert (repo / SKILL).read_text() == CANDIDATE
    assert get(p.id).state == "adopted"
    page = c.get(r.headers["location"]).text
    assert f"Adopted {p.id}: {repo / SKILL} now has the candidate." in page
    assert 'id="adopt"' not in page  # decided: no buttons
    assert 'id="undo-open"' in page  # but Undo, behind its confirmation


def test_undo_through_the_page_gives_the_file_back_its_text(tmp_path: Path) -> None:
    repo, p = staged(tmp_path)
    c = client([tmp_path / "outputs"])
    post(c, f"/proposals/{p.id}/adopt", {})
    r = post(c, f"/proposals/{p.id}/undo", {})
    assert r.status_code == 303 and get(p.id).state == "undone"
    assert (repo / SKILL).read_text() == SKILL_TEXT
    page = c.get(r.headers["location"]).text
    assert f"Undid the adoption of {p.id}" in page and 'id="undo-open"' not in page
    refused = c.get(post(c, f"/proposals/{p.id}/undo", {}).headers["location"]).text
    assert "Refused" in refused and (repo / SKILL).read_text() == SKILL_TEXT


def test_adopt_with_commit_commits_the_skill_file(tmp_path: Path) -> None:
    repo, p = staged(tmp_path)
    r = post(client([tmp_path / "outputs"]), f"/proposals/{p.id}/adopt", {"commit": "1"})
    assert r.status_code == 303
    assert git(repo, "log", "-1", "--format=%s") == f"skillopt: adopt tests (proposal {p.id})"


def _followed(c, r):
    """The page a POST redirected to (a refusal is shown there, never at the POST's address)."""
    assert r.status_code == 303 and r.headers["location"].startswith("/proposals/"), r.text
    return c.get(r.headers["location"])


def test_adopt_refused_when_the_live_file_changed_redirects_to_the_page_with_the_library_message(
        tmp_path: Path) -> None:
    repo, p = staged(tmp_path)
    edited = SKILL_TEXT + "- my own edit this morning\n"
    write(repo / SKILL, edited)
    c = client([tmp_path / "outputs"])
    page = _followed(c, post(c, f"/proposals/{p.id}/adopt", {}))
    assert page.status_code == 200
    assert "changed (+1 -0 lines" in page.text and "nothing was written" in page.text and 'role="alert"' in page.text
    assert (repo / SKILL).read_text() == edited
    assert get(p.id).state == "stale"
    again = c.get(f"/proposals/{p.id}")  # a reload is a GET: nothing is tried again
    assert again.status_code == 200 and 'role="alert"' not in again.text


def test_a_stale_proposal_has_no_active_adopt_button(tmp_path: Path) -> None:
    repo, p = staged(tmp_path)
    write(repo / SKILL, SKILL_TEXT + "- my own edit this morning\n")
    html = client([tmp_path / "outputs"]).get(f"/proposals/{p.id}").text
    button = html.split('id="adopt"', 1)[1].split(">", 1)[0]
    assert " disabled" in button and "Adopt is off: this proposal is stale" in html
    assert 'id="reject"' in html and " disabled" not in html.split('id="reject"', 1)[1].split(">", 1)[0]


def test_a_pending_proposal_has_an_active_adopt_button(tmp_path: Path) -> None:
    _, p = staged(tmp_path)
    html = client([tmp_path / "outputs"]).get(f"/proposals/{p.id}").text
    assert " disabled" not in html.split('id="adopt"', 1)[1].split(">", 1)[0]


def test_reject_through_the_page_deletes_the_branch_and_keeps_the_reason(tmp_path: Path) -> None:
    repo, p = staged(tmp_path)
    c = client([tmp_path / "outputs"])
    r = post(c, f"/proposals/{p.id}/reject", {"reason": "too wordy"})
    assert r.status_code == 303
    assert git(repo, "branch", "--list", p.branch) == ""
    decided = get(p.id)
    assert (decided.state, decided.reason) == ("rejected", "too wordy")
    page = c.get(r.headers["location"]).text
    assert f"Rejected {p.id}" in page and f"deleted the branch {p.branch}." in page
    assert "too wordy" in page


def test_deciding_twice_is_refused_with_the_library_message(tmp_path: Path) -> None:
    _, p = staged(tmp_path)
    c = client([tmp_path / "outputs"])
    assert post(c, f"/proposals/{p.id}/reject", {}).status_code == 303
    again = _followed(c, post(c, f"/proposals/{p.id}/adopt", {}))
    assert f"proposal {p.id} was already rejected" in again.text and 'role="alert"' in again.text


def test_post_without_the_csrf_token_is_refused_and_changes_nothing(tmp_path: Path) -> None:
    repo, p = staged(tmp_path)
    c = client([tmp_path / "outputs"])
    for token in (None, "forged"):
        page = _followed(c, post(c, f"/proposals/{p.id}/adopt", {}, csrf=token))
        assert "security token" in page.text and 'role="alert"' in page.text
    assert (repo / SKILL).read_text() == SKILL_TEXT and get(p.id).state == "pending"


def test_cross_origin_post_is_refused_even_with_the_token(tmp_path: Path) -> None:
    repo, p = staged(tmp_path)
    c = client([tmp_path / "outputs"])
    r = post(c, f"/proposals/{p.id}/adopt", {}, origin="http://evil.example")
    assert r.status_code == 403 and "another origin" in r.text
    no_origin = post(c, f"/proposals/{p.id}/reject", {}, origin=None)
    assert no_origin.status_code == 403 and "neither an Origin nor a Referer" in no_origin.text
    assert (repo / SKILL).read_text() == SKILL_TEXT and get(p.id).state == "pending"


def test_unknown_proposal_is_404(tmp_path: Path) -> None:
    staged(tmp_path)
    c = client([tmp_path / "outputs"])
    assert c.get("/proposals/deadbeef").status_code == 404
    r = post(c, "/proposals/deadbeef/adopt", {})
    assert r.status_code == 303 and c.get(r.headers["location"]).status_code == 404
    assert c.get("/proposals/..%2f..").status_code == 404


def test_no_index_means_no_proposals_and_no_index_file_is_created(tmp_path: Path, homes) -> None:
    c = client([tmp_path / "outputs"])
    html = c.get("/proposals").text
    assert "No index yet" in html
    assert c.get("/proposals/abcd1234").status_code == 404
    assert not homes.index.exists()


def test_a_memory_file_proposal_is_labelled_as_such(tmp_path: Path) -> None:
    from proposal_testutil import NIGHT, make_repo, report

    from sleep.proposals import stage

    repo = make_repo(tmp_path / "app", {"CLAUDE.md": "# app\n\n- Keep diffs small.\n", SKILL: SKILL_TEXT})
    memory = stage(repo / "CLAUDE.md", "# app\n\n- Keep diffs small.\n- Use pnpm.\n", report(), night=NIGHT)
    _, skill = repo, stage(repo / SKILL, CANDIDATE, report(), night=NIGHT)
    c = client([tmp_path / "outputs"])
    listing = c.get("/proposals").text
    row = listing.split(f'href="/proposals/{memory.id}"', 1)[1].split("</tr>", 1)[0]
    assert '<span class="tag">Claude Code memory</span>' in row
    other = listing.split(f'href="/proposals/{skill.id}"', 1)[1].split("</tr>", 1)[0]
    assert "Claude Code memory" not in other
    assert '<span class="tag">Claude Code memory</span></h1>' in c.get(f"/proposals/{memory.id}").text
