"""A real browser on the dashboard: Debian's chromium (headless), driven by Selenium through
Debian's chromium-driver, against a real server on loopback.

It sees a scripted run's curve and step table, follows a live run gaining a step without
reloading, adopts a proposal from a scratch repository (signed in with the access token the
way a person is: the printed address, then the cookie), and saves the README's screenshot
(docs/img/dashboard.png). Needs ``apt-get install -y chromium chromium-driver``; without them
it skips, unless SKILLOPT_BROWSER_REQUIRED=1 (set by CI after installing them) makes it fail.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import threading
import time
from pathlib import Path

import pytest
import uvicorn
from proposal_testutil import CANDIDATE, SKILL, make_repo, report
from toy_world import Rule, backends, make_backend, reflect_answer, settings_for

from sleep.proposals import get, stage

EVIDENCE = [{"task": "t1-ab", "prompt": "install the deps",
             "before": {"passed": False, "commands": [{"command": "npm install", "exit_code": 0, "denied": False},
                                                      {"command": "curl https://x", "denied": True}],
                        "files": [{"path": "package-lock.json", "change": "added"}], "checks": []},
             "after": {"passed": True, "commands": [{"command": "pnpm install", "exit_code": 0, "denied": False}],
                       "files": [{"path": "pnpm-lock.yaml", "change": "added"}],
                       "checks": [{"command": "pnpm test", "passed": True, "exit_code": 0}]}}]


def git_branches(repo: Path) -> str:
    import subprocess

    return subprocess.run(["git", "-C", str(repo), "branch", "--list"], capture_output=True, text=True).stdout
from sleep.ui.app import create_app

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
DRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
SCREENSHOT = Path(__file__).resolve().parents[3] / "docs" / "img" / "dashboard.png"
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--window-size=1400,1500", "--hide-scrollbars")
FIXED_AT = "2026-12-01T02:14:00.000Z"


def _browser_missing() -> str | None:
    missing = [p for p in (CHROMIUM, DRIVER) if not os.access(p, os.X_OK)]
    if missing:
        return (f"no {' or '.join(missing)}: install the browser with `apt-get install -y chromium chromium-driver` "
                "(Debian packages; nothing is downloaded by the test)")
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed: pip install -e '.[dev]'"
    return None


@pytest.fixture
def browser(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    why = _browser_missing()
    if why:
        if os.environ.get("SKILLOPT_BROWSER_REQUIRED") == "1":
            pytest.fail(f"SKILLOPT_BROWSER_REQUIRED=1 but {why}")
        pytest.skip(why)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    monkeypatch.setenv("SE_OFFLINE", "true")  # Selenium Manager must never go looking for downloads
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={tmp_path / 'chromium-profile'}")
    driver = webdriver.Chrome(options=options, service=Service(executable_path=DRIVER))
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()


class Served:
    """The dashboard app on a real uvicorn server in a thread, on a free loopback port."""

    def __init__(self, app) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.server = uvicorn.Server(uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=1))
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)

    def __enter__(self) -> "Served":
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            assert time.monotonic() < deadline, "the dashboard server did not start"
            time.sleep(0.05)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
        self.sock.close()


class LiveRun:
    """A scripted training run in a thread that holds in step 2's reflection until released."""

    def __init__(self, tmp: Path) -> None:
        self.release = threading.Event()
        self.reflections = 0
        backend = make_backend()
        backend.rules.insert(0, Rule(stage="reflect", response=self._reflect))
        settings = settings_for(tmp, "train.num_epochs=1", "train.steps_per_epoch=3", "output.plot=false",
                                "output.run_id=live", "optimizer.use_slow_update=false")
        self.run_dir = tmp / "outputs" / "jsonl_tasks" / "live"
        self.error: BaseException | None = None

        def run() -> None:
            from skillopt_core import train

            try:
                asyncio.run(train(settings, backends=backends(backend)))
            except BaseException as exc:  # reported by wait_held / join
                self.error = exc

        self.thread = threading.Thread(target=run, daemon=True)

    def _reflect(self, request) -> str:
        self.reflections += 1
        if self.reflections >= 2:
            self.release.wait(120)
        return reflect_answer(request)

    def start_and_wait_held(self) -> None:
        self.thread.start()
        deadline = time.monotonic() + 60
        while not (self.reflections >= 2 and (self.run_dir / "history.json").is_file()):
            assert self.error is None, self.error
            assert time.monotonic() < deadline, "the live run did not reach step 2"
            time.sleep(0.05)

    def finish(self) -> None:
        self.release.set()
        self.thread.join(timeout=60)
        assert self.error is None, self.error


def _steady_copy(run: Path, dest: Path) -> Path:
    """The run with fixed times, so the README screenshot only changes when the page does."""
    shutil.copytree(run, dest)
    lines = [json.loads(line) for line in (dest / "events.jsonl").read_text().splitlines()]
    (dest / "events.jsonl").write_text("".join(json.dumps({**e, "at": FIXED_AT}) + "\n" for e in lines))
    history = json.loads((dest / "history.json").read_text())
    for h in history:
        h["timings"] = {k: 0.02 for k in h.get("timings", {})}
    (dest / "history.json").write_text(json.dumps(history))
    return dest


def _wait(driver, condition, timeout: float = 30, what: str = ""):
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait

    # A live update replaces parts of the page between finding an element and reading it.
    return WebDriverWait(driver, timeout, poll_frequency=0.1,
                         ignored_exceptions=(StaleElementReferenceException,)).until(condition, what)


def _follow(driver, element, timeout: float = 30) -> None:
    """Click a link or button that loads another page and wait until the old page is gone: a
    click returns before the navigation it starts, and a loaded CI machine reads the old page."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    old = driver.find_element(By.TAG_NAME, "html")
    element.click()
    WebDriverWait(driver, timeout, poll_frequency=0.05).until(ec.staleness_of(old), "the next page to load")


def test_dashboard_in_a_real_browser(browser, toy_run: Path, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    started = time.monotonic()
    outputs = tmp_path / "outputs"
    _steady_copy(toy_run, outputs / "jsonl_tasks" / "run")
    history = json.loads((toy_run / "history.json").read_text())
    live = LiveRun(tmp_path)
    live.start_and_wait_held()
    repo = make_repo(tmp_path / "app")
    proposal = stage(repo / SKILL, CANDIDATE, report(evidence=EVIDENCE))
    app = create_app([outputs], data_dir=None, poll=0.1)

    with Served(app) as served:
        try:
            # Without the token the browser gets nothing; the printed address (with it) signs it in.
            browser.get(f"{served.url}/runs")
            assert "Access token needed" in browser.find_element(By.TAG_NAME, "h1").text
            browser.get(f"{served.url}/runs?token={app.state.ui.policy.token}")
            assert browser.current_url == f"{served.url}/runs"  # the token left the address bar

            # The list: both runs, the live one running.
            rows = {r.find_element(By.CSS_SELECTOR, "td a").text: r.get_attribute("data-status")
                    for r in browser.find_elements(By.CSS_SELECTOR, "#runs-table tbody tr")}
            assert rows == {"run": "completed", "live": "running"}

            # A finished run: the curve with its marks, and the step table.
            _follow(browser, browser.find_element(By.LINK_TEXT, "run"))
            curve = browser.find_element(By.ID, "curve")
            assert curve.is_displayed() and curve.size["width"] > 400
            marks = curve.find_elements(By.CSS_SELECTOR, "g.mark[data-step]")
            assert len(marks) == len(history)
            assert len(curve.find_elements(By.CSS_SELECTOR, "g.mark.accept[data-step]")) == \
                sum(h["action"] == "accept" for h in history)
            steps = browser.find_elements(By.CSS_SELECTOR, "#steps-table tbody tr.step-row")
            assert [r.get_attribute("id") for r in steps] == [f"step-{h['step']}" for h in history]
            browser.execute_script("document.getElementById('curve').scrollIntoView({block: 'center'});")
            browser.execute_script("window.scrollTo(0, 0);")
            SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
            assert browser.save_screenshot(str(SCREENSHOT))
            assert SCREENSHOT.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

            # A live run gains a step without a reload.
            browser.get(f"{served.url}/runs")
            _follow(browser, browser.find_element(By.LINK_TEXT, "live"))
            assert browser.find_element(By.TAG_NAME, "body").get_attribute("data-live") == "1"
            assert len(browser.find_elements(By.CSS_SELECTOR, "#steps-table tr.step-row")) == 1
            browser.execute_script("window.sameDocument = 'yes';")
            live.finish()
            _wait(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#steps-table tr.step-row")) >= 2,
                  what="the live page to show step 2")
            assert browser.execute_script("return window.sameDocument;") == "yes"
            _wait(browser, lambda d: "completed" in d.find_element(By.ID, "run-status").text,
                  what="the live page to show the run completed")
            assert len(browser.find_elements(By.CSS_SELECTOR, "#curve g.mark[data-step]")) == 3
            assert browser.execute_script("return window.sameDocument;") == "yes"

            # The morning review: adopt through the page.
            browser.get(f"{served.url}/proposals")
            _follow(browser, browser.find_element(By.LINK_TEXT, proposal.id))
            diff = browser.find_element(By.ID, "diff")
            added = diff.find_elements(By.CSS_SELECTOR, "tr.insert td.r")
            assert [a.text for a in added] == ["- Run `ruff check .` before the tests."]  # side by side, as written
            # Decide first: the Decide panel comes before the diff and the evidence.
            assert browser.find_element(By.ID, "adopt-open").location["y"] < diff.location["y"]
            browser.set_window_size(390, 844)  # a phone: the side-by-side diff wraps, the page never scrolls sideways
            assert browser.execute_script("return document.documentElement.scrollWidth;") <= 391
            ln = browser.find_element(By.CSS_SELECTOR, "#diff td.ln").size["width"]
            assert ln < 60, ln  # line numbers stay narrow even when the first row is "⋯ N unchanged lines"
            # The evidence: before and after side by side, stacked on a phone.
            before = browser.find_element(By.CSS_SELECTOR, "#ev-1 .ev-side.before")
            after = browser.find_element(By.CSS_SELECTOR, "#ev-1 .ev-side.after")
            assert after.location["y"] > before.location["y"] and "pnpm install" in after.text
            browser.set_window_size(1400, 1500)
            assert after.location["y"] == before.location["y"] and after.location["x"] > before.location["x"]
            assert "npm install" in before.text and "denied" in before.text and "pnpm test passed" in after.text
            assert browser.find_element(By.ID, "adopt-open").location["y"] < before.location["y"]
            browser.find_element(By.ID, "adopt-open").click()  # opens the confirmation; adopts nothing yet
            _wait(browser, lambda d: d.find_element(By.ID, "adopt").is_displayed(), what="the adopt confirmation")
            assert get(proposal.id).state == "pending"
            assert not browser.find_element(By.ID, "keep-branch").is_selected()  # adopt deletes the branch
            browser.find_element(By.ID, "adopt").click()
            flash = _wait(browser, lambda d: d.find_elements(By.ID, "flash"), what="the adopt result")[0]
            assert f"Adopted {proposal.id}" in flash.text
            assert (repo / SKILL).read_text() == CANDIDATE and get(proposal.id).state == "adopted"
            assert proposal.branch not in git_branches(repo)  # the form's default: the branch is deleted
        finally:
            live.release.set()
    print(f"browser test wall time: {time.monotonic() - started:.1f} s")
