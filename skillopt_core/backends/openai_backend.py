"""The ``openai`` backend: OpenAI chat completions through the official SDK, and
any OpenAI-compatible server (vLLM, Ollama, LM Studio, llama.cpp server) by
``base_url``. :mod:`.azure_openai` reuses it with the Azure client.

Contract, beyond the Backend protocol (see base.py):

- Options: ``base_url`` (a compatible server; then the key is optional),
  ``api_key_env`` (variable holding the key, default ``OPENAI_API_KEY``),
  ``timeout`` (seconds per HTTP call, default 120), ``max_retries`` (default 4,
  policy in :mod:`.retry`). With ``base_url`` and no model name, the first
  model the server lists (``GET /models``) is used and becomes ``model``.
- JSON output: the request asks for ``response_format`` ``json_schema``. A
  server that rejects that (HTTP 400/422 naming the response format) is asked
  again with ``json_object`` plus the schema (what llama-cpp-python's server
  accepts), then plain ``json_object``, then a prompt instruction alone; the
  first level that works is remembered for the backend's lifetime. Below
  ``json_schema`` the schema is also stated in the system prompt. The reply is
  returned as it came: validation and the one repair turn are the engine's
  (:func:`.structured.complete_json`).
- A parameter a server refuses (``max_tokens`` vs ``max_completion_tokens``,
  ``temperature`` on reasoning models, ``seed``) is adjusted once and the
  adjustment remembered, so one configuration works against OpenAI and
  against older compatible servers.
- A reply with ``refusal`` set (the model declined) is a :class:`RequestFailed`.
- Usage: prompt/completion tokens from the response; cost from
  :mod:`.pricing` for known OpenAI models, else None. Refused formats and
  parameters are HTTP 400/422 answers without a completion: like transport
  retries (:mod:`.retry`) they are part of this one call.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from skillopt_core.backends import register_backend
from skillopt_core.backends.base import BackendConfigError, CompletionRequest, RequestRejected
from skillopt_core.backends.http_common import HttpBackend, Reply
from skillopt_core.backends.images import openai_content
from skillopt_core.backends.json_output import with_schema_instruction
from skillopt_core.backends.keys import lookup, require_key, safe_url
from skillopt_core.backends.retry import (
    RetryPolicy,
    error_text,
    policy_from_options,
    status_of,
    timeout_option,
    with_retries,
)

log = logging.getLogger(__name__)

# Not a reasoning model: a small max_tokens is not eaten by hidden reasoning.
DEFAULT_MODEL = "gpt-4.1-mini"
DEFAULT_KEY_VAR = "OPENAI_API_KEY"
# Sent to keyless local servers; the SDK refuses to start without some key.
NO_KEY_PLACEHOLDER = "no-key-required"

JSON_LADDER = ("json_schema", "json_object_schema", "json_object", "prompt")
_FORMAT_WORDS = ("response_format", "json_schema", "json_object", "schema")
_REASONING_PREFIXES = ("o1", "o3", "o4", "gpt-5")


@dataclass
class _Params:
    """Request parameters learned from the server's refusals (see module doc)."""

    token_param: str
    send_temperature: bool
    send_seed: bool = True
    json_level: int = 0
    adjusted: set[str] = field(default_factory=set)


class OpenAIBackend(HttpBackend):
    """Chat completions against OpenAI, Azure OpenAI or a compatible server."""

    def __init__(
        self,
        *,
        model: str,
        client_factory: Callable[[], Any],
        policy: RetryPolicy,
        key_var: str | None,
        where: str,
        official: bool,
        name: str = "openai",
    ) -> None:
        super().__init__(model=model, client_factory=client_factory, policy=policy, key_var=key_var, where=where)
        self.name = name
        reasoning = model.lower().startswith(_REASONING_PREFIXES)
        self._params = _Params(
            token_param="max_completion_tokens" if official else "max_tokens",
            send_temperature=not reasoning,
        )

    async def _plain(self, request: CompletionRequest) -> Reply:
        return await self._call_adjusting(request, None)

    async def _structured(self, request: CompletionRequest) -> Reply:
        while True:
            level = JSON_LADDER[self._params.json_level]
            try:
                reply = await self._call_adjusting(request, level)
                break
            except RequestRejected as exc:
                if self._params.json_level + 1 >= len(JSON_LADDER) or not _mentions(exc, _FORMAT_WORDS):
                    raise
                self._params.json_level += 1
                log.info(
                    "%s: server refused response_format %s; using %s from now on",
                    self.name, level, JSON_LADDER[self._params.json_level],
                )
        return reply

    async def _call_adjusting(self, request: CompletionRequest, level: str | None) -> Reply:
        """One call; a refused parameter is adjusted once and the call repeated."""
        while True:
            try:
                return await self._call(request, level)
            except RequestRejected as exc:
                if not self._adjust_for(exc):
                    raise

    def _adjust_for(self, exc: RequestRejected) -> bool:
        p = self._params
        text = str(exc)
        if ("max_tokens" in text or "max_completion_tokens" in text) and "max_tokens" not in p.adjusted:
            p.token_param = "max_tokens" if p.token_param == "max_completion_tokens" else "max_completion_tokens"
            p.adjusted.add("max_tokens")
        elif "temperature" in text and p.send_temperature and "temperature" not in p.adjusted:
            p.send_temperature = False
            p.adjusted.add("temperature")
        elif "seed" in text and p.send_seed and "seed" not in p.adjusted:
            p.send_seed = False
            p.adjusted.add("seed")
        else:
            return False
        log.info("%s: server refused a parameter; adjusted (%s) and retrying", self.name, ", ".join(sorted(p.adjusted)))
        return True

    def _arguments(self, request: CompletionRequest, level: str | None) -> dict[str, Any]:
        if level not in (None, "json_schema"):
            request = with_schema_instruction(request)
        messages: list[dict[str, Any]] = []
        if request.system:
            messages.append({"role": "system", "content": request.system})
        messages.extend({"role": m.role, "content": openai_content(m)} for m in request.messages)
        args: dict[str, Any] = {"model": self.model, "messages": messages, self._params.token_param: request.max_tokens}
        if self._params.send_temperature:
            args["temperature"] = request.temperature
        if request.seed is not None and self._params.send_seed:
            args["seed"] = request.seed
        schema = request.json_schema
        if level == "json_schema":
            args["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "skillopt_response", "schema": schema, "strict": False},
            }
        elif level == "json_object_schema":
            args["response_format"] = {"type": "json_object", "schema": schema}
        elif level == "json_object":
            args["response_format"] = {"type": "json_object"}
        return args

    async def _call(self, request: CompletionRequest, level: str | None) -> Reply:
        args = self._arguments(request, level)
        client = self._client()
        response = await with_retries(
            lambda: client.chat.completions.create(**args),
            policy=self._policy,
            backend=self.name,
            model=self.model,
            key_var=self._key_var,
            refused=_format_refused if level is not None else None,
        )
        choices = getattr(response, "choices", None) or []
        message = choices[0].message if choices else None
        usage = getattr(response, "usage", None)
        used_in = int(getattr(usage, "prompt_tokens", 0) or 0)
        used_out = int(getattr(usage, "completion_tokens", 0) or 0)
        model = getattr(response, "model", "") or self.model
        refusal = getattr(message, "refusal", None)
        if refusal:
            raise self._refused(str(refusal), used_in, used_out, model)
        text = (getattr(message, "content", None) or "") if message is not None else ""
        return text, used_in, used_out, model


def _format_refused(exc: BaseException) -> bool:
    """A server error that names the response format (a 500 from llama-cpp-python
    for ``json_schema`` is a refusal, not an outage)."""
    status = status_of(exc)
    if status is None or status < 500:
        return False
    text = error_text(exc, limit=2000).lower()
    return "response_format" in text


def _mentions(exc: BaseException, words: tuple[str, ...]) -> bool:
    text = str(exc).lower()
    return any(w in text for w in words)


def discover_model(base_url: str, api_key: str, timeout: float, backend: str = "openai") -> str:
    """The first model a compatible server lists; a clear error when it cannot."""
    from openai import OpenAI

    try:
        with OpenAI(api_key=api_key, base_url=base_url, timeout=min(timeout, 15.0), max_retries=1) as client:
            ids = [m.id for m in client.models.list()]
    except Exception as exc:  # any SDK or transport failure means the same thing here
        raise BackendConfigError(
            f"{backend}: no model name was given and the server at {safe_url(base_url)} could not list its "
            f"models ({error_text(exc)}). Start the server, check model.base_url, or set the "
            "model name (model.target / model.optimizer / model.judge)."
        ) from None
    if not ids:
        raise BackendConfigError(
            f"{backend}: the server at {safe_url(base_url)} lists no models. Load a model there or set the model name."
        )
    if len(ids) > 1:
        log.info("%s: %s serves %d models; using the first, %s", backend, safe_url(base_url), len(ids), ids[0])
    return ids[0]


def build_openai_backend(
    spec: Any,
    *,
    http_client_factory: Callable[[], Any] | None = None,
    policy: RetryPolicy | None = None,
) -> OpenAIBackend:
    """An :class:`OpenAIBackend` from a :class:`BackendSpec`. ``http_client_factory``
    (returning an ``httpx2.AsyncClient``) and ``policy`` are seams for tests."""
    options = spec.options
    base_url = options.get("base_url") or None
    return build_compatible_backend(
        spec, name="openai", base_url=base_url, key_var=options.get("api_key_env") or DEFAULT_KEY_VAR,
        key_required=base_url is None, default_model=None if base_url else DEFAULT_MODEL,
        key_hint="or set model.base_url to use a local OpenAI-compatible server",
        http_client_factory=http_client_factory, policy=policy,
    )


def build_compatible_backend(
    spec: Any,
    *,
    name: str,
    base_url: str | None,
    key_var: str,
    key_required: bool,
    default_model: str | None,
    key_hint: str = "",
    max_completion_tokens: bool | None = None,
    http_client_factory: Callable[[], Any] | None = None,
    policy: RetryPolicy | None = None,
) -> OpenAIBackend:
    """The chat-completions backend ``name`` against ``base_url`` (None: api.openai.com),
    the key in ``key_var`` (required or optional), model ``spec.model``, else
    ``default_model``, else the first model the server lists. The token limit
    is sent as ``max_completion_tokens`` when ``max_completion_tokens`` (default:
    only to api.openai.com), else as ``max_tokens``. The named presets
    (:mod:`.presets`) are this with their own defaults."""
    from openai import AsyncOpenAI

    options = spec.options
    if key_required:
        api_key = require_key(key_var, name, hint=key_hint)
    else:
        api_key = lookup(key_var) or NO_KEY_PLACEHOLDER
    timeout = timeout_option(options)
    model = spec.model or default_model
    if not model:
        if not base_url:
            raise BackendConfigError(f"{name}: no model name and no server to ask for one; set the model name.")
        model = discover_model(base_url, api_key, timeout, name)

    def make_client() -> Any:
        extra = {"http_client": http_client_factory()} if http_client_factory else {}
        return AsyncOpenAI(api_key=api_key, base_url=base_url, timeout=timeout, max_retries=0, **extra)

    return OpenAIBackend(
        model=model,
        client_factory=make_client,
        policy=policy or policy_from_options(options),
        key_var=key_var if api_key != NO_KEY_PLACEHOLDER else None,
        where=safe_url(base_url) if base_url else "api.openai.com",
        official=(base_url is None) if max_completion_tokens is None else max_completion_tokens,
        name=name,
    )


register_backend("openai")(build_openai_backend)


__all__ = ["OpenAIBackend", "build_compatible_backend", "build_openai_backend", "discover_model"]
