"""Streamable HTTP needs the bearer token and a loopback Origin: the real server
(`skillopt-sleep mcp --http`) and the SDK's streamable-HTTP client, with and
without the token, and from a foreign Origin; raw requests pin the HTTP status
codes. Binding 127.0.0.1 keeps other machines out, not other local processes
or a page on another `localhost` port."""

from __future__ import annotations

import stat
from pathlib import Path

import httpx2
import pytest
from mcp.shared.exceptions import MCPError
from mcp_testutil import http_client, http_server
from sleep_testutil import Homes

pytestmark = pytest.mark.timeout(300)

INITIALIZE = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
              "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                         "clientInfo": {"name": "skillopt-tests", "version": "0"}}}
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def token_of(homes: Homes) -> str:
    return (homes.skillopt / "mcp-http-token").read_text().strip()


def post_initialize(port: int, **headers: str) -> httpx2.Response:
    return httpx2.post(f"http://127.0.0.1:{port}/mcp", json=INITIALIZE, headers={**HEADERS, **headers}, timeout=30)


async def test_with_the_token_the_sdk_client_works(tmp_path: Path, homes: Homes) -> None:
    with http_server(tmp_path) as (_, port):
        async with http_client(port, token_of(homes)) as client:
            status = await client.call_tool("job_status", {})
    assert status.structured_content == {"jobs": [], "message": "0 jobs, 0 running."}


async def test_without_the_token_the_sdk_client_is_refused(tmp_path: Path, homes: Homes) -> None:
    with http_server(tmp_path) as (_, port):
        with pytest.raises(Exception) as refused:
            async with http_client(port) as client:
                await client.call_tool("adopt_proposal", {"proposal": "deadbeef"})
        raw = post_initialize(port)
    assert refused.group_contains(MCPError, match="error response", depth=None), repr(refused.value)
    assert raw.status_code == 401 and raw.headers["www-authenticate"].startswith("Bearer")


def test_a_wrong_token_is_refused(tmp_path: Path, homes: Homes) -> None:
    with http_server(tmp_path) as (_, port):
        wrong = post_initialize(port, Authorization="Bearer " + "x" * 43)
        right = post_initialize(port, Authorization=f"Bearer {token_of(homes)}")
    assert (wrong.status_code, right.status_code) == (401, 200)


async def test_a_page_from_another_localhost_port_is_refused_even_with_the_token(tmp_path: Path,
                                                                                 homes: Homes) -> None:
    with http_server(tmp_path) as (_, port):
        with pytest.raises(Exception) as refused:
            async with http_client(port, token_of(homes), origin="http://localhost:3000") as client:
                await client.call_tool("job_status", {})
        assert refused.group_contains(MCPError, depth=None), repr(refused.value)
        foreign = post_initialize(port, Authorization=f"Bearer {token_of(homes)}", Origin="http://localhost:3000")
        evil = post_initialize(port, Authorization=f"Bearer {token_of(homes)}", Origin="https://evil.example")
        own = post_initialize(port, Authorization=f"Bearer {token_of(homes)}", Origin=f"http://127.0.0.1:{port}")
    assert (foreign.status_code, evil.status_code, own.status_code) == (403, 403, 200)


async def test_an_origin_the_person_allowed_is_accepted(tmp_path: Path, homes: Homes) -> None:
    with http_server(tmp_path, "--allow-origin", "http://localhost:6274") as (_, port):
        async with http_client(port, token_of(homes), origin="http://localhost:6274") as client:
            status = await client.call_tool("job_status", {})
        other = post_initialize(port, Authorization=f"Bearer {token_of(homes)}", Origin="http://localhost:6275")
    assert status.structured_content is not None and other.status_code == 403


def test_a_foreign_host_header_is_refused(tmp_path: Path, homes: Homes) -> None:
    with http_server(tmp_path) as (_, port):
        rebound = post_initialize(port, Authorization=f"Bearer {token_of(homes)}", Host=f"evil.example:{port}")
    assert rebound.status_code == 421


def test_the_token_is_stored_0600_printed_once_at_start_and_kept_out_of_the_log(tmp_path: Path,
                                                                                homes: Homes) -> None:
    with http_server(tmp_path) as (proc, _):
        token = token_of(homes)
    first = proc.stderr.read().decode() if proc.stderr else ""
    with http_server(tmp_path) as (proc, _):
        pass
    second = proc.stderr.read().decode() if proc.stderr else ""
    token_file = homes.skillopt / "mcp-http-token"
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600 and len(token) >= 40
    assert first.count(token) == 1 and f"Authorization: Bearer {token}" in first
    assert second.count(token) == 1 and token_of(homes) == token  # the same token on the next start
    assert token not in (homes.skillopt / "logs" / "mcp-server.log").read_text()


def test_a_readable_token_file_is_made_private_again(tmp_path: Path, homes: Homes) -> None:
    homes.skillopt.mkdir(parents=True)
    token_file = homes.skillopt / "mcp-http-token"
    token_file.write_text("k" * 43 + "\n")
    token_file.chmod(0o644)
    with http_server(tmp_path) as (_, port):
        ok = post_initialize(port, Authorization="Bearer " + "k" * 43)
    assert ok.status_code == 200 and stat.S_IMODE(token_file.stat().st_mode) == 0o600


@pytest.mark.parametrize("origin", ["localhost:3000", "http://localhost:3000/path", "*"])
def test_an_allowed_origin_that_is_not_an_origin_is_a_usage_error(tmp_path: Path, origin: str) -> None:
    import subprocess
    import sys

    from mcp_testutil import server_env

    out = subprocess.run([sys.executable, "-m", "sleep.cli", "mcp", "--http", "--allow-origin", origin],
                         cwd=tmp_path, env=server_env(), capture_output=True, text=True, timeout=60)
    assert (out.returncode, out.stdout) == (2, "")
    assert f"--allow-origin {origin!r} is not an origin (scheme://host[:port]" in out.stderr
