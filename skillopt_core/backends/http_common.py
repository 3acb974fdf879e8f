"""What the SDK-backed HTTP backends (anthropic, openai, azure-openai) share.

Contract:

- **One client per event loop.** An SDK client holds an HTTP connection pool,
  which cannot cross event loops; :class:`HttpBackend` makes a client with its
  factory the first time a loop asks and drops it when that loop is gone.
- **One call, one Completion.** :meth:`HttpBackend.complete` times the call,
  sends it through the subclass's ``_plain`` (no schema) or ``_structured``
  (schema) step, and prices the usage with :mod:`.pricing` by the model the
  server named (or the backend's model).
- **No repair here.** With a schema the subclass constrains decoding as far
  as the server allows (or states the schema in the prompt) and returns the
  reply as it came; checking and the single repair turn are the engine's
  (:func:`.structured.complete_json`), so every model call passes through the
  run's budget.
- **Refusals.** A reply the model declined to give (OpenAI ``refusal``,
  Anthropic ``stop_reason: refusal``) is a :class:`RequestFailed`: this item
  only, with the model's words.
"""

from __future__ import annotations

import asyncio
import logging
import time
import weakref
from collections.abc import Callable
from typing import Any

from skillopt_core.backends.base import Completion, CompletionRequest, RequestFailed, Usage
from skillopt_core.backends.keys import redact
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
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = weakref.WeakKeyDictionary()
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

    def _refused(self, reason: str, used_in: int, used_out: int, model: str) -> RequestFailed:
        """The error for a reply the model declined to give; it carries the call's usage."""
        reason = redact(" ".join(reason.split()))[:400] or "no reason given"
        return RequestFailed(
            f"{self.name}: the model '{model}' declined to answer this request ({reason}).",
            usage=Usage(used_in, used_out, estimate_cost(model, used_in, used_out)),
        )
