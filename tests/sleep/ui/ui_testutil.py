"""Shared helpers for the dashboard tests: a real scripted training run, a test client, forms."""

from __future__ import annotations

import asyncio
import json
import os
import re
from pathlib import Path

import yaml

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


RUN_FILES = ("config.yaml", "summary.json", "events.jsonl", "history.json", "state.json", "best_skill.md")


def make_runs(toy_run: Path, outputs: Path, n: int) -> list[dict]:
    """A sweep of ``n`` runs ``r000``…: best val i/n, learning rate 1/2/4, gate mean or paired (every 5th)."""
    config = yaml.safe_load((toy_run / "config.yaml").read_text())
    summary = json.loads((toy_run / "summary.json").read_text())
    made = []
    for i in range(n):
        run = outputs / ("env_a" if i % 2 else "env_b") / f"r{i:03d}"
        run.mkdir(parents=True)
        for name in RUN_FILES[2:]:
            os.link(toy_run / name, run / name)  # shared, read-only
        lr = (1, 2, 4)[i % 3]
        gate = "paired" if i % 5 == 0 else "mean"
        cfg = {**config, "optimizer": {**config["optimizer"], "learning_rate": lr},
               "evaluation": {**config["evaluation"], "gate_policy": gate}}
        (run / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
        best = None if i == 7 else round(i / n, 4)
        (run / "summary.json").write_text(json.dumps({**summary, "best_val": best}))
        made.append({"run": run.name, "lr": lr, "gate": gate, "best": best})
    return made
