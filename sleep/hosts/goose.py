"""Goose (Block's agent): the SQLite ``sessions/sessions.db`` in its data folder
(``$GOOSE_PATH_ROOT/data``; else Linux ``~/.local/share/goose``, macOS
``~/Library/Application Support/Block/goose``, Windows ``%APPDATA%\\Block\\goose\\data``:
block/goose ``crates/goose/src/config/paths.rs``), one row file per session
(:mod:`sleep.harvest.sources.goose`). Skill folders, replay and MCP integration (Goose
registers MCP servers as extensions in ``config.yaml``): not yet, see docs/adding-a-host.md."""

from sleep.hosts.host import Home, Host, Mcp, Source, Watch

HOME = Home("GOOSE_PATH_ROOT", {"linux": ".local/share/goose", "darwin": "Library/Application Support/Block/goose",
                                "win32": "AppData/Roaming/Block/goose/data"},
            under_env="data", flag="--goose-home", label="Goose path root")

HOST = Host(
    name="goose",
    label="Goose",
    sources=(Source("goose", "sleep.harvest.sources.goose:GooseSource", HOME,
                    watch=(Watch("sessions", recursive=False, names=("sessions.db", "sessions.db-wal")),)),),
    mcp=Mcp(),
)
