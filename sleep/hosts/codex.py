"""Codex: rollouts under ``$CODEX_HOME`` (default ``~/.codex``), replayed with ``codex exec``,
skills in ``.agents/skills`` and ``~/.agents/skills``; the MCP server registered by
``skillopt-sleep integrate codex`` (:mod:`sleep.integrations.codex`)."""

from sleep.hosts.host import Home, Host, Mcp, Skills, Source, Watch

HOME = Home("CODEX_HOME", {"*": ".codex"}, flag="--codex-home", label="Codex home")
AGENTS = Home(None, {"*": ".agents"})  # the person's own skills, whatever CODEX_HOME says

HOST = Host(
    name="codex",
    label="Codex",
    sources=(Source("codex", "sleep.harvest.sources.codex:CodexSource", HOME,
                    watch=(Watch("sessions"), Watch("archived_sessions"),
                           Watch("", recursive=False, names=("history.jsonl",)))),),
    replay="codex",
    skills=Skills(project=(".agents/skills",), user=((AGENTS, "skills"),)),
    mcp=Mcp(integrate="codex", plugin="codex",
            configs=("$CODEX_HOME/config.toml [mcp_servers.skillopt]", "~/.agents/skills/skillopt-sleep/SKILL.md")),
)
