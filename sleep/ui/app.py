"""The dashboard's Starlette application: configuration, templates and error pages.

``create_app`` wires the pieces: a :class:`RunCatalog` over the outputs folders
and the data directory, the Jinja2 environment (autoescaping on), the routes
of :mod:`sleep.ui.run_pages` and :mod:`sleep.ui.review_pages`, the static
files (our own CSS and JavaScript), and the :class:`Guard` middleware.
"""

from __future__ import annotations

import hashlib
import math
import secrets
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from sleep import paths
from sleep.ui import outbound
from sleep.ui.guard import CSRF_FIELD, Guard, Policy
from sleep.ui.runs import RunCatalog
from sleep.ui.shed import Limits, Shed

HERE = Path(__file__).parent
MAX_FLASHES = 200
STATIC_MAX_AGE = 7 * 24 * 3600  # static URLs carry ?v=<hash of the files>: a new version is a new URL


def static_version() -> str:
    """A short hash of the static files, appended to their URLs so a browser may cache them."""
    h = hashlib.sha256()
    for f in sorted((HERE / "static").iterdir()):
        if f.is_file():
            h.update(f.name.encode() + b"\0" + f.read_bytes())
    return h.hexdigest()[:10]


class CachedStatic(StaticFiles):
    """Our own CSS, script and icon, cacheable by this browser only (every request needs the token)."""

    async def get_response(self, path: str, scope) -> Response:
        resp = await super().get_response(path, scope)
        if resp.status_code in (200, 304):
            resp.headers["Cache-Control"] = f"private, max-age={STATIC_MAX_AGE}"
        return resp


async def favicon(request: Request) -> Response:
    return FileResponse(HERE / "static" / "favicon.svg", media_type="image/svg+xml",
                        headers={"Cache-Control": f"private, max-age={STATIC_MAX_AGE}"})


@dataclass
class Ui:
    """What every handler needs (``request.app.state.ui``)."""

    catalog: RunCatalog
    policy: Policy
    templates: jinja2.Environment
    static_v: str = ""
    index_path: Path | None = None  # None: the data directory's index
    poll: float = 0.25  # how often a live stream looks at events.jsonl (seconds)
    stream_seconds: float = 600.0  # a live stream ends after this; the browser reconnects
    flashes: OrderedDict[str, dict[str, Any]] = field(default_factory=OrderedDict)

    def flash(self, kind: str, title: str, messages: list[str] | None = None) -> str:
        """Keep a message for the page a POST redirects to; returns its key. The texts pass through
        :func:`sleep.ui.outbound.outbound` (they quote the library, which quotes the index)."""
        key = secrets.token_urlsafe(9)
        self.flashes[key] = {"kind": kind, "title": outbound.outbound(title),
                             "messages": [outbound.outbound(m) for m in messages or []]}
        while len(self.flashes) > MAX_FLASHES:
            self.flashes.popitem(last=False)
        return key

    def take_flash(self, key: str | None) -> dict[str, Any] | None:
        return self.flashes.pop(key, None) if key else None


def ui(request: Request) -> Ui:
    return request.app.state.ui


def render(request: Request, name: str, status: int = 200, **context: Any) -> HTMLResponse:
    u = ui(request)
    html = u.templates.get_template(name).render(
        request=request, csrf_field=CSRF_FIELD, csrf=u.policy.csrf, path=request.url.path, v_static=u.static_v,
        **context)
    return HTMLResponse(html, status_code=status)


# ----- template filters ------------------------------------------------------------------

# Total: a value of an unexpected type is shown as written, never an error.

def _finite(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    f = float(value)
    return f if math.isfinite(f) else None


def score(value: Any, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    f = _finite(value)
    return str(value) if f is None else f"{f:.{digits}f}"


def count(value: Any) -> str:
    if value is None:
        return "–"
    f = _finite(value)
    if f is None:
        return str(value)
    n = int(f)
    if abs(n) >= 10_000_000:
        return f"{n / 1e6:.0f}M"
    if abs(n) >= 100_000:
        return f"{n / 1e3:.0f}k"
    return f"{n:,}"


def seconds(value: Any) -> str:
    if value is None:
        return "–"
    v = _finite(value)
    if v is None:
        return str(value)
    if v < 0.01:
        return "0 s" if v == 0 else "<0.01 s"
    if v < 100:
        return f"{v:.2f} s" if v < 10 else f"{v:.1f} s"
    return f"{v / 60:.1f} min"


def when(value: Any) -> str:
    """``2026-11-30T17:26:09.396Z`` → ``2026-11-30 17:26`` (UTC, as stored)."""
    if not value:
        return "–"
    text = str(value)
    return text[:16].replace("T", " ") if len(text) >= 16 and text[10] == "T" else text


def signed(value: Any) -> str:
    if value is None:
        return "–"
    f = _finite(value)
    return str(value) if f is None else f"{f:+.2f}"


def num(value: Any) -> str:
    """A setting's number as written (4, 0.5, 1e-05)."""
    f = _finite(value)
    return "–" if f is None else f"{f:g}"


def make_templates() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(HERE / "templates")),
                             autoescape=jinja2.select_autoescape(["html"], default=True),
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters.update(score=score, count=count, seconds=seconds, when=when, signed=signed, num=num)
    for name in env.list_templates(extensions=["html"]):
        env.get_template(name)  # compile now, not on the first visitor's request
    return env


# ----- errors --------------------------------------------------------------------------------

async def not_found(request: Request, exc: Exception) -> Response:
    detail = getattr(exc, "detail", None) or "Nothing here."
    return render(request, "error.html", status=404, title="Not found", message=detail,
                  roots=[str(p) for p, _, _ in ui(request).catalog.bases()])


async def http_error(request: Request, exc: Exception) -> Response:
    code = getattr(exc, "status_code", 500)
    if code == 404:
        return await not_found(request, exc)
    return render(request, "error.html", status=code, title=f"Error {code}",
                  message=getattr(exc, "detail", "") or "", roots=[])


async def server_error(request: Request, exc: Exception) -> Response:
    """The last resort: a page that says what failed (never a bare "Internal Server Error")."""
    return render(request, "error.html", status=500, title="This page failed", roots=[], message=outbound.outbound(
        f"The dashboard could not build this page ({type(exc).__name__}: {exc}). Nothing was changed. "
        "Other pages still work; the server's log has the details."))


def create_app(outputs: list[Path] | None = None, *, data_dir: Path | bool | None = True,
               policy: Policy | None = None, index_path: Path | None = None, poll: float = 0.25,
               stream_seconds: float = 600.0, rescan_seconds: float = 2.0, limits: Limits | None = None) -> Starlette:
    """The dashboard app. ``outputs``: folders holding run directories (default ``./outputs``);
    ``data_dir``: True for SkillOpt's data directory, a path, or None/False for none; ``limits``:
    how many requests it works on and queues at once (:mod:`sleep.ui.shed`)."""
    from sleep.ui import review_pages, run_pages

    folders = [Path(p) for p in (outputs if outputs is not None else [Path("outputs")])]
    data = paths.data_dir() if data_dir is True else (Path(data_dir) if data_dir else None)
    pol = policy or Policy()
    state = Ui(RunCatalog(folders, data, rescan_seconds=rescan_seconds), pol, make_templates(), static_version(),
               index_path, poll, stream_seconds)
    routes = [*run_pages.routes, *review_pages.routes, Route("/favicon.ico", favicon),
              Mount("/static", app=CachedStatic(directory=str(HERE / "static")), name="static")]
    app = Starlette(routes=routes, middleware=[Middleware(Guard, policy=pol), Middleware(Shed, limits=limits)],
                    exception_handlers={404: not_found, HTTPException: http_error, Exception: server_error})
    app.state.ui = state
    outbound.use_index(index_path)  # the secrets this index remembers are never shown
    outbound.warm()
    return app
