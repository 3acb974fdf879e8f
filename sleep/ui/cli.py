"""``skillopt-sleep ui``: serve the dashboard (http://127.0.0.1:7860 by default).

Importing this module registers the command and nothing more: Starlette,
Jinja2 and uvicorn are imported when the command runs, so the rest of the CLI
works without the ``webui`` extra.
"""

from __future__ import annotations

import argparse
import socket
import sys
from dataclasses import dataclass
from pathlib import Path

from sleep.cli import command

DEFAULT_PORT = 7860
USER_ERROR = 2


def _ui_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1, this computer only; any other address "
                        "needs --token or gets a generated one)")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT})")
    p.add_argument("--outputs", metavar="DIR", action="append", default=None,
                   help="a folder holding run directories (repeatable; default ./outputs). "
                        "SkillOpt's data directory is always searched too")
    p.add_argument("--token", metavar="TOKEN",
                   help="require this access token on every request (the printed address carries it)")


@dataclass(frozen=True)
class Plan:
    host: str
    port: int
    token: str | None
    url: str  # what to open (with ?token= when a token is needed)
    generated_token: bool


def plan(host: str, port: int, token: str | None) -> Plan:
    """What to bind and print: off loopback a token is required (generated when not given)."""
    from sleep.ui.guard import is_loopback, new_token

    if not 0 < port < 65536:
        raise ValueError(f"--port {port} is not a port number (1-65535)")
    generated = False
    if not is_loopback(host) and not token:
        token, generated = new_token(), True
    shown = f"[{host}]" if ":" in host and not host.startswith("[") else host
    url = f"http://{shown}:{port}/" + (f"?token={token}" if token else "")
    return Plan(host, port, token, url, generated)


@command("ui", "serve the web dashboard: runs with live curves and diffs, nights, tasks, the morning review",
         _ui_args)
def cmd_ui(args: argparse.Namespace) -> int:
    try:
        import jinja2  # noqa: F401
        import starlette  # noqa: F401
        import uvicorn
    except ImportError as exc:
        print(f"skillopt-sleep ui: the dashboard needs the webui extra ({exc.name} is missing): "
              "pip install -e \".[webui]\"", file=sys.stderr)
        return USER_ERROR
    from sleep import paths
    from sleep.ui.app import create_app
    from sleep.ui.guard import Policy, is_loopback

    try:
        p = plan(args.host, args.port, args.token)
    except ValueError as exc:
        print(f"skillopt-sleep ui: {exc}", file=sys.stderr)
        return USER_ERROR
    outputs = [Path(d).expanduser() for d in (args.outputs or ["outputs"])]
    for d in outputs:
        if d.exists() and not d.is_dir():
            print(f"skillopt-sleep ui: --outputs {d} is a file; pass the folder that holds run directories.",
                  file=sys.stderr)
            return USER_ERROR
    policy = Policy(token=p.token, loopback_only_hosts=is_loopback(p.host))
    app = create_app(outputs, data_dir=True, policy=policy)
    try:
        sock = _bind(p.host, p.port)
    except OSError as exc:
        print(f"skillopt-sleep ui: cannot listen on {p.host}:{p.port}: {exc.strerror or exc}. "
              "Choose another --port, or stop what uses it.", file=sys.stderr)
        return USER_ERROR
    print(f"SkillOpt dashboard: {p.url}")
    if p.generated_token:
        print("  listening beyond this computer, so every request needs the token in that address "
              "(pass --token to choose it).")
    searched = ", ".join(str(d) + ("" if d.is_dir() else " (not there yet)") for d in outputs)
    print(f"  runs from: {searched}; data directory {paths.data_dir()}")
    print("  Ctrl-C stops it.")
    sys.stdout.flush()
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off",
                            timeout_graceful_shutdown=2)
    try:
        uvicorn.Server(config).run(sockets=[sock])
    except KeyboardInterrupt:  # uvicorn stops gracefully, then re-raises the signal
        pass
    print("SkillOpt dashboard stopped.")
    return 0


def _bind(host: str, port: int) -> socket.socket:
    """The listening socket, bound before the server starts so a taken port is one clear message."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    family, _, _, _, address = infos[0]
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
    except OSError:
        sock.close()
        raise
    return sock
