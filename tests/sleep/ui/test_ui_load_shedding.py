"""Issue 35 §7: the dashboard sheds load: a bounded number of requests at work, a bounded queue,
``503`` with ``Retry-After`` beyond it, and service again once the load is gone.

The served test runs ``skillopt-sleep ui`` as a real process on loopback; requests that hold a turn
are POSTs whose body never comes (the handler waits on it), so saturation does not depend on timing.
"""

from __future__ import annotations

import asyncio
import socket
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from test_ui_served import Dashboard

from sleep.ui.shed import Limits, Shed

DEADLINE = 20.0  # seconds any wait below may take at most


def _cookie(ui: Dashboard) -> str:
    parts = urlsplit(ui.url)
    status, headers, _ = ui.request("GET", f"{parts.path}?{parts.query}")
    assert status == 303
    return headers["set-cookie"].split(";", 1)[0]


def _hold(ui: Dashboard, cookie: str) -> socket.socket:
    """A POST whose body never comes: its handler waits on it, holding a turn."""
    s = socket.create_connection(("127.0.0.1", ui.port), timeout=10)
    s.sendall((f"POST /proposals/p-0000aaaa/adopt HTTP/1.1\r\nHost: 127.0.0.1:{ui.port}\r\n"
               f"Origin: http://127.0.0.1:{ui.port}\r\nCookie: {cookie}\r\n"
               "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 4096\r\n\r\ncsrf=").encode())
    return s


def _until(check, what: str) -> None:
    end = time.monotonic() + DEADLINE
    while not check():
        assert time.monotonic() < end, what
        time.sleep(0.05)


def test_a_full_dashboard_answers_503_with_retry_after_then_serves_again(tmp_path: Path) -> None:
    with Dashboard(tmp_path / "outputs", "--max-requests", "2", "--max-queue", "0") as ui:
        cookie = _cookie(ui)
        get = lambda: ui.request("GET", "/runs", headers={"Cookie": cookie})  # noqa: E731
        assert get()[0] == 200
        holders = [_hold(ui, cookie) for _ in range(2)]
        try:
            _until(lambda: get()[0] == 503, "two held requests did not fill the dashboard")
            started = time.monotonic()
            with ThreadPoolExecutor(max_workers=16) as pool:
                answers = list(pool.map(lambda _: get(), range(48)))
            assert time.monotonic() - started < DEADLINE
            assert {status for status, _, _ in answers} == {503}
            assert all(h.get("retry-after", "").isdigit() and int(h["retry-after"]) >= 1 for _, h, _ in answers)
            assert "busy" in answers[0][2]
        finally:
            for s in holders:
                s.close()
        _until(lambda: get()[0] == 200, "the dashboard did not serve again once the held requests went")
        code, _, err = ui.stop()
        assert "Traceback" not in err


def test_the_limits_flags_are_checked(tmp_path: Path) -> None:
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "sleep.cli", "ui", "--max-requests", "0"], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 2 and "at least 1" in r.stderr


class _Held:
    """An ASGI app whose requests wait until released (what a slow page does)."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.running = 0

    async def __call__(self, scope, receive, send) -> None:
        self.running += 1
        await self.release.wait()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})


async def _request(app, path: str = "/runs") -> tuple[int, dict[bytes, bytes]]:
    sent: list[dict] = []

    async def send(message: dict) -> None:
        sent.append(message)

    async def receive() -> dict:
        return {"type": "http.request", "body": b"", "more_body": False}

    await app({"type": "http", "path": path, "method": "GET", "headers": []}, receive, send)
    return sent[0]["status"], dict(sent[0]["headers"])


def test_requests_queue_up_to_the_bound_then_are_shed_and_a_wait_is_bounded() -> None:
    async def run() -> None:
        held = _Held()
        shed = Shed(held, Limits(active=2, queue=3, wait_seconds=0.5, streams=1))
        tasks = [asyncio.create_task(_request(shed)) for _ in range(5)]
        while held.running < 2:
            await asyncio.sleep(0.01)
        status, headers = await _request(shed)
        assert status == 503 and headers[b"retry-after"] == b"2"
        await asyncio.sleep(0.8)  # longer than the queue's wait
        held.release.set()
        statuses = sorted(s for s, _ in await asyncio.gather(*tasks))
        assert statuses == [200, 200, 503, 503, 503]
        assert (shed.counts.admitted, shed.counts.shed) == (2, 4)
        # Within the wait, a queued request gets its turn.
        held2 = _Held()
        shed2 = Shed(held2, Limits(active=1, queue=1, wait_seconds=5))
        first, second = asyncio.create_task(_request(shed2)), asyncio.create_task(_request(shed2))
        while held2.running < 1:
            await asyncio.sleep(0.01)
        held2.release.set()
        assert [s for s, _ in await asyncio.gather(first, second)] == [200, 200]
        # Live streams hold no turn but have their own bound.
        held3 = _Held()
        shed3 = Shed(held3, Limits(active=1, queue=0, streams=1))
        stream = asyncio.create_task(_request(shed3, "/runs/a/b/c/events"))
        while held3.running < 1:
            await asyncio.sleep(0.01)
        assert (await _request(shed3, "/runs/a/b/c/events"))[0] == 503
        page = asyncio.create_task(_request(shed3))
        while held3.running < 2:
            await asyncio.sleep(0.01)
        held3.release.set()
        assert (await stream)[0] == 200 and (await page)[0] == 200

    asyncio.run(asyncio.wait_for(run(), timeout=DEADLINE))


def test_limits_must_be_positive() -> None:
    with pytest.raises(ValueError):
        Limits(active=0)
