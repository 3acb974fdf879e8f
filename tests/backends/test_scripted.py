"""The scripted backend: queue, rules, rules files, history, honesty about itself."""

from __future__ import annotations

import asyncio
import json
from concurrent.futures import ThreadPoolExecutor

import pytest

from skillopt_core.backends import (
    BackendConfigError,
    BackendError,
    BackendSpec,
    CompletionRequest,
    Usage,
    create_backend,
)
from skillopt_core.backends.scripted import Rule, ScriptedBackend


def req(prompt: str, **kwargs) -> CompletionRequest:
    return CompletionRequest.single(prompt, **kwargs)


async def test_queue_returns_responses_in_order():
    backend = ScriptedBackend()
    backend.enqueue("one", "two")
    backend.enqueue("three")
    texts = [(await backend.complete(req("q"))).text for _ in range(3)]
    assert texts == ["one", "two", "three"]


async def test_queue_is_used_before_rules():
    backend = ScriptedBackend(rules=[Rule(response="from rule")])
    backend.enqueue("from queue")
    first = await backend.complete(req("q"))
    second = await backend.complete(req("q"))
    assert (first.text, second.text) == ("from queue", "from rule")


async def test_empty_queue_without_matching_rule_raises_naming_stage_and_prompt():
    backend = ScriptedBackend(rules=[Rule(stage="reflect", response="x")])
    with pytest.raises(BackendError) as err:
        await backend.complete(req("Solve this puzzle", stage="rollout"))
    message = str(err.value)
    assert "queue empty and no rule matched" in message
    assert "stage='rollout'" in message
    assert "Solve this puzzle" in message


async def test_rule_selects_by_stage():
    backend = ScriptedBackend(
        rules=[Rule(stage="reflect", response="R"), Rule(stage="rollout", response="T")]
    )
    assert (await backend.complete(req("x", stage="rollout"))).text == "T"
    assert (await backend.complete(req("x", stage="reflect"))).text == "R"


async def test_rule_selects_by_role():
    backend = ScriptedBackend(
        rules=[Rule(role="judge", response="J"), Rule(role="target", response="T")]
    )
    assert (await backend.complete(req("x", role="judge"))).text == "J"
    assert (await backend.complete(req("x", role="target"))).text == "T"


async def test_rule_matches_substring_across_system_and_messages():
    backend = ScriptedBackend(rules=[Rule(match="be terse", response="ok")])
    result = await backend.complete(req("hello", system="Always be terse."))
    assert result.text == "ok"


async def test_rule_selects_by_regex():
    backend = ScriptedBackend(
        rules=[Rule(regex=r"\d{3}", response="digits"), Rule(response="default")]
    )
    assert (await backend.complete(req("code 123"))).text == "digits"
    assert (await backend.complete(req("code 12"))).text == "default"


async def test_first_matching_rule_wins():
    backend = ScriptedBackend(
        rules=[Rule(match="a", response="first"), Rule(match="a", response="second")]
    )
    assert (await backend.complete(req("a"))).text == "first"


async def test_rule_requires_all_conditions():
    backend = ScriptedBackend(
        rules=[Rule(match="cat", stage="reflect", response="both"), Rule(response="other")]
    )
    assert (await backend.complete(req("cat", stage="rollout"))).text == "other"
    assert (await backend.complete(req("cat", stage="reflect"))).text == "both"


async def test_callable_response_receives_the_request():
    backend = ScriptedBackend(rules=[Rule(response=lambda r: r.prompt_text.upper())])
    assert (await backend.complete(req("shout"))).text == "SHOUT"


async def test_history_records_every_request_in_order():
    backend = ScriptedBackend(rules=[Rule(match="ok", response="fine")])
    first, second = req("ok 1", stage="s1"), req("nothing matches", stage="s2")
    await backend.complete(first)
    with pytest.raises(BackendError):
        await backend.complete(second)
    assert backend.history == [first, second]


async def test_usage_counts_whitespace_words_and_latency_is_zero_without_a_delay():
    backend = ScriptedBackend()
    backend.enqueue("three word answer")
    result = await backend.complete(req("four words of prompt", system="sys two"))
    assert result.usage.input_tokens == 6
    assert result.usage.output_tokens == 3
    assert result.latency_s == 0.0


async def test_a_delay_is_awaited_reported_as_latency_and_counts_the_calls_waiting():
    backend = ScriptedBackend(rules=[Rule(response="ok")], delay=lambda r: 0.05 if r.stage == "slow" else 0.0)
    fast = await backend.complete(req("q"))
    assert fast.latency_s == 0.0 and backend.peak_in_flight == 0
    loop = asyncio.get_running_loop()
    start = loop.time()
    results = await asyncio.gather(*(backend.complete(req("q", stage="slow")) for _ in range(3)))
    assert loop.time() - start >= 0.05 and [r.latency_s for r in results] == [0.05] * 3
    assert (backend.peak_in_flight, backend.in_flight, backend.cancelled) == (3, 0, 0)


async def test_a_call_cancelled_while_it_waits_is_counted():
    backend = ScriptedBackend(rules=[Rule(response="ok")], delay=10.0)
    call = asyncio.ensure_future(backend.complete(req("q")))
    await asyncio.sleep(0.01)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    assert (backend.cancelled, backend.in_flight) == (1, 0)


async def test_a_rule_with_an_error_raises_it_after_the_delay():
    backend = ScriptedBackend(rules=[Rule(stage="rollout", error=BackendError("down")), Rule(response="ok")],
                              delay=0.01)
    with pytest.raises(BackendError, match="down"):
        await backend.complete(req("q", stage="rollout"))
    assert (await backend.complete(req("q"))).text == "ok" and len(backend.history) == 2


async def test_a_fixed_usage_replaces_the_word_count():
    backend = ScriptedBackend(rules=[Rule(response="many words here")], usage=Usage(1_000_000, 5, None))
    result = await backend.complete(req("q"))
    assert result.usage == Usage(1_000_000, 5, None)


async def test_concurrent_calls_take_queue_in_call_order():
    backend = ScriptedBackend()
    backend.enqueue(*[f"r{i}" for i in range(20)])
    results = await asyncio.gather(*(backend.complete(req(f"p{i}")) for i in range(20)))
    by_prompt = {r.messages[0].content: i for i, r in enumerate(backend.history)}
    for i, result in enumerate(results):
        assert result.text == f"r{by_prompt[f'p{i}']}"
    assert sorted(r.text for r in results) == sorted(f"r{i}" for i in range(20))


def test_calls_from_many_threads_each_get_one_queued_response():
    backend = ScriptedBackend()
    backend.enqueue(*[f"r{i}" for i in range(40)])

    def call(i: int) -> str:
        return asyncio.run(backend.complete(req(f"p{i}"))).text

    with ThreadPoolExecutor(max_workers=8) as pool:
        texts = list(pool.map(call, range(40)))
    assert sorted(texts) == sorted(f"r{i}" for i in range(40))
    assert len(backend.history) == 40
    assert backend.queued == 0


def test_describe_and_model_say_scripted():
    backend = create_backend(BackendSpec(name="scripted", model=None))
    assert backend.model == "scripted"
    assert "scripted" in backend.describe()
    assert "not a real model" in backend.describe()


def test_named_model_stays_visibly_scripted():
    backend = create_backend(BackendSpec(name="scripted", model="gpt-4o"))
    assert backend.model == "scripted:gpt-4o"


async def test_factory_reads_yaml_rules_file(tmp_path):
    path = tmp_path / "rules.yaml"
    path.write_text(
        "rules:\n"
        "  - {stage: reflect, response: '{\"edits\": []}'}\n"
        "  - {regex: 'capital of \\w+', response: Paris}\n"
        "queue: [queued]\n",
        encoding="utf-8",
    )
    backend = create_backend(
        BackendSpec(name="scripted", model=None, options={"scripted": str(path)})
    )
    assert (await backend.complete(req("anything"))).text == "queued"
    assert (await backend.complete(req("the capital of France?"))).text == "Paris"
    assert (await backend.complete(req("x", stage="reflect"))).text == '{"edits": []}'


async def test_factory_reads_json_rules_file(tmp_path):
    path = tmp_path / "rules.json"
    path.write_text(json.dumps({"rules": [{"match": "hi", "response": "hello"}]}))
    backend = create_backend(
        BackendSpec(name="scripted", model=None, options={"scripted": str(path)})
    )
    assert (await backend.complete(req("hi there"))).text == "hello"


async def test_factory_accepts_inline_mapping():
    options = {"scripted": {"rules": [{"role": "judge", "response": "5"}], "queue": []}}
    backend = create_backend(BackendSpec(name="scripted", model=None, options=options))
    assert (await backend.complete(req("score it", role="judge"))).text == "5"


def test_rules_file_unknown_rule_key_names_file_and_key(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("rules:\n  - {match: a, respone: b}\n", encoding="utf-8")
    with pytest.raises(BackendConfigError) as err:
        create_backend(BackendSpec(name="scripted", model=None, options={"scripted": str(path)}))
    message = str(err.value)
    assert str(path) in message
    assert "rules[0]" in message
    assert "'respone'" in message
    assert "Did you mean 'response'" in message


def test_rules_file_unknown_top_level_key_names_file_and_key(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("rule: []\n", encoding="utf-8")
    with pytest.raises(BackendConfigError) as err:
        create_backend(BackendSpec(name="scripted", model=None, options={"scripted": str(path)}))
    assert str(path) in str(err.value)
    assert "'rule'" in str(err.value)


def test_rules_file_bad_regex_names_key(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("rules:\n  - {regex: '(unclosed', response: x}\n", encoding="utf-8")
    with pytest.raises(BackendConfigError) as err:
        create_backend(BackendSpec(name="scripted", model=None, options={"scripted": str(path)}))
    assert str(path) in str(err.value)
    assert "rules[0].regex" in str(err.value)


def test_rule_without_response_is_rejected(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("rules:\n  - {match: a}\n", encoding="utf-8")
    with pytest.raises(BackendConfigError, match="missing key 'response'"):
        create_backend(BackendSpec(name="scripted", model=None, options={"scripted": str(path)}))


def test_missing_rules_file_is_a_config_error(tmp_path):
    missing = tmp_path / "nope.yaml"
    with pytest.raises(BackendConfigError, match="not found"):
        create_backend(
            BackendSpec(name="scripted", model=None, options={"scripted": str(missing)})
        )
