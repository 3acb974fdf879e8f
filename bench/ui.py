"""Benchmark of the dashboard (``skillopt-sleep ui``) with many runs and a long run.

Builds, in a scratch folder, ``--runs`` run directories (copies of a real
scripted training run's files spread over ten env folders, five of them still
"running": no ``run_end`` yet) and one run of ``--steps`` steps (history,
events and a skill per step, shaped like the trainer's), then serves them with
uvicorn on a free loopback port and prints, each the median of ``--repeat``:

- the runs list (``/runs``): cold (a fresh server: every summary and event
  head/tail read) and warm (rows cached by file size and mtime);
- the long run's page (its step table shows the latest 100 steps; the curve
  all of them), the same page with every step (``?steps=all``), its
  live-update fragments and one of its step pages;
- with Debian's chromium and chromium-driver present: the long run's page in a
  real browser (navigation start to the load event, curve and table drawn).

Targets (issue 15): the list stays fast with 1,000 runs; a 500-step run page
loads in under a second. Issue 25: in chromium, the runs list with 1,000 runs
and the 500-step run page each paint first within 300 ms; ``--baseline DIR``
(a checkout of main, say) measures the same runs with that tree's dashboard
and prints its figures beside today's. Usage: ``python bench/ui.py [--runs 1000]
[--steps 500] [--repeat 5] [--dir DIR] [--keep] [--baseline DIR]``. Nothing touches the real
home: HOME and SKILLOPT_HOME point into the scratch folder.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import socket
import statistics
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# --code DIR serves another checkout's dashboard (e.g. main's, for the "before" column); set before imports.
_CODE = Path(sys.argv[sys.argv.index("--code") + 1]).resolve() if "--code" in sys.argv[:-1] else REPO
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(_CODE))

RUN_FILES = ("config.yaml", "summary.json", "events.jsonl", "history.json", "state.json", "best_skill.md")


def toy_run(scratch: Path) -> Path:
    """A real scripted training run (tests/toy_world.py): the template of every synthetic run."""
    from toy_world import backends, make_backend, settings_for

    from skillopt_core import train

    settings = settings_for(scratch / "template", "train.num_epochs=2", "train.steps_per_epoch=3",
                            "output.plot=false")
    return Path(asyncio.run(train(settings, backends=backends(make_backend()))).run_dir)


def many_runs(template: Path, root: Path, n: int) -> None:
    events = (template / "events.jsonl").read_text().splitlines()
    for i in range(n):
        run = root / f"env_{i % 10}" / f"2026{i:06d}-000000"
        run.mkdir(parents=True)
        for name in RUN_FILES:
            if (template / name).exists():
                os.link(template / name, run / name)
        if i % (max(1, n // 5)) == 0:  # five running: no run_end, no summary
            (run / "summary.json").unlink()
            (run / "events.jsonl").unlink()
            (run / "events.jsonl").write_text("\n".join(events[:-3]) + "\n")


def long_run(template: Path, root: Path, steps: int) -> Path:
    run = root / "long_env" / "long-run"
    (run / "skills").mkdir(parents=True)
    shutil.copy(template / "config.yaml", run / "config.yaml")
    history = json.loads((template / "history.json").read_text())
    events = [json.loads(line) for line in (template / "events.jsonl").read_text().splitlines()]
    step_events = [e for e in events if e.get("step") == 1 and e["event"] != "run_started"]
    skill = (template / "skills" / "step_0001.md").read_text()
    out_history, out_events = [], [events[0] | {"total_steps": steps}]
    for s in range(1, steps + 1):
        record = dict(history[(s - 1) % len(history)])
        val = 0.3 + 0.4 * s / steps
        record.update(step=s, epoch=1 + (s - 1) // 50, val_current=val, val_after=val + 0.001,
                      val_candidate=val + (0.001 if s % 3 == 0 else -0.05), best_val=val + 0.001,
                      action="accept" if s % 3 == 0 else "reject")
        out_history.append(record)
        out_events += [e | {"step": s, "total_steps": steps} for e in step_events]
        (run / "skills" / f"step_{s:04d}.md").write_text(skill + f"- Rule learned at step {s}.\n" * (s % 5))
    (run / "skills" / "step_0000.md").write_text(skill)
    out_events.append(events[-1] | {"steps_done": steps})
    (run / "history.json").write_text(json.dumps(out_history, indent=2))
    (run / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in out_events))
    summary = json.loads((template / "summary.json").read_text())
    (run / "summary.json").write_text(json.dumps(summary | {"steps_done": steps, "total_steps": steps}))
    shutil.copytree(template / "steps" / "step_0001", run / "steps" / "step_0001")
    return run


class Served:
    """The app on uvicorn; ``cookie`` is the access-token cookie a signed-in browser sends."""

    def __init__(self, app) -> None:
        import uvicorn

        from sleep.ui.guard import cookie_name

        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        port = self.sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        self.token = app.state.ui.policy.token
        self.cookie = f"{cookie_name(port)}={self.token}"
        self.server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)

    def __enter__(self) -> "Served":
        self.thread.start()
        while not self.server.started:
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


def fetch(served: Served, path: str) -> tuple[float, int]:
    request = urllib.request.Request(served.url + path, headers={"Cookie": served.cookie})
    t = time.perf_counter()
    with urllib.request.urlopen(request, timeout=60) as r:
        body = r.read()
    return time.perf_counter() - t, len(body)


def served_app(outputs: Path):
    from sleep.ui.app import create_app

    return create_app([outputs], data_dir=None)


def browser_paint(served: Served, path: str, profile: Path) -> tuple[float, float, int] | None:
    """(first contentful paint, load event, DOM elements) of ``path`` in chromium, medians of 3 warm loads."""
    got = _browser(served, path, profile, (
        # The paint entries may be recorded after the load event: wait for them (buffered observer).
        "const done = arguments[arguments.length - 1];"
        "const n = performance.getEntriesByType('navigation')[0];"
        "const finish = (t) => done([t, n.loadEventEnd - n.startTime, document.getElementsByTagName('*').length]);"
        "const pick = (list) => list.find(e => e.name === 'first-contentful-paint') || list.find(e => e.name === 'first-paint');"
        "const now = pick(performance.getEntriesByType('paint'));"
        "if (now) { finish(now.startTime); } else {"
        "  new PerformanceObserver((l) => { const e = pick(l.getEntries()); if (e) { finish(e.startTime); } })"
        "    .observe({type: 'paint', buffered: true});"
        "  setTimeout(() => finish(-1), 3000); }"), asynchronous=True)
    if got is None:
        return None
    return (statistics.median(g[0] for g in got) / 1000, statistics.median(g[1] for g in got) / 1000,
            int(statistics.median(g[2] for g in got)))


def _browser(served: Served, path: str, profile: Path, script: str, asynchronous: bool = False) -> list | None:
    chromium, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if not (chromium and driver):
        return None
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        return None
    os.environ["SE_OFFLINE"] = "true"
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--window-size=1440,900", f"--user-data-dir={profile}"):
        options.add_argument(flag)
    d = webdriver.Chrome(options=options, service=Service(executable_path=driver))
    try:
        d.get(f"{served.url}/?token={served.token}")
        d.get(served.url + path)  # warm the static files and the server's caches
        out = []
        for _ in range(3):
            d.get(served.url + path)
            out.append(d.execute_async_script(script) if asynchronous else d.execute_script(script))
        return out
    finally:
        d.quit()


def browser_load(served: Served, path: str, profile: Path) -> float | None:
    chromium, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if not (chromium and driver):
        return None
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        return None
    os.environ["SE_OFFLINE"] = "true"
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--window-size=1400,1000", f"--user-data-dir={profile}"):
        options.add_argument(flag)
    d = webdriver.Chrome(options=options, service=Service(executable_path=driver))
    url = served.url + path
    try:
        d.get(f"{served.url}/?token={served.token}")  # sign in: the token becomes a cookie
        d.get(url)  # warm the static files
        times = []
        for _ in range(3):
            d.get(url)
            times.append(d.execute_script(
                "const t = performance.getEntriesByType('navigation')[0]; return t.loadEventEnd - t.startTime;") / 1000)
        assert d.execute_script("return document.querySelectorAll('#curve g.mark[data-step]').length") > 0
        return statistics.median(times)
    finally:
        d.quit()


def _baseline(args: argparse.Namespace, scratch: Path) -> dict | None:
    """The same measurements with another checkout's dashboard, on the same run directories."""
    import subprocess

    out = subprocess.run([sys.executable, __file__, "--code", args.baseline, "--json", "--dir", str(scratch),
                          "--keep", "--runs", str(args.runs), "--steps", str(args.steps), "--repeat", str(args.repeat)],
                         capture_output=True, text=True, timeout=1800)
    last = (out.stdout.strip().splitlines() or [""])[-1]
    try:
        return json.loads(last)
    except ValueError:
        print(f"baseline failed: {out.stderr.strip()[-500:]}")
        return None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument("--steps", type=int, default=500)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--dir", type=Path, help="scratch folder (default: a new temporary one)")
    ap.add_argument("--keep", action="store_true", help="keep the scratch folder")
    ap.add_argument("--baseline", metavar="DIR", help="another checkout (e.g. main) measured on the same runs "
                    "for the 'before' column")
    ap.add_argument("--code", metavar="DIR", help="serve this checkout's dashboard (used by --baseline)")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON (used by --baseline)")
    args = ap.parse_args()
    scratch = Path(args.dir or tempfile.mkdtemp(prefix="skillopt-ui-bench-"))
    scratch.mkdir(parents=True, exist_ok=True)
    os.environ["HOME"] = str(scratch / "home")
    os.environ["SKILLOPT_HOME"] = str(scratch / "skillopt-home")
    try:
        outputs = scratch / "outputs"
        t = time.perf_counter()
        if not (outputs / "long_env").is_dir():  # --code reuses the runs --baseline's caller built
            template = toy_run(scratch)
            many_runs(template, outputs, args.runs)
        long = outputs / "long_env" / "long-run"
        if not long.is_dir():
            long = long_run(template, outputs, args.steps)
        if not args.json:
            print(f"built {args.runs} runs + one of {args.steps} steps in {time.perf_counter() - t:.1f} s "
                  f"(history.json {long.joinpath('history.json').stat().st_size / 1e6:.1f} MB, "
                  f"events.jsonl {long.joinpath('events.jsonl').stat().st_size / 1e6:.1f} MB)")
        cold = []
        for _ in range(args.repeat):
            with Served(served_app(outputs)) as s:
                cold.append(fetch(s, "/runs"))
        with Served(served_app(outputs)) as s:
            fetch(s, "/runs")
            warm = [fetch(s, "/runs") for _ in range(args.repeat)]
            from sleep.ui.runs import RunCatalog

            ref = next(r for r in RunCatalog([outputs], None).scan() if r.run_id == "long-run")
            page = [fetch(s, ref.url) for _ in range(args.repeat)]
            page_all = [fetch(s, f"{ref.url}?steps=all") for _ in range(args.repeat)]
            frags = [fetch(s, f"{ref.url}/fragments") for _ in range(args.repeat)]
            step = [fetch(s, f"{ref.url}/steps/1") for _ in range(args.repeat)]
            browser = browser_load(s, ref.url, scratch / "profile")
            browser_all = browser_load(s, f"{ref.url}?steps=all", scratch / "profile")
            paint_runs = browser_paint(s, "/runs", scratch / "profile")
            paint_page = browser_paint(s, ref.url, scratch / "profile")
        if args.json:
            print(json.dumps({"runs_warm": statistics.median(x for x, _ in warm),
                              "runs_cold": statistics.median(x for x, _ in cold),
                              "runs_kb": warm[0][1] / 1e3, "page": statistics.median(x for x, _ in page),
                              "page_kb": page[0][1] / 1e3, "paint_runs": paint_runs, "paint_page": paint_page}))
            return 0
        before = _baseline(args, scratch) if args.baseline else None

        def line(what: str, samples: list[tuple[float, int]], target: str) -> None:
            secs = statistics.median(x for x, _ in samples)
            print(f"  {what:<44} {secs * 1000:8.0f} ms  {samples[0][1] / 1e3:8.0f} kB   target {target}")

        load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
        print(f"median of {args.repeat} (HTTP over loopback, uvicorn, one client; load average {load} "
              f"on {os.cpu_count()} cores):")
        line(f"runs list, {args.runs + 1} runs, cold server", cold, "< 1000 ms")
        line(f"runs list, {args.runs + 1} runs, warm", warm, "< 1000 ms")
        line(f"run page, {args.steps} steps (table: latest 100)", page, "< 1000 ms")
        line(f"run page, {args.steps} steps, ?steps=all", page_all, "-")
        line(f"live-update fragments, {args.steps} steps", frags, "-")
        line("step page", step, "-")
        print(f"first paint in chromium (issue 25 target <= 300 ms; 'before' = {args.baseline or 'not measured'}):")
        print(f"  {'':<44} {'before':>10} {'now':>10}")
        for what, key, now in ((f"runs list, {args.runs + 1} runs: first paint", "paint_runs", paint_runs),
                               (f"run page, {args.steps} steps: first paint", "paint_page", paint_page)):
            if now is None:
                print(f"  {what:<44} skipped (needs chromium, chromium-driver and selenium)")
                continue
            old = (before or {}).get(key)
            old_text = f"{old[0] * 1000:7.0f} ms" if old else "         –"
            print(f"  {what:<44} {old_text} {now[0] * 1000:7.0f} ms")
            old_dom = f"{old[2]:10,}" if old else "         –"
            print(f"  {'  DOM elements':<44} {old_dom} {now[2]:10,}")
            old_load = f"{old[1] * 1000:7.0f} ms" if old else "         –"
            print(f"  {'  load event':<44} {old_load} {now[1] * 1000:7.0f} ms")
        if before:
            print(f"  {'runs list over HTTP, warm (server side)':<44} {before['runs_warm'] * 1000:7.0f} ms "
                  f"{statistics.median(x for x, _ in warm) * 1000:7.0f} ms   "
                  f"({before['runs_kb']:.0f} kB → {warm[0][1] / 1e3:.0f} kB)")
        if browser is None:
            print("  run page in chromium: skipped (needs chromium, chromium-driver and selenium)")
        else:
            for what, secs in (("", browser), (", ?steps=all", browser_all)):
                print(f"  {'run page in chromium' + what + ' (to load event)':<44} "
                      f"{secs * 1000:8.0f} ms              target < 1000 ms")
    finally:
        if not args.keep:
            shutil.rmtree(scratch, ignore_errors=True)
        elif not args.json:
            print(f"kept {scratch}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
