"""``skillopt-sleep ui``: serve the dashboard (http://127.0.0.1:7860 by default).

Every request needs the access token (:mod:`sleep.ui.guard`): the command
prints the address with it. The token is ``--token``, else
``$SKILLOPT_UI_TOKEN``, else a random one; a command line is visible to every
user of the computer (``ps``), so a chosen token is better passed in the
environment. Bound to every interface (``--host 0.0.0.0`` or ``::``), the
printed address names this computer's network address (and its host name), one
another computer can open.

Importing this module registers the command and nothing more: Starlette,
Jinja2 and uvicorn are imported when the command runs, so the rest of the CLI
works without the ``webui`` extra.
"""

from __future__ import annotations

import argparse
import os
import socket
import sys
from dataclasses import dataclass
from pathlib import Path

from sleep.commands import Commands
from sleep.ui.shed import Limits

commands = Commands()
register = commands.register

DEFAULT_PORT = 7860
USER_ERROR = 2
TOKEN_ENV = "SKILLOPT_UI_TOKEN"
WILDCARDS = ("0.0.0.0", "::", "")
# Addresses of documentation networks (RFC 5737, RFC 3849): "connecting" a UDP socket to one sends
# nothing but makes the kernel pick the interface (and so the address) it would route through.
_PROBES = {socket.AF_INET: ("192.0.2.1", 9), socket.AF_INET6: ("2001:db8::1", 9)}


def _ui_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1, this computer only; 0.0.0.0: every interface)")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT})")
    p.add_argument("--outputs", metavar="DIR", action="append", default=None,
                   help="a folder holding run directories (repeatable; default ./outputs). "
                        "SkillOpt's data directory is always searched too")
    p.add_argument("--token", metavar="TOKEN",
                   help=f"the access token every request needs (at least 16 of A-Z a-z 0-9 - _ . ~; default "
                        f"${TOKEN_ENV}, else a random one). The printed address carries it. Other users can read "
                        f"a command line: prefer ${TOKEN_ENV}")
    d = Limits()
    p.add_argument("--max-requests", type=_positive, default=d.active, metavar="N",
                   help=f"requests worked on at once (default {d.active}); more wait in a queue")
    p.add_argument("--max-queue", type=_not_negative, default=d.queue, metavar="N",
                   help=f"requests that may wait for a turn, each up to {d.wait_seconds:g} s (default {d.queue}); "
                        f"beyond it a request is answered 503 with Retry-After at once")


def _positive(text: str) -> int:
    value = _not_negative(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: give a whole number of at least 1")
    return value


def _not_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r}: give a whole number of at least 0")
    return value


@dataclass(frozen=True)
class Plan:
    host: str
    port: int
    token: str
    url: str  # what to open, with ?token=
    generated_token: bool
    also: tuple[str, ...] = ()  # other addresses that reach it (the host name when bound to every interface)


def plan(host: str, port: int, token: str | None) -> Plan:
    """What to bind and print. A token is always required (generated when none is given)."""
    from sleep.ui.guard import new_token, token_problem

    if not 0 < port < 65536:
        raise ValueError(f"--port {port} is not a port number (1-65535)")
    generated = not token
    token = token or new_token()
    problem = token_problem(token)
    if problem:
        raise ValueError(f"--token refused: {problem}")
    shown, also = _reachable(host)
    return Plan(host, port, token, _url(shown, port, token), generated, tuple(_url(a, port, token) for a in also))


def _url(host: str, port: int, token: str) -> str:
    shown = f"[{host}]" if ":" in host and not host.startswith("[") else host
    return f"http://{shown}:{port}/?token={token}"


def _reachable(host: str) -> tuple[str, list[str]]:
    """The address to print for a server bound to ``host``, and other names that reach it.
    A wildcard (every interface) is not an address anyone can open: name this computer's."""
    if host.strip("[]") not in WILDCARDS:
        return host, []
    name = socket.gethostname()
    families = (socket.AF_INET6, socket.AF_INET) if ":" in host else (socket.AF_INET,)
    for family in families:
        address = _interface_address(family)
        if address:
            return address, [name] if name and name != address else []
    return name or "localhost", []


def _interface_address(family: socket.AddressFamily) -> str | None:
    import ipaddress

    try:
        with socket.socket(family, socket.SOCK_DGRAM) as s:
            s.connect(_PROBES[family])
            address = s.getsockname()[0]
    except OSError:
        return None
    try:
        ip = ipaddress.ip_address(address.split("%")[0])
    except ValueError:
        return None
    return None if ip.is_loopback or ip.is_unspecified else address


@commands.command("ui", "serve the web dashboard: runs with live curves and diffs, nights, tasks, the morning review",
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
        p = plan(args.host, args.port, args.token or os.environ.get(TOKEN_ENV) or None)
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
    app = create_app(outputs, data_dir=True, policy=policy,
                     limits=Limits(active=args.max_requests, queue=args.max_queue))
    try:
        sock = _bind(p.host, p.port)
    except OSError as exc:
        print(f"skillopt-sleep ui: cannot listen on {p.host}:{p.port}: {exc.strerror or exc}. "
              "Choose another --port, or stop what uses it.", file=sys.stderr)
        return USER_ERROR
    print(f"SkillOpt dashboard: {p.url}")
    for other in p.also:
        print(f"  also: {other}")
    print("  every request needs the token in that address (a cookie keeps it after the first page); "
          + ("a new one is made at each start" if p.generated_token else "it is the one you chose") + ".")
    if not is_loopback(p.host):
        print(f"  listening on {p.host}: other computers on the network can reach it (with the token).")
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
