"""Cursor: the ``cursor-agent`` CLI's chats under ``~/.cursor/chats`` (one SQLite
``store.db`` per chat, read through a read-only URI, never written); harvest only for
now (no replay backend, no skill folders, no MCP registration yet). The IDE's own
chats (``state.vscdb``) are not read yet: one database holds every chat, and a
harvested file gives one session."""

from sleep.hosts.host import Home, Host, Source, Watch

HOME = Home(None, {"*": ".cursor"})

HOST = Host(
    name="cursor",
    label="Cursor",
    sources=(Source("cursor-agent", "sleep.sources.cursor_agent:CursorAgentSource", HOME,
                    watch=(Watch("chats", names=("store.db",)),)),),
    replay=None,
)
