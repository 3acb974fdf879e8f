"""Cursor: the ``cursor-agent`` CLI's chats under ``~/.cursor/chats`` (one SQLite
``store.db`` per chat, read through a read-only URI, never written); replayed with
``cursor-agent -p --output-format stream-json`` (the ``cursor-agent`` backend); skills in
``.cursor/skills`` and ``~/.cursor/skills`` (https://cursor.com/docs/context/skills; Cursor
also loads ``.agents/skills``, listed after its own); the MCP server registered by
``skillopt-sleep integrate cursor`` in ``~/.cursor/mcp.json`` (:mod:`sleep.integrations.mcp_json`).
The IDE's own chats (``state.vscdb``) are not read yet: one database holds every chat,
and a harvested file gives one session."""

from sleep.hosts.host import Home, Host, Mcp, Skills, Source, Watch

HOME = Home(None, {"*": ".cursor"})
AGENTS = Home(None, {"*": ".agents"})

HOST = Host(
    name="cursor",
    label="Cursor",
    sources=(Source("cursor-agent", "sleep.harvest.sources.cursor_agent:CursorAgentSource", HOME,
                    watch=(Watch("chats", names=("store.db",)),)),),
    replay="cursor-agent",
    ready="sleep.hosts.ready:cursor",
    skills=Skills(project=(".cursor/skills", ".agents/skills"), user=((HOME, "skills"), (AGENTS, "skills"))),
    mcp=Mcp(integrate="cursor", configs=("~/.cursor/mcp.json (key mcpServers)",)),
)
