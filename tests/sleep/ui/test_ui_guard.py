"""Who may reach the dashboard: the access token on every request (loopback included), loopback
Host names, security headers, and what ``skillopt-sleep ui`` binds and prints."""

from __future__ import annotations

import re

import pytest
from ui_testutil import client, csrf_of, post

from sleep.ui.cli import plan
from sleep.ui.guard import MIN_TOKEN, Policy, cookie_name, is_loopback, local_path

TOKEN = "a-chosen-token-0123456789"


def test_requests_addressed_to_another_host_name_are_refused(tmp_path) -> None:
    c = client([tmp_path], policy=Policy(), signed_in=False)
    for host in ("127.0.0.1:7860", "localhost:7860", "[::1]:7860"):
        c.cookies.clear()
        signed = c.get(f"/runs?token={c.app.state.ui.policy.token}", headers={"Host": host})
        assert signed.status_code == 303, host
        assert c.get("/runs", headers={"Host": host}).status_code == 200, host
    refused = c.get("/runs", headers={"Host": "rebound.evil.example:7860"})
    assert refused.status_code == 421 and "only answers requests addressed to this computer" in refused.text


@pytest.mark.parametrize("url", ["/", "/runs", "/proposals", "/nights", "/tasks", "/static/app.js",
                                 "/static/style.css", "/runs/0123456789/env/run/events"])
def test_every_page_needs_the_token_on_loopback_too(tmp_path, url: str) -> None:
    c = client([tmp_path], signed_in=False)
    r = c.get(url)
    assert r.status_code == 401 and "Access token needed" in r.text
    assert csrf_of(c) not in r.text


def test_a_post_without_the_token_is_refused_before_the_form_is_read(tmp_path) -> None:
    c = client([tmp_path], signed_in=False)
    r = post(c, "/proposals/abcd1234/adopt", {}, origin="http://testserver")
    assert r.status_code == 401


def test_the_token_in_the_address_becomes_a_strict_http_only_cookie_and_leaves_the_address(tmp_path) -> None:
    c = client([tmp_path], policy=Policy(token=TOKEN, extra_hosts=("testserver",)), signed_in=False)
    assert c.get("/runs?token=wrong-token-of-enough-length").status_code == 401
    assert c.get("/runs?token=a-chosen-t%C3%A9ken-0123456789").status_code == 401  # non-ASCII: wrong, not an error
    first = c.get(f"/runs?token={TOKEN}&x=1")
    assert first.status_code == 303 and first.headers["location"] == "/runs?x=1"
    cookie = first.headers["set-cookie"]
    assert cookie.startswith(f"{cookie_name(80)}={TOKEN};")
    assert "HttpOnly" in cookie and "samesite=strict" in cookie.lower() and "Path=/" in cookie
    assert c.get("/runs").status_code == 200  # the client kept the cookie
    c.cookies.clear()
    c.cookies.set(cookie_name(80), "wrong-token-of-enough-length")
    assert c.get("/runs").status_code == 401


def test_a_cookie_for_another_port_is_not_this_dashboards(tmp_path) -> None:
    c = client([tmp_path], policy=Policy(token=TOKEN, extra_hosts=("testserver",)), signed_in=False)
    c.cookies.set(cookie_name(7861), TOKEN)
    assert c.get("/runs").status_code == 401
    c.cookies.set(cookie_name(80), TOKEN)
    assert c.get("/runs").status_code == 200


def test_other_sites_cookies_on_the_same_host_do_not_hide_the_token(tmp_path) -> None:
    c = client([tmp_path], policy=Policy(token=TOKEN, extra_hosts=("testserver",)), signed_in=False)
    r = c.get("/runs", headers={"Cookie": f'other="unbalanced; weird=\\x; {cookie_name(80)}={TOKEN}'})
    assert r.status_code == 200


@pytest.mark.parametrize("path,target", [("//evil.com/", "/evil.com/"), ("/\\evil.com", "/evil.com"),
                                         ("///evil.com/x", "/evil.com/x"), ("/runs", "/runs"),
                                         ("/a b\r\nSet-Cookie: x=1", "/a%20b%0D%0ASet-Cookie:%20x=1")])
def test_the_token_redirect_stays_on_this_server(path: str, target: str) -> None:
    assert local_path(path) == target


@pytest.mark.parametrize("token", ["short", "x" * (MIN_TOKEN - 1), "has a space in it!!", "semi;colon;0123456789",
                                   "tökentökentökentöken"])
def test_a_weak_or_unsafe_token_is_refused(token: str) -> None:
    with pytest.raises(ValueError, match="access token"):
        Policy(token=token)
    with pytest.raises(ValueError, match="--token refused"):
        plan("127.0.0.1", 7860, token)


def test_every_page_forbids_framing_inline_script_and_sniffing(tmp_path) -> None:
    r = client([tmp_path]).get("/runs")
    csp = r.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "frame-ancestors 'none'" in csp and "unsafe-inline" not in csp
    assert r.headers["x-content-type-options"] == "nosniff"
    refused = client([tmp_path], signed_in=False).get("/")
    assert refused.headers["x-frame-options"] == "DENY" and refused.headers["cache-control"] == "no-store"


def test_pages_carry_no_inline_script_and_no_other_origin(toy_run) -> None:
    c = client([toy_run.parents[1]])
    pages = ["/", "/runs", "/nights", "/tasks", "/proposals"]
    pages += [link for link in c.get("/runs").text.split('"') if link.startswith("/runs/") and link.count("/") == 4]
    for url in pages:
        html = c.get(url).text
        own = re.sub(r'<script src="/static/app\.js(\?v=[0-9a-f]{10})?" defer>', "", html)
        assert "<script>" not in html and "<script " not in own
        assert "http://" not in html and "https://" not in html, url


@pytest.mark.parametrize("host,loopback", [("127.0.0.1", True), ("::1", True), ("localhost", True),
                                           ("127.9.9.9", True), ("0.0.0.0", False), ("192.168.1.5", False),
                                           ("example.org", False)])
def test_loopback_addresses(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_the_printed_address_always_carries_a_token() -> None:
    local = plan("127.0.0.1", 7860, None)
    assert local.generated_token and len(local.token) >= MIN_TOKEN
    assert local.url == f"http://127.0.0.1:7860/?token={local.token}"
    assert plan("127.0.0.1", 7860, TOKEN).url == f"http://127.0.0.1:7860/?token={TOKEN}"
    assert plan("::1", 7860, TOKEN).url == f"http://[::1]:7860/?token={TOKEN}"
    assert plan("192.168.1.5", 7860, TOKEN).url == f"http://192.168.1.5:7860/?token={TOKEN}"
    with pytest.raises(ValueError, match="not a port number"):
        plan("127.0.0.1", 70000, None)


def test_bound_to_every_interface_the_printed_address_is_one_of_this_computer() -> None:
    import socket

    p = plan("0.0.0.0", 7860, TOKEN)
    host = p.url.split("//", 1)[1].rsplit(":", 1)[0]
    assert host not in ("0.0.0.0", "") and not is_loopback(host)
    if host != socket.gethostname():  # an interface address: this computer can bind it
        with socket.socket() as s:
            s.bind((host, 0))
