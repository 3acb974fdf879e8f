"""OpenCode: JSON storage under ``$XDG_DATA_HOME/opencode/storage`` and, in newer versions,
the SQLite ``opencode.db`` next to it (default ``~/.local/share/opencode`` on every platform;
both read by one source, a session once); replayed with ``opencode run --format json``
(the ``opencode`` backend); the MCP server registered by ``skillopt-sleep integrate opencode``
in ``opencode.json`` (:mod:`sleep.integrations.mcp_json`). Skills: ``.opencode/skills``,
``.claude/skills``, ``.agents/skills`` in the project and ``~/.config/opencode/skills``,
``~/.claude/skills``, ``~/.agents/skills`` (https://opencode.ai/docs/skills, "Place files").
``XDG_*`` are the platform's own variables: a scheduled night is not given them."""

from sleep.hosts.host import Home, Host, Mcp, Sandbox, Skills, Source, Watch

HOME = Home("XDG_DATA_HOME", {"*": ".local/share/opencode"}, under_env="opencode", carry=False)
CONFIG = Home("XDG_CONFIG_HOME", {"*": ".config/opencode"}, under_env="opencode", carry=False)
CLAUDE = Home(None, {"*": ".claude"})
AGENTS = Home(None, {"*": ".agents"})
# Newer versions' SQLite store in the data folder (sleep.harvest.sources.opencode_db), and its WAL.
_DB = ("opencode.db", "opencode.db-wal", "opencode-*.db", "opencode-*.db-wal")

HOST = Host(
    name="opencode",
    label="OpenCode",
    sources=(Source("opencode", "sleep.harvest.sources.opencode:OpenCodeSource", HOME,
                    watch=(Watch("storage"), Watch("", recursive=False, names=_DB))),),
    replay="opencode",
    ready="sleep.hosts.ready:opencode",
    # OPENCODE_CONFIG_CONTENT carries the replay's permission rules (skillopt_core.backends.opencode).
    sandbox=Sandbox(folder=".local/share/opencode", auth_files=("auth.json",),
                    key_vars=("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENCODE_API_KEY", "OPENCODE_CONFIG_CONTENT",
                              "ANTHROPIC_BASE_URL", "OPENAI_BASE_URL", "OPENCODE_DISABLE_PROJECT_CONFIG",
                              "OPENCODE_CONFIG_DIR"),
                    endpoints="sleep.replay.endpoints:opencode"),
    # OpenCode talks to whichever provider the person configured: the common ones and OpenCode Zen.
    api_hosts=("api.anthropic.com", "api.openai.com", "opencode.ai", "*.opencode.ai"),
    skills=Skills(project=(".opencode/skills", ".claude/skills", ".agents/skills"),
                  user=((CONFIG, "skills"), (CLAUDE, "skills"), (AGENTS, "skills"))),
    mcp=Mcp(integrate="opencode", configs=("$XDG_CONFIG_HOME/opencode/opencode.json (key mcp)",)),
)
