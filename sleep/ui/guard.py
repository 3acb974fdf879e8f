"""Who may talk to the dashboard, and which requests may change anything.

- **Loopback by default.** Bound to a loopback address, the server answers
  only requests whose ``Host`` names a loopback host (``127.0.0.1``,
  ``localhost``, ``[::1]``): a web page on another site cannot reach it
  through DNS rebinding.
- **A token off loopback.** Bound elsewhere, every request needs the access
  token: ``?token=...`` once (it becomes an HttpOnly, SameSite=Strict cookie
  and the address bar loses it), then the cookie.
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
import secrets
from dataclasses import dataclass, field
from html import escape
from http.cookies import SimpleCookie
from urllib.parse import parse_qsl, urlencode, urlsplit

from starlette.datastructures import Headers
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

TOKEN_COOKIE = "skillopt_ui_token"
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


@dataclass
class Policy:
    """The checks one server applies (see the module docstring)."""

    token: str | None = None  # required on every request when set
    loopback_only_hosts: bool = True  # refuse Host headers that are not loopback names
    extra_hosts: tuple[str, ...] = ()  # Host names also accepted (tests: "testserver")
    csrf: str = field(default_factory=new_token)

    def host_allowed(self, host_header: str) -> bool:
        if not self.loopback_only_hosts:
            return True
        name = _hostname(host_header)
        return name is not None and (is_loopback(name) or name in self.extra_hosts)

    def csrf_ok(self, value: str | None) -> bool:
        return bool(value) and same_secret(str(value), self.csrf)


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
        if p.token:
            query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
            given = query.get("token")
            if given is not None and same_secret(given, p.token):
                rest = urlencode([(k, v) for k, v in parse_qsl(scope.get("query_string", b"").decode("latin-1"))
                                  if k != "token"])
                target = scope.get("path", "/") + (f"?{rest}" if rest else "")
                resp = RedirectResponse(target, status_code=303)
                resp.set_cookie(TOKEN_COOKIE, p.token, httponly=True, samesite="strict", path="/")
                return resp
            cookie = SimpleCookie()
            try:
                cookie.load(headers.get("cookie", ""))
            except Exception:  # a malformed cookie header is simply no token
                pass
            sent = cookie.get(TOKEN_COOKIE)
            if sent is None or not same_secret(sent.value, p.token):
                return _page(401, "Access token needed", (
                    "This dashboard is reachable from other computers, so it needs its access token. "
                    "Open the full address (with ?token=...) that `skillopt-sleep ui` printed when it started."))
        if scope.get("method", "GET") not in SAFE_METHODS:
            ok, why = same_origin(headers, scope.get("scheme", "http"))
            if not ok:
                return _page(403, "Refused", (
                    f"This request would change something, but {why}. Use the buttons on the dashboard's own "
                    "pages; requests from other sites are refused."))
        return None


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
