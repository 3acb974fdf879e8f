"""``skillopt-sleep mcp [--http --port 8765] [--project PATH]... [--outputs DIR]...``

Registered on :mod:`sleep.cli` like every subcommand. Only the argument
parsing lives here; the server (and the ``mcp`` SDK) loads when the command runs.
"""

from __future__ import annotations

import argparse
import sys

from sleep.cli import command


def _args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--http", action="store_true",
                   help="serve streamable HTTP on 127.0.0.1 instead of stdio (the endpoint is /mcp)")
    p.add_argument("--port", type=int, default=8765, help="the HTTP port (default 8765)")
    p.add_argument("--project", metavar="PATH", action="append", default=[],
                   help="a project the sleep tools cover when a call names none (repeatable)")
    p.add_argument("--outputs", metavar="DIR", action="append", default=[],
                   help="an output folder of training runs (repeatable; default ./outputs)")


@command("mcp", "serve SkillOpt's tools to Claude Code, Codex and Copilot over MCP (stdio, or --http)", _args)
def cmd_mcp(args: argparse.Namespace) -> int:
    if not 0 < args.port < 65536:
        print(f"skillopt-sleep mcp: --port {args.port} is not a TCP port", file=sys.stderr)
        return 2
    from sleep.mcp.guards import ServerConfig
    from sleep.mcp.server import serve

    serve(ServerConfig.create(projects=args.project, outputs=args.outputs), http=args.http, port=args.port)
    return 0
