"""The one way out of the sandbox's empty network: the agent CLI's own model endpoint.

Inside bubblewrap's fresh network namespace nothing is reachable, not even the
host's loopback. The agent CLI itself still has to reach its model API, so the
sandbox gets exactly that:

- outside, :class:`EgressProxy` listens on a Unix socket in a private folder and
  serves HTTP ``CONNECT host:port`` (HTTPS, TLS end to end) and plain-HTTP
  requests in absolute form (``POST http://127.0.0.1:8080/v1/messages``, what a
  CLI sends to ``HTTP_PROXY`` for an ``http://`` base URL). It lets through
  only

  * the hosts of the CLI's host's :attr:`sleep.hosts.Host.api_hosts` on port 443
    (the vendors' own APIs, HTTPS only),
  * the endpoints the CLI is configured with (:func:`sleep.replay.endpoints.configured_endpoints`:
    ``ANTHROPIC_BASE_URL``, the Bedrock or Vertex endpoints when Claude Code's
    switches are set, ``OPENAI_BASE_URL``, the Codex provider's ``base_url`` in
    its ``config.toml``, OpenCode's providers' ``baseURL``, Gemini CLI's
    ``GOOGLE_GEMINI_BASE_URL``) and the extra ones of ``sleep.replay_api_hosts``,
    each exactly (scheme, host, port): plain HTTP only to an ``http://`` endpoint;

  every name is resolved first and a loopback, private, link-local or otherwise
  non-public address is refused unless the endpoint was configured exactly so (a
  local model server or gateway is the one loopback service the agent may
  reach); the connection goes to the address that was checked. Anything else
  gets ``403`` and is recorded in :attr:`EgressProxy.refused`;
- when the person has a proxy of their own (``HTTPS_PROXY``/``HTTP_PROXY`` in the
  night's environment), allowed connections to non-loopback endpoints go through
  it (``CONNECT`` to it; plain HTTP forwarded to it), so a corporate network works;
- the socket is bound into the sandbox, and a small stdlib bridge
  (:data:`BRIDGE`, run by the same interpreter) listens on the sandbox's own
  ``127.0.0.1`` and forwards each connection to it, then runs the CLI as its
  child and exits with its code;
- the CLI (and anything it starts) gets ``HTTPS_PROXY``/``HTTP_PROXY`` pointing
  at the bridge and an empty ``NO_PROXY``; a program that ignores them reaches
  nothing at all.

So a command the agent runs can reach the CLI's model endpoints at most, never
the person's network, the host's other loopback services or the internet at large.
"""

from __future__ import annotations

import contextlib
import fnmatch
import ipaddress
import os
import select
import socket
import sys
import tempfile
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from skillopt_core.replay import night_folder
from sleep.hosts import replaying
from sleep.replay.endpoints import (
    Endpoint,
    _norm,
    configured_endpoints,
    endpoint,
    no_proxy,
    person_proxy,
)

BRIDGE_PORT = 3128
_MAX_HEADER = 8192

# Run inside the sandbox: listen on 127.0.0.1:PORT, forward to the Unix socket, run the CLI, exit with its code.
BRIDGE = r'''
import os, select, socket, subprocess, sys, threading
sock_path, port = sys.argv[1], int(sys.argv[2])
argv = sys.argv[sys.argv.index("--") + 1:]
server = socket.socket(); server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind(("127.0.0.1", port)); server.listen(64)
def pipe(a, b):
    try:
        while True:
            ready, _, _ = select.select([a, b], [], [], 300)
            if not ready:
                return
            for s in ready:
                data = s.recv(65536)
                if not data:
                    return
                (b if s is a else a).sendall(data)
    except OSError:
        return
    finally:
        a.close(); b.close()
def serve():
    while True:
        conn, _ = server.accept()
        up = socket.socket(socket.AF_UNIX); up.connect(sock_path)
        threading.Thread(target=pipe, args=(conn, up), daemon=True).start()
threading.Thread(target=serve, daemon=True).start()
sys.exit(subprocess.call(argv))
'''


def allowed(host: str, port: int, hosts: tuple[str, ...], ports: tuple[int, ...]) -> bool:
    host = host.strip("[]").lower().rstrip(".")
    return port in ports and any(fnmatch.fnmatchcase(host, pattern.lower()) for pattern in hosts)


def _public(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped:
        ip = ip.ipv4_mapped
    return ip.is_global and not ip.is_multicast


def _resolve(host: str, port: int) -> list[str]:
    return [str(info[4][0]) for info in socket.getaddrinfo(_norm(host), port, type=socket.SOCK_STREAM)]


def _is_loopback(host: str) -> bool:
    try:
        return all(ipaddress.ip_address(a.split("%", 1)[0]).is_loopback for a in _resolve(host, 0))
    except (OSError, ValueError):
        return False


_SOCKET_PATH_MAX = 100  # a Unix socket's path must fit in sun_path (108 bytes on Linux, 104 on macOS)


def _proxy_folder() -> Path:
    """A private folder for the socket: under the night's replay root (swept with it after a kill),
    unless that path is too long for a Unix socket, then in the system temp dir."""
    folder = night_folder("egress-")
    if len(str(folder / "egress.sock").encode()) <= _SOCKET_PATH_MAX:
        return folder
    folder.rmdir()
    return Path(tempfile.mkdtemp(prefix="skillopt-egress-"))


@dataclass
class EgressProxy:
    """A proxy on a Unix socket that lets through only ``hosts`` on ``ports`` (HTTPS) and the
    exact ``endpoints``; through ``upstream`` (the person's proxy) when given. See the module docstring."""

    hosts: tuple[str, ...]
    ports: tuple[int, ...] = (443,)
    endpoints: tuple[Endpoint, ...] = ()
    upstream: Endpoint | None = None
    direct: tuple[str, ...] = ()  # names reached without ``upstream`` (the person's NO_PROXY)
    folder: Path = field(default_factory=lambda: _proxy_folder())
    refused: list[str] = field(default_factory=list)  # what the policy refused (host:port, or the request line)
    unreachable: list[str] = field(default_factory=list)  # allowed, but it did not resolve or answer

    @classmethod
    def for_cli(cls, family: str, extra: Iterable[str] = (), env: Mapping[str, str] | None = None,
                home: Path | None = None) -> EgressProxy:
        """The proxy a night gives ``family``'s CLI: its vendor hosts, its configured endpoints,
        ``extra`` (``sleep.replay_api_hosts``: URLs, ``host:port``, ``host``) and the person's proxy."""
        endpoints = list(configured_endpoints(family, env, home))
        host = replaying(family)
        patterns = list(host.api_hosts if host is not None else ())
        for item in extra:
            item = str(item).strip()
            if "*" in item:
                patterns.append(item)
                continue
            found = endpoint(item)
            if found is None:
                raise ValueError(f"sleep.replay_api_hosts: {item!r} is not a host, host:port or http(s):// URL")
            if found not in endpoints:
                endpoints.append(found)
        return cls(tuple(patterns), endpoints=tuple(endpoints), upstream=person_proxy(env), direct=no_proxy(env))

    def _via_upstream(self, host: str, exact: bool) -> bool:
        host = _norm(host)
        if self.upstream is None or any(host == d or host.endswith("." + d) for d in self.direct):
            return False
        return not (exact and _is_loopback(host))

    def __post_init__(self) -> None:
        os.chmod(self.folder, 0o700)
        self.socket_path = self.folder / "egress.sock"
        self.bridge_path = self.folder / "bridge.py"
        self.bridge_path.write_text(BRIDGE, encoding="utf-8")
        self._server = socket.socket(socket.AF_UNIX)
        self._server.bind(str(self.socket_path))
        self._server.listen(64)
        self._closed = False
        self._lock = threading.Lock()
        threading.Thread(target=self._serve, daemon=True).start()

    def close(self) -> None:
        self._closed = True
        try:
            with contextlib.suppress(OSError):  # wakes the accept() of _serve (close alone leaves it blocked)
                self._server.shutdown(socket.SHUT_RDWR)
            self._server.close()
        finally:
            for path in (self.socket_path, self.bridge_path, self.folder):
                try:
                    path.rmdir() if path.is_dir() else path.unlink()
                except OSError:
                    pass

    def wrap(self, argv: list[str]) -> list[str]:
        """``argv`` run by the bridge (inside the sandbox, with the socket bound in)."""
        return [sys.executable, str(self.bridge_path), str(self.socket_path), str(BRIDGE_PORT), "--", *argv]

    @staticmethod
    def environment() -> dict[str, str]:
        url = f"http://127.0.0.1:{BRIDGE_PORT}"
        return {"HTTPS_PROXY": url, "https_proxy": url, "HTTP_PROXY": url, "http_proxy": url,
                "ALL_PROXY": url, "NO_PROXY": "", "no_proxy": ""}

    def refused_hosts(self) -> list[str]:
        """Each refused ``host:port`` once, in the order first refused."""
        return list(dict.fromkeys(self.refused))

    def _refuse(self, conn: socket.socket, what: str, status: bytes = b"403 Forbidden") -> None:
        with self._lock:
            (self.unreachable if status.startswith(b"502") else self.refused).append(what)
        conn.sendall(b"HTTP/1.1 " + status + b"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")

    def _exact(self, scheme: str, host: str, port: int) -> Endpoint | None:
        return next((e for e in self.endpoints if e.matches(host, port) and (scheme == "https" or e.scheme == scheme)),
                    None)

    def _open(self, host: str, port: int, exact: bool) -> tuple[socket.socket | None, str]:
        """A connection to ``host:port`` (directly or through the person's proxy), or (None, why not)."""
        upstream = self.upstream
        if upstream is not None and self._via_upstream(host, exact):
            try:
                return socket.create_connection((upstream.host, upstream.port), timeout=30), ""
            except OSError as exc:
                return None, f"unreachable: your proxy {upstream} did not answer ({exc})"
        try:
            addresses = _resolve(host, port)
        except OSError as exc:
            return None, f"unreachable: does not resolve ({exc.strerror or exc})"
        if not exact:
            private = [a for a in addresses if not _public(a)]
            if private:
                return None, f"resolves to {private[0]}, not a public address"
        last: OSError | None = None
        for address in addresses:  # connect to the address that was checked, never resolve again
            try:
                return socket.create_connection((address, port), timeout=30), ""
            except OSError as exc:
                last = exc
        return None, f"unreachable: {last}"

    def _serve(self) -> None:
        while not self._closed:
            try:
                conn, _ = self._server.accept()
            except OSError:
                return
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn: socket.socket) -> None:
        upstream: socket.socket | None = None
        try:
            head = b""
            while b"\r\n\r\n" not in head and len(head) < _MAX_HEADER:
                chunk = conn.recv(4096)
                if not chunk:
                    return
                head += chunk
            line = head.split(b"\r\n", 1)[0].decode("latin-1")
            parts = line.split()
            if len(parts) != 3:
                return self._refuse(conn, line[:120], b"400 Bad Request")
            if parts[0].upper() == "CONNECT":
                upstream = self._connect(conn, head, parts[1])
            elif parts[1].lower().startswith("http://"):
                upstream = self._forward(conn, head, parts)
            else:
                return self._refuse(conn, line[:120], b"405 Method Not Allowed")
            if upstream is not None:
                _pipe(conn, upstream)
        except OSError:
            return
        finally:
            conn.close()

    def _connect(self, conn: socket.socket, head: bytes, target: str) -> socket.socket | None:
        host, _, port_text = target.rpartition(":")
        port = int(port_text) if port_text.isdigit() else -1
        exact = self._exact("https", host, port) is not None
        if not exact and not allowed(host, port, self.hosts, self.ports):
            self._refuse(conn, f"{_norm(host)}:{port}")
            return None
        upstream, why = self._open(host, port, exact)
        if upstream is None:
            self._refuse(conn, f"{_norm(host)}:{port} ({why})",
                         b"502 Bad Gateway" if why.startswith("unreachable") else b"403 Forbidden")
            return None
        if self._via_upstream(host, exact):
            upstream.sendall(f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode("latin-1"))
            answer = _read_head(upstream)
            if not answer.split(b"\r\n", 1)[0].split(b" ")[1:2] == [b"200"]:
                upstream.close()
                status = answer.split(b"\r\n", 1)[0].decode("latin-1")[:80]
                self._refuse(conn, f"{_norm(host)}:{port} (unreachable: your proxy answered {status})",
                             b"502 Bad Gateway")
                return None
        conn.sendall(b"HTTP/1.1 200 Connection Established\r\n\r\n")
        rest = head.split(b"\r\n\r\n", 1)[1]
        if rest:
            upstream.sendall(rest)
        return upstream

    def _forward(self, conn: socket.socket, head: bytes, parts: list[str]) -> socket.socket | None:
        """A plain-HTTP request in absolute form, to an exact ``http://`` endpoint only."""
        url = urlsplit(parts[1])
        host, port = url.hostname or "", url.port or 80
        if self._exact("http", host, port) is None:
            self._refuse(conn, f"{_norm(host)}:{port}")
            return None
        upstream, why = self._open(host, port, True)
        if upstream is None:
            self._refuse(conn, f"{_norm(host)}:{port} ({why})", b"502 Bad Gateway")
            return None
        through_proxy = self._via_upstream(host, True)
        target = parts[1] if through_proxy else (url.path or "/") + (f"?{url.query}" if url.query else "")
        lines = head.split(b"\r\n\r\n", 1)[0].split(b"\r\n")[1:]
        kept = [h for h in lines if h.split(b":", 1)[0].strip().lower()
                not in (b"proxy-connection", b"proxy-authorization", b"connection", b"keep-alive")]
        request = (f"{parts[0]} {target} {parts[2]}\r\n".encode("latin-1") + b"\r\n".join(kept)
                   + b"\r\nConnection: close\r\n\r\n" + head.split(b"\r\n\r\n", 1)[1])
        upstream.sendall(request)
        return upstream


def _read_head(sock: socket.socket) -> bytes:
    head = b""
    while b"\r\n\r\n" not in head and len(head) < _MAX_HEADER:
        chunk = sock.recv(4096)
        if not chunk:
            break
        head += chunk
    return head


def _pipe(a: socket.socket, b: socket.socket) -> None:
    try:
        while True:
            ready, _, _ = select.select([a, b], [], [], 300)
            if not ready:
                return
            for s in ready:
                data = s.recv(65536)
                if not data:
                    return
                (b if s is a else a).sendall(data)
    except OSError:
        return
    finally:
        b.close()
