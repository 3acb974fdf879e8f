"""One JSON repair layer, and every model call counted by the run's budget.

A backend returns what the model sent; ``complete_json`` makes the single
repair turn, through the same (metered) backend. Checked end to end: a real
HTTP backend over a mock transport, wrapped in ``MeteredBackend``, so the
ledger's call count can be compared with the requests that left the backend.
Transport retries (429/5xx) belong to one call and are not counted again."""

from __future__ import annotations

import json
from typing import Any

import httpx2
import pytest

from skillopt_core.backends import BackendSpec, CompletionRequest
from skillopt_core.backends.anthropic_backend import build_anthropic_backend
from skillopt_core.backends.base import RequestFailed
from skillopt_core.backends.openai_backend import build_openai_backend
from skillopt_core.backends.retry import RetryPolicy
from skillopt_core.backends.scripted import Rule, ScriptedBackend
from skillopt_core.backends.structured import complete_json
from skillopt_core.run.budget import Budget, BudgetExceeded, MeteredBackend, UsageLedger

STRICT = {
    "type": "object",
    "properties": {"edits": {"type": "array", "items": {
        "type": "object",
        "properties": {"op": {"enum": ["add", "delete", "replace"]}, "content": {"type": "string"}},
        "required": ["op", "content"],
    }}},
    "required": ["edits"],
}
ACCEPT = {
    "type": "object",
    "properties": {"edits": {"type": "array", "items": {"type": "object", "required": ["op"]}}},
    "required": ["edits"],
}
VALID = '{"edits": [{"op": "add", "content": "Be exact."}]}'


@pytest.fixture(autouse=True)
def _keys(monkeypatch) -> None:
    monkeypatch.setenv("SKILLOPT_NO_DOTENV", "1")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-0123456789abcdef")
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)


class Server:
    """Mock Messages API: answers from a list (the last one repeats) and keeps every request."""

    def __init__(self, *answers: httpx2.Response) -> None:
        self.answers = list(answers)
        self.requests: list[dict[str, Any]] = []

    def handle(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(json.loads(request.content))
        return self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]

    def client(self) -> httpx2.AsyncClient:
        return httpx2.AsyncClient(transport=httpx2.MockTransport(self.handle))


def reply(text: str, tokens_in: int = 10, tokens_out: int = 5) -> httpx2.Response:
    return httpx2.Response(200, json={
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-6",
        "content": [{"type": "text", "text": text}], "stop_reason": "end_turn", "stop_sequence": None,
        "usage": {"input_tokens": tokens_in, "output_tokens": tokens_out},
    })


async def _no_sleep(seconds: float) -> None:
    return None


def metered(server: Server, budget: Budget | None = None) -> tuple[MeteredBackend, UsageLedger]:
    spec = BackendSpec("anthropic", None, "optimizer", {})
    inner = build_anthropic_backend(spec, http_client_factory=server.client, policy=RetryPolicy(sleep=_no_sleep))
    ledger = UsageLedger()
    return MeteredBackend(inner, "optimizer", ledger, budget or Budget()), ledger


def ask() -> CompletionRequest:
    return CompletionRequest.single("Propose edits.", stage="reflect")


async def test_valid_reply_costs_one_metered_call() -> None:
    server = Server(reply(VALID))
    backend, ledger = metered(server)
    result = await complete_json(backend, ask(), STRICT, ACCEPT)
    assert result.ok and result.attempts == 1
    assert ledger.totals()["calls"] == 1 == len(server.requests)


async def test_invalid_then_valid_is_exactly_two_metered_calls() -> None:
    server = Server(reply("Sure, here are my edits: add a rule.", 10, 8), reply(VALID, 30, 12))
    backend, ledger = metered(server)
    result = await complete_json(backend, ask(), STRICT, ACCEPT)
    assert result.ok and result.data["edits"][0]["content"] == "Be exact." and result.attempts == 2
    totals = ledger.totals()
    assert totals["calls"] == 2 == len(server.requests)
    assert (totals["input_tokens"], totals["output_tokens"]) == (40, 20)
    assert ledger.by_role_stage()["optimizer"]["reflect"]["calls"] == 2


async def test_invalid_twice_is_two_metered_calls_and_a_reported_failure() -> None:
    server = Server(reply("no json"), reply('{"edits": "none"}'))
    backend, ledger = metered(server)
    result = await complete_json(backend, ask(), STRICT, ACCEPT)
    assert not result.ok and result.attempts == 2 and result.failure is None
    assert "does not match the schema" in result.error and "edits" in result.error
    assert ledger.totals()["calls"] == 2 == len(server.requests)


async def test_repair_turn_uses_the_accepting_schema_and_strict_decoding() -> None:
    server = Server(reply('{"edits": [{"content": "x"}]}'), reply(VALID))
    backend, _ = metered(server)
    await complete_json(backend, ask(), STRICT, ACCEPT)
    first, repair = server.requests
    assert first["output_config"]["format"]["schema"] == STRICT  # decoding is constrained to the strict schema
    assert repair["output_config"]["format"]["schema"] == STRICT
    fix = repair["messages"][-1]["content"]
    assert json.dumps(ACCEPT, sort_keys=True) in fix and json.dumps(STRICT, sort_keys=True) not in fix
    assert "'op' is a required property" in fix
    assert repair["messages"][-2] == {"role": "assistant", "content": '{"edits": [{"content": "x"}]}'}


async def test_reply_valid_under_accept_but_not_strict_is_taken_without_repair() -> None:
    loose = '{"edits": [{"op": "add", "content": "Be exact."}, {"op": "rewrite"}]}'
    server = Server(reply(loose))
    backend, ledger = metered(server)
    result = await complete_json(backend, ask(), STRICT, ACCEPT)
    assert result.ok and len(result.data["edits"]) == 2
    assert ledger.totals()["calls"] == 1


async def test_rate_limited_attempts_are_part_of_one_metered_call() -> None:
    limited = httpx2.Response(429, json={"error": {"type": "rate_limit_error", "message": "slow down"}},
                              headers={"retry-after": "2"})
    server = Server(limited, limited, reply(VALID))
    backend, ledger = metered(server)
    result = await complete_json(backend, ask(), STRICT, ACCEPT)
    assert result.ok
    assert len(server.requests) == 3 and ledger.totals()["calls"] == 1


async def test_json_format_fallback_is_part_of_one_metered_call(monkeypatch) -> None:
    server_requests: list[dict[str, Any]] = []

    def handle(request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        server_requests.append(body)
        if body.get("response_format", {}).get("type") == "json_schema":
            return httpx2.Response(422, json={"error": {"message": "response_format: Input should be 'text' or 'json_object'"}})
        return httpx2.Response(200, json={
            "id": "c", "object": "chat.completion", "created": 1, "model": "qwen",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": VALID}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 9, "completion_tokens": 4, "total_tokens": 13},
        })

    spec = BackendSpec("openai", "qwen", "optimizer", {"base_url": "http://127.0.0.1:9/v1"})
    inner = build_openai_backend(
        spec, http_client_factory=lambda: httpx2.AsyncClient(transport=httpx2.MockTransport(handle)),
        policy=RetryPolicy(sleep=_no_sleep),
    )
    ledger = UsageLedger()
    result = await complete_json(MeteredBackend(inner, "optimizer", ledger, Budget()), ask(), STRICT, ACCEPT)
    assert result.ok and len(server_requests) == 2 and ledger.totals()["calls"] == 1


async def test_repair_turn_is_refused_by_a_used_up_budget() -> None:
    server = Server(reply("no json"), reply(VALID))
    backend, ledger = metered(server, Budget(max_calls=1))
    with pytest.raises(BudgetExceeded):
        await complete_json(backend, ask(), STRICT, ACCEPT)
    assert len(server.requests) == 1 and ledger.totals()["calls"] == 1


async def test_per_item_failure_is_returned_not_raised_and_not_repaired() -> None:
    def fail(request: CompletionRequest) -> str:
        raise RequestFailed("scripted: timed out")

    backend = ScriptedBackend(rules=[Rule(response=fail)])
    result = await complete_json(backend, ask(), STRICT, ACCEPT)
    assert not result.ok and result.attempts == 1
    assert isinstance(result.failure, RequestFailed) and "timed out" in result.error
    assert len(backend.history) == 1


async def test_per_item_failure_of_the_repair_turn_is_returned() -> None:
    calls = []

    def answer(request: CompletionRequest) -> str:
        calls.append(request)
        if len(calls) == 1:
            return "not json"
        raise RequestFailed("scripted: refused")

    result = await complete_json(ScriptedBackend(rules=[Rule(response=answer)]), ask(), STRICT, ACCEPT)
    assert not result.ok and result.attempts == 2 and isinstance(result.failure, RequestFailed)
