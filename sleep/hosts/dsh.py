"""DeepSeek Harness (``dsh``): event logs under ``$DSH_HOME/sessions`` (default ``~/.dsh``),
``sessions/<project key>/<session id>/session[.vN].jsonl.zstd`` (multi-frame zstd;
:mod:`sleep.harvest.sources.dsh`). Skills: ``.dsh/skills`` and ``.agents/skills`` in the
project, ``$DSH_HOME/skills`` and ``~/.agents/skills`` (the discovery roots skill packages
for DSH document, docs/genuine-files.md). Replay and MCP integration: not yet (the harness
is not on npm here)."""

from sleep.hosts.host import Home, Host, Mcp, Skills, Source, Watch

HOME = Home("DSH_HOME", {"*": ".dsh"}, flag="--dsh-home", label="DeepSeek Harness home")
AGENTS = Home(None, {"*": ".agents"})

HOST = Host(
    name="dsh",
    label="DeepSeek Harness",
    sources=(Source("dsh", "sleep.harvest.sources.dsh:DshSource", HOME,
                    watch=(Watch("sessions", names=("session*.jsonl.zstd", "session*.jsonl")),)),),
    skills=Skills(project=(".dsh/skills", ".agents/skills"), user=((HOME, "skills"), (AGENTS, "skills"))),
    mcp=Mcp(),
)
