"""What the HTTP transport asks of a request: the bearer token, and a loopback ``Origin``.

Binding 127.0.0.1 keeps other machines out, not other local users, processes
or web pages. So ``skillopt-sleep mcp --http`` requires
``Authorization: Bearer <token>`` on every request (the SDK's bearer
middleware, answering 401 without it). The token is generated once, kept in
``<data dir>/mcp-http-token`` with mode 0600, and printed when the server
starts. A request with an ``Origin`` header (a browser page) is refused (403)
unless the origin is the server's own ``http://127.0.0.1:PORT`` /
``localhost`` / ``[::1]`` or one the person passed with ``--allow-origin``; the
``Host`` header must name the server on loopback (DNS rebinding).
"""

from __future__ import annotations

import hmac
import secrets
import stat
from pathlib import Path
from typing import Any

from sleep import paths
from sleep.integrations.managed import atomic_write

TOKEN_FILE = "mcp-http-token"
TOKEN_BYTES = 32
MIN_TOKEN_CHARS = 32


def token_path() -> Path:
    return paths.data_dir() / TOKEN_FILE


def load_or_create_token() -> tuple[str, Path]:
    """The server's token and its file: read it, or generate and store it (0600) the first time."""
    path = token_path()
    try:
        token = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        token = ""
    if len(token) >= MIN_TOKEN_CHARS and token.isascii() and token.replace("-", "").replace("_", "").isalnum():
        if stat.S_IMODE(path.stat().st_mode) != 0o600:
            path.chmod(0o600)
        return token, path
    token = secrets.token_urlsafe(TOKEN_BYTES)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, (token + "\n").encode("ascii"), 0o600)  # readable only by you, whatever the umask
    return token, path


class StaticTokenVerifier:
    """The SDK's ``TokenVerifier`` for one shared secret (compared in constant time)."""

    def __init__(self, token: str) -> None:
        self._token = token

    async def verify_token(self, token: str) -> Any:
        from mcp.server.auth.provider import AccessToken

        if not hmac.compare_digest(token.encode("utf-8", "replace"), self._token.encode("utf-8")):
            return None
        return AccessToken(token=token, client_id="skillopt-local", scopes=[])


def auth_settings(token: str, port: int) -> dict[str, Any]:
    """``MCPServer`` keyword arguments that make every HTTP request need ``token``."""
    from mcp.server.auth.settings import AuthSettings

    # No authorization server: the token is handed out by the person, not by OAuth. The SDK
    # wants an issuer URL all the same; it is only metadata and no route serves it.
    own = f"http://127.0.0.1:{port}"
    return {"auth": AuthSettings(issuer_url=own, resource_server_url=None),
            "token_verifier": StaticTokenVerifier(token)}


def loopback_origins(port: int) -> list[str]:
    return [f"http://127.0.0.1:{port}", f"http://localhost:{port}", f"http://[::1]:{port}"]


def transport_security(port: int, extra_origins: tuple[str, ...] = ()) -> Any:
    """Host and Origin checks: the server's own loopback names and port, and the origins the person allowed."""
    from mcp.server.transport_security import TransportSecuritySettings

    hosts = [f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}"]
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts,
                                     allowed_origins=[*loopback_origins(port), *extra_origins])
