"""The sandbox's egress (sleep/replay/egress.py): it follows the CLI's configured endpoint, forwards
plain HTTP to an exact http:// endpoint (loopback included), refuses names that resolve to private
addresses, chains to the person's own proxy and records what it refused. Driven here through its
Unix socket directly (the sandbox's bridge only forwards bytes to it)."""

from __future__ import annotations

import json
import select
import socket
import threading
from pathlib import Path

import pytest
from model_endpoint import ModelEndpoint, script

from sleep.replay.egress import EgressProxy, Endpoint, configured_endpoints, endpoint, person_proxy


def ask(proxy: EgressProxy, request: bytes) -> bytes:
    s = socket.socket(socket.AF_UNIX)
    s.connect(str(proxy.socket_path))
    s.settimeout(10)
    s.sendall(request)
    out = b""
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            out += chunk
            if request.startswith(b"CONNECT") and b"\r\n\r\n" in out:
                break
    finally:
        s.close()
    return out


def post(target: str, body: dict) -> bytes:
    data = json.dumps(body).encode()
    host = target.split("/")[2]
    return (f"POST {target} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(data)}\r\nProxy-Connection: keep-alive\r\n\r\n").encode() + data


@pytest.fixture
def proxy_factory():
    made: list[EgressProxy] = []

    def make(*args, **kw) -> EgressProxy:
        made.append(EgressProxy(*args, **kw))
        return made[-1]

    yield make
    for p in made:
        p.close()


def test_endpoints_follow_each_clis_configuration(tmp_path: Path) -> None:
    env = {"ANTHROPIC_BASE_URL": "http://127.0.0.1:8080", "OPENAI_BASE_URL": "https://gw.corp.example/v1"}
    assert configured_endpoints("claude-code", env, tmp_path) == (Endpoint("http", "127.0.0.1", 8080),)
    assert configured_endpoints("codex", env, tmp_path) == (Endpoint("https", "gw.corp.example", 443),)
    bedrock = configured_endpoints("claude-code", {"CLAUDE_CODE_USE_BEDROCK": "1", "AWS_REGION": "eu-west-1"}, tmp_path)
    assert bedrock == (Endpoint("https", "bedrock-runtime.eu-west-1.amazonaws.com", 443),)
    vertex = configured_endpoints("claude-code", {"CLAUDE_CODE_USE_VERTEX": "1", "CLOUD_ML_REGION": "europe-west4"},
                                  tmp_path)
    assert Endpoint("https", "europe-west4-aiplatform.googleapis.com", 443) in vertex
    codex_home = tmp_path / "codex"
    codex_home.mkdir()
    (codex_home / "config.toml").write_text('model_provider = "gw"\n[model_providers.gw]\nname = "g"\n'
                                            'base_url = "http://localhost:4000/v1"\nenv_key = "GW_KEY"\n'
                                            '[model_providers.other]\nbase_url = "http://10.0.0.9/v1"\n')
    assert configured_endpoints("codex", {"CODEX_HOME": str(codex_home)}, tmp_path) == (
        Endpoint("http", "localhost", 4000),)  # only the provider chosen
    content = json.dumps({"provider": {"local": {"options": {"baseURL": "http://127.0.0.1:9000/v1"}}}})
    assert configured_endpoints("opencode", {"OPENCODE_CONFIG_CONTENT": content}, tmp_path) == (
        Endpoint("http", "127.0.0.1", 9000),)
    assert configured_endpoints("gemini-cli", {"GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:7000"}, tmp_path) == (
        Endpoint("http", "127.0.0.1", 7000),)
    assert endpoint("gw.example:8443") == Endpoint("https", "gw.example", 8443) and endpoint("ftp://x") is None
    assert person_proxy({"HTTPS_PROXY": "proxy.corp:3128"}) == Endpoint("http", "proxy.corp", 3128)


def test_plain_http_reaches_the_exact_configured_endpoint_and_nothing_else_on_loopback(proxy_factory) -> None:
    with ModelEndpoint(script()) as ep:
        proxy = proxy_factory((), endpoints=(endpoint(ep.url),))
        answer = ask(proxy, post(f"{ep.url}/v1/messages", {"model": "m", "messages": [
            {"role": "user", "content": "hi"}]}))
        assert answer.startswith(b"HTTP/1.1 200") and b'"text": "done"' in answer
        assert ep.model_calls()[0].path == "/v1/messages"  # origin form, the proxy headers dropped
        assert "proxy-connection" not in ep.model_calls()[0].headers
        other = f"http://127.0.0.1:{ep.port + 1}"
        assert ask(proxy, post(f"{other}/v1/messages", {})).startswith(b"HTTP/1.1 403")
        # the same endpoint over CONNECT (https) is not the configured http:// one... but CONNECT to an
        # http endpoint's host:port is allowed as a tunnel only for exact endpoints:
        assert ask(proxy, f"CONNECT 127.0.0.1:{ep.port + 2} HTTP/1.1\r\n\r\n".encode()).startswith(b"HTTP/1.1 403")
        assert ask(proxy, b"GET /relative HTTP/1.1\r\n\r\n").startswith(b"HTTP/1.1 405")
    assert proxy.refused_hosts() == [f"127.0.0.1:{ep.port + 1}", f"127.0.0.1:{ep.port + 2}", "GET /relative HTTP/1.1"]


def test_an_allowed_name_that_resolves_to_a_private_address_is_refused(proxy_factory) -> None:
    proxy = proxy_factory(("localhost", "*.localhost"), ports=(443, 80))
    answer = ask(proxy, b"CONNECT localhost:443 HTTP/1.1\r\nHost: localhost:443\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 403")
    assert proxy.refused[0].startswith("localhost:443 (resolves to 127.0.0.1")
    # plain HTTP is never allowed by a name pattern, only to an exact http:// endpoint
    assert ask(proxy, post("http://localhost:80/x", {})).startswith(b"HTTP/1.1 403")


class TinyProxy:
    """The person's own proxy: CONNECT (answered by a canned HTTP server behind it) and absolute-form
    plain HTTP (forwarded to ``forward``), recording every request line."""

    def __init__(self, forward: tuple[str, int] | None = None) -> None:
        self.lines: list[str] = []
        self.forward = forward
        self.server = socket.socket()
        self.server.bind(("127.0.0.1", 0))
        self.server.listen(16)
        self.port = self.server.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn: socket.socket) -> None:
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = conn.recv(4096)
            if not chunk:
                return
            head += chunk
        line = head.split(b"\r\n", 1)[0].decode()
        self.lines.append(line)
        if line.startswith("CONNECT"):
            conn.sendall(b"HTTP/1.1 200 Connection Established\r\n\r\n")
            conn.recv(4096)
            conn.sendall(b"tunnelled\n")
            conn.close()
            return
        from urllib.parse import urlsplit
        target = urlsplit(line.split()[1])
        try:
            up = socket.create_connection(self.forward or (target.hostname, target.port or 80))
        except OSError:  # a late request after the test's server closed
            conn.close()
            return
        rest = head.replace(line.encode(), f"{line.split()[0]} {target.path} HTTP/1.1".encode(), 1)
        up.sendall(rest)
        try:
            while True:  # both ways: the request body may still be coming
                ready, _, _ = select.select([conn, up], [], [], 60)
                data = ready[0].recv(65536) if ready else b""
                if not data:
                    break
                (up if ready[0] is conn else conn).sendall(data)
        except OSError:
            pass
        conn.close()
        up.close()

    def close(self) -> None:
        try:
            self.server.shutdown(socket.SHUT_RDWR)  # wakes the accept() of _serve
        except OSError:
            pass
        self.server.close()


def test_the_persons_proxy_carries_the_connections_it_should(proxy_factory) -> None:
    theirs = TinyProxy()
    try:
        proxy = proxy_factory(("api.anthropic.com",), upstream=Endpoint("http", "127.0.0.1", theirs.port))
        s = socket.socket(socket.AF_UNIX)
        s.connect(str(proxy.socket_path))
        s.sendall(b"CONNECT api.anthropic.com:443 HTTP/1.1\r\nHost: api.anthropic.com:443\r\n\r\n")
        assert s.recv(100).startswith(b"HTTP/1.1 200")
        s.sendall(b"hello")
        assert s.recv(100) == b"tunnelled\n"
        s.close()
        assert theirs.lines == ["CONNECT api.anthropic.com:443 HTTP/1.1"]
        assert ask(proxy, b"CONNECT evil.example:443 HTTP/1.1\r\n\r\n").startswith(b"HTTP/1.1 403")
        assert theirs.lines == ["CONNECT api.anthropic.com:443 HTTP/1.1"]  # a refused host never reaches it
    finally:
        theirs.close()


def test_plain_http_to_a_named_endpoint_goes_through_the_persons_proxy(proxy_factory) -> None:
    with ModelEndpoint(script()) as ep:
        theirs = TinyProxy(forward=("127.0.0.1", ep.port))  # their proxy knows where the gateway is
        try:
            gateway = "http://gateway.corp.invalid:8080"  # a name this machine cannot resolve
            proxy = proxy_factory((), endpoints=(endpoint(gateway),),
                                  upstream=Endpoint("http", "127.0.0.1", theirs.port))
            answer = ask(proxy, post(f"{gateway}/v1/messages", {"model": "m", "messages": []}))
            assert answer.startswith(b"HTTP/1.1 200") and len(ep.model_calls()) == 1
            assert theirs.lines == [f"POST {gateway}/v1/messages HTTP/1.1"]  # absolute form to their proxy
        finally:
            theirs.close()


def test_for_cli_takes_the_configured_endpoint_the_extra_hosts_and_the_persons_proxy(tmp_path: Path) -> None:
    env = {"ANTHROPIC_BASE_URL": "http://127.0.0.1:8080", "HTTPS_PROXY": "http://proxy.corp:3128",
           "NO_PROXY": "localhost,.internal"}
    proxy = EgressProxy.for_cli("claude-code", ["gw.internal:8443", "*.llm.corp"], env, tmp_path)
    try:
        assert proxy.endpoints == (Endpoint("http", "127.0.0.1", 8080), Endpoint("https", "gw.internal", 8443))
        assert "api.anthropic.com" in proxy.hosts and "*.llm.corp" in proxy.hosts
        assert proxy.upstream == Endpoint("http", "proxy.corp", 3128) and proxy.direct == ("localhost", "internal")
        with pytest.raises(ValueError, match="replay_api_hosts"):
            EgressProxy.for_cli("claude-code", ["ftp://x"], env, tmp_path)
    finally:
        proxy.close()


def test_the_sandbox_passes_a_clouds_credentials_only_with_its_switch_and_codex_provider_keys(tmp_path: Path) -> None:
    from sleep.replay.sandbox import BwrapLauncher

    env = {"PATH": "/usr/bin", "AWS_SECRET_ACCESS_KEY": "s", "AWS_REGION": "eu-west-1", "GW_KEY": "g",
           "ANTHROPIC_API_KEY": "k"}
    assert "AWS_SECRET_ACCESS_KEY" not in BwrapLauncher("claude-code").environment(env, tmp_path)
    on = BwrapLauncher("claude-code").environment({**env, "CLAUDE_CODE_USE_BEDROCK": "1"}, tmp_path)
    assert on["AWS_SECRET_ACCESS_KEY"] == "s" and on["AWS_REGION"] == "eu-west-1"
    codex_home = tmp_path / "codex"
    codex_home.mkdir()
    (codex_home / "config.toml").write_text('model_provider = "gw"\n[model_providers.gw]\nbase_url = '
                                            '"http://127.0.0.1:4000/v1"\nenv_key = "GW_KEY"\n')
    codex = BwrapLauncher("codex", home=tmp_path).environment({**env, "CODEX_HOME": str(codex_home)}, tmp_path / "h")
    assert codex["GW_KEY"] == "g" and "ANTHROPIC_API_KEY" not in codex


def test_codex_home_always_exists_with_the_persons_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from sleep.replay.sandbox import BwrapLauncher

    monkeypatch.delenv("CODEX_HOME", raising=False)
    base = tmp_path / "homes"
    base.mkdir()
    bare = BwrapLauncher("codex", home=tmp_path / "nobody").scratch_home(base)
    assert (bare / ".codex").is_dir()  # Codex refuses to start without CODEX_HOME ("Error finding codex home")
    person = tmp_path / "person"
    (person / ".codex" / "prompts").mkdir(parents=True)
    (person / ".codex" / "config.toml").write_text('model_instructions_file = "prompts/house.md"\n'
                                                   'model_provider = "gw"\n')
    (person / ".codex" / "prompts" / "house.md").write_text("house rules")
    (person / ".codex" / "history.jsonl").write_text("not copied")
    scratch = BwrapLauncher("codex", home=person).scratch_home(base)
    assert (scratch / ".codex" / "config.toml").read_text().startswith("model_instructions_file")
    assert (scratch / ".codex" / "prompts" / "house.md").read_text() == "house rules"
    assert not (scratch / ".codex" / "history.jsonl").exists()
