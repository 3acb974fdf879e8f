"""The ``anthropic`` backend: the Messages API through the official SDK.

Contract, beyond the Backend protocol (see base.py):

- Options: ``api_key_env`` (default ``ANTHROPIC_API_KEY``), ``timeout``
  (seconds per call, default 120), ``max_retries`` (default 4; policy in
  :mod:`.retry`). Model default :data:`DEFAULT_MODEL`. ``model.base_url`` is
  *not* used here (it is shared by all roles and usually names a local
  OpenAI-compatible server); a gateway is set with ``ANTHROPIC_BASE_URL``,
  which the SDK reads.
- The request's ``system`` goes in the top-level ``system`` field (never as a
  message) and ``max_tokens`` is passed through. ``temperature`` is sent only
  when the installed SDK still has that parameter (recent ones do not); the
  API has no seed, so ``seed`` is never sent.
- JSON output: the schema is sent as ``output_config.format``
  (``json_schema``) so the model is constrained where it supports structured
  outputs; if the API refuses that for this model (HTTP 400 naming it), the
  backend switches, for its lifetime, to stating the schema in the system
  prompt. Either way the reply is returned as it came: validation and the one
  repair turn are the engine's (:func:`.structured.complete_json`).
- ``stop_reason: refusal`` (the model declined) is a :class:`RequestFailed`.
- Usage: input tokens include cache writes and reads (all processed input);
  cost from :mod:`.pricing` for known Claude models, else None.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable
from typing import Any

from skillopt_core.backends import register_backend
from skillopt_core.backends.base import CompletionRequest, RequestRejected
from skillopt_core.backends.http_common import HttpBackend, Reply
from skillopt_core.backends.images import anthropic_content
from skillopt_core.backends.json_output import with_schema_instruction
from skillopt_core.backends.keys import lookup, require_key, safe_url
from skillopt_core.backends.retry import RetryPolicy, policy_from_options, timeout_option, with_retries

log = logging.getLogger(__name__)

DEFAULT_MODEL = "claude-sonnet-4-6"
DEFAULT_KEY_VAR = "ANTHROPIC_API_KEY"
_NATIVE_WORDS = ("output_config", "output_format", "json_schema", "structured", "schema")


class AnthropicBackend(HttpBackend):
    name = "anthropic"

    def __init__(
        self,
        *,
        model: str,
        client_factory: Callable[[], Any],
        policy: RetryPolicy,
        key_var: str,
        where: str,
    ) -> None:
        super().__init__(model=model, client_factory=client_factory, policy=policy, key_var=key_var, where=where)
        self._native_json = True
        self._sends_temperature = _sdk_accepts("temperature")

    async def _plain(self, request: CompletionRequest) -> Reply:
        return await self._call(request, native=False)

    async def _structured(self, request: CompletionRequest) -> Reply:
        first = request
        while True:
            native = self._native_json
            if not native:
                first = with_schema_instruction(request)
            try:
                reply = await self._call(first, native=native)
                break
            except RequestRejected as exc:
                if not native or not any(w in str(exc).lower() for w in _NATIVE_WORDS):
                    raise
                self._native_json = False
                log.info("anthropic: %s refused structured output; stating the schema in the prompt instead",
                         self.model)
        return reply

    def _arguments(self, request: CompletionRequest, native: bool) -> dict[str, Any]:
        args: dict[str, Any] = {
            "model": self.model,
            "max_tokens": request.max_tokens,
            "messages": [{"role": m.role, "content": anthropic_content(m)} for m in request.messages],
        }
        if self._sends_temperature:
            args["temperature"] = request.temperature
        if request.system:
            args["system"] = request.system
        if native and request.json_schema is not None:
            args["output_config"] = {"format": {"type": "json_schema", "schema": request.json_schema}}
        return args

    async def _call(self, request: CompletionRequest, *, native: bool) -> Reply:
        args = self._arguments(request, native)
        client = self._client()
        message = await with_retries(
            lambda: client.messages.create(**args),
            policy=self._policy,
            backend="anthropic",
            model=self.model,
            key_var=self._key_var,
        )
        text = "".join(getattr(b, "text", "") for b in (message.content or []) if getattr(b, "type", "") == "text")
        usage = message.usage
        used_in = sum(
            int(getattr(usage, k, 0) or 0)
            for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
        )
        used_out = int(getattr(usage, "output_tokens", 0) or 0)
        model = getattr(message, "model", "") or self.model
        if getattr(message, "stop_reason", None) == "refusal":
            raise self._refused(text or "stop_reason: refusal", used_in, used_out, model)
        return text, used_in, used_out, model


def _sdk_accepts(parameter: str) -> bool:
    """Whether the installed SDK's ``messages.create`` takes ``parameter``
    (recent SDKs dropped the sampling parameters along with the API)."""
    from anthropic.resources.messages import AsyncMessages

    return parameter in inspect.signature(AsyncMessages.create).parameters


def build_anthropic_backend(
    spec: Any,
    *,
    http_client_factory: Callable[[], Any] | None = None,
    policy: RetryPolicy | None = None,
) -> AnthropicBackend:
    """An :class:`AnthropicBackend` from a BackendSpec; ``http_client_factory``
    (returning an ``httpx2.AsyncClient``) and ``policy`` are seams for tests."""
    from anthropic import AsyncAnthropic

    options = spec.options
    key_var = options.get("api_key_env") or DEFAULT_KEY_VAR
    api_key = require_key(key_var, "anthropic")
    base_url = lookup("ANTHROPIC_BASE_URL")
    timeout = timeout_option(options)

    def make_client() -> Any:
        extra = {"http_client": http_client_factory()} if http_client_factory else {}
        return AsyncAnthropic(api_key=api_key, base_url=base_url, timeout=timeout, max_retries=0, **extra)

    return AnthropicBackend(
        model=spec.model or DEFAULT_MODEL,
        client_factory=make_client,
        policy=policy or policy_from_options(options),
        key_var=key_var,
        where=safe_url(base_url) if base_url else "api.anthropic.com",
    )


register_backend("anthropic")(build_anthropic_backend)
