"""The dashboard under more load than it can serve: latency and shed share, with and without shedding.

Builds ``--runs`` run directories (copies of a real scripted training run, as
bench/ui.py does), serves them with ``skillopt-sleep ui`` as a real process on a
loopback port, and offers ``--rate`` requests a second for ``--seconds``
seconds (open loop: each request starts at its time whether or not the earlier
ones were answered) of the runs list (``/runs?per=200``), twice: once with
shedding effectively off (``--max-requests 100000 --max-queue 0``: every request
is worked on at once, as before issue 35) and once with the default limits
(``sleep/ui/shed.py``). Prints, for each: requests answered 200 and 503,
latency p50 / p99 / max of the 200s and p99 of the 503s.

Issue 35 found p99 38 s at 200 requests a second without a bound. Usage:
``python bench/ui_load.py [--runs 300] [--rate 200] [--seconds 8]``. Nothing
touches the real home: HOME and SKILLOPT_HOME point into a scratch folder.
"""

from __future__ import annotations

import argparse
import http.client
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TOKEN = "bench-load-token-0123456789"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _serve(outputs: Path, env: dict[str, str], *flags: str) -> tuple[subprocess.Popen, int]:
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "sleep.cli", "ui", "--port", str(port), "--outputs", str(outputs),
                             *flags], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    deadline = time.monotonic() + 60
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return proc, port
        except OSError:
            if time.monotonic() > deadline or proc.poll() is not None:
                proc.kill()
                raise SystemExit("the dashboard did not start")
            time.sleep(0.1)


def _get(port: int, cookie: str, path: str) -> tuple[int, float]:
    started = time.monotonic()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        conn.request("GET", path, headers={"Cookie": cookie})
        r = conn.getresponse()
        r.read()
        return r.status, time.monotonic() - started
    except OSError:
        return 0, time.monotonic() - started
    finally:
        conn.close()


def offer(port: int, rate: float, seconds: float, path: str) -> list[tuple[int, float]]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    conn.request("GET", f"/?token={TOKEN}")
    cookie = conn.getresponse().getheader("set-cookie").split(";", 1)[0]
    conn.close()
    _get(port, cookie, path)  # warm: the first list reads every run
    n = int(rate * seconds)
    t0 = time.monotonic() + 0.5

    def one(i: int) -> tuple[int, float]:
        time.sleep(max(0.0, t0 + i / rate - time.monotonic()))
        return _get(port, cookie, path)

    with ThreadPoolExecutor(max_workers=min(n, 800)) as pool:
        return list(pool.map(one, range(n)))


def _p(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=300)
    ap.add_argument("--rate", type=float, default=200.0, help="requests offered per second")
    ap.add_argument("--seconds", type=float, default=8.0)
    ap.add_argument("--path", default="/runs?per=200")
    args = ap.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="skillopt-ui-load-"))
    env = {**os.environ, "HOME": str(scratch / "home"), "SKILLOPT_HOME": str(scratch / "skillopt-home"),
           "SKILLOPT_UI_TOKEN": TOKEN, "PYTHONPATH": str(REPO)}
    os.environ.update({k: env[k] for k in ("HOME", "SKILLOPT_HOME")})
    try:
        sys.path.insert(0, str(REPO / "bench"))
        import ui as ui_bench  # bench/ui.py: the same synthetic runs

        outputs = scratch / "outputs"
        ui_bench.many_runs(ui_bench.toy_run(scratch), outputs, args.runs)
        print(f"{args.runs} runs; offered {args.rate:g} req/s for {args.seconds:g} s of GET {args.path} "
              f"({int(args.rate * args.seconds)} requests), load {os.getloadavg()[0]:.1f}")
        for label, flags in (("no bound (as before issue 35)", ("--max-requests", "100000", "--max-queue", "0")),
                             ("default limits (8 at work, 64 waiting)", ())):
            proc, port = _serve(outputs, env, *flags)
            try:
                results = offer(port, args.rate, args.seconds, args.path)
            finally:
                proc.terminate()
                proc.wait(timeout=30)
            ok = [t for s, t in results if s == 200]
            shed = [t for s, t in results if s == 503]
            other = len(results) - len(ok) - len(shed)
            print(f"  {label:<40} 200: {len(ok):>5}  503: {len(shed):>5}  other: {other:>3}  "
                  f"200s p50 {statistics.median(ok) if ok else float('nan'):6.2f} s  p99 {_p(ok, 0.99):6.2f} s  "
                  f"max {max(ok, default=float('nan')):6.2f} s   503s p99 {_p(shed, 0.99):5.2f} s")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
