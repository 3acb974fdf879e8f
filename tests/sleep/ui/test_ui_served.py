"""``skillopt-sleep ui`` as a real process (uvicorn on a real socket), driven by a raw HTTP client.

The local attacker: any user or process of the computer can connect to 127.0.0.1. Without
the token the command printed, it can read no page (so no CSRF token), and a POST that
forges the dashboard's own ``Origin`` is refused before anything is decided.
"""

from __future__ import annotations

import http.client
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlencode, urlsplit

import pytest
from proposal_testutil import SKILL, SKILL_TEXT, git, staged

from sleep.proposals import get
from sleep.ui.guard import cookie_name, is_loopback


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Dashboard:
    """``python -m sleep.cli ui`` in a child process; ``url`` is the address it printed."""

    def __init__(self, outputs: Path, *args: str, env: dict[str, str] | None = None,
                 command: tuple[str, ...] = ("sleep.cli", "ui")) -> None:
        self.port = _free_port()
        self.module = command[0]
        self.args = [*command[1:], "--port", str(self.port), "--outputs", str(outputs), *args]
        self.env = {**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})}
        self.proc: subprocess.Popen | None = None
        self.url = ""
        self.printed: list[str] = []

    def __enter__(self) -> "Dashboard":
        self.proc = subprocess.Popen([sys.executable, "-m", self.module, *self.args], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, env=self.env)
        assert self.proc.stdout is not None
        first = self.proc.stdout.readline()
        assert first.startswith("SkillOpt dashboard: http://"), first + (self.proc.stderr.read() or "")
        self.url = first.split(": ", 1)[1].strip()
        self.printed = [first]
        deadline = time.monotonic() + 30
        while True:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=2):
                    break
            except OSError:
                assert time.monotonic() < deadline, "the dashboard did not start listening"
                time.sleep(0.1)
        return self

    @property
    def token(self) -> str:
        return self.url.split("?token=", 1)[1]

    def request(self, method: str, path: str, *, host: str = "127.0.0.1", body: str | None = None,
                headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], str]:
        conn = http.client.HTTPConnection(host, self.port, timeout=30)
        try:
            conn.request(method, path, body=body, headers=headers or {})
            r = conn.getresponse()
            return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read().decode("utf-8", "replace")
        finally:
            conn.close()

    def stop(self) -> tuple[int, str, str]:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGINT)  # Ctrl-C: a clean stop
        out, err = self.proc.communicate(timeout=30)
        return self.proc.returncode, out, err

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=20)


def test_a_local_attacker_without_the_token_can_neither_read_nor_adopt(tmp_path: Path) -> None:
    repo, p = staged(tmp_path)
    with Dashboard(tmp_path / "outputs") as ui:
        for path in ("/", f"/proposals/{p.id}", "/proposals", "/static/app.js"):
            status, _, body = ui.request("GET", path)
            assert status == 401, path
            assert 'name="csrf"' not in body and p.branch not in body
        form = urlencode({"csrf": "guessed", "commit": "1"})
        forged = {"Origin": f"http://127.0.0.1:{ui.port}", "Referer": f"http://127.0.0.1:{ui.port}/proposals/{p.id}",
                  "Content-Type": "application/x-www-form-urlencoded"}
        for action in ("adopt", "reject"):
            status, _, _ = ui.request("POST", f"/proposals/{p.id}/{action}", body=form, headers=forged)
            assert status == 401, action
        # A cookie with any other value is no better.
        status, _, _ = ui.request("POST", f"/proposals/{p.id}/adopt", body=form,
                                  headers={**forged, "Cookie": f"{cookie_name(ui.port)}=not-the-token-0123456789"})
        assert status == 401
        assert get(p.id).state == "pending" and (repo / SKILL).read_text() == SKILL_TEXT
        assert git(repo, "branch", "--list", p.branch).strip() == p.branch

        # The person, with the printed address: the token becomes a cookie, then pages open.
        status, headers, _ = ui.request("GET", urlsplit(ui.url).path + "?" + urlsplit(ui.url).query)
        assert status == 303 and headers["location"] == "/"
        cookie = headers["set-cookie"]
        assert "HttpOnly" in cookie and "samesite=strict" in cookie.lower()
        status, _, body = ui.request("GET", f"/proposals/{p.id}", headers={"Cookie": cookie.split(";", 1)[0]})
        assert status == 200 and 'name="csrf"' in body


def test_the_token_redirect_does_not_lead_to_another_site(tmp_path: Path) -> None:
    with Dashboard(tmp_path / "outputs") as ui:
        for path, target in ((f"//evil.com/?token={ui.token}", "/evil.com/"),
                             (f"/\\evil.com/?token={ui.token}", "/evil.com/"),
                             (f"//evil.com/x?token={ui.token}&a=1", "/evil.com/x?a=1")):
            status, headers, _ = ui.request("GET", path)
            assert status == 303 and headers["location"] == target, path


def test_a_short_token_is_refused_by_the_command(tmp_path: Path) -> None:
    port = _free_port()
    r = subprocess.run([sys.executable, "-m", "sleep.cli", "ui", "--port", str(port), "--token", "too-short"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "--token refused" in r.stderr and "at least 16" in r.stderr
    assert "Traceback" not in r.stderr
    env = {**os.environ, "SKILLOPT_UI_TOKEN": "short"}
    r = subprocess.run([sys.executable, "-m", "sleep.cli", "ui", "--port", str(port)], capture_output=True,
                       text=True, timeout=60, env=env)
    assert r.returncode == 2 and "at least 16" in r.stderr


def test_a_token_from_the_environment_is_the_one_printed(tmp_path: Path) -> None:
    token = "from-the-environment-0123456789"
    with Dashboard(tmp_path / "outputs", env={"SKILLOPT_UI_TOKEN": token}) as ui:
        assert ui.url == f"http://127.0.0.1:{ui.port}/?token={token}"
        status, headers, _ = ui.request("GET", f"/runs?token={token}")
        assert status == 303 and headers["location"] == "/runs"


def test_bound_to_every_interface_it_prints_an_address_another_computer_can_open(tmp_path: Path) -> None:
    with Dashboard(tmp_path / "outputs", "--host", "0.0.0.0") as ui:
        parts = urlsplit(ui.url)
        assert parts.hostname not in ("0.0.0.0", None) and not is_loopback(parts.hostname)
        status, headers, _ = ui.request("GET", f"/?{parts.query}", host=parts.hostname)
        assert status == 303 and headers["location"] == "/"
        status, _, body = ui.request("GET", "/runs", host=parts.hostname,
                                     headers={"Cookie": headers["set-cookie"].split(";", 1)[0]})
        assert status == 200 and "No run directories found" in body


def test_the_ui_command_serves_refuses_a_taken_port_and_stops_on_ctrl_c(tmp_path: Path) -> None:
    with Dashboard(tmp_path / "outputs") as ui:
        assert re.fullmatch(rf"http://127\.0\.0\.1:{ui.port}/\?token=[A-Za-z0-9_-]{{32}}", ui.url)
        status, headers, _ = ui.request("GET", f"/runs?token={ui.token}")
        status, _, body = ui.request("GET", "/runs", headers={"Cookie": headers["set-cookie"].split(";", 1)[0]})
        assert status == 200 and "No run directories found" in body
        taken = subprocess.run([sys.executable, "-m", "sleep.cli", "ui", "--port", str(ui.port)],
                               capture_output=True, text=True, env=ui.env, timeout=60)
        assert taken.returncode == 2 and f"cannot listen on 127.0.0.1:{ui.port}" in taken.stderr
        code, out, err = ui.stop()
        assert code == 0 and "SkillOpt dashboard stopped." in out and "Traceback" not in err


@pytest.mark.parametrize("flag", ["--port"])
def test_a_bad_port_is_one_line(flag: str) -> None:
    r = subprocess.run([sys.executable, "-m", "sleep.cli", "ui", flag, "70000"], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 2 and "not a port number" in r.stderr and "Traceback" not in r.stderr


def test_the_originals_entry_point_serves_the_same_dashboard_with_its_token(toy_run: Path) -> None:
    from skillopt_webui.app import parser

    assert parser().parse_args([]).port == 7860 and parser().parse_args([]).host == "127.0.0.1"
    with Dashboard(toy_run.parents[1], command=("skillopt_webui.app",)) as ui:
        assert ui.url.startswith(f"http://127.0.0.1:{ui.port}/?token=")
        status, _, _ = ui.request("GET", "/runs")
        assert status == 401  # the same token check
        status, headers, _ = ui.request("GET", "/runs?token=" + ui.token)
        assert status == 303
        cookie = headers["set-cookie"].split(";", 1)[0]
        status, _, body = ui.request("GET", "/runs", headers={"Cookie": cookie})
        assert status == 200 and ">run</a>" in body
        code, _, _ = ui.stop()
        assert code == 0
