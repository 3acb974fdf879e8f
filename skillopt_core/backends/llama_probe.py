"""Run llama.cpp once in a child process before it is loaded into this one.

llama.cpp is native code: a build that uses CPU instructions this machine lacks
(``-march=native`` on another CPU, or AMX tile instructions inside a VM that
hides them) dies with SIGILL, and if that happens in process it takes the
whole run, or the whole pytest session, down with it. So before the first
in-process load, :func:`ensure_llama_works` starts a child that imports
llama-cpp-python, loads the model and generates a few tokens. If the child
dies by a signal, the caller gets a :class:`BackendConfigError` that names
the signal, what it means and the reinstall command; nothing native has run
in the caller's process.

A success is remembered in a small JSON file, so the probe runs once per

- library identity: path, size and mtime of every shared library in
  llama-cpp-python's ``lib`` folder (or ``$LLAMA_CPP_LIB_PATH``), so a
  reinstall or rebuild probes again;
- CPU identity: vendor, model name and feature flags from ``/proc/cpuinfo``
  (elsewhere the platform's machine and processor names), so a copied home
  directory or a VM moved to another host probes again;
- model file identity (path, size, mtime), because the kernels llama.cpp
  picks depend on the model's tensor types.

Failures are not cached: a broken install probes again on the next run, which
costs a second or two and picks up a fix at once.

Cache folder: ``$SKILLOPT_CACHE_DIR``, else ``$SKILLOPT_HOME/cache``, else the
platform cache directory (``~/.cache/skillopt`` on Linux); the files live in
its ``llama-probe/`` subfolder, one ``<key>.json`` per key.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import logging
import os
import platform
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import platformdirs

from skillopt_core.backends.base import BackendConfigError
from skillopt_core.run.rundir import atomic_write_json
from skillopt_core.timestamps import utc_now

__all__ = [
    "REINSTALL_COMMAND",
    "ProbeResult",
    "cache_root",
    "cpu_identity",
    "ensure_llama_works",
    "library_files",
    "probe_command",
    "probe_key",
]

log = logging.getLogger(__name__)

REINSTALL_COMMAND = (
    'CMAKE_ARGS="-DGGML_NATIVE=OFF" pip install --force-reinstall --no-cache-dir llama-cpp-python'
)
# Bumped when the child's work changes, so old successes no longer count.
_PROBE_VERSION = 1
_STDERR_TAIL = 1500
# Loading is the slow part and grows with the file: a floor plus a minute per GB.
_TIMEOUT_FLOOR_S = 120.0
_TIMEOUT_PER_GB_S = 60.0

# The child reports each stage on stdout before entering it, so a crash can be
# placed; it ends with one JSON line. Long enough a prompt that prompt eval runs
# the batched matrix kernels, then a few single-token decodes.
_CHILD = r"""
import json, sys
def stage(name):
    print("stage: " + name, flush=True)
stage("import")
try:
    import llama_cpp
    stage("load")
    llm = llama_cpp.Llama(model_path=sys.argv[1], n_ctx=512, n_threads=int(sys.argv[2]), verbose=False)
    stage("generate")
    prompt = ("A lighthouse keeper writes in the log every evening: the weather, the ships that "
              "passed, the oil used by the lamp, and any repairs made to the lens or the tower. "
              "Today the sea was calm, two fishing boats came home before dark, and the keeper "
              "wrote that the lamp burned steadily all night. The next entry in the log says:")
    out = llm.create_completion(prompt, max_tokens=4, temperature=0.0, seed=0)
    text = out["choices"][0]["text"]
    info = llama_cpp.llama_print_system_info().decode(errors="replace").strip()
    llm.close()
except Exception as exc:
    print(json.dumps({"ok": False, "error": f"{type(exc).__name__}: {exc}"}), flush=True)
    sys.exit(1)
print(json.dumps({"ok": True, "text": text, "system_info": info}), flush=True)
"""

# What each signal means here, and what to do about it (None: reinstall).
_SIGNAL_MEANING = {
    "SIGILL": "illegal instruction: this llama.cpp build uses CPU instructions this machine "
    "lacks (typically a build compiled with -march=native, e.g. AMX or AVX-512 code, on "
    "another CPU, or inside a VM that hides those instructions)",
    "SIGSEGV": "invalid memory access inside llama.cpp (a broken build, or a model file it "
    "mishandles)",
    "SIGBUS": "bus error inside llama.cpp (a broken build, or a truncated model file)",
    "SIGFPE": "arithmetic fault inside llama.cpp (a broken build)",
    "SIGABRT": "llama.cpp aborted, usually on a failed internal check (its output is below)",
    "SIGKILL": "killed from outside, most often by the out-of-memory killer",
}
# Windows reports a crash as an NTSTATUS exit code instead of a signal.
_WINDOWS_CRASH = {0xC000001D: "SIGILL", 0xC0000005: "SIGSEGV", 0xC0000409: "SIGABRT"}


@dataclass(frozen=True)
class ProbeResult:
    """A library that passed the probe: its key, and whether the cache answered."""

    key: str
    cached: bool
    record: Path


def cache_root() -> Path:
    """Where SkillOpt keeps caches: ``$SKILLOPT_CACHE_DIR``, ``$SKILLOPT_HOME/cache``
    or the platform cache directory, in that order."""
    if os.environ.get("SKILLOPT_CACHE_DIR"):
        return Path(os.environ["SKILLOPT_CACHE_DIR"])
    if os.environ.get("SKILLOPT_HOME"):
        return Path(os.environ["SKILLOPT_HOME"]) / "cache"
    return Path(platformdirs.user_cache_dir("skillopt", appauthor=False))


def library_files() -> list[Path]:
    """The shared libraries llama-cpp-python loads, found without importing it
    (importing would load them into this process)."""
    override = os.environ.get("LLAMA_CPP_LIB_PATH")
    if override:
        folders = [Path(override)]
    else:
        spec = importlib.util.find_spec("llama_cpp")
        locations = (spec.submodule_search_locations or []) if spec else []
        folders = [Path(location) / "lib" for location in locations]
    found: set[Path] = set()
    for folder in folders:
        for pattern in ("*.so", "*.so.*", "*.dylib", "*.dll"):
            found.update(p for p in folder.glob(pattern) if p.is_file())
    return sorted(found)


def cpu_identity() -> str:
    """A stable description of this CPU: vendor, model and feature flags of every
    distinct core type (from /proc/cpuinfo where it exists)."""
    fields = ("vendor_id", "cpu family", "model", "model name", "flags", "features",
              "cpu implementer", "cpu architecture", "cpu variant", "cpu part", "isa")
    try:
        text = Path("/proc/cpuinfo").read_text(errors="replace")
    except OSError:
        return json.dumps([platform.system(), platform.machine(), platform.processor()])
    cores: set[tuple[tuple[str, str], ...]] = set()
    for block in text.split("\n\n"):
        entries = []
        for line in block.splitlines():
            name, _, value = line.partition(":")
            name = name.strip().lower()
            if name in fields:
                value = " ".join(sorted(value.split())) if name in ("flags", "features") else value.strip()
                entries.append((name, value))
        if entries:
            cores.add(tuple(sorted(entries)))
    return json.dumps(sorted(cores) or [platform.machine()])


def _file_identity(path: Path) -> list[object]:
    try:
        stat = path.stat()
    except OSError:
        return [str(path), None, None]
    return [str(path), stat.st_size, stat.st_mtime_ns]


def probe_key(model_path: Path, libraries: Sequence[Path] | None = None, cpu: str | None = None) -> str:
    """The cache key of a probe: library files, CPU and model file (see the module docstring)."""
    libs = library_files() if libraries is None else list(libraries)
    material = {
        "probe": _PROBE_VERSION,
        "libraries": [_file_identity(Path(p)) for p in sorted(libs)],
        "cpu": cpu_identity() if cpu is None else cpu,
        "model": _file_identity(Path(model_path)),
    }
    return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()[:32]


def probe_command(model_path: Path, n_threads: int) -> list[str]:
    """The child's argv: this interpreter running the probe script."""
    return [sys.executable, "-c", _CHILD, str(model_path), str(n_threads)]


def _signal_name(returncode: int) -> str | None:
    if returncode < 0:
        try:
            return signal.Signals(-returncode).name
        except ValueError:
            return f"signal {-returncode}"
    return _WINDOWS_CRASH.get(returncode & 0xFFFFFFFF) if sys.platform == "win32" else None


def _last_stage(stdout: str) -> str | None:
    stages = [line[len("stage: "):] for line in stdout.splitlines() if line.startswith("stage: ")]
    return stages[-1] if stages else None


def _child_report(stdout: str) -> dict:
    for line in reversed(stdout.strip().splitlines()):
        if line.startswith("{"):
            try:
                return json.loads(line)
            except ValueError:
                break
    return {}


def _tail(stderr: str) -> str:
    stderr = stderr.strip()
    if not stderr:
        return ""
    return "\nLast output of the probe:\n" + stderr[-_STDERR_TAIL:]


def _doing(stdout: str, model_path: Path) -> str:
    """What the child was doing when it stopped, from its last stage line."""
    return {"import": "importing llama-cpp-python", "load": f"loading {model_path}",
            "generate": f"generating with {model_path.name}"}.get(
        _last_stage(stdout) or "", "starting llama.cpp")


def _crash_error(model_path: Path, name: str, stdout: str, stderr: str) -> BackendConfigError:
    meaning = _SIGNAL_MEANING.get(name, "the native code crashed")
    where = _doing(stdout, model_path)
    if name == "SIGKILL":
        action = ("Free some memory or use a smaller model (model.model_path); if it keeps "
                  f"happening, rebuild llama-cpp-python portable: {REINSTALL_COMMAND}")
    else:
        action = (f"Rebuild llama-cpp-python portable, in the environment that runs SkillOpt "
                  f"({sys.executable}): {REINSTALL_COMMAND}")
    return BackendConfigError(
        f"local backend: llama.cpp died with {name} while {where} in a test process: "
        f"{meaning}. Nothing was loaded into this process. {action}{_tail(stderr)}"
    )


def ensure_llama_works(
    model_path: Path,
    *,
    n_threads: int = 1,
    command: Sequence[str] | None = None,
    libraries: Sequence[Path] | None = None,
    timeout_s: float | None = None,
) -> ProbeResult:
    """Probe llama.cpp with ``model_path`` in a child process, unless a success
    for the same libraries, CPU and model is cached.

    The child uses ``n_threads`` threads (default 1: the probe checks that the
    code runs on this CPU, not how fast, and one thread is not slowed down by
    whatever else runs on the machine). ``command`` replaces the child's argv
    (tests use a child that kills itself);
    ``libraries`` replaces the library files that enter the key. Raises
    :class:`BackendConfigError` when the child dies by a signal, fails to load
    or generate, or does not finish within the timeout; returns otherwise.
    """
    model_path = Path(model_path)
    key = probe_key(model_path, libraries)
    record_path = cache_root() / "llama-probe" / f"{key}.json"
    if record_path.is_file():
        return ProbeResult(key, cached=True, record=record_path)

    argv = list(command) if command is not None else probe_command(model_path, n_threads)
    if timeout_s is None:
        size_gb = model_path.stat().st_size / 1e9 if model_path.is_file() else 0.0
        timeout_s = _TIMEOUT_FLOOR_S + _TIMEOUT_PER_GB_S * size_gb
    log.info("local backend: probing llama.cpp with %s in a child process", model_path.name)
    started = time.monotonic()
    try:
        done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              errors="replace", timeout=timeout_s)
    except subprocess.TimeoutExpired as exc:
        stderr = exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) else exc.stderr or ""
        raise BackendConfigError(
            f"local backend: loading {model_path.name} and generating 4 tokens in a test process "
            f"did not finish within {timeout_s:.0f} s. The machine may be overloaded or the model "
            f"too large for it; try again, or use a smaller model (model.model_path).{_tail(stderr)}"
        ) from exc
    crash = _signal_name(done.returncode)
    if crash is not None:
        raise _crash_error(model_path, crash, done.stdout, done.stderr)
    if done.returncode != 0:
        error = _child_report(done.stdout).get("error") or f"exit code {done.returncode}"
        raise BackendConfigError(
            f"local backend: llama.cpp failed in a test process while "
            f"{_doing(done.stdout, model_path)}: {error}. Check that the model "
            f"file is a complete GGUF model llama.cpp supports; if the library itself fails to "
            f"import, reinstall it: {REINSTALL_COMMAND}{_tail(done.stderr)}"
        )
    report = _child_report(done.stdout)
    atomic_write_json(record_path, {
        "probe": _PROBE_VERSION,
        "probed_at": utc_now(),
        "seconds": round(time.monotonic() - started, 3),
        "python": sys.executable,
        "model": str(model_path),
        "libraries": [str(p) for p in (library_files() if libraries is None else libraries)],
        "system_info": report.get("system_info"),
    })
    return ProbeResult(key, cached=False, record=record_path)
