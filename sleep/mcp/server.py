"""Build and run the SkillOpt MCP server.

:func:`build_server` registers every tool, resource and prompt on an
:class:`~mcp.server.mcpserver.MCPServer`; :func:`serve` runs it over stdio
(what agents launch) or streamable HTTP on 127.0.0.1. In stdio mode only
protocol messages reach stdout (the SDK points file descriptor 1 at stderr for
everything else); logs go to stderr and to ``<data dir>/logs/mcp-server.log``.
"""

from __future__ import annotations

import logging
import logging.handlers
import sys

from mcp.server.mcpserver import MCPServer

from sleep import paths
from sleep.mcp import review, tools_sleep, tools_tasks, tools_train
from sleep.mcp.guards import ServerConfig

INSTRUCTIONS = """\
SkillOpt trains coding-agent skill documents, and SkillOpt-Sleep learns from the person's own \
Claude Code, Codex and Copilot sessions overnight, staging each improvement as a git branch.
- Training and evaluation: train_skill / evaluate_skill start background jobs; job_status follows \
one (wait_seconds sends progress), cancel_job stops one (runs stay resumable); list_runs and get_run \
read finished runs.
- Sleep: sleep_harvest reads new transcripts, sleep_run runs a night now, sleep_status says what \
happened and what waits.
- Morning review: list_proposals, show_proposal, then ask the person before adopt_proposal or \
reject_proposal (the morning-review prompt walks through it)."""

log = logging.getLogger("skillopt.mcp")


def build_server(config: ServerConfig) -> MCPServer:
    from skillopt_core import __version__

    app: MCPServer = MCPServer("skillopt", title="SkillOpt", version=__version__, instructions=INSTRUCTIONS,
                               log_level="INFO")
    tools_train.register(app, config)
    tools_sleep.register(app, config)
    review.register(app, config)
    tools_tasks.register(app, config)
    return app


def configure_logging(level: str = "INFO") -> str:
    """Logs to stderr and to the data directory's log file (never to stdout); returns the file's path."""
    root = logging.getLogger()
    if getattr(root, "_skillopt_mcp", False):
        return str(paths.data_dir() / "logs" / "mcp-server.log")
    fmt = logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    err = logging.StreamHandler(sys.stderr)
    err.setFormatter(fmt)
    err.setLevel(logging.WARNING)
    handlers: list[logging.Handler] = [err]
    log_file = paths.data_dir() / "logs" / "mcp-server.log"
    try:
        log_file.parent.mkdir(parents=True, exist_ok=True)
        to_file = logging.handlers.RotatingFileHandler(log_file, maxBytes=2_000_000, backupCount=2,
                                                       encoding="utf-8")
        to_file.setFormatter(fmt)
        handlers.append(to_file)
    except OSError as exc:
        print(f"skillopt-sleep mcp: cannot write the log file {log_file}: {exc}", file=sys.stderr)
    for handler in handlers:
        root.addHandler(handler)
    root.setLevel(level)
    root._skillopt_mcp = True  # type: ignore[attr-defined]
    return str(log_file)


def serve(config: ServerConfig, *, http: bool = False, port: int = 8765) -> None:
    log_file = configure_logging()
    app = build_server(config)
    if http:
        import anyio
        import uvicorn

        log.warning("SkillOpt MCP server on http://127.0.0.1:%d/mcp (log: %s)", port, log_file)
        # log_config=None: uvicorn's loggers go to ours (stderr and the file), not to stdout.
        web = uvicorn.Config(app.streamable_http_app(host="127.0.0.1"), host="127.0.0.1", port=port,
                             log_config=None, log_level="warning")
        anyio.run(uvicorn.Server(web).serve)
    else:
        log.info("SkillOpt MCP server on stdio (log: %s)", log_file)
        app.run("stdio")
