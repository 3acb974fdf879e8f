"""The SkillOpt MCP server (``skillopt-sleep mcp``): training, evaluation and the
morning review as MCP tools for Claude Code, Codex and Copilot.

Modules:

- ``cli``: the ``mcp`` subcommand (stdio, or streamable HTTP on 127.0.0.1).
- ``server``: builds the :class:`mcp.server.mcpserver.MCPServer` with every
  tool, resource and prompt.
- ``jobs`` / ``jobrunner``: long work (``skillopt train``, ``skillopt eval``,
  ``skillopt-sleep run``) as separate processes registered in the data
  directory, so they outlive the server and the client.
- ``runs``: reading run directories (``outputs/<env>/<run_id>/``).
- ``follow``: MCP progress notifications from a job's ``events.jsonl``.
- ``tools_train`` / ``tools_sleep`` / ``review``: the tools, resources and the
  ``morning-review`` prompt.
- ``guards``: argument validation shared by the tools.

Start-up imports only this package, the SDK and the standard library: the
engine, GitPython and the model SDKs load inside the tools that need them.
"""
