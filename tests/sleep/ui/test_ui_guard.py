"""Who may reach the dashboard: loopback Host names, the access token, security headers,
and what ``skillopt-sleep ui`` binds and prints."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from ui_testutil import client

from sleep.ui.cli import plan
from sleep.ui.guard import Policy, is_loopback


def test_requests_addressed_to_another_host_name_are_refused(tmp_path: Path) -> None:
    c = client([tmp_path], policy=Policy())
    assert c.get("/runs", headers={"Host": "127.0.0.1:7860"}).status_code == 200
    assert c.get("/runs", headers={"Host": "localhost:7860"}).status_code == 200
    assert c.get("/runs", headers={"Host": "[::1]:7860"}).status_code == 200
    refused = c.get("/runs", headers={"Host": "rebound.evil.example:7860"})
    assert refused.status_code == 421 and "only answers requests addressed to this computer" in refused.text


def test_a_token_policy_needs_the_token_then_keeps_it_in_a_cookie(tmp_path: Path) -> None:
    c = client([tmp_path], policy=Policy(token="s3cret", loopback_only_hosts=False))
    denied = c.get("/runs")
    assert denied.status_code == 401 and "access token" in denied.text
    assert c.get("/runs?token=wrong").status_code == 401
    assert c.get("/runs?token=s3cr%C3%A9t").status_code == 401  # non-ASCII is simply wrong, not an error
    first = c.get("/runs?token=s3cret&x=1")
    assert first.status_code == 303 and first.headers["location"] == "/runs?x=1"
    cookie = first.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie.replace("Strict", "strict")
    assert c.get("/runs").status_code == 200  # the client kept the cookie


def test_every_page_forbids_framing_inline_script_and_sniffing(tmp_path: Path) -> None:
    r = client([tmp_path]).get("/runs")
    csp = r.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "frame-ancestors 'none'" in csp and "unsafe-inline" not in csp
    assert r.headers["x-content-type-options"] == "nosniff"
    assert client([tmp_path], policy=Policy()).get("/", headers={"Host": "evil"}).headers["x-frame-options"] == "DENY"


def test_pages_carry_no_inline_script_and_no_other_origin(toy_run: Path) -> None:
    c = client([toy_run.parents[1]])
    pages = ["/", "/runs", "/nights", "/tasks", "/proposals"]
    pages += [link for link in c.get("/runs").text.split('"') if link.startswith("/runs/") and link.count("/") == 4]
    for url in pages:
        html = c.get(url).text
        assert "<script>" not in html and "<script " not in html.replace('<script src="/static/app.js" defer>', "")
        assert "http://" not in html and "https://" not in html, url


@pytest.mark.parametrize("host,loopback", [("127.0.0.1", True), ("::1", True), ("localhost", True),
                                           ("127.9.9.9", True), ("0.0.0.0", False), ("192.168.1.5", False),
                                           ("example.org", False)])
def test_loopback_addresses(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_binding_beyond_loopback_generates_a_token_and_prints_it_in_the_address() -> None:
    p = plan("0.0.0.0", 7860, None)
    assert p.generated_token and p.token and p.url == f"http://0.0.0.0:7860/?token={p.token}"
    assert plan("0.0.0.0", 7860, "mine").url.endswith("?token=mine")
    local = plan("127.0.0.1", 7860, None)
    assert local.token is None and local.url == "http://127.0.0.1:7860/"
    with pytest.raises(ValueError, match="not a port number"):
        plan("127.0.0.1", 70000, None)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_the_ui_command_serves_on_loopback_refuses_a_taken_port_and_stops_on_ctrl_c(tmp_path: Path) -> None:
    port = _free_port()
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "sleep.cli", "ui", "--port", str(port), "--outputs", str(tmp_path)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.strip() == f"SkillOpt dashboard: http://127.0.0.1:{port}/"
        deadline = time.monotonic() + 20
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/runs", timeout=5) as r:
                    assert r.status == 200 and b"No run directories found" in r.read()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        taken = subprocess.run([sys.executable, "-m", "sleep.cli", "ui", "--port", str(port)],
                               capture_output=True, text=True, env=env, timeout=60)
        assert taken.returncode == 2 and f"cannot listen on 127.0.0.1:{port}" in taken.stderr
        proc.send_signal(signal.SIGINT)  # Ctrl-C: a clean stop, no traceback
        out, err = proc.communicate(timeout=30)
        assert proc.returncode == 0 and "SkillOpt dashboard stopped." in out and "Traceback" not in err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=20)
