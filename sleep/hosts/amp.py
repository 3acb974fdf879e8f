"""Amp (Sourcegraph's agent): one JSON document per thread under ``$XDG_DATA_HOME/amp/threads``
(default ``~/.local/share/amp/threads``; :mod:`sleep.harvest.sources.amp`). Skills, replay and
MCP integration: not yet (see docs/adding-a-host.md). ``XDG_DATA_HOME`` is the platform's own
variable: a scheduled night is not given it."""

from sleep.hosts.host import Home, Host, Mcp, Source, Watch

HOME = Home("XDG_DATA_HOME", {"*": ".local/share/amp"}, under_env="amp", carry=False)

HOST = Host(
    name="amp",
    label="Amp",
    sources=(Source("amp", "sleep.harvest.sources.amp:AmpSource", HOME,
                    watch=(Watch("threads", recursive=False, names=("T-*.json",)),)),),
    mcp=Mcp(),
)
