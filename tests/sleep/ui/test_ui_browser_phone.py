"""The morning review on a phone, in a real browser (headless chromium through Selenium, as
test_ui_browser.py): at 390 px the proposal page does not scroll sideways, Adopt / Reject come
first (above the diff and the evidence), each asks for a confirmation before anything changes,
and an adopted proposal offers Undo there; the run page's val curve shows every step.

Skips without chromium, chromium-driver or selenium unless SKILLOPT_BROWSER_REQUIRED=1.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from proposal_testutil import CANDIDATE, SKILL, SKILL_TEXT, make_repo, report
from test_ui_browser import EVIDENCE, Served, _follow, _wait, browser  # noqa: F401 - the fixture

from sleep.proposals import get, stage
from sleep.ui.app import create_app

PHONE = (390, 844)
LONG_PATH = "packages/payments-service/src/integrations/very_long_folder_name_for_the_webhooks_handlers"
LONG_RULE = "- Before you open a pull request run `pnpm --filter @acme/payments-service run test:integration --reporter=verbose`."


def _no_sideways_scroll(driver) -> None:
    width = driver.execute_script("return document.documentElement.scrollWidth;")
    inner = driver.execute_script("return window.innerWidth;")
    culprits = driver.execute_script(
        "return [...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > "
        "window.innerWidth + 1).slice(0, 5).map(e => e.tagName + '#' + e.id + '.' + e.className + ': ' + "
        "(e.textContent || '').slice(0, 60));")
    assert width <= inner, f"the page is {width} px wide in a {inner} px window: {culprits}"


def _rect(driver, element) -> dict:
    return driver.execute_script("const r = arguments[0].getBoundingClientRect();"
                                 "return {left: r.left, right: r.right, top: r.top};", element)


def test_the_proposal_page_on_a_phone_decides_first_with_a_confirmation(browser, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    repo = make_repo(tmp_path / "app", {f"{LONG_PATH}/.claude/skills/tests/SKILL.md": SKILL_TEXT,
                                       SKILL: SKILL_TEXT, "README.md": "# app\n"})
    p = stage(repo / SKILL, CANDIDATE + LONG_RULE + "\n",
              report(evidence=EVIDENCE, notes=["Corrections the gate rejected this night: " + LONG_RULE * 2]))
    app = create_app([tmp_path / "outputs"], data_dir=None)
    with Served(app) as served:
        browser.set_window_size(*PHONE)
        browser.get(f"{served.url}/proposals?token={app.state.ui.policy.token}")
        _follow(browser, browser.find_element(By.LINK_TEXT, p.id))
        _no_sideways_scroll(browser)
        opener = browser.find_element(By.ID, "adopt-open")
        for later in ("diff", "evidence"):
            assert opener.location["y"] < browser.find_element(By.ID, later).location["y"], later
        assert opener.location["y"] + opener.size["height"] <= PHONE[1] - 100  # on the first screen
        confirm = browser.find_element(By.ID, "adopt")
        assert not confirm.is_displayed()  # one tap opens the question; it never adopts
        opener.click()
        _wait(browser, lambda d: confirm.is_displayed(), what="the adopt confirmation")
        box = browser.find_element(By.ID, "adopt-form").text
        assert p.skill_path in box and confirm.text == f"Yes, adopt {p.id}"
        assert get(p.id).state == "pending" and (repo / SKILL).read_text() == SKILL_TEXT
        _no_sideways_scroll(browser)
        _follow(browser, confirm)
        assert f"Adopted {p.id}" in browser.find_element(By.ID, "flash").text
        assert get(p.id).state == "adopted" and (repo / SKILL).read_text() == CANDIDATE + LONG_RULE + "\n"

        undo_open = browser.find_element(By.ID, "undo-open")
        assert undo_open.location["y"] < browser.find_element(By.ID, "evidence").location["y"]
        assert browser.find_elements(By.ID, "adopt") == []
        undo_open.click()
        yes = _wait(browser, lambda d: d.find_element(By.ID, "undo") if d.find_element(By.ID, "undo").is_displayed()
                    else None, what="the undo confirmation")
        _no_sideways_scroll(browser)
        _follow(browser, yes)
        assert f"Undid the adoption of {p.id}" in browser.find_element(By.ID, "flash").text
        assert get(p.id).state == "undone" and (repo / SKILL).read_text() == SKILL_TEXT
        _no_sideways_scroll(browser)


def test_the_run_pages_val_curve_shows_every_step_on_a_phone(browser, toy_run: Path, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    shutil.copytree(toy_run, tmp_path / "outputs" / "jsonl_tasks" / "run")
    history = json.loads((toy_run / "history.json").read_text())
    app = create_app([tmp_path / "outputs"], data_dir=None)
    with Served(app) as served:
        browser.set_window_size(*PHONE)
        browser.get(f"{served.url}/runs?token={app.state.ui.policy.token}")
        _follow(browser, browser.find_element(By.LINK_TEXT, "run"))
        _no_sideways_scroll(browser)
        inner = browser.execute_script("return window.innerWidth;")
        curve = browser.find_element(By.ID, "curve")
        box = _rect(browser, curve)
        assert box["left"] >= 0 and box["right"] <= inner, box
        marks = curve.find_elements(By.CSS_SELECTOR, "g.mark[data-step]")
        assert len(marks) == len(history)
        last = _rect(browser, marks[-1])
        box_parent = _rect(browser, browser.find_element(By.CSS_SELECTOR, ".curve-box"))
        assert last["right"] <= min(inner, box_parent["right"]), (last, box_parent)  # the last step is in view
