"""The llama.cpp probe: a native crash in a child process becomes an error that
says what happened and how to fix it, successes are cached per library, CPU
and model, and the local backend probes before anything native loads here.

Crashes are simulated by children that kill themselves with a signal, and, end
to end, by a stand-in ``libllama.so`` that executes an illegal instruction
when it is loaded (what a ``-march=native`` build does on a CPU without the
instructions it was built for).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from skillopt_core.backends import BackendConfigError, BackendSpec, CompletionRequest, create_backend
from skillopt_core.backends import llama_probe, local
from skillopt_core.backends.llama_probe import REINSTALL_COMMAND, ensure_llama_works, probe_key

REPO = Path(__file__).resolve().parents[2]


def _child(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def _sigill_child(stage: str = "generate") -> list[str]:
    return _child(f"import os, signal; print('stage: {stage}', flush=True); os.kill(os.getpid(), signal.SIGILL)")


def _counting_child(counter: Path) -> list[str]:
    """A child that succeeds and appends one line to ``counter`` per run."""
    return _child(f"open({str(counter)!r}, 'a').write('run\\n')")


def _runs(counter: Path) -> int:
    return len(counter.read_text().splitlines()) if counter.exists() else 0


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    root = tmp_path / "cache"
    monkeypatch.setenv("SKILLOPT_CACHE_DIR", str(root))
    return root


@pytest.fixture
def model(tmp_path) -> Path:
    path = tmp_path / "model.gguf"
    path.write_bytes(b"GGUF stand-in")
    return path


@pytest.fixture
def libs(tmp_path) -> list[Path]:
    folder = tmp_path / "lib"
    folder.mkdir()
    paths = [folder / "libllama.so", folder / "libggml-cpu.so"]
    for p in paths:
        p.write_bytes(b"\x7fELF stand-in")
    return paths


# -- crashes become errors ------------------------------------------------------ #

def test_sigill_names_the_signal_its_meaning_and_the_reinstall_command(cache, model, libs):
    with pytest.raises(BackendConfigError) as err:
        ensure_llama_works(model, command=_sigill_child(), libraries=libs)
    message = str(err.value)
    assert "SIGILL" in message
    assert "CPU instructions this machine lacks" in message
    assert f"generating with {model.name}" in message
    assert REINSTALL_COMMAND in message
    assert REINSTALL_COMMAND == 'CMAKE_ARGS="-DGGML_NATIVE=OFF" pip install --force-reinstall --no-cache-dir llama-cpp-python'


def test_crash_message_says_which_stage_died(cache, model, libs):
    with pytest.raises(BackendConfigError, match=f"while loading {model}"):
        ensure_llama_works(model, command=_sigill_child("load"), libraries=libs)


def test_segfault_is_reported_with_its_own_meaning_and_the_native_output(cache, model, libs):
    code = ("import os, signal, sys; sys.stderr.write('GGML_ASSERT(ok) failed\\n'); sys.stderr.flush(); "
            "os.kill(os.getpid(), signal.SIGSEGV)")
    with pytest.raises(BackendConfigError) as err:
        ensure_llama_works(model, command=_child(code), libraries=libs)
    assert "SIGSEGV" in str(err.value) and "invalid memory access" in str(err.value)
    assert "GGML_ASSERT(ok) failed" in str(err.value)


def test_out_of_memory_kill_does_not_blame_the_build(cache, model, libs):
    code = "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"
    with pytest.raises(BackendConfigError) as err:
        ensure_llama_works(model, command=_child(code), libraries=libs)
    assert "SIGKILL" in str(err.value) and "out-of-memory" in str(err.value)
    assert "smaller model" in str(err.value)


def test_a_python_error_in_the_child_is_reported_with_its_text(cache, model, libs):
    code = ("import json, sys; print('stage: load'); "
            "print(json.dumps({'ok': False, 'error': 'ValueError: Failed to load model from file: x'})); sys.exit(1)")
    with pytest.raises(BackendConfigError) as err:
        ensure_llama_works(model, command=_child(code), libraries=libs)
    assert "ValueError: Failed to load model from file: x" in str(err.value)
    assert f"while loading {model}" in str(err.value)


def test_a_child_that_hangs_is_stopped_at_the_timeout(cache, model, libs):
    with pytest.raises(BackendConfigError, match="did not finish within 1 s"):
        ensure_llama_works(model, command=_child("import time; time.sleep(30)"), libraries=libs, timeout_s=1)


# -- caching -------------------------------------------------------------------- #

def test_success_is_cached_and_a_second_call_does_not_probe(cache, model, libs, tmp_path):
    counter = tmp_path / "runs.txt"
    first = ensure_llama_works(model, command=_counting_child(counter), libraries=libs)
    second = ensure_llama_works(model, command=_counting_child(counter), libraries=libs)
    assert _runs(counter) == 1
    assert (first.cached, second.cached) == (False, True)
    assert first.record == second.record
    assert first.record.parent == cache / "llama-probe"
    assert json.loads(first.record.read_text())["model"] == str(model)


def test_a_changed_library_file_probes_again(cache, model, libs, tmp_path):
    counter = tmp_path / "runs.txt"
    ensure_llama_works(model, command=_counting_child(counter), libraries=libs)
    libs[1].write_bytes(b"\x7fELF rebuilt with other flags")
    again = ensure_llama_works(model, command=_counting_child(counter), libraries=libs)
    assert _runs(counter) == 2 and not again.cached


def test_a_reinstalled_library_with_the_same_size_probes_again(cache, model, libs, tmp_path):
    counter = tmp_path / "runs.txt"
    ensure_llama_works(model, command=_counting_child(counter), libraries=libs)
    stat = libs[0].stat()
    os.utime(libs[0], ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    ensure_llama_works(model, command=_counting_child(counter), libraries=libs)
    assert _runs(counter) == 2


def test_a_crash_is_not_cached(cache, model, libs, tmp_path):
    with pytest.raises(BackendConfigError):
        ensure_llama_works(model, command=_sigill_child(), libraries=libs)
    counter = tmp_path / "runs.txt"
    result = ensure_llama_works(model, command=_counting_child(counter), libraries=libs)
    assert _runs(counter) == 1 and not result.cached


def test_key_changes_with_the_cpu_the_libraries_and_the_model(model, libs, tmp_path):
    base = probe_key(model, libs, cpu="cpu A")
    assert probe_key(model, libs, cpu="cpu A") == base
    assert probe_key(model, libs, cpu="cpu B") != base
    assert probe_key(model, libs[:1], cpu="cpu A") != base
    other = tmp_path / "other.gguf"
    other.write_bytes(b"GGUF stand-in")
    assert probe_key(other, libs, cpu="cpu A") != base


def test_cpu_identity_includes_the_feature_flags():
    identity = llama_probe.cpu_identity()
    if Path("/proc/cpuinfo").is_file() and "flags" in Path("/proc/cpuinfo").read_text():
        assert "flags" in identity


def test_cache_root_prefers_skillopt_cache_dir_then_skillopt_home(monkeypatch, tmp_path):
    monkeypatch.setenv("SKILLOPT_CACHE_DIR", str(tmp_path / "c"))
    assert llama_probe.cache_root() == tmp_path / "c"
    monkeypatch.delenv("SKILLOPT_CACHE_DIR")
    monkeypatch.setenv("SKILLOPT_HOME", str(tmp_path / "h"))
    assert llama_probe.cache_root() == tmp_path / "h" / "cache"
    monkeypatch.delenv("SKILLOPT_HOME")
    assert llama_probe.cache_root().is_relative_to(Path(os.environ["HOME"]))  # the private test home


# -- the local backend probes before loading anything native -------------------- #

@pytest.fixture
def crashing_probe(monkeypatch):
    """The backend's probe child dies with SIGILL, and an in-process load would fail the test."""
    monkeypatch.setattr(llama_probe, "probe_command", lambda model_path, n_threads: _sigill_child("load"))
    monkeypatch.setattr(local, "_require_llama_installed", lambda: None)

    def no_in_process_load():
        raise AssertionError("llama_cpp was loaded into the test process before the probe passed")

    monkeypatch.setattr(local, "_import_llama", no_in_process_load)


def test_backend_creation_fails_with_the_probe_error(cache, model, crashing_probe):
    with pytest.raises(BackendConfigError, match="SIGILL"):
        create_backend(BackendSpec(name="local", model=None, options={"model_path": str(model)}))


def test_first_call_of_a_directly_built_backend_probes_first(cache, model, crashing_probe):
    backend = local.LocalBackend(model)
    with pytest.raises(BackendConfigError, match="SIGILL"):
        asyncio.run(backend.complete(CompletionRequest.single("hi")))


@pytest.mark.local_model
def test_real_probe_loads_the_bundled_model_and_caches_the_success(cache):
    model = local.default_model_path()
    first = ensure_llama_works(model, n_threads=1)
    second = ensure_llama_works(model, n_threads=1)
    assert (first.cached, second.cached) == (False, True)
    record = json.loads(first.record.read_text())
    assert record["system_info"].startswith("CPU :")
    assert any(Path(p).name.startswith("libllama") for p in record["libraries"])


# -- end to end: a library that crashes on load fails tests, not the session ----- #

_CRASH_ON_LOAD_C = """
/* Stand-in for a llama.cpp build that uses instructions this CPU lacks. */
__attribute__((constructor)) static void crash_on_load(void) { __builtin_trap(); }
void llama_backend_init(void) {}
"""


@pytest.fixture
def crashing_library(tmp_path) -> Path:
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("no C compiler to build the crashing stand-in library")
    folder = tmp_path / "crashing-lib"
    folder.mkdir()
    source = folder / "crash.c"
    source.write_text(_CRASH_ON_LOAD_C)
    subprocess.run([compiler, "-shared", "-fPIC", "-o", str(folder / "libllama.so"), str(source)], check=True)
    return folder


@pytest.mark.timeout(300)
def test_sigill_on_load_fails_the_real_model_tests_and_pytest_finishes(local_extra, crashing_library, tmp_path):
    # llama-cpp-python loads its libraries from LLAMA_CPP_LIB_PATH when set.
    env = {**os.environ, "LLAMA_CPP_LIB_PATH": str(crashing_library), "SKILLOPT_CACHE_DIR": str(tmp_path / "c")}
    env.pop("PYTEST_ADDOPTS", None)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--no-header",
         "tests/backends/test_local.py", "-k", "plain_completion or same_seed"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=280,
    )
    output = done.stdout + done.stderr
    # The guard fails the two tests in setup (pytest counts those as errors) and the
    # session finishes with exit code 1; a crash in process would end it by a signal.
    assert done.returncode == 1, output
    assert "2 errors in" in output, output
    assert "while importing llama-cpp-python" in output, output
    assert "SIGILL" in output and REINSTALL_COMMAND in output, output
