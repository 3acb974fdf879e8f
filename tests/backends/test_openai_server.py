"""The openai backend against a real OpenAI-compatible server: llama-cpp-python's
``llama_cpp.server`` serving the bundled SmolLM2 GGUF on 127.0.0.1 (random free
port), started once for this module and stopped afterwards. Loopback only."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import jsonschema
import pytest

from skillopt_core.backends import BackendSpec, CompletionRequest, create_backend

# The conftest's `llama_server_model` skips these tests without
# llama-cpp-python[server] (fails them under CI's SKILLOPT_REQUIRE_LOCAL_MODEL=1)
# and probes llama.cpp in a child first; nothing here imports llama_cpp.

pytestmark = [pytest.mark.llama_server, pytest.mark.timeout(300)]

READY_TIMEOUT_S = 120


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _ready(url: str) -> bool:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(f"{url}/models", timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


@pytest.fixture(scope="module")
def server_url(tmp_path_factory: pytest.TempPathFactory, llama_server_model: Path):
    model = llama_server_model
    port = _free_port()
    log_path = tmp_path_factory.mktemp("llama_server") / "server.log"
    saved = {k: os.environ.get(k) for k in ("NO_PROXY", "no_proxy", "SKILLOPT_NO_DOTENV")}
    os.environ.update({"NO_PROXY": "127.0.0.1", "no_proxy": "127.0.0.1", "SKILLOPT_NO_DOTENV": "1"})
    with open(log_path, "wb") as log_file:
        proc = subprocess.Popen(
            [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--host", "127.0.0.1",
             "--port", str(port), "--n_ctx", "2048", "--n_threads", "2", "--verbose", "False"],
            stdout=log_file, stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + READY_TIMEOUT_S
        while not _ready(url):
            if proc.poll() is not None:
                pytest.fail(f"llama_cpp.server exited with {proc.returncode}:\n{log_path.read_text()[-2000:]}")
            if time.monotonic() > deadline:
                pytest.fail(f"llama_cpp.server not ready after {READY_TIMEOUT_S}s:\n{log_path.read_text()[-2000:]}")
            time.sleep(0.3)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@pytest.fixture
def backend(server_url: str):
    return create_backend(
        BackendSpec("openai", None, "target", {"base_url": server_url, "timeout": 60, "max_retries": 1})
    )


def test_model_name_is_discovered_from_the_server(backend) -> None:
    assert backend.model.endswith(".gguf")
    assert "127.0.0.1" in backend.describe()


async def test_plain_completion_returns_text_and_usage(backend) -> None:
    completion = await backend.complete(
        CompletionRequest.single("What is the capital of France? Answer in one word.", max_tokens=16)
    )
    assert completion.text.strip()
    assert completion.usage.input_tokens > 0
    assert 0 < completion.usage.output_tokens <= 16
    assert completion.usage.cost_usd is None  # a local model has no price
    assert completion.latency_s > 0


async def test_json_schema_request_returns_schema_valid_json(backend, caplog) -> None:
    schema = {
        "type": "object",
        "properties": {"city": {"type": "string", "enum": ["Paris", "London", "Rome"]}},
        "required": ["city"],
    }
    caplog.set_level(logging.INFO, logger="skillopt_core.backends")
    completion = await backend.complete(
        CompletionRequest.single(
            "Which city is the capital of France? Reply in JSON.", max_tokens=48, json_schema=schema
        )
    )
    jsonschema.validate(json.loads(completion.text), schema)
    # llama-cpp-python refuses response_format json_schema; the backend moved down one level.
    assert "using json_object_schema from now on" in caplog.text


async def test_four_concurrent_calls_all_complete(backend) -> None:
    requests = [CompletionRequest.single(f"Repeat the number {i}.", max_tokens=8) for i in range(4)]
    completions = await asyncio.gather(*(backend.complete(r) for r in requests))
    assert len(completions) == 4
    assert all(c.text.strip() for c in completions)
    assert all(c.usage.input_tokens > 0 and c.usage.output_tokens > 0 for c in completions)


# -- the named presets over the same server ---------------------------------- #


async def test_qwen_preset_finds_its_server_in_qwen_base_url_and_answers(server_url, monkeypatch) -> None:
    monkeypatch.setenv("QWEN_BASE_URL", server_url)
    monkeypatch.delenv("QWEN_MODEL", raising=False)
    qwen = create_backend(BackendSpec("qwen", None, "target", {"timeout": 60, "max_retries": 1}))
    assert qwen.name == "qwen" and qwen.model.endswith(".gguf")  # the model vLLM (here llama.cpp) serves
    completion = await qwen.complete(CompletionRequest.single("Say hello.", max_tokens=8))
    assert completion.text.strip() and completion.usage.output_tokens > 0


async def test_minimax_preset_with_a_base_url_override_answers_json(server_url, monkeypatch) -> None:
    monkeypatch.setenv("MINIMAX_BASE_URL", server_url)
    monkeypatch.setenv("MINIMAX_API_KEY", "minimax-test-key-0123456789")
    minimax = create_backend(BackendSpec("minimax", None, "optimizer", {"timeout": 60, "max_retries": 1}))
    assert (minimax.name, minimax.model) == ("minimax", "MiniMax-M3")  # llama.cpp serves any name
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
    completion = await minimax.complete(CompletionRequest.single("Reply in JSON.", max_tokens=24, json_schema=schema))
    jsonschema.validate(json.loads(completion.text), schema)
