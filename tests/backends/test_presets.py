"""The qwen and minimax presets: which URL, key, model and token parameter they
send, checked with an HTTP mock as in test_http_backends.py (the real server
run is in test_openai_server.py). MiniMax's OpenAI-compatible API:
https://platform.minimax.io/docs/api-reference/text-openai-api (base URL per
region, ``MINIMAX_API_KEY``, ``max_tokens`` deprecated for
``max_completion_tokens``); vLLM's server listens on port 8000 by default
and takes an optional ``--api-key``."""

from __future__ import annotations

import pytest

from skillopt_core.backends import BackendSpec, available_backends
from skillopt_core.backends.base import BackendConfigError
from skillopt_core.backends.presets import PRESETS, build_preset_backend
from skillopt_core.backends.retry import RetryPolicy

from test_http_backends import Recorder, Sleeps, chat, openai_reply

MINIMAX_KEY = "minimax-key-0123456789abcdef"


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch, tmp_path):
    monkeypatch.setenv("SKILLOPT_NO_DOTENV", "1")
    for var in ("QWEN_BASE_URL", "QWEN_API_KEY", "QWEN_MODEL", "MINIMAX_BASE_URL", "MINIMAX_REGION",
                "MINIMAX_MODEL", "MINIMAX_API_KEY"):
        monkeypatch.delenv(var, raising=False)


def build(name: str, recorder: Recorder, model: str | None = None, **options):
    spec = BackendSpec(name, model, "target", options)
    return build_preset_backend(PRESETS[name], spec, http_client_factory=recorder.client,
                                policy=RetryPolicy(sleep=Sleeps()))


def test_presets_are_registered_backends() -> None:
    assert {"qwen", "minimax"} <= set(available_backends())


async def test_qwen_defaults_to_vllm_on_localhost_8000_without_a_key() -> None:
    recorder = Recorder(openai_reply("4", model="Qwen/Qwen3-8B"))
    backend = build("qwen", recorder, model="Qwen/Qwen3-8B")
    await backend.complete(chat(max_tokens=7))
    sent = recorder.requests[0]
    assert str(sent.url) == "http://127.0.0.1:8000/v1/chat/completions"
    assert sent.headers["authorization"] == "Bearer no-key-required"
    body = recorder.body()
    assert (body["model"], body["max_tokens"]) == ("Qwen/Qwen3-8B", 7) and "max_completion_tokens" not in body


async def test_qwen_reads_base_url_key_and_model_from_its_variables(monkeypatch) -> None:
    monkeypatch.setenv("QWEN_BASE_URL", "http://gpu-box:9000/v1")
    monkeypatch.setenv("QWEN_API_KEY", "vllm-secret-0123456789")
    monkeypatch.setenv("QWEN_MODEL", "Qwen/Qwen3.5-4B")
    recorder = Recorder(openai_reply("4"))
    backend = build("qwen", recorder)
    await backend.complete(chat())
    assert str(recorder.requests[0].url).startswith("http://gpu-box:9000/v1/")
    assert recorder.requests[0].headers["authorization"] == "Bearer vllm-secret-0123456789"
    assert recorder.body()["model"] == "Qwen/Qwen3.5-4B" and backend.model == "Qwen/Qwen3.5-4B"


async def test_qwen_ignores_the_shared_model_base_url() -> None:
    recorder = Recorder(openai_reply("4"))
    backend = build("qwen", recorder, model="q", base_url="http://127.0.0.1:8080/v1")
    await backend.complete(chat())
    assert str(recorder.requests[0].url).startswith("http://127.0.0.1:8000/v1/")


def test_minimax_without_its_key_names_the_variable() -> None:
    with pytest.raises(BackendConfigError, match="MINIMAX_API_KEY"):
        build("minimax", Recorder(openai_reply("x")))


async def test_minimax_sends_the_global_url_its_key_default_model_and_max_completion_tokens(monkeypatch) -> None:
    monkeypatch.setenv("MINIMAX_API_KEY", MINIMAX_KEY)
    recorder = Recorder(openai_reply("4", model="MiniMax-M3"))
    backend = build("minimax", recorder)
    await backend.complete(chat(max_tokens=9))
    sent = recorder.requests[0]
    assert str(sent.url) == "https://api.minimax.io/v1/chat/completions"
    assert sent.headers["authorization"] == f"Bearer {MINIMAX_KEY}"
    body = recorder.body()
    assert (body["model"], body["max_completion_tokens"]) == ("MiniMax-M3", 9) and "max_tokens" not in body
    assert MINIMAX_KEY not in backend.describe()


async def test_minimax_region_cn_picks_the_china_host(monkeypatch) -> None:
    monkeypatch.setenv("MINIMAX_API_KEY", MINIMAX_KEY)
    monkeypatch.setenv("MINIMAX_REGION", "cn")
    recorder = Recorder(openai_reply("4"))
    await build("minimax", recorder, model="MiniMax-M2.7").complete(chat())
    assert str(recorder.requests[0].url) == "https://api.minimaxi.com/v1/chat/completions"


def test_minimax_unknown_region_is_a_clear_error(monkeypatch) -> None:
    monkeypatch.setenv("MINIMAX_API_KEY", MINIMAX_KEY)
    monkeypatch.setenv("MINIMAX_REGION", "mars")
    with pytest.raises(BackendConfigError, match="MINIMAX_REGION='mars'.*global"):
        build("minimax", Recorder(openai_reply("x")))


async def test_minimax_base_url_variable_wins_over_the_region(monkeypatch) -> None:
    monkeypatch.setenv("MINIMAX_API_KEY", MINIMAX_KEY)
    monkeypatch.setenv("MINIMAX_REGION", "cn")
    monkeypatch.setenv("MINIMAX_BASE_URL", "https://gateway.example/minimax/v1")
    recorder = Recorder(openai_reply("4"))
    await build("minimax", recorder, model="m").complete(chat())
    assert str(recorder.requests[0].url) == "https://gateway.example/minimax/v1/chat/completions"

