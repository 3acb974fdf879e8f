"""Who may talk to the dashboard, and which requests may change anything.

- **A capability token on every request, loopback included.** Loopback is not
  authentication: any local user or process can connect to 127.0.0.1. The
  address ``skillopt-sleep ui`` prints carries the token (``?token=...``); the
  first request with it gets the token back as an HttpOnly, SameSite=Strict
  cookie and a redirect to the same address without it (as Jupyter does), and
  later requests carry the cookie. Without a valid token every page, stream,
  static file and POST is refused (401) before any handler runs, so nothing
  (the CSRF token included) can be read without it. The cookie's name carries
  the server's port: two dashboards on one host do not overwrite each other's.
  The redirect only ever leads to a path of this server (``//evil.com/`` becomes
  ``/evil.com/``). Tokens shorter than :data:`MIN_TOKEN` characters are refused.
- **Loopback host names on loopback.** Bound to a loopback address, the server
  answers only requests whose ``Host`` names a loopback host (``127.0.0.1``,
  ``localhost``, ``[::1]``): a web page on another site cannot reach it
  through DNS rebinding.
- **State changes are POSTs** that carry the per-process CSRF token (a hidden
  form field) *and* come from this origin (``Origin``, else ``Referer``, must
  match the ``Host`` the request was sent to). Anything else is refused with
  403 before the handler runs.
- Every response forbids framing, inline script and other origins
  (Content-Security-Policy), and sniffing.
"""

from __future__ import annotations

import hmac
import ipaddress
import re
import secrets
from dataclasses import dataclass, field
from html import escape
from urllib.parse import parse_qsl, quote, urlencode, urlsplit

from starlette.datastructures import Headers
from starlette.requests import cookie_parser
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

TOKEN_COOKIE = "skillopt_ui_token"  # + "_<port>"
MIN_TOKEN = 16
CSRF_FIELD = "csrf"
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "form-action 'self'; frame-ancestors 'none'; base-uri 'none'")


def is_loopback(host: str) -> bool:
    host = host.strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def new_token() -> str:
    return secrets.token_urlsafe(24)


def token_problem(token: str) -> str | None:
    """Why ``token`` cannot be the access token, or None."""
    if len(token) < MIN_TOKEN:
        return (f"the access token is {len(token)} characters long; use at least {MIN_TOKEN} "
                "(or give none: a random one is generated)")
    if not re.fullmatch(r"[A-Za-z0-9._~-]+", token):  # it travels in a URL and a cookie unquoted
        return "the access token may only hold the letters A-Z and a-z, digits and - _ . ~"
    return None


def cookie_name(port: int | None) -> str:
    return f"{TOKEN_COOKIE}_{port}" if port else TOKEN_COOKIE


@dataclass
class Policy:
    """The checks one server applies (see the module docstring)."""

    token: str = field(default_factory=new_token)  # required on every request
    loopback_only_hosts: bool = True  # refuse Host headers that are not loopback names
    extra_hosts: tuple[str, ...] = ()  # Host names also accepted (tests: "testserver")
    csrf: str = field(default_factory=new_token)

    def __post_init__(self) -> None:
        problem = token_problem(self.token or "")
        if problem:
            raise ValueError(problem)

    def host_allowed(self, host_header: str) -> bool:
        if not self.loopback_only_hosts:
            return True
        name = _hostname(host_header)
        return name is not None and (is_loopback(name) or name in self.extra_hosts)

    def csrf_ok(self, value: object) -> bool:
        """Whether a form's ``csrf`` field (a string, or whatever the form sent there) is the token."""
        return isinstance(value, str) and bool(value) and same_secret(value, self.csrf)


def same_secret(given: str, expected: str) -> bool:
    """Constant-time comparison that also accepts non-ASCII input (compared as UTF-8 bytes)."""
    return hmac.compare_digest(given.encode("utf-8", "surrogateescape"), expected.encode("utf-8"))


def _hostname(host_header: str) -> str | None:
    if not host_header:
        return None
    try:
        return urlsplit(f"//{host_header}").hostname
    except ValueError:
        return None


def same_origin(headers: Headers, scheme: str) -> tuple[bool, str]:
    """Whether a state-changing request comes from this dashboard's own pages, and if not why."""
    host = headers.get("host", "")
    expected = f"{scheme}://{host}".lower()
    origin = headers.get("origin")
    if origin is not None:
        if origin.lower() == expected:
            return True, ""
        return False, f"it came from another origin ({origin})"
    referer = headers.get("referer")
    if referer:
        parts = urlsplit(referer)
        if f"{parts.scheme}://{parts.netloc}".lower() == expected:
            return True, ""
        return False, "its Referer is another site"
    return False, "it carried neither an Origin nor a Referer header"


def _page(status: int, title: str, text: str) -> HTMLResponse:
    body = (f"<!doctype html><html lang=en><meta charset=utf-8><title>{escape(title)}</title>"
            f"<h1>{escape(title)}</h1><p>{escape(text)}</p></html>")
    return HTMLResponse(body, status_code=status)


class Guard:
    """ASGI middleware applying a :class:`Policy` (and the security headers) to every request."""

    def __init__(self, app: ASGIApp, policy: Policy) -> None:
        self.app = app
        self.policy = policy

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refusal = self._check(scope)
        if refusal is not None:
            await _with_headers(refusal)(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                present = {k.lower() for k, _ in headers}
                for k, v in _SECURITY_HEADERS:
                    if k not in present:
                        headers.append((k, v))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_headers)

    def _check(self, scope: Scope) -> Response | None:
        p = self.policy
        headers = Headers(scope=scope)
        if not p.host_allowed(headers.get("host", "")):
            return _page(421, "Wrong host name", (
                f"This dashboard only answers requests addressed to this computer (127.0.0.1 or localhost); "
                f"this one was addressed to {headers.get('host', '(none)')!r}. Open the address "
                "`skillopt-sleep ui` printed."))
        name = cookie_name((scope.get("server") or (None, None))[1])
        pairs = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
        given = next((v for k, v in pairs if k == "token"), None)
        if given is not None:
            if not same_secret(given, p.token):
                return _needs_token("The access token in this address is not this dashboard's (it was restarted?).")
            rest = urlencode([(k, v) for k, v in pairs if k != "token"])
            resp = RedirectResponse(local_path(scope.get("path", "/")) + (f"?{rest}" if rest else ""),
                                    status_code=303)
            resp.set_cookie(name, p.token, httponly=True, samesite="strict", path="/")
            return resp
        # Starlette's lenient parser: other sites on this host (cookies ignore ports) may set cookies
        # that http.cookies rejects, which would hide ours.
        sent = cookie_parser(headers.get("cookie", "")).get(name)
        if sent is None or not same_secret(sent, p.token):
            return _needs_token("This dashboard needs its access token.")
        if scope.get("method", "GET") not in SAFE_METHODS:
            ok, why = same_origin(headers, scope.get("scheme", "http"))
            if not ok:
                return _page(403, "Refused", (
                    f"This request would change something, but {why}. Use the buttons on the dashboard's own "
                    "pages; requests from other sites are refused."))
        return None


def local_path(path: str) -> str:
    """``path`` as a redirect target that stays on this server: one leading slash (``//host``
    and ``/\\host`` would lead browsers to another site), every other character percent-encoded."""
    return "/" + quote(path.lstrip("/\\"), safe="/:@!$&'()*+,;=-._~")


def _needs_token(first: str) -> Response:
    return _page(401, "Access token needed", (
        f"{first} Open the full address (with ?token=...) that `skillopt-sleep ui` printed when it started; "
        "the browser then keeps the token in a cookie."))


_SECURITY_HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"same-origin"),
    (b"cache-control", b"no-store"),
]


def _with_headers(resp: Response) -> Response:
    for k, v in _SECURITY_HEADERS:
        resp.headers.setdefault(k.decode(), v.decode())
    return resp
