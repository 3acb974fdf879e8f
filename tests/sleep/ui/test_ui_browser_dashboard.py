"""The dashboard's capabilities in a real browser (Debian's headless chromium through Selenium and
chromium-driver, the pattern of test_ui_browser.py): sort and page 1,000 runs, compare two runs,
open a sample, read a trajectory, follow a live run's progress inside a rollout, and screenshots
at 1440×900 and 390×844 (written to the test's tmp folder; the phone ones also checked for
sideways overflow).

Skips without chromium, chromium-driver or selenium unless SKILLOPT_BROWSER_REQUIRED=1.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import threading
import time
from pathlib import Path

import pytest
import yaml
from test_ui_browser import Served, _follow, _wait, browser  # noqa: F401 - the fixture
from toy_world import Rule, backends, make_backend, reflect_answer, settings_for, target_answer
from ui_testutil import make_runs

from sleep.ui.app import create_app

SHOTS = ((1440, 900), (390, 844))


class RolloutHeldRun:
    """A scripted run (one worker) whose step-2 train rollout holds its first item until ``go``, then
    takes 0.45 s an item and holds its last until ``finish``: the page can be seen following the
    progress ticks events.jsonl keeps (at most one a second)."""

    def __init__(self, tmp: Path) -> None:
        self.go = threading.Event()
        self.finish = threading.Event()
        self.calls = 0
        self.held = False
        self.reflections = 0
        backend = make_backend()
        backend.rules.insert(0, Rule(stage="reflect", response=self._reflect))
        backend.rules.insert(0, Rule(stage="rollout", response=self._target))
        settings = settings_for(tmp, "train.num_epochs=1", "train.steps_per_epoch=2", "train.workers=1",
                                "output.plot=false", "output.run_id=live", "optimizer.use_slow_update=false",
                                "optimizer.use_meta_skill=false")
        self.run_dir = tmp / "outputs" / "jsonl_tasks" / "live"
        self.train_ids: set[str] = set()
        self.error: BaseException | None = None

        def run() -> None:
            from skillopt_core import train

            try:
                asyncio.run(train(settings, backends=backends(backend)))
            except BaseException as exc:
                self.error = exc

        self.thread = threading.Thread(target=run, daemon=True)

    def _reflect(self, request) -> str:
        self.reflections += 1
        if self.reflections == 1:  # step 1: from now on the next train rollout (step 2's) is slow
            splits = json.loads((self.run_dir / "dataset.json").read_text())["splits"]
            self.train_ids = set(splits["train"])
        return reflect_answer(request)

    def _target(self, request) -> str:
        item = re.search(r"Question (\d+):", request.prompt_text)
        if self.reflections >= 1 and item and f"t{int(item.group(1)):02d}" in self.train_ids and not self.finish.is_set():
            self.calls += 1
            if self.calls == 1:
                self.go.wait(120)
            elif self.calls == 8:  # the last item of the batch: hold until the test has seen the progress
                self.held = True
                self.finish.wait(120)
            else:
                time.sleep(0.45)
        return target_answer(request)

    def start(self) -> None:
        self.thread.start()

    def wait_first(self) -> None:
        deadline = time.monotonic() + 90
        while self.calls < 1:
            assert self.error is None, self.error
            assert time.monotonic() < deadline, "the live run did not reach its step-2 rollout"
            time.sleep(0.05)

    def wait_held(self) -> None:
        deadline = time.monotonic() + 90
        while not self.held:
            assert self.error is None, self.error
            assert time.monotonic() < deadline, "the live run's step-2 rollout did not reach its last item"
            time.sleep(0.05)

    def wait_done(self) -> None:
        self.finish.set()
        self.thread.join(timeout=60)
        assert self.error is None, self.error


def _toy_pair(toy_run: Path, outputs: Path) -> None:
    """Two copies of the toy run (own files: the test writes into one) with different settings."""
    for name, lr, gate in (("toy-a", 2, "mean"), ("toy-b", 4, "paired")):
        dest = outputs / "jsonl_tasks" / name
        shutil.copytree(toy_run, dest)
        cfg = yaml.safe_load((dest / "config.yaml").read_text())
        cfg["optimizer"]["learning_rate"], cfg["evaluation"]["gate_policy"] = lr, gate
        (dest / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    rollouts = outputs / "jsonl_tasks" / "toy-a" / "steps" / "step_0001" / "rollouts.json"
    records = json.loads(rollouts.read_text())
    records[0]["trajectory"] = {"steps": [  # as skillopt_core.backends.trajectory.Trajectory.to_dict writes it
        {"kind": "text", "text": "Running the tests first."},
        {"kind": "command", "command": "pytest -q", "exit_code": 1, "output": "1 failed, 2 passed", "denied": False},
        {"kind": "file_change", "path": "src/app.py", "change": "modified"},
        {"kind": "check", "command": "pytest -q", "exit_code": 0, "output": "3 passed"}],
        "unknown_events": 0, "dropped": 0}
    rollouts.write_text(json.dumps(records))


def _shoot(driver, tmp: Path, name: str, shots: list[Path]) -> None:
    for w, h in SHOTS:
        driver.set_window_size(w, h)
        # The window's inner size is what the page sees (headless chromium: the window size itself).
        inner = driver.execute_script("return [window.innerWidth, window.innerHeight];")
        if inner != [w, h]:
            driver.set_window_size(w + (w - inner[0]), h + (h - inner[1]))
        time.sleep(0.2)
        path = tmp / f"shot-{name}-{w}x{h}.png"
        assert driver.save_screenshot(str(path)) and path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        shots.append(path)
        if w < 500:  # a phone: the page never scrolls sideways (tables scroll inside their box)
            width = driver.execute_script("return document.documentElement.scrollWidth;")
            assert width <= w + 1, (name, width)


def test_dashboard_capabilities_in_a_real_browser(browser, toy_run: Path, tmp_path: Path) -> None:  # noqa: F811
    from selenium.webdriver.common.by import By

    started = time.monotonic()
    outputs = tmp_path / "outputs"
    made = make_runs(toy_run, outputs, 1000)
    _toy_pair(toy_run, outputs)
    live = RolloutHeldRun(tmp_path)
    live.start()
    live.wait_first()
    app = create_app([outputs], data_dir=None, poll=0.1)
    shots: list[Path] = []
    shot_dir = Path(os.environ.get("SKILLOPT_SHOTS_DIR") or tmp_path)
    shot_dir.mkdir(parents=True, exist_ok=True)
    with Served(app) as served:
        try:
            browser.set_window_size(1440, 900)
            browser.get(f"{served.url}/runs?token={app.state.ui.policy.token}")
            # 1,003 runs, one page of 50 rows.
            assert browser.find_element(By.ID, "runs-count").text == "1003"
            rows = browser.find_elements(By.CSS_SELECTOR, "#runs-table tbody tr.run-row")
            assert len(rows) == 50
            # Sort by best val (descending first), then page to page 2: the address keeps both.
            _follow(browser, browser.find_element(By.CSS_SELECTOR, 'th a[data-sort="best_val"]'))
            best = [m["best"] for m in made if m["best"] is not None]
            first = browser.find_elements(By.CSS_SELECTOR, "#runs-table tbody tr.run-row td:nth-child(7)")[0].text
            assert float(first) == pytest.approx(max(best + [json.loads((toy_run / "summary.json").read_text())["best_val"]]), abs=1e-3)
            _follow(browser, browser.find_element(By.ID, "next-page"))
            assert "sort=best_val" in browser.current_url and "page=2" in browser.current_url
            assert "51–100 of 1003" in browser.find_element(By.ID, "pager").text
            values = [float(td.text) for td in browser.find_elements(
                By.CSS_SELECTOR, "#runs-table tbody tr.run-row td:nth-child(7)")]
            assert len(values) == 50 and values == sorted(values, reverse=True)
            _shoot(browser, shot_dir, "runs", shots)
            browser.set_window_size(1440, 900)

            # Compare the two toy runs: tick them, press compare.
            browser.get(f"{served.url}/runs?q=toy")
            compare = browser.find_element(By.ID, "compare")
            assert not compare.is_enabled()
            for box in browser.find_elements(By.CSS_SELECTOR, "#runs-table input[name=run]"):
                box.click()
            assert compare.text == "Compare 2 runs"
            _follow(browser, compare)
            assert browser.find_element(By.TAG_NAME, "h1").text == "Compare 2 runs"
            val = browser.find_element(By.ID, "compare-val")
            assert len(val.find_elements(By.CSS_SELECTOR, "path.series")) == 2
            differs = browser.find_elements(By.CSS_SELECTOR, "#settings-table tr.differs th code")
            assert sorted(d.text for d in differs) == ["evaluation.gate_policy", "optimizer.learning_rate"]
            # The readout follows the pointer over a chart.
            from selenium.webdriver.common.action_chains import ActionChains

            svg = val.find_element(By.CSS_SELECTOR, "svg.plot")
            ActionChains(browser).move_to_element_with_offset(svg, svg.size["width"] // 4, 0).perform()
            readout = val.find_element(By.CSS_SELECTOR, ".readout").text
            assert readout.startswith("step ") and "toy-a:" in readout and "toy-b:" in readout
            _shoot(browser, shot_dir, "compare", shots)
            browser.set_window_size(1440, 900)

            # A run page: config panel, charts; then a step, then a sample with its trajectory.
            _follow(browser, browser.find_element(By.LINK_TEXT, "toy-a"))
            assert "learning_rate" in browser.find_element(By.ID, "config-panel").text
            assert len(browser.find_elements(By.CSS_SELECTOR, ".charts figure.chart")) == 5
            _shoot(browser, shot_dir, "run", shots)
            browser.set_window_size(1440, 900)
            _follow(browser, browser.find_element(By.CSS_SELECTOR, '#step-1 a'))
            assert "Candidate on the" in browser.find_element(By.ID, "gate-explain").text
            _shoot(browser, shot_dir, "step", shots)
            browser.set_window_size(1440, 900)
            _follow(browser, browser.find_elements(By.CSS_SELECTOR, "a.sample-link")[0])
            record = json.loads((outputs / "jsonl_tasks" / "toy-a" / "steps" / "step_0001" / "rollouts.json")
                                .read_text())[0]
            item = {t["id"]: t for t in map(json.loads, (toy_run / "items.jsonl").read_text().splitlines())}[
                record["task_id"]]
            assert browser.find_element(By.ID, "sample-input").text == item["prompt"]
            assert browser.find_element(By.ID, "sample-output").text == record["response"]
            assert browser.find_element(By.ID, "sample-feedback").text == record["feedback"]
            assert '"contains"' in browser.find_element(By.ID, "sample-judge").text
            summary = browser.find_element(By.ID, "trajectory-summary").text
            assert "1 command run" in summary and "1 file changed" in summary and "passed" in summary
            assert "$ pytest -q" in browser.find_element(By.ID, "trajectory").text
            _shoot(browser, shot_dir, "sample", shots)
            browser.set_window_size(1440, 900)

            # The items × skill versions matrix.
            browser.get(f"{served.url}{app.state.ui.catalog.resolve(*_key(app, 'toy-a')).url}/matrix")
            assert browser.find_elements(By.CSS_SELECTOR, "#matrix-train td.m-fixed")
            _shoot(browser, shot_dir, "matrix", shots)
            browser.set_window_size(1440, 900)

            # A live run, inside its step-2 train rollout: items done of total with the time left.
            browser.get(f"{served.url}/runs?q=live")
            _follow(browser, browser.find_element(By.LINK_TEXT, "live"))
            assert browser.find_element(By.TAG_NAME, "body").get_attribute("data-live") == "1"
            assert browser.find_element(By.ID, "activity").text == "[Step 2/2] rollout (train): 8 items"
            live.go.set()
            _wait(browser, lambda d: re.search(r"\[Step 2\] rollout \(train\): [4-7] of 8 items done · about \d+ s left",
                                               d.find_element(By.ID, "activity").text),
                  timeout=60, what="in-rollout progress with an ETA")
            bar = browser.find_element(By.ID, "rollout-progress")
            assert bar.is_displayed() and 0 < float(bar.get_attribute("value")) < 8
            live.wait_held()
            _wait(browser, lambda d: "7 of 8 items done" in d.find_element(By.ID, "activity").text, timeout=30,
                  what="the progress to reach 7 of 8")
            _shoot(browser, shot_dir, "live", shots)
            browser.set_window_size(1440, 900)
            # The other pages fit a phone too (empty states here: no index).
            browser.set_window_size(390, 844)
            for page in ("/", "/nights", "/tasks", "/proposals"):
                browser.get(served.url + page)
                width = browser.execute_script("return document.documentElement.scrollWidth;")
                assert width <= 391, (page, width)
            browser.set_window_size(1440, 900)
            browser.get(served.url + app.state.ui.catalog.resolve(*_key(app, "live")).url)
            live.wait_done()
            _wait(browser, lambda d: "completed" in d.find_element(By.ID, "run-status").text, timeout=60,
                  what="the live page to show the run completed")
            latest = browser.find_element(By.ID, "latest-skill").text
            assert latest == "latest (after step 2)"  # the Skills section followed the run
        finally:
            live.finish.set()
    print(f"dashboard browser test wall time: {time.monotonic() - started:.1f} s; screenshots: "
          + ", ".join(str(p) for p in shots))


def _key(app, run_id: str) -> tuple[str, str, str]:
    ref = next(r for r in app.state.ui.catalog.scan() if r.run_id == run_id)
    return ref.root.id, ref.env, ref.run_id
