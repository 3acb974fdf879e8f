"""Shared helpers for the dashboard tests: a real scripted training run, a test client, forms."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

from starlette.testclient import TestClient
from toy_world import backends, make_backend, settings_for

from sleep.ui.app import create_app
from sleep.ui.guard import Policy

ORIGIN = "http://testserver"


def scripted_run(tmp: Path, *overrides: str) -> Path:
    """A finished toy-world run (2 epochs of 3 steps: accept, rejects, no-change; slow updates, meta notes)."""
    settings = settings_for(tmp, "train.num_epochs=2", "train.steps_per_epoch=3", "output.plot=false", *overrides)
    summary = asyncio.run(_train(settings))
    return Path(summary.run_dir)


async def _train(settings):
    from skillopt_core import train

    return await train(settings, backends=backends(make_backend()))


def client(outputs: list[Path], *, signed_in: bool = True, **kw) -> TestClient:
    """A client of a dashboard over ``outputs`` (no data directory unless given), Host ``testserver``
    allowed; ``signed_in``: it has opened the address with the token once, so it holds the cookie."""
    kw.setdefault("data_dir", None)
    kw.setdefault("policy", Policy(extra_hosts=("testserver",)))
    c = TestClient(create_app(outputs, **kw), follow_redirects=False)
    if signed_in:
        first = c.get(f"/?token={c.app.state.ui.policy.token}")
        assert first.status_code == 303 and first.headers["location"] == "/", first.text
    return c


def run_links(html: str) -> list[str]:
    return sorted(set(re.findall(r'href="(/runs/[0-9a-f]{10}/[^/"]+/[^/"]+)"', html)))


def csrf_of(c: TestClient) -> str:
    return c.app.state.ui.policy.csrf


def post(c: TestClient, url: str, data: dict, *, origin: str | None = ORIGIN, csrf: str | None = "auto"):
    form = dict(data)
    if csrf == "auto":
        form["csrf"] = csrf_of(c)
    elif csrf is not None:
        form["csrf"] = csrf
    headers = {"Origin": origin} if origin else {}
    return c.post(url, data=form, headers=headers)


def sse_messages(text: str) -> list[dict]:
    """The messages of an event stream: {"event", "id", "data"} (comments and retry lines dropped)."""
    out = []
    for block in text.split("\n\n"):
        msg: dict = {}
        for line in block.splitlines():
            if line.startswith(":") or ":" not in line:
                continue
            key, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if key in ("event", "id"):
                msg[key] = value
            elif key == "data":
                msg["data"] = (msg["data"] + "\n" + value) if "data" in msg else value
        if "data" in msg:
            msg.setdefault("event", "message")
            out.append(msg)
    return out


def event_kinds(messages: list[dict]) -> list[str]:
    return [json.loads(m["data"]).get("event") for m in messages if m["event"] == "message"]
