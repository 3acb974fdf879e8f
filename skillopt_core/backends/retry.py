"""One retry policy for every HTTP backend (openai, azure-openai, anthropic).

Contract:

- Transient failures are retried: HTTP 408, 409, 429 and 5xx (including
  Anthropic's 529 "overloaded"), request timeouts and connection errors.
  Everything else fails at once. A 429 that says the account's quota is used
  up (``insufficient_quota``) is not transient: waiting does not help.
- The wait before retry ``n`` (0-based) is exponential with jitter,
  ``base_delay * 2**n`` halved-then-jittered and capped at ``max_delay``; when
  the server sends ``Retry-After`` (seconds or an HTTP date) or
  ``retry-after-ms``, that wait is used instead (capped at ``max_delay``).
  The SDKs' own retry loops are switched off (``max_retries=0`` on the
  client) so this is the only one.
- **Retries are not calls.** All attempts of one :func:`with_retries` belong to
  one ``Backend.complete`` call, which the run's budget counts once
  (``MeteredBackend``): a 429 or 5xx answer carries no completion and no
  tokens, and attempts are bounded by ``max_retries`` per call. Each retry is
  logged with its reason and wait.
- After ``max_retries`` retries the call fails with a message naming the
  backend, the model, the number of attempts, the last reason and what to do:
  a :class:`RequestFailed` (this item only; the engine stops the run after
  several consecutive ones) for timeouts, 429 and 5xx, but a
  :class:`BackendError` when no attempt could even connect (server down,
  wrong ``base_url``): nothing else would get through either.
- :func:`to_backend_error` turns a non-transient SDK error into the right
  error type: a rejected key (401/403), a missing model or deployment (404) or
  a used-up quota is a :class:`BackendConfigError`; a request the server
  refuses on its merits (HTTP 400/413/422, e.g. too long) is a
  :class:`RequestRejected`; any other status (e.g. 405 from a wrong URL) or an
  unrecognised failure is a :class:`BackendError`.
- Every message passes through :func:`keys.redact`.
"""

from __future__ import annotations

import asyncio
import email.utils
import logging
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from skillopt_core.backends.base import BackendConfigError, BackendError, RequestFailed, RequestRejected
from skillopt_core.backends.keys import redact

log = logging.getLogger(__name__)
T = TypeVar("T")

_RETRY_STATUSES = {408, 409, 429}
_jitter = random.Random()


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to wait. ``sleep`` is injectable for tests."""

    max_retries: int = 4
    base_delay: float = 1.0
    max_delay: float = 60.0
    sleep: Callable[[float], Awaitable[None]] = field(default=asyncio.sleep, compare=False)

    def delay(self, retry_index: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return max(0.0, min(retry_after, self.max_delay))
        full = min(self.base_delay * (2**retry_index), self.max_delay)
        return full / 2 + _jitter.uniform(0, full / 2)


DEFAULT_TIMEOUT = 120.0
DEFAULT_MAX_RETRIES = 4


def timeout_option(options: dict[str, Any]) -> float:
    """``model.timeout`` in seconds (default 120)."""
    value = options.get("timeout")
    return float(value) if value else DEFAULT_TIMEOUT


def policy_from_options(options: dict[str, Any]) -> RetryPolicy:
    """The retry policy for ``model.max_retries`` (default 4)."""
    value = options.get("max_retries")
    return RetryPolicy(max_retries=DEFAULT_MAX_RETRIES if value is None else int(value))


@dataclass(frozen=True)
class Transient:
    """A failure worth retrying: a short reason, the server's requested wait,
    and whether the connection itself could not be made."""

    reason: str
    retry_after: float | None = None
    no_connection: bool = False


def parse_retry_after(headers: Any) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``Retry-After`` (seconds or
    HTTP date); None when absent or unreadable."""
    if headers is None:
        return None
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return float(ms) / 1000.0
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _class_names(exc: BaseException) -> set[str]:
    return {c.__name__ for c in type(exc).__mro__}


def status_of(exc: BaseException) -> int | None:
    status = getattr(exc, "status_code", None)
    return status if isinstance(status, int) else None


def _error_code(exc: BaseException) -> str:
    """The provider's error ``code`` or ``type`` from the body, lower-case."""
    body = getattr(exc, "body", None)
    inner = body.get("error", body) if isinstance(body, dict) else None
    if not isinstance(inner, dict):
        return ""
    return str(inner.get("code") or inner.get("type") or "").lower()


def quota_exhausted(exc: BaseException) -> bool:
    """HTTP 429 meaning the account's quota or credit is used up, not a rate."""
    return status_of(exc) == 429 and _error_code(exc) in {"insufficient_quota", "billing_hard_limit_reached"}


def classify(exc: BaseException) -> Transient | None:
    """Transient if ``exc`` (an openai/anthropic SDK error) is worth retrying."""
    names = _class_names(exc)
    status = status_of(exc)
    if status is not None:
        if quota_exhausted(exc):
            return None
        if status in _RETRY_STATUSES or status >= 500:
            response = getattr(exc, "response", None)
            headers = getattr(response, "headers", None)
            label = "rate limited" if status == 429 else "server error" if status >= 500 else "conflict/timeout"
            return Transient(f"HTTP {status} {label}", parse_retry_after(headers))
        return None
    if "APITimeoutError" in names or isinstance(exc, (asyncio.TimeoutError, TimeoutError)):
        return Transient("request timed out")
    if "APIConnectionError" in names:
        cause = exc.__cause__
        refused = cause is not None and "ConnectError" in _class_names(cause)
        return Transient("could not connect" if refused else "connection failed", no_connection=refused)
    return None


def error_text(exc: BaseException, limit: int = 400) -> str:
    """The provider's message, redacted and shortened for an error line."""
    body = getattr(exc, "body", None)
    message = None
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict):
            message = inner.get("message")
        elif isinstance(inner, str):
            message = inner
    text = str(message or exc) or type(exc).__name__
    text = redact(" ".join(text.split()))
    return text if len(text) <= limit else text[: limit - 3] + "..."


def to_backend_error(exc: BaseException, *, backend: str, model: str, key_var: str | None) -> BackendError:
    """The error a person sees for a non-transient SDK failure."""
    status = status_of(exc)
    detail = error_text(exc)
    if status in (401, 403):
        where = f"the key in {key_var}" if key_var else "the credentials"
        return BackendConfigError(
            f"{backend}: the server refused {where} (HTTP {status}: {detail}). "
            "Check that the key is valid and has access to this model."
        )
    if quota_exhausted(exc):
        return BackendConfigError(
            f"{backend}: the account's quota or credit is used up (HTTP 429: {detail}). "
            "Add credit or raise the limit with the provider, then resume the run."
        )
    if status == 404:
        return BackendConfigError(
            f"{backend}: model or deployment '{model}' was not found (HTTP 404: {detail}). "
            "Check model.target/optimizer/judge (or model.deployment) and model.base_url."
        )
    if status in (400, 413, 422):
        return RequestRejected(f"{backend}: the server rejected this request (HTTP {status}: {detail}).")
    if status is not None:
        return BackendError(f"{backend}: request failed (HTTP {status}: {detail}).")
    return BackendError(f"{backend}: request failed ({type(exc).__name__}: {detail}).")


async def with_retries(
    call: Callable[[], Awaitable[T]],
    *,
    policy: RetryPolicy,
    backend: str,
    model: str,
    key_var: str | None,
    refused: Callable[[BaseException], bool] | None = None,
) -> T:
    """``await call()``, retrying transient failures per ``policy``; other
    failures become the matching :class:`BackendError` at once. ``refused``
    marks errors that mean "this server will not do this request as asked"
    whatever their status (llama-cpp-python answers an unsupported
    ``response_format`` with HTTP 500): they become :class:`RequestRejected`
    without retrying, so the caller can ask differently."""
    retry = 0
    connected = False
    while True:
        try:
            return await call()
        except BackendError:
            raise
        except Exception as exc:  # SDK errors have no common base we can import cheaply
            if refused is not None and refused(exc):
                raise RequestRejected(
                    f"{backend}: the server refused this request as sent (HTTP {status_of(exc)}: {error_text(exc)})."
                ) from None
            transient = classify(exc)
            if transient is None:
                raise to_backend_error(exc, backend=backend, model=model, key_var=key_var) from None
            connected = connected or not transient.no_connection
            if retry >= policy.max_retries:
                raise _gave_up(backend, model, retry + 1, transient, exc, connected) from None
            wait = policy.delay(retry, transient.retry_after)
            log.warning(
                "%s: %s; retry %d/%d in %.1fs", backend, transient.reason, retry + 1, policy.max_retries, wait
            )
            await policy.sleep(wait)
            retry += 1


def _gave_up(
    backend: str, model: str, attempts: int, last: Transient, exc: BaseException, connected: bool
) -> BackendError:
    said = (
        f"{backend}: gave up on model '{model}' after {attempts} attempts; "
        f"last failure: {last.reason} ({error_text(exc)})."
    )
    if not connected:
        return BackendError(
            f"{said} No attempt could connect: start the server or check model.base_url / "
            "model.endpoint and the network, then resume the run."
        )
    return RequestFailed(
        f"{said} Wait and rerun (a finished step is not repeated), lower train.workers, "
        "or raise model.max_retries / model.timeout."
    )
