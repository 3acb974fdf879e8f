"""Cursor: two transcript stores. The ``cursor-agent`` CLI's chats under ``~/.cursor/chats``
(one SQLite ``store.db`` per chat) with the agent transcripts under
``~/.cursor/projects/<slug>/agent-transcripts`` (:mod:`sleep.harvest.sources.cursor_transcripts`),
and the IDE's agent (composer) chats in its
``state.vscdb`` databases (``globalStorage`` and ``workspaceStorage/<hash>`` of its ``User``
folder: Linux ``~/.config/Cursor/User``, macOS ``~/Library/Application Support/Cursor/User``,
Windows ``%APPDATA%\\Cursor\\User``; ``$SKILLOPT_CURSOR_IDE_HOME`` or ``--cursor-ide-home``
names another), each database holding many chats (:mod:`sleep.harvest.sources.cursor_ide`); both read
through read-only URIs, never written. Replayed with ``cursor-agent -p --output-format
stream-json`` (the ``cursor-agent`` backend); skills in ``.cursor/skills`` and
``~/.cursor/skills`` (https://cursor.com/docs/context/skills; Cursor also loads
``.agents/skills``, listed after its own) and project rules ``.cursor/rules/<name>.mdc``; the
MCP server registered by ``skillopt-sleep integrate cursor`` in ``~/.cursor/mcp.json``
(:mod:`sleep.integrations.mcp_json`)."""

from sleep.hosts.host import Home, Host, Mcp, Sandbox, Skills, Source, Watch

HOME = Home(None, {"*": ".cursor"})
AGENTS = Home(None, {"*": ".agents"})
IDE_USER = Home("SKILLOPT_CURSOR_IDE_HOME", locate="sleep.paths:cursor_user_dirs", flag="--cursor-ide-home",
                label="Cursor IDE User folder")
_DB = ("state.vscdb", "state.vscdb-wal")

HOST = Host(
    name="cursor",
    label="Cursor",
    sources=(Source("cursor-agent", "sleep.harvest.sources.cursor_agent:CursorAgentSource", HOME,
                    watch=(Watch("chats", names=("store.db",)),
                           Watch("projects", names=("*.txt", "*.json", "*.jsonl")))),
             Source("cursor-ide", "sleep.harvest.sources.cursor_ide:CursorIdeSource", IDE_USER,
                    watch=(Watch("globalStorage", recursive=False, names=_DB),
                           Watch("workspaceStorage", names=_DB)))),
    replay="cursor-agent",
    ready="sleep.hosts.ready:cursor",
    sandbox=Sandbox(folder=".config/cursor", auth_files=("auth.json",), home_files=(".cursor/cli-config.json",),
                    key_vars=("CURSOR_API_KEY",)),
    api_hosts=("api2.cursor.sh", "*.cursor.sh", "api.cursor.com"),
    skills=Skills(project=(".cursor/skills", ".agents/skills"), user=((HOME, "skills"), (AGENTS, "skills")),
                  rules=(".cursor/rules",)),
    mcp=Mcp(integrate="cursor", configs=("~/.cursor/mcp.json (key mcpServers)",)),
)
