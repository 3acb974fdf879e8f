"""Build and run the SkillOpt MCP server.

:func:`build_server` registers every tool, resource and prompt on a
:class:`SkillOptServer` (the SDK's :class:`~mcp.server.mcpserver.MCPServer`
with one boundary for what leaves it); :func:`serve` runs it over stdio (what
agents launch) or streamable HTTP on 127.0.0.1, where every request needs the
bearer token of :mod:`sleep.mcp.httpauth` and a browser ``Origin`` must be the
server's own loopback one (or one the person allowed). In stdio mode only
protocol messages reach stdout (the SDK points file descriptor 1 at stderr for
everything else); logs go to stderr and to ``<data dir>/logs/mcp-server.log``.
"""

from __future__ import annotations

import json
import logging
import logging.handlers
import sys
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError, UnexpectedToolError
from mcp_types import GetPromptResult, TextContent
from pydantic import ValidationError

from sleep import paths
from sleep.mcp import guards, review, tools_sleep, tools_tasks, tools_train
from sleep.mcp.errors import explain_arguments, explain_exception
from sleep.mcp.guards import ServerConfig
from sleep.mcp.outbound import outbound, outbound_result, outbound_value

INSTRUCTIONS = """\
SkillOpt trains coding-agent skill documents, and SkillOpt-Sleep learns from the person's own \
{hosts} sessions overnight, staging each improvement as a git branch.
- Training and evaluation: train_skill / evaluate_skill start background jobs; job_status follows \
one (wait_seconds sends progress), cancel_job stops one (runs stay resumable); list_runs and get_run \
read finished runs.
- Sleep: sleep_harvest reads new transcripts, sleep_run runs a night now, sleep_status says what \
happened and what waits.
- Morning review: list_proposals, show_proposal, then ask the person before adopt_proposal or \
reject_proposal (the morning-review prompt walks through it)."""

log = logging.getLogger("skillopt.mcp")


def instructions() -> str:
    """What the server tells the agent about itself, naming the hosts registered now."""
    return INSTRUCTIONS.replace("{hosts}", tools_sleep.host_list())


class SkillOptServer(MCPServer):
    """The SDK's server with one boundary for what leaves it.

    Every tool result (text and structured content), resource content, prompt
    text and error message passes through :func:`sleep.mcp.outbound.outbound`;
    argument errors name the field and what it accepts; an ``OSError`` or
    ``ValueError`` from bad input says what happened and what to do instead of
    the SDK's bare ``Error executing tool X``.
    """

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        try:
            result = await super().call_tool(name, arguments, context)
        except UnexpectedToolError as exc:
            cause = _root_cause(exc)
            explained = explain_exception(cause) if cause is not None else None
            if explained is None:
                raise
            log.info("Tool %r failed on bad input: %r", name, cause)
            raise ToolError(outbound(f"Error executing tool {name}: {explained}")) from cause
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                schema = next((t.input_schema for t in await self.list_tools() if t.name == name), None)
                message = f"Error executing tool {name}: {explain_arguments(exc.__cause__, schema)}"
                raise ToolError(outbound(message)) from exc.__cause__
            raise ToolError(outbound(str(exc))) from exc.__cause__
        return outbound_result(result)

    async def read_resource(self, uri: Any, context: Any = None) -> Any:
        try:
            results = await super().read_resource(uri, context)
        except ResourceError as exc:
            raise type(exc)(outbound(str(exc))) from exc.__cause__
        if not isinstance(results, (list, tuple)):
            return results
        for item in results:
            if isinstance(item.content, str):
                item.content = _filtered_text(item.content, item.mime_type)
        return results

    async def get_prompt(self, name: str, arguments: dict[str, Any] | None = None, context: Any = None) -> Any:
        result = await super().get_prompt(name, arguments, context)
        if not isinstance(result, GetPromptResult):
            return result
        messages = [m.model_copy(update={"content": m.content.model_copy(update={"text": outbound(m.content.text)})})
                    if isinstance(m.content, TextContent) else m for m in result.messages]
        return result.model_copy(update={"messages": messages})


def _filtered_text(text: str, mime_type: str | None) -> str:
    """A resource's text through the filter (JSON value by value, with each key as context)."""
    if mime_type == "application/json":
        try:
            return json.dumps(outbound_value(json.loads(text)), indent=2, ensure_ascii=False)
        except ValueError:
            pass
    return outbound(text)


def _root_cause(exc: BaseException) -> BaseException | None:
    """The exception a tool raised, under the SDK's wrappers."""
    cause = exc.__cause__
    while isinstance(cause, UnexpectedToolError) and cause.__cause__ is not None:
        cause = cause.__cause__
    return cause


def build_server(config: ServerConfig, *, http_token: str | None = None, port: int | None = None) -> SkillOptServer:
    """The server with every tool; with ``http_token``, HTTP requests must carry it as a bearer token."""
    from skillopt_core import __version__

    auth: dict[str, Any] = {}
    if http_token is not None:
        from sleep.mcp.httpauth import auth_settings

        auth = auth_settings(http_token, port or 0)
    app = SkillOptServer("skillopt", title="SkillOpt", version=__version__, instructions=instructions(),
                         log_level="INFO", lifespan=guards.lifespan(config), **auth)
    tools_train.register(app)
    tools_sleep.register(app)
    review.register(app)
    tools_tasks.register(app)
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
    if http:
        import anyio
        import uvicorn

        from sleep.mcp.httpauth import load_or_create_token, transport_security

        token, token_file = load_or_create_token()
        app = build_server(config, http_token=token, port=port)
        # The token goes to stderr once, never to the log file.
        print(f"SkillOpt MCP server on http://127.0.0.1:{port}/mcp (log: {log_file})\n"
              f"Clients must send the header `Authorization: Bearer {token}` "
              f"(the token is kept in {token_file}, readable only by you).", file=sys.stderr, flush=True)
        web = uvicorn.Config(app.streamable_http_app(host="127.0.0.1",
                                                     transport_security=transport_security(port, config.origins)),
                             host="127.0.0.1", port=port, log_config=None, log_level="warning")
        # log_config=None: uvicorn's loggers go to ours (stderr and the file), not to stdout.
        anyio.run(uvicorn.Server(web).serve)
    else:
        app = build_server(config)
        log.info("SkillOpt MCP server on stdio (log: %s)", log_file)
        app.run("stdio")
