"""Codex: rollouts under ``$CODEX_HOME`` (default ``~/.codex``), replayed with ``codex exec``,
skills in ``.agents/skills`` and ``~/.agents/skills``; the MCP server registered by
``skillopt-sleep integrate codex`` (:mod:`sleep.integrations.codex`)."""

from sleep.hosts.host import Home, Host, Mcp, Sandbox, Skills, Source, Watch

HOME = Home("CODEX_HOME", {"*": ".codex"}, flag="--codex-home", label="Codex home")
AGENTS = Home(None, {"*": ".agents"})  # the person's own skills, whatever CODEX_HOME says

HOST = Host(
    name="codex",
    label="Codex",
    sources=(Source("codex", "sleep.harvest.sources.codex:CodexSource", HOME,
                    watch=(Watch("sessions"), Watch("archived_sessions"),
                           Watch("", recursive=False, names=("history.jsonl",)))),),
    replay="codex",
    ready="sleep.hosts.ready:codex",
    # config.toml too: a custom model provider (base_url, env_key) lives there; the files it names are copied,
    # and the variables its providers read their key from pass.
    sandbox=Sandbox(folder=".codex", folder_env="CODEX_HOME", auth_files=("auth.json", "config.toml"),
                    key_vars=("OPENAI_API_KEY", "OPENAI_BASE_URL", "CODEX_API_KEY"),
                    env_keys="sleep.replay.endpoints:codex_env_keys", endpoints="sleep.replay.endpoints:codex"),
    api_hosts=("api.openai.com", "chatgpt.com", "*.chatgpt.com", "auth.openai.com"),
    skills=Skills(project=(".agents/skills",), user=((AGENTS, "skills"),)),
    mcp=Mcp(integrate="codex", plugin="codex",
            configs=("$CODEX_HOME/config.toml [mcp_servers.skillopt]", "~/.agents/skills/skillopt-sleep/SKILL.md")),
)
