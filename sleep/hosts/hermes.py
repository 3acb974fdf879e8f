"""Hermes Agent (Nous Research): the SQLite session store ``$HERMES_HOME/state.db`` (default
``~/.hermes``; :mod:`sleep.harvest.sources.hermes`). Its sessions record no working directory,
so they belong to no project (``harvest --all-projects`` reads them). Skills (Hermes keeps
``$HERMES_HOME/skills/<category>/<name>``), replay and MCP integration: not yet (see
docs/adding-a-host.md)."""

from sleep.hosts.host import Home, Host, Mcp, Source, Watch

HOME = Home("HERMES_HOME", {"*": ".hermes"}, flag="--hermes-home", label="Hermes Agent home")

HOST = Host(
    name="hermes",
    label="Hermes Agent",
    sources=(Source("hermes", "sleep.harvest.sources.hermes:HermesSource", HOME,
                    watch=(Watch("", recursive=False, names=("state.db", "state.db-wal")),)),),
    mcp=Mcp(),
)
