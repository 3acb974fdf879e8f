"""What the SDK-backed HTTP backends (anthropic, openai, azure-openai) share.

Contract:

- **One client per event loop.** An SDK client holds an HTTP connection pool,
  which cannot cross event loops; :class:`HttpBackend` makes a client with its
  factory the first time a loop asks and drops it when that loop is gone.
- **One call, one Completion.** :meth:`HttpBackend.complete` times the call,
  sends it through the subclass's ``_plain`` (no schema) or ``_structured``
  (schema) step, and prices the usage with :mod:`.pricing` by the model the
  server named (or the backend's model).
- **At most one repair.** :meth:`HttpBackend._repair_once` returns a valid
  reply compacted; otherwise it asks once more (:func:`.json_output.repair_request`)
  and returns that reply, valid or not, with the tokens of both calls.
"""

from __future__ import annotations

import asyncio
import logging
import time
import weakref
from typing import Any, Awaitable, Callable

from skillopt_core.backends.base import Completion, CompletionRequest, Usage
from skillopt_core.backends.json_output import check, repair_request
from skillopt_core.backends.pricing import estimate_cost
from skillopt_core.backends.retry import RetryPolicy

log = logging.getLogger(__name__)

# One call's result: (text, input tokens, output tokens, model the server named).
Reply = tuple[str, int, int, str]


class HttpBackend:
    """Base of the HTTP backends; subclasses set ``name`` and implement
    ``_plain`` and ``_structured``."""

    name: str

    def __init__(
        self,
        *,
        model: str,
        client_factory: Callable[[], Any],
        policy: RetryPolicy,
        key_var: str | None,
        where: str,
    ) -> None:
        self.model = model
        self._client_factory = client_factory
        self._clients: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any]" = weakref.WeakKeyDictionary()
        self._policy = policy
        self._key_var = key_var
        self._where = where

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.describe()}>"

    def describe(self) -> str:
        return f"{self.name}:{self.model} ({self._where})"

    def _client(self) -> Any:
        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None:
            client = self._clients[loop] = self._client_factory()
        return client

    async def complete(self, request: CompletionRequest) -> Completion:
        started = time.monotonic()
        if request.json_schema is None:
            text, used_in, used_out, model = await self._plain(request)
        else:
            text, used_in, used_out, model = await self._structured(request)
        return Completion(
            text=text,
            usage=Usage(used_in, used_out, estimate_cost(model or self.model, used_in, used_out)),
            model=model or self.model,
            latency_s=time.monotonic() - started,
        )

    async def _plain(self, request: CompletionRequest) -> Reply:
        raise NotImplementedError

    async def _structured(self, request: CompletionRequest) -> Reply:
        raise NotImplementedError

    async def _repair_once(
        self,
        request: CompletionRequest,
        reply: Reply,
        call: Callable[[CompletionRequest], Awaitable[Reply]],
    ) -> Reply:
        """``reply`` checked against ``request.json_schema``; if invalid, ``call``
        is made once with the repair request and its reply returned as it is."""
        text, used_in, used_out, model = reply
        schema = request.json_schema or {}
        valid, problems = check(text, schema)
        if valid is None:
            log.info("%s: reply is not valid JSON for the schema (%s); asking once to repair", self.name, problems[0])
            text, more_in, more_out, model = await call(repair_request(request, text, problems))
            used_in, used_out = used_in + more_in, used_out + more_out
            valid, _ = check(text, schema)
        return (valid if valid is not None else text), used_in, used_out, model
