"""Load shedding: a bounded number of requests at work, a bounded queue, 503 beyond it.

Without a bound, every request the dashboard accepts is worked on at once: offered
200 requests a second, each waited behind all the others (p99 38 s) and the
process's memory grew with the backlog. :class:`Shed` (ASGI middleware, inside
the :class:`sleep.ui.guard.Guard` so a refused request costs nothing) admits at
most :attr:`Limits.active` requests at a time; up to :attr:`Limits.queue` more
wait for a turn, each at most :attr:`Limits.wait_seconds`; any other request, and
one that waited its time out, is answered at once with ``503 Service
Unavailable`` and ``Retry-After`` (seconds) — the well-known way to say "busy,
come back shortly", which browsers, ``curl --retry`` and HTTP libraries honour.

Live streams (``.../events``, Server-Sent Events that stay open while a run
trains) hold no turn: they wait on files, not on the CPU. They have their own
bound, :attr:`Limits.streams`, and a stream beyond it gets the same 503.
``counts`` says how many requests were admitted and shed (the server's log and
tests read it).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # starlette is the webui extra; the command line imports Limits without it
    from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = ["Limits", "Shed"]


@dataclass(frozen=True)
class Limits:
    active: int = 8  # requests worked on at once
    queue: int = 64  # requests waiting for a turn
    wait_seconds: float = 10.0  # how long one may wait before it is shed
    streams: int = 32  # live streams open at once
    retry_after: int = 2  # seconds, in the 503's Retry-After

    def __post_init__(self) -> None:
        if self.active < 1 or self.queue < 0 or self.streams < 0 or self.wait_seconds < 0 or self.retry_after < 1:
            raise ValueError(f"dashboard limits must be positive: {self}")


@dataclass
class _Counts:
    admitted: int = 0
    shed: int = 0
    streams_shed: int = 0
    disconnected: int = 0  # admitted requests whose client left before sending its body


@dataclass
class _State:
    sem: asyncio.Semaphore
    waiting: int = 0
    streams: int = 0
    counts: _Counts = field(default_factory=_Counts)


try:
    from starlette.requests import ClientDisconnect
except ImportError:  # pragma: no cover - the webui extra is not installed: no server runs
    class ClientDisconnect(Exception):  # type: ignore[no-redef]
        pass


class Shed:
    """ASGI middleware applying :class:`Limits` (see the module docstring)."""

    def __init__(self, app: ASGIApp, limits: Limits | None = None) -> None:
        self.app = app
        self.limits = limits or Limits()
        self._state: _State | None = None  # made in the server's event loop, on the first request

    @property
    def counts(self) -> _Counts:
        return self._state.counts if self._state is not None else _Counts()

    def _st(self) -> _State:
        if self._state is None:
            self._state = _State(asyncio.Semaphore(self.limits.active))
        return self._state

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        st = self._st()
        if scope.get("path", "").endswith("/events"):
            if st.streams >= self.limits.streams:
                st.counts.streams_shed += 1
                await self._busy(send, "live streams")
                return
            st.streams += 1
            try:
                await self.app(scope, receive, send)
            finally:
                st.streams -= 1
            return
        if st.sem.locked():  # no free turn: wait in the queue, if it has room
            if st.waiting >= self.limits.queue:
                st.counts.shed += 1
                await self._busy(send, "requests")
                return
            st.waiting += 1
            try:
                await asyncio.wait_for(st.sem.acquire(), timeout=self.limits.wait_seconds)
            except asyncio.TimeoutError:
                st.counts.shed += 1
                await self._busy(send, "requests")
                return
            finally:
                st.waiting -= 1
        else:
            await st.sem.acquire()
        st.counts.admitted += 1
        try:
            await self.app(scope, receive, send)
        except ClientDisconnect:  # the client left before its body came (a held turn): no one to answer
            st.counts.disconnected += 1
        finally:
            st.sem.release()

    async def _busy(self, send: Send, what: str) -> None:
        body = (f"The dashboard is busy: it is already answering as many {what} as it takes at once. "
                f"Try again in {self.limits.retry_after} s.\n").encode()
        await send({"type": "http.response.start", "status": 503, "headers": [
            (b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode()),
            (b"retry-after", str(self.limits.retry_after).encode()), (b"cache-control", b"no-store")]})
        await send({"type": "http.response.body", "body": body})
