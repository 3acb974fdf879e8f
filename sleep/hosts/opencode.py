"""OpenCode: JSON storage under ``$XDG_DATA_HOME/opencode/storage`` (default
``~/.local/share/opencode`` on every platform); harvest only for now (no replay backend,
no MCP registration yet). Skills: ``.opencode/skills``, ``.claude/skills``, ``.agents/skills``
in the project and ``~/.config/opencode/skills``, ``~/.claude/skills``, ``~/.agents/skills``
(https://opencode.ai/docs/skills, "Place files"). ``XDG_*`` are the platform's own
variables: a scheduled night is not given them."""

from sleep.hosts.host import Home, Host, Skills, Source, Watch

HOME = Home("XDG_DATA_HOME", {"*": ".local/share/opencode"}, under_env="opencode", carry=False)
CONFIG = Home("XDG_CONFIG_HOME", {"*": ".config/opencode"}, under_env="opencode", carry=False)
CLAUDE = Home(None, {"*": ".claude"})
AGENTS = Home(None, {"*": ".agents"})

HOST = Host(
    name="opencode",
    label="OpenCode",
    sources=(Source("opencode", "sleep.sources.opencode:OpenCodeSource", HOME, watch=(Watch("storage"),)),),
    replay=None,
    skills=Skills(project=(".opencode/skills", ".claude/skills", ".agents/skills"),
                  user=((CONFIG, "skills"), (CLAUDE, "skills"), (AGENTS, "skills"))),
)
