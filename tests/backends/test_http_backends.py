"""Request shapes, JSON handling and the retry policy of the HTTP backends
(anthropic, azure-openai, openai), checked against a mock HTTP transport.

The SDKs send through ``httpx2``; each backend is built with an
``httpx2.AsyncClient`` over ``httpx2.MockTransport``, so no request leaves the
process. Retry waits are recorded by an injected sleep instead of slept."""

from __future__ import annotations

import json
import sys
import types
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime
from typing import Any, Callable

import httpx2
import pytest

from skillopt_core.backends import BackendSpec, CompletionRequest, Message
from skillopt_core.backends.anthropic_backend import build_anthropic_backend
from skillopt_core.backends.azure_openai import build_azure_backend
from skillopt_core.backends.base import BackendConfigError, BackendError, RequestFailed, RequestRejected
from skillopt_core.backends.json_output import NO_JSON, extract_json
from skillopt_core.backends.openai_backend import build_openai_backend
from skillopt_core.backends.pricing import estimate_cost, price_for
from skillopt_core.backends.retry import RetryPolicy, parse_retry_after

ANTHROPIC_KEY = "sk-ant-test-0123456789abcdef"
AZURE_KEY = "azurekey0123456789abcdef"
OPENAI_KEY = "sk-test-openai-0123456789abcdef"
SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch, tmp_path):
    monkeypatch.setenv("SKILLOPT_NO_DOTENV", "1")
    monkeypatch.setenv("HOME", str(tmp_path))
    for var in ("ANTHROPIC_BASE_URL", "OPENAI_BASE_URL", "AZURE_OPENAI_ENDPOINT", "OPENAI_API_VERSION"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", AZURE_KEY)
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)


class Recorder:
    """A mock transport that answers from a queue and records every request."""

    def __init__(self, *responses: Callable[[httpx2.Request], httpx2.Response] | httpx2.Response) -> None:
        self.queue = list(responses)
        self.requests: list[httpx2.Request] = []

    def handler(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        item = self.queue.pop(0) if len(self.queue) > 1 else self.queue[0]
        return item(request) if callable(item) else item

    def client(self) -> httpx2.AsyncClient:
        return httpx2.AsyncClient(transport=httpx2.MockTransport(self.handler))

    def body(self, index: int = -1) -> dict[str, Any]:
        return json.loads(self.requests[index].content)


class Sleeps:
    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def anthropic_reply(text: str, input_tokens: int = 11, output_tokens: int = 5, **usage: int) -> httpx2.Response:
    return httpx2.Response(200, json={
        "id": "msg_01", "type": "message", "role": "assistant", "model": "claude-sonnet-4-6",
        "content": [{"type": "text", "text": text}], "stop_reason": "end_turn", "stop_sequence": None,
        "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens, **usage},
    })


def openai_reply(text: str, prompt_tokens: int = 9, completion_tokens: int = 4, model: str = "gpt-4.1-mini") -> httpx2.Response:
    return httpx2.Response(200, json={
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens},
    })


def error(status: int, message: str, headers: dict[str, str] | None = None) -> httpx2.Response:
    return httpx2.Response(status, json={"error": {"type": "error", "message": message}}, headers=headers or {})


def anthropic(recorder: Recorder, sleeps: Sleeps | None = None, max_retries: int = 4, model: str | None = None):
    spec = BackendSpec("anthropic", model, "optimizer", {"max_retries": max_retries})
    policy = RetryPolicy(max_retries=max_retries, sleep=sleeps or Sleeps())
    return build_anthropic_backend(spec, http_client_factory=recorder.client, policy=policy)


def azure(recorder: Recorder, sleeps: Sleeps | None = None, max_retries: int = 4):
    spec = BackendSpec("azure-openai", None, "target", {
        "endpoint": "https://myres.openai.azure.com", "deployment": "gpt4o-prod", "api_version": "2024-10-21",
    })
    policy = RetryPolicy(max_retries=max_retries, sleep=sleeps or Sleeps())
    return build_azure_backend(spec, http_client_factory=recorder.client, policy=policy)


def openai(recorder: Recorder, options: dict[str, Any] | None = None, model: str | None = "gpt-4.1-mini"):
    spec = BackendSpec("openai", model, "target", options or {})
    return build_openai_backend(spec, http_client_factory=recorder.client, policy=RetryPolicy(sleep=Sleeps()))


def chat(system: str | None = "Be brief.", **kwargs: Any) -> CompletionRequest:
    return CompletionRequest(messages=(Message("user", "What is 2+2?"),), system=system, **kwargs)


# -- anthropic: request shape ------------------------------------------------ #


async def test_anthropic_sends_key_header_model_and_max_tokens() -> None:
    rec = Recorder(anthropic_reply("4"))
    await anthropic(rec, model="claude-haiku-4-5").complete(chat(max_tokens=77))
    request = rec.requests[0]
    assert request.url.path == "/v1/messages"
    sent_key = request.headers.get("x-api-key") or request.headers.get("authorization", "").removeprefix("Bearer ")
    assert sent_key == ANTHROPIC_KEY
    assert request.headers["anthropic-version"]
    body = rec.body()
    assert body["model"] == "claude-haiku-4-5"
    assert body["max_tokens"] == 77


async def test_anthropic_puts_system_prompt_in_top_level_field_not_messages() -> None:
    rec = Recorder(anthropic_reply("4"))
    await anthropic(rec).complete(chat(system="You are terse."))
    body = rec.body()
    assert body["system"] == "You are terse."
    assert body["messages"] == [{"role": "user", "content": "What is 2+2?"}]


async def test_anthropic_omits_system_field_when_request_has_none() -> None:
    rec = Recorder(anthropic_reply("4"))
    await anthropic(rec).complete(chat(system=None, seed=5))
    assert "system" not in rec.body()
    assert "seed" not in rec.body()


async def test_anthropic_usage_counts_cache_tokens_and_prices_known_model() -> None:
    rec = Recorder(anthropic_reply("4", input_tokens=100, output_tokens=10,
                                   cache_creation_input_tokens=20, cache_read_input_tokens=30))
    completion = await anthropic(rec, model="claude-sonnet-4-6").complete(chat())
    assert completion.text == "4"
    assert (completion.usage.input_tokens, completion.usage.output_tokens) == (150, 10)
    assert completion.usage.cost_usd == pytest.approx((150 * 3.0 + 10 * 15.0) / 1e6)
    assert completion.model == "claude-sonnet-4-6"


async def test_anthropic_default_model_is_used_when_none_given() -> None:
    rec = Recorder(anthropic_reply("4"))
    backend = anthropic(rec)
    await backend.complete(chat())
    assert rec.body()["model"] == backend.model == "claude-sonnet-4-6"


# -- anthropic: structured output -------------------------------------------- #


async def test_anthropic_sends_schema_as_output_config_format() -> None:
    rec = Recorder(anthropic_reply('{"answer": "4"}'))
    completion = await anthropic(rec).complete(chat(json_schema=SCHEMA))
    assert rec.body()["output_config"] == {"format": {"type": "json_schema", "schema": SCHEMA}}
    assert json.loads(completion.text) == {"answer": "4"}


async def test_anthropic_states_schema_in_system_prompt_when_output_config_refused() -> None:
    rec = Recorder(
        error(400, "output_config.format: structured outputs are not supported for this model"),
        anthropic_reply('{"answer": "4"}'),
    )
    backend = anthropic(rec)
    completion = await backend.complete(chat(json_schema=SCHEMA))
    retry_body = rec.body(1)
    assert "output_config" not in retry_body
    assert json.dumps(SCHEMA, sort_keys=True) in retry_body["system"]
    assert retry_body["system"].startswith("Be brief.")
    assert json.loads(completion.text) == {"answer": "4"}
    await backend.complete(chat(json_schema=SCHEMA))  # remembered: no second refusal
    assert len(rec.requests) == 3 and "output_config" not in rec.body(2)


@pytest.mark.parametrize("kind", ["anthropic", "azure"])
async def test_invalid_json_is_returned_as_it_came_without_a_repair_call(kind: str) -> None:
    reply = anthropic_reply("The answer is four.") if kind == "anthropic" else openai_reply("The answer is four.")
    rec = Recorder(reply, reply)
    backend = anthropic(rec) if kind == "anthropic" else azure(rec)
    completion = await backend.complete(chat(json_schema=SCHEMA))
    assert completion.text == "The answer is four."
    assert len(rec.requests) == 1  # the engine's complete_json repairs, not the backend


# -- retry policy (anthropic and azure-openai share it) ---------------------- #


@pytest.mark.parametrize("kind", ["anthropic", "azure"])
async def test_rate_limit_is_retried_after_retry_after_seconds(kind: str) -> None:
    ok = anthropic_reply("4") if kind == "anthropic" else openai_reply("4")
    rec = Recorder(error(429, "rate limited", {"retry-after": "7"}), ok)
    sleeps = Sleeps()
    backend = anthropic(rec, sleeps) if kind == "anthropic" else azure(rec, sleeps)
    completion = await backend.complete(chat())
    assert completion.text == "4"
    assert sleeps.waits == [7.0]
    assert len(rec.requests) == 2


@pytest.mark.parametrize("kind", ["anthropic", "azure"])
async def test_server_error_is_retried_with_backoff(kind: str) -> None:
    ok = anthropic_reply("4") if kind == "anthropic" else openai_reply("4")
    rec = Recorder(error(500, "boom"), error(503, "busy"), ok)
    sleeps = Sleeps()
    backend = anthropic(rec, sleeps) if kind == "anthropic" else azure(rec, sleeps)
    completion = await backend.complete(chat())
    assert completion.text == "4"
    assert len(sleeps.waits) == 2
    assert 0.5 <= sleeps.waits[0] <= 1.0 and 1.0 <= sleeps.waits[1] <= 2.0  # base 1 s, doubling, jittered


@pytest.mark.parametrize("kind", ["anthropic", "azure"])
async def test_gives_up_after_retry_limit_with_clear_error(kind: str) -> None:
    rec = Recorder(error(429, "rate limited", {"retry-after": "1"}))
    sleeps = Sleeps()
    backend = anthropic(rec, sleeps, max_retries=2) if kind == "anthropic" else azure(rec, sleeps, max_retries=2)
    with pytest.raises(RequestFailed) as info:  # this item only: the engine stops after several in a row
        await backend.complete(chat())
    message = str(info.value)
    assert "gave up" in message and "3 attempts" in message and "HTTP 429" in message
    assert "model.max_retries" in message
    assert len(rec.requests) == 3 and sleeps.waits == [1.0, 1.0]


async def test_timeout_is_retried() -> None:
    def timeout(request: httpx2.Request) -> httpx2.Response:
        raise httpx2.ReadTimeout("timed out", request=request)

    rec = Recorder(timeout, anthropic_reply("4"))
    sleeps = Sleeps()
    assert (await anthropic(rec, sleeps).complete(chat())).text == "4"
    assert len(sleeps.waits) == 1


@pytest.mark.parametrize("status", [500, 503, 529])
async def test_server_errors_after_the_retries_fail_only_this_item(status: int) -> None:
    rec = Recorder(error(status, "overloaded"))
    with pytest.raises(RequestFailed, match=f"HTTP {status}"):
        await anthropic(rec, max_retries=1).complete(chat())
    assert len(rec.requests) == 2


async def test_timeouts_after_the_retries_fail_only_this_item() -> None:
    def timeout(request: httpx2.Request) -> httpx2.Response:
        raise httpx2.ReadTimeout("timed out", request=request)

    rec = Recorder(timeout)
    with pytest.raises(RequestFailed, match="timed out"):
        await anthropic(rec, max_retries=1).complete(chat())


@pytest.mark.parametrize("kind", ["anthropic", "azure"])
async def test_endpoint_that_never_accepts_a_connection_is_systemic(kind: str) -> None:
    def refused(request: httpx2.Request) -> httpx2.Response:
        raise httpx2.ConnectError("Connection refused", request=request)

    rec = Recorder(refused)
    sleeps = Sleeps()
    backend = anthropic(rec, sleeps, max_retries=2) if kind == "anthropic" else azure(rec, sleeps, max_retries=2)
    with pytest.raises(BackendError, match="could connect") as info:
        await backend.complete(chat())
    assert not isinstance(info.value, RequestFailed)
    assert len(rec.requests) == 3 and len(sleeps.waits) == 2


async def test_connection_lost_after_a_server_answered_fails_only_this_item() -> None:
    def refused(request: httpx2.Request) -> httpx2.Response:
        raise httpx2.ConnectError("Connection refused", request=request)

    rec = Recorder(error(503, "busy"), refused)
    with pytest.raises(RequestFailed):
        await anthropic(rec, max_retries=1).complete(chat())


async def test_connection_refused_once_then_answered_is_retried() -> None:
    def refused(request: httpx2.Request) -> httpx2.Response:
        raise httpx2.ConnectError("Connection refused", request=request)

    rec = Recorder(refused, openai_reply("4"))
    assert (await azure(rec).complete(chat())).text == "4"


async def test_used_up_quota_is_systemic_and_not_retried() -> None:
    body = {"error": {"message": "You exceeded your current quota.", "type": "insufficient_quota",
                      "code": "insufficient_quota"}}
    rec = Recorder(httpx2.Response(429, json=body))
    with pytest.raises(BackendConfigError, match="quota") as info:
        await openai(rec).complete(chat())
    assert not isinstance(info.value, RequestFailed)
    assert len(rec.requests) == 1  # not retried


async def test_missing_model_is_systemic() -> None:
    rec = Recorder(error(404, "model: claude-nope"))
    with pytest.raises(BackendConfigError, match="not found") as info:
        await anthropic(rec, model="claude-nope").complete(chat())
    assert not isinstance(info.value, RequestFailed)


async def test_openai_refusal_fails_only_this_item_with_its_usage() -> None:
    body = {
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-4.1-mini",
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": None, "refusal": "I can't help with that."}}],
        "usage": {"prompt_tokens": 20, "completion_tokens": 7, "total_tokens": 27},
    }
    with pytest.raises(RequestFailed, match="declined.*I can't help with that") as info:
        await openai(Recorder(httpx2.Response(200, json=body))).complete(chat(json_schema=SCHEMA))
    assert (info.value.usage.input_tokens, info.value.usage.output_tokens) == (20, 7)


async def test_anthropic_refusal_fails_only_this_item() -> None:
    reply = anthropic_reply("")
    body = json.loads(reply.content)
    body["stop_reason"] = "refusal"
    with pytest.raises(RequestFailed, match="declined"):
        await anthropic(Recorder(httpx2.Response(200, json=body))).complete(chat())


async def test_retry_after_is_capped_at_max_delay() -> None:
    rec = Recorder(error(429, "slow down", {"retry-after": "3600"}), anthropic_reply("4"))
    sleeps = Sleeps()
    await anthropic(rec, sleeps).complete(chat())
    assert sleeps.waits == [60.0]


async def test_rejected_key_is_config_error_naming_variable_not_value() -> None:
    rec = Recorder(error(401, f"invalid x-api-key {ANTHROPIC_KEY}"))
    with pytest.raises(BackendConfigError) as info:
        await anthropic(rec).complete(chat())
    assert "ANTHROPIC_API_KEY" in str(info.value)
    assert ANTHROPIC_KEY not in str(info.value)
    assert len(rec.requests) == 1


async def test_too_long_request_is_rejected_for_this_item_only() -> None:
    rec = Recorder(error(400, "prompt is too long: 250000 tokens > 200000 maximum"))
    with pytest.raises(RequestRejected, match="too long"):
        await anthropic(rec).complete(chat())
    assert len(rec.requests) == 1


def test_missing_anthropic_key_names_the_variable(monkeypatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    with pytest.raises(BackendConfigError, match="ANTHROPIC_API_KEY"):
        anthropic(Recorder(anthropic_reply("x")))


# -- azure-openai: request shape --------------------------------------------- #


async def test_azure_posts_to_deployment_with_api_version_and_api_key_header() -> None:
    rec = Recorder(openai_reply("4"))
    backend = azure(rec)
    await backend.complete(chat(max_tokens=50))
    request = rec.requests[0]
    assert request.url.host == "myres.openai.azure.com"
    assert request.url.path == "/openai/deployments/gpt4o-prod/chat/completions"
    assert request.url.params["api-version"] == "2024-10-21"
    assert request.headers["api-key"] == AZURE_KEY
    assert "authorization" not in request.headers
    body = rec.body()
    assert body["messages"][0] == {"role": "system", "content": "Be brief."}
    assert body["messages"][1] == {"role": "user", "content": "What is 2+2?"}
    assert body["max_completion_tokens"] == 50
    assert backend.model == "gpt4o-prod"


async def test_azure_sends_json_schema_response_format() -> None:
    rec = Recorder(openai_reply('{"answer": "4"}'))
    completion = await azure(rec).complete(chat(json_schema=SCHEMA))
    fmt = rec.body()["response_format"]
    assert fmt["type"] == "json_schema"
    assert fmt["json_schema"]["schema"] == SCHEMA
    assert json.loads(completion.text) == {"answer": "4"}


async def test_azure_uses_entra_token_when_no_key(monkeypatch) -> None:
    monkeypatch.delenv("AZURE_OPENAI_API_KEY")
    scopes: list[str] = []

    def get_bearer_token_provider(credential: object, scope: str):
        scopes.append(scope)

        async def provider() -> str:
            return "entra-token-abc"

        return provider

    fake = types.ModuleType("azure.identity.aio")
    fake.DefaultAzureCredential = lambda: object()
    fake.get_bearer_token_provider = get_bearer_token_provider
    monkeypatch.setitem(sys.modules, "azure.identity.aio", fake)
    rec = Recorder(openai_reply("4"))
    await azure(rec).complete(chat())
    assert rec.requests[0].headers["authorization"] == "Bearer entra-token-abc"
    assert "api-key" not in rec.requests[0].headers
    assert scopes == ["https://cognitiveservices.azure.com/.default"]


def test_azure_without_key_or_identity_explains_both_ways(monkeypatch) -> None:
    monkeypatch.delenv("AZURE_OPENAI_API_KEY")
    monkeypatch.setitem(sys.modules, "azure.identity.aio", None)  # import fails
    with pytest.raises(BackendConfigError) as info:
        azure(Recorder(openai_reply("x")))
    assert "AZURE_OPENAI_API_KEY" in str(info.value) and "azure-identity" in str(info.value)


def test_azure_without_endpoint_is_config_error() -> None:
    spec = BackendSpec("azure-openai", None, "target", {"deployment": "d"})
    with pytest.raises(BackendConfigError, match="endpoint"):
        build_azure_backend(spec)


# -- openai: request shape and fallbacks -------------------------------------- #


async def test_openai_sends_bearer_key_and_records_usage_with_price() -> None:
    rec = Recorder(openai_reply("4", prompt_tokens=1000, completion_tokens=100))
    completion = await openai(rec).complete(chat(seed=3))
    request = rec.requests[0]
    assert request.headers["authorization"] == f"Bearer {OPENAI_KEY}"
    assert request.url.path == "/v1/chat/completions"
    body = rec.body()
    assert body["seed"] == 3 and body["model"] == "gpt-4.1-mini"
    assert completion.usage.input_tokens == 1000 and completion.usage.output_tokens == 100
    assert completion.usage.cost_usd == pytest.approx((1000 * 0.40 + 100 * 1.60) / 1e6)


async def test_timeout_option_sets_the_per_call_timeout() -> None:
    rec = Recorder(openai_reply("4"))
    await openai(rec, {"timeout": 33}).complete(chat())
    assert rec.requests[0].extensions["timeout"]["read"] == 33


async def test_openai_compatible_server_gets_max_tokens_and_placeholder_key(monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    rec = Recorder(openai_reply("4", model="qwen"))
    completion = await openai(rec, {"base_url": "http://127.0.0.1:9/v1"}, model="qwen").complete(chat(max_tokens=20))
    assert rec.requests[0].url.host == "127.0.0.1"
    assert rec.body()["max_tokens"] == 20
    assert completion.usage.cost_usd is None


async def test_openai_swaps_token_parameter_when_server_refuses_it() -> None:
    rec = Recorder(
        error(400, "Unsupported parameter: 'max_completion_tokens' is not supported with this model."),
        openai_reply("4"),
    )
    await openai(rec).complete(chat(max_tokens=30))
    assert "max_completion_tokens" in rec.body(0)
    assert rec.body(1)["max_tokens"] == 30 and "max_completion_tokens" not in rec.body(1)


async def test_openai_falls_back_to_json_object_with_schema_when_json_schema_refused() -> None:
    rec = Recorder(
        error(422, "response_format: Input should be 'text' or 'json_object'"),
        openai_reply('{"answer": "4"}'),
    )
    completion = await openai(rec, {"base_url": "http://127.0.0.1:9/v1"}).complete(chat(json_schema=SCHEMA))
    assert rec.body(0)["response_format"]["type"] == "json_schema"
    assert rec.body(1)["response_format"] == {"type": "json_object", "schema": SCHEMA}
    assert "JSON Schema" in rec.body(1)["messages"][0]["content"]
    assert json.loads(completion.text) == {"answer": "4"}


def test_missing_openai_key_names_variable_and_base_url_alternative(monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    with pytest.raises(BackendConfigError) as info:
        openai(Recorder(openai_reply("x")))
    assert "OPENAI_API_KEY" in str(info.value) and "base_url" in str(info.value)


def test_api_key_env_option_picks_another_variable(monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    monkeypatch.setenv("MY_GATEWAY_KEY", "sk-gateway-0123456789")
    backend = openai(Recorder(openai_reply("x")), {"api_key_env": "MY_GATEWAY_KEY"})
    assert "sk-gateway" not in repr(backend) and "sk-gateway" not in backend.describe()


# -- pure helpers ---------------------------------------------------------------- #


def test_retry_after_reads_milliseconds_seconds_and_http_dates() -> None:
    assert parse_retry_after(httpx2.Headers({"retry-after-ms": "1500", "retry-after": "9"})) == 1.5
    assert parse_retry_after(httpx2.Headers({"retry-after": "4"})) == 4.0
    later = format_datetime(datetime.now(timezone.utc) + timedelta(seconds=30), usegmt=True)
    assert 25 <= parse_retry_after(httpx2.Headers({"retry-after": later})) <= 30
    assert parse_retry_after(httpx2.Headers({"retry-after": "soon"})) is None
    assert parse_retry_after(httpx2.Headers({})) is None


def test_price_table_matches_dated_snapshots_but_not_other_models() -> None:
    assert price_for("gpt-4o-2024-08-06") == price_for("gpt-4o")
    assert price_for("gpt-4o-mini") != price_for("gpt-4o")
    assert price_for("o3-mini") is None  # not priced like o3
    assert price_for("claude-opus-4-20250514") == (15.0, 75.0)
    assert estimate_cost("llama-3-8b", 100, 100) is None


def test_json_is_found_inside_code_fences_and_prose() -> None:
    assert extract_json('```json\n{"answer": "4"}\n```', SCHEMA) == ({"answer": "4"}, [])
    assert extract_json('Sure! {"answer": "4"} Hope that helps.', SCHEMA) == ({"answer": "4"}, [])
    assert extract_json('First [1, 2], then {"answer": "4"}.', SCHEMA) == ({"answer": "4"}, [])
    assert extract_json('{"answer": 4}', SCHEMA) == (None, ["answer: 4 is not of type 'string'"])
    assert extract_json("no json here", SCHEMA) == (None, [NO_JSON])
