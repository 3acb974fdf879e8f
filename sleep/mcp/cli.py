"""``skillopt-sleep mcp [--http --port 8765 [--allow-origin URL]...] [--project PATH]... [--outputs DIR]...``

Registered through :mod:`sleep.commands` like every subcommand. Only the argument
parsing lives here; the server (and the ``mcp`` SDK) loads when the command runs.
"""

from __future__ import annotations

import argparse
import re
import sys

from sleep.commands import Commands

commands = Commands()
register = commands.register


def _args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--http", action="store_true",
                   help="serve streamable HTTP on 127.0.0.1 instead of stdio (the endpoint is /mcp; every request "
                        "needs the bearer token printed at start and kept in $SKILLOPT_HOME/mcp-http-token)")
    p.add_argument("--port", type=int, default=8765, help="the HTTP port (default 8765)")
    p.add_argument("--project", metavar="PATH", action="append", default=[],
                   help="a project the server covers (repeatable): only its proposals, tasks and nights are "
                        "shown or decided, and files are read only from it and the data directory "
                        "(default: every project; files from the start folder)")
    p.add_argument("--outputs", metavar="DIR", action="append", default=[],
                   help="an output folder runs are written to and read from (repeatable; the first is the "
                        "default; default $SKILLOPT_HOME/runs)")
    p.add_argument("--allow-origin", metavar="URL", action="append", default=[],
                   help="with --http: a browser origin to accept besides the server's own loopback ones "
                        "(repeatable, e.g. http://localhost:6274)")


@commands.command("mcp", "serve SkillOpt's tools to Claude Code, Codex and Copilot over MCP (stdio, or --http)", _args)
def cmd_mcp(args: argparse.Namespace) -> int:
    if not 0 < args.port < 65536:
        print(f"skillopt-sleep mcp: --port {args.port} is not a TCP port", file=sys.stderr)
        return 2
    for origin in args.allow_origin:
        if not re.fullmatch(r"https?://[^/\s?#]+", origin):
            print(f"skillopt-sleep mcp: --allow-origin {origin!r} is not an origin (scheme://host[:port], "
                  "e.g. http://localhost:6274)", file=sys.stderr)
            return 2
    from sleep.mcp.guards import ServerConfig
    from sleep.mcp.server import serve

    config = ServerConfig.create(projects=args.project, outputs=args.outputs, origins=args.allow_origin)
    serve(config, http=args.http, port=args.port)
    return 0
