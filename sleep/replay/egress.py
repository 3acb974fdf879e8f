"""The one way out of the sandbox's empty network: the agent CLI's own model endpoint.

Inside bubblewrap's fresh network namespace nothing is reachable, not even the
host's loopback. The agent CLI itself still has to reach its model API
(``api.anthropic.com``, ``api.openai.com``, ``api.githubcopilot.com``, ...),
so the sandbox gets exactly that:

- outside, :class:`EgressProxy` listens on a Unix socket in a private folder
  and serves HTTP ``CONNECT host:port``: only to the hosts of
  :data:`API_HOSTS` for the CLI family (or a given allow list), only on port
  443 unless allowed otherwise; anything else gets ``403`` and is counted;
- the socket is bound into the sandbox, and a small stdlib bridge
  (:data:`BRIDGE`, run by the same interpreter) listens on the sandbox's own
  ``127.0.0.1`` and forwards each connection to it, then runs the CLI as its
  child and exits with its code;
- the CLI (and anything it starts) gets ``HTTPS_PROXY``/``HTTP_PROXY`` pointing
  at the bridge; a program that ignores them reaches nothing at all.

So a command the agent runs can reach the model API hosts at most (through
the proxy, TLS end to end), never the person's network, the host's loopback
services or the internet at large.
"""

from __future__ import annotations

import fnmatch
import os
import select
import socket
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path

API_HOSTS: dict[str, tuple[str, ...]] = {
    "claude-code": ("api.anthropic.com", "*.anthropic.com", "statsig.anthropic.com"),
    "codex": ("api.openai.com", "chatgpt.com", "*.chatgpt.com", "auth.openai.com"),
    "copilot": ("api.githubcopilot.com", "*.githubcopilot.com", "api.github.com", "github.com"),
    "gemini-cli": ("generativelanguage.googleapis.com", "cloudcode-pa.googleapis.com", "oauth2.googleapis.com"),
    # OpenCode talks to whichever provider the person configured; the common ones and OpenCode Zen.
    "opencode": ("api.anthropic.com", "api.openai.com", "opencode.ai", "*.opencode.ai"),
    "cursor-agent": ("api2.cursor.sh", "*.cursor.sh", "api.cursor.com"),
}
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


@dataclass
class EgressProxy:
    """A CONNECT proxy on a Unix socket that lets through only ``hosts`` on ``ports``."""

    hosts: tuple[str, ...]
    ports: tuple[int, ...] = (443,)
    folder: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="skillopt-egress-")))
    refused: list[str] = field(default_factory=list)
    allowed_connections: int = 0

    def __post_init__(self) -> None:
        os.chmod(self.folder, 0o700)
        self.socket_path = self.folder / "egress.sock"
        self.bridge_path = self.folder / "bridge.py"
        self.bridge_path.write_text(BRIDGE, encoding="utf-8")
        self._server = socket.socket(socket.AF_UNIX)
        self._server.bind(str(self.socket_path))
        self._server.listen(64)
        self._closed = False
        threading.Thread(target=self._serve, daemon=True).start()

    def close(self) -> None:
        self._closed = True
        try:
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

    def _serve(self) -> None:
        while not self._closed:
            try:
                conn, _ = self._server.accept()
            except OSError:
                return
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn: socket.socket) -> None:
        try:
            head = b""
            while b"\r\n\r\n" not in head and len(head) < _MAX_HEADER:
                chunk = conn.recv(4096)
                if not chunk:
                    return
                head += chunk
            line = head.split(b"\r\n", 1)[0].decode("latin-1")
            parts = line.split()
            if len(parts) != 3 or parts[0].upper() != "CONNECT" or ":" not in parts[1]:
                self.refused.append(line[:120])
                conn.sendall(b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")
                return
            host, _, port_text = parts[1].rpartition(":")
            port = int(port_text) if port_text.isdigit() else -1
            if not allowed(host, port, self.hosts, self.ports):
                self.refused.append(parts[1])
                conn.sendall(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
                return
            try:
                upstream = socket.create_connection((host.strip("[]"), port), timeout=30)
            except OSError:
                conn.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
                return
            self.allowed_connections += 1
            conn.sendall(b"HTTP/1.1 200 Connection Established\r\n\r\n")
            rest = head.split(b"\r\n\r\n", 1)[1]
            if rest:
                upstream.sendall(rest)
            _pipe(conn, upstream)
        except OSError:
            return
        finally:
            conn.close()


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
